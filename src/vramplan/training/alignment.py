"""Preference and RL fine-tuning (DPO, ORPO, SimPO, KTO, PPO, GRPO): the policy's training step
and the models and passes each method adds, phase by phase, as huggingface/trl's trainers run
them (trl @f2cd5771, 2026-07-24; file and line references below are to that snapshot).

The policy's forward and backward are a supervised step of the same model
(`vramplan.training.setup.policy_pass`: chosen and rejected rows concatenated, log-probabilities
instead of a cross-entropy, GRPO's logits over the completion only), estimated by
`vramplan.training.estimate`. Around it:

- a reference model: a frozen copy in the policy's load dtype, unless the policy is a PEFT
  adapter (the reference pass is the policy under `disable_adapter()`), the reference
  log-probabilities are precomputed (DPO, KTO `precompute_ref_log_probs`) or GRPO's KL weight
  `beta` is 0 (its default since v0.19);
- reference passes without gradient while the policy's graph is alive (DPO `_compute_loss`
  :1371-1386, KTO :1534-1549), or before it (GRPO's old-policy and reference log-probabilities,
  :2553-2653);
- generation (GRPO, PPO): transformers' `generate` with a KV cache, or a vLLM engine colocated on
  the GPU with its `gpu_memory_utilization` share (released between generations in sleep mode),
  or a vLLM server elsewhere;
- PPO's value model, trained in full with the policy (one optimizer over both), and its frozen
  reward model (trl/experimental/ppo/ppo_trainer.py).

Pure: typed inputs to a `TrainingEstimate` whose phases add `generation`, `log_probs` and
`reference_pass` to the supervised step's. Assumptions stated where they are made: the reward
and value models have the policy's architecture (TRL's PPO example loads both from one
checkpoint), GRPO's rewards are functions, not models; ORPO's and SimPO's NLL weight is on
(`cpo_alpha` 1.0). ColossalChat's ORPO trainer (`AlignmentSetup.coati`) differs in its loss
alone, which counts its own NLL (`vramplan.training.activations.head._coati_orpo_loss`).
"""

from __future__ import annotations

from dataclasses import replace

from vramplan.inference.estimate import kv_bytes_per_token, prefill_activation_bytes
from vramplan.inference.setup import InferenceInputs
from vramplan.model.architecture import Architecture
from vramplan.parts import PartKind
from vramplan.presets.quant_formats import find_format
from vramplan.training.activations.spec import FP32
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Part, Phase, PhaseMemory, TrainingEstimate
from vramplan.training.setup import (
    AlignmentSetup,
    TrainingSetup,
    autocast_casts_weights,
    check_setup,
    compute_itemsize,
    policy_pass,
    residual_itemsize,
    weight_itemsize,
)
from vramplan.training.states import ModelStates, model_states
from vramplan.vocab import ComputeDtype, Generation, KvDtype, Method, Precision, Quant

PPO_ROLLOUT_CHUNK = 64
"""TRL `PPOConfig.local_rollout_forward_batch_size` (trl/experimental/ppo/ppo_config.py): the
queries generated and scored at once."""


def estimate_step(arch: Architecture, setup: TrainingSetup) -> TrainingEstimate:
    """One training step of `setup`: supervised, or a preference or RL method."""
    if setup.alignment is None:
        return estimate_training(arch, setup)
    return estimate_alignment(arch, setup)


def estimate_alignment(arch: Architecture, setup: TrainingSetup) -> TrainingEstimate:
    """The peak of one step of a preference or RL method, phase by phase."""
    check_setup(setup)
    alignment = setup.alignment
    assert alignment is not None
    policy = estimate_training(arch, policy_pass(setup))
    method = alignment.method
    resident = _resident_models(arch, setup, alignment)
    engine = Part(PartKind.GENERATION_ENGINE, alignment.engine_budget_bytes)
    engine_always = () if alignment.vllm_sleep else (engine,)
    training = [PhaseMemory(phase.phase, _merged((
                    *phase.parts, *resident, *engine_always,
                    *_training_extras(arch, setup, policy, phase.phase))))
                for phase in policy.phases]
    phases = list(training)
    if _reference_pass_during_graph(setup, alignment):
        phases.append(_reference_pass(arch, setup, policy, resident, engine_always))
    scores = method is Method.GRPO and _scores_before_training(alignment, setup.batch)
    if method is Method.KTO or scores:
        phases.append(_log_probs_pass(arch, setup, policy, resident, engine_always))
    if method.generates:
        phases.append(_generation(arch, setup, policy, resident, engine))
    return TrainingEstimate(setup=setup, arch=arch, states=policy.states,
                            block_saved=policy.block_saved,
                            activations_bytes=policy.activations_bytes, loss=policy.loss,
                            phases=tuple(phases))


def _merged(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """One part per kind, in the order kinds first appear (a method's extra activations or
    logit tensors join the policy's own, as every interface lists one line per part)."""
    totals: dict[PartKind, int] = {}
    for part in parts:
        totals[part.kind] = totals.get(part.kind, 0) + part.memory_bytes
    return tuple(Part(kind, n_bytes) for kind, n_bytes in totals.items())


# --- the other models -------------------------------------------------------------------------

def reference_model_kept(setup: TrainingSetup) -> bool:
    """A separate frozen reference model sits on the GPU through training: a reference pass,
    not run by the policy with its PEFT adapter disabled."""
    return reference_pass_runs(setup) and not setup.method.uses_lora


def reference_pass_runs(setup: TrainingSetup) -> bool:
    """The step runs a reference forward (a separate model or the adapter-disabled policy)."""
    alignment = setup.alignment
    if alignment is None or not alignment.method.has_reference:
        return False
    if alignment.precompute_ref and alignment.method in (Method.DPO, Method.KTO):
        return False
    return alignment.method is not Method.GRPO or alignment.beta > 0


def reference_kind(setup: TrainingSetup) -> str:
    """Where the reference log-probabilities come from: `model` (a frozen copy), `adapter`
    (the policy with its PEFT adapter disabled), `precomputed`, or `none`."""
    alignment = setup.alignment
    if reference_model_kept(setup):
        return "model"
    if reference_pass_runs(setup):
        return "adapter"
    if alignment is not None and alignment.precompute_ref and alignment.method.has_reference:
        return "precomputed"
    return "none"


def _resident_models(arch: Architecture, setup: TrainingSetup,
                     alignment: AlignmentSetup) -> tuple[Part, ...]:
    """The models besides the policy, on the GPU through the step. TRL loads the reference
    like the policy (`create_model_from_path`, in the policy's dtype) and prepares it for
    evaluation; PPO trains its value model with the policy (one optimizer over
    `PolicyAndValueWrapper`) and keeps its reward model frozen."""
    load = weight_itemsize(setup.precision)
    parts = []
    if reference_model_kept(setup):
        parts.append(Part(PartKind.REFERENCE_WEIGHTS, arch.params_total * load))
    if alignment.method is Method.PPO:
        parts.append(Part(PartKind.REWARD_WEIGHTS, arch.params_total * load))
        parts.append(Part(PartKind.VALUE_MODEL, value_model_states(arch, setup).total_bytes))
    return tuple(parts)


def value_model_states(arch: Architecture, setup: TrainingSetup) -> ModelStates:
    """PPO's value model, with its gradients, master copy and optimizer states; sharded as the
    policy is (`vramplan.distributed.per_gpu`). TRL trains it in full whatever the policy's
    method (PEFT goes to the policy only); ms-swift gives it the policy's adapters
    (`AlignmentSetup.value_adapters`). Its score head (hidden x 1) is not counted."""
    policy = policy_pass(setup)
    if setup.alignment is not None and setup.alignment.value_adapters:
        return model_states(arch, policy)
    return model_states(arch, replace(policy, method=Method.FULL, quant=Quant.NONE,
                                      lora_rank=None, lora_targets=frozenset()))


# --- what the training phases add -------------------------------------------------------------

def _training_extras(arch: Architecture, setup: TrainingSetup, policy: TrainingEstimate,
                     phase: Phase) -> tuple[Part, ...]:
    """Method-specific tensors of the policy's forward and backward."""
    alignment = setup.alignment
    assert alignment is not None
    parts: list[Part] = []
    # coati's ORPO loss counts its cross-entropy with its log-probabilities
    # (`vramplan.training.activations.head.HeadSpec.coati_orpo`)
    if alignment.method in (Method.ORPO, Method.SIMPO) and not alignment.coati \
            and phase in (Phase.LOSS_FORWARD, Phase.BACKWARD_START):
        parts.append(Part(PartKind.CHOSEN_NLL, _chosen_nll_bytes(arch, setup)))
    if alignment.method is Method.GRPO and phase is Phase.LOSS_FORWARD:
        parts.append(Part(PartKind.LOGITS_LOSS, _entropy_bytes(arch, setup)))
    if alignment.method is Method.PPO and phase in (Phase.LOSS_FORWARD, Phase.BACKWARD_START):
        # the value model's forward on the same batch, its graph alive until backward
        parts.append(Part(PartKind.VALUE_ACTIVATIONS,
                          policy.activations_bytes - policy.loss.saved_bytes))
    return tuple(parts)


ENTROPY_CHUNK_ROWS = 128
"""TRL `entropy_from_logits(logits, chunk_size=128)` (trl/trainer/utils.py :526-560)."""


def _entropy_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """GRPO's entropy of the completion's logits, computed in every training micro-step
    (`_compute_loss` passes `compute_entropy=True`, grpo_trainer.py :3006; under `no_grad`
    without an entropy bonus, :1528-1532), while the logits (and their 16-bit log-softmax rows)
    are alive. `entropy_from_logits` flattens the logits with `reshape(-1, vocab)`, a copy of
    all of them when there are several rows (they are a slice of the completion + 1 positions,
    which no view flattens), then takes 128 rows at a time: their log-softmax, its `exp` and
    the product. Beyond the loss's own forward peak: under autocast the 16-bit logits were
    already freed by the fp32 conversion."""
    alignment = setup.alignment
    assert alignment is not None
    size = _logits_itemsize(setup)
    rows = setup.batch * alignment.completion_tokens
    copy = size * rows * arch.vocab_size if setup.batch > 1 else 0
    chunk = size * min(ENTROPY_CHUNK_ROWS, rows) * arch.vocab_size
    freed = compute_itemsize(setup.precision) * (rows + setup.batch) * arch.vocab_size \
        if setup.precision is Precision.AMP else 0
    return max(0, copy + 3 * chunk - freed)


def _chosen_nll_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """ORPO and SimPO add a cross-entropy on the chosen half (`cross_entropy_loss(
    all_logits[:len_chosen], ...)`, orpo_trainer.py and cpo_trainer.py `concatenated_forward`):
    `[..., :-1, :].contiguous()` copies the chosen logits, `F.cross_entropy` saves its
    log-softmax; backward adds its gradient. In the logits' dtype (fp32 under autocast, as
    accelerate returns them)."""
    elements = setup.batch * setup.seq_len * arch.vocab_size
    size = _logits_itemsize(setup)
    # forward: the copy and the log-softmax; backward: the log-softmax and its gradient
    return 2 * size * elements


def _logits_itemsize(setup: TrainingSetup) -> int:
    """Bytes per logit as the loss sees them: fp32 under autocast (accelerate's
    `convert_outputs_to_fp32`) and in fp32, the compute dtype otherwise."""
    if setup.precision is Precision.AMP:
        return FP32
    return compute_itemsize(setup.precision)


# --- passes without gradient ------------------------------------------------------------------

def _no_grad_forward_bytes(arch: Architecture, setup: TrainingSetup, rows: int, tokens: int,
                           logit_positions: int) -> int:
    """The peak of a forward without gradient of `rows` x `tokens` (TRL's reference and
    old-policy log-probabilities): one block's working tensors, then the logits and, under
    autocast, their fp32 copy (accelerate's `convert_outputs_to_fp32` wraps the reference's
    forward too, `prepare_model(evaluation_mode=True)`); `selective_log_softmax` then works a row
    at a time and keeps nothing."""
    inputs = InferenceInputs(arch=arch, weights=find_format("bf16"), context=tokens, batch=rows,
                             compute_dtype=_compute_dtype(setup), attention=setup.attention)
    # beside one block's working tensors, two residual-stream tensors that transformers' Python
    # keeps referenced: the embeddings (`inputs_embeds`, a local of `LlamaModel.forward` until it
    # returns) and the block's input (the caller's `hidden_states` while
    # `hidden_states = decoder_layer(hidden_states, ...)` runs), in the residual stream's dtype
    # (fp32 under autocast: the embedding is not autocast and the fp32 residual adds win)
    residual = residual_itemsize(setup)
    held = 2 * residual * rows * tokens * arch.hidden_size
    blocks = prefill_activation_bytes(arch, inputs) + held
    elements = rows * logit_positions * arch.vocab_size
    compute = compute_itemsize(setup.precision)
    logits = compute * elements + (FP32 * elements if setup.precision is Precision.AMP else 0)
    hidden = compute * rows * tokens * arch.hidden_size
    return max(blocks, hidden + logits)


def _compute_dtype(setup: TrainingSetup) -> ComputeDtype:
    return ComputeDtype.FP32 if setup.precision is Precision.FP32 else ComputeDtype.BF16


def _kept_policy_logits(arch: Architecture, setup: TrainingSetup) -> int:
    """The policy's logits still referenced when the reference pass runs (in the same
    `_compute_loss`): fp32 ones, saved by the log-sum-exp, or 16-bit ones and their per-row
    log-softmax."""
    rows_setup = policy_pass(setup)
    elements = rows_setup.logit_tokens * arch.vocab_size
    if setup.precision in (Precision.AMP, Precision.FP32):
        return FP32 * elements
    return 2 * compute_itemsize(setup.precision) * elements


def _reference_pass_during_graph(setup: TrainingSetup, alignment: AlignmentSetup) -> bool:
    return alignment.method in (Method.DPO, Method.KTO) and reference_pass_runs(setup)


def _reference_pass(arch: Architecture, setup: TrainingSetup, policy: TrainingEstimate,
                    resident: tuple[Part, ...], engine: tuple[Part, ...]) -> PhaseMemory:
    """DPO and KTO run the reference after the policy's forward, in the same function: the
    policy's saved activations and logits are alive (KTO's two reference passes, on the KL batch
    and on the batch, one after the other)."""
    forward = next(p for p in policy.phases if p.phase is Phase.LOSS_FORWARD)
    rows_setup = policy_pass(setup)
    held = tuple(p for p in forward.parts if p.kind is not PartKind.LOGITS_LOSS
                 and p.kind is not PartKind.PREVIOUS_GRAPH)
    return PhaseMemory(Phase.REFERENCE_PASS, (
        *held, *resident, *engine,
        Part(PartKind.LOGITS_LOSS, _kept_policy_logits(arch, setup)),
        Part(PartKind.REFERENCE_FORWARD, _no_grad_forward_bytes(
            arch, setup, rows_setup.batch, setup.seq_len, setup.seq_len))))


def _scores_before_training(alignment: AlignmentSetup, batch: int) -> bool:
    """GRPO computes log-probabilities before its micro-steps: the reference's when `beta` is
    not zero, the old policy's when the batch is generated for several steps or by vLLM
    (`vllm_importance_sampling_correction`, on by default), grpo_trainer.py :2553-2575."""
    several_steps = (alignment.generation_batch or 0) > batch
    return alignment.beta > 0 or alignment.generation is not Generation.MODEL or several_steps


def _states_between_steps(policy: TrainingEstimate) -> tuple[Part, ...]:
    """The policy's states when no micro-step runs: gradients were freed by the optimizer
    step's `zero_grad(set_to_none=True)` (transformers Trainer), the optimizer states stay."""
    step = next(p for p in policy.phases if p.phase is Phase.OPTIMIZER_STEP)
    return tuple(Part(p.kind, 0) if p.kind is PartKind.GRADIENTS else p for p in step.parts
                 if p.kind in _STATE_KINDS)


_STATE_KINDS = frozenset({PartKind.TRAINABLE_WEIGHTS, PartKind.FROZEN_WEIGHTS,
                          PartKind.GRADIENTS, PartKind.MASTER_WEIGHTS,
                          PartKind.OPTIMIZER_STATES})


def _log_probs_pass(arch: Architecture, setup: TrainingSetup, policy: TrainingEstimate,
                    resident: tuple[Part, ...], engine: tuple[Part, ...]) -> PhaseMemory:
    """A pass without gradient before the policy's forward: GRPO's old-policy and reference
    log-probabilities over the completions, a batch of rows at a time (:2553-2653); KTO's
    policy on the KL batch (`_compute_kl_logps`, :1280-1330)."""
    alignment = setup.alignment
    assert alignment is not None
    positions = alignment.completion_tokens if alignment.method is Method.GRPO \
        else setup.seq_len
    return PhaseMemory(Phase.LOG_PROBS, (
        *_states_between_steps(policy), *resident, *engine,
        Part(PartKind.REFERENCE_FORWARD, _no_grad_forward_bytes(
            arch, setup, setup.batch, setup.seq_len, positions))))


# --- generation -------------------------------------------------------------------------------

def _generation(arch: Architecture, setup: TrainingSetup, policy: TrainingEstimate,
                resident: tuple[Part, ...], engine: Part) -> PhaseMemory:
    """Completions are generated between optimizer steps. transformers' `generate` keeps the KV
    cache of every sequence (prompt and completion) and runs a prefill; vLLM colocated holds
    its share of the GPU (awake for generation even in sleep mode); a vLLM server holds nothing
    here. PPO generates `local_rollout_forward_batch_size` queries at a time and keeps the
    scores of every generated token (`batch_generation`, ppo_trainer.py :115-144: `logitss`
    of [queries, response, vocab] in fp32, then `torch.stack` and `pad` copies)."""
    alignment = setup.alignment
    assert alignment is not None
    parts = [*_states_between_steps(policy), *resident]
    sequences = generated_at_once(setup)
    if alignment.method is Method.PPO:
        rows = min(sequences, PPO_ROLLOUT_CHUNK)
        scores = sequences * alignment.completion_tokens * arch.vocab_size * FP32
        parts.append(Part(PartKind.GENERATION_SCORES, 2 * scores))
    else:
        rows = sequences
    if alignment.generation is Generation.MODEL:
        prompt = setup.seq_len - alignment.completion_tokens
        kv = kv_bytes_per_token(arch, _kv_inputs(arch, setup)) * rows * setup.seq_len
        parts.append(Part(PartKind.KV_CACHE, kv))
        inputs = InferenceInputs(arch=arch, weights=find_format("bf16"), context=setup.seq_len,
                                 prompt=prompt, batch=rows,
                                 compute_dtype=_compute_dtype(setup), attention=setup.attention)
        parts.append(Part(PartKind.PREFILL_ACTIVATIONS, prefill_activation_bytes(arch, inputs)))
        parts.append(Part(PartKind.AUTOCAST_COPIES, _generation_autocast_copies(setup, policy)))
    elif alignment.generation is Generation.VLLM_COLOCATE:
        parts.append(engine)
    return PhaseMemory(Phase.GENERATION, tuple(parts))


def _kv_inputs(arch: Architecture, setup: TrainingSetup) -> InferenceInputs:
    """The KV cache's dtype is the compute dtype: autocast's 16-bit keys and values, fp32 in
    fp32."""
    kv = KvDtype.FP32 if setup.precision is Precision.FP32 else KvDtype.FP16
    return InferenceInputs(arch=arch, weights=find_format("bf16"), context=setup.seq_len,
                           kv_dtype=kv)


def _generation_autocast_copies(setup: TrainingSetup, policy: TrainingEstimate) -> int:
    """Under autocast, each forward of `generate` casts the fp32 weights that require a gradient
    to 16 bits and caches the casts until the forward's autocast region exits (PyTorch
    aten/src/ATen/autocast_mode.cpp `cached_cast`: leaves that require grad, whatever the grad
    mode; accelerate wraps `forward` in autocast): a 16-bit copy of the trainable weights during
    each decoding step."""
    if not autocast_casts_weights(setup):
        return 0
    return 2 * policy.states.trainable_params




def engine_bytes_needed(arch: Architecture, setup: TrainingSetup) -> int:
    """What a colocated vLLM engine needs at least: its own 16-bit copy of the weights and the
    KV cache of the sequences generated at once, each as long as the step's sequences."""
    alignment = setup.alignment
    assert alignment is not None
    sequences = generated_at_once(setup)
    kv = kv_bytes_per_token(arch, _kv_inputs(arch, setup)) * sequences * setup.seq_len
    return 2 * arch.params_total + kv


def generated_at_once(setup: TrainingSetup) -> int:
    """Sequences generated together on one GPU: TRL's `generation_batch_size` (the batch times
    the steps per generation), else the batch."""
    alignment = setup.alignment
    assert alignment is not None
    return alignment.generation_batch or setup.batch
