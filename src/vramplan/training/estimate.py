"""The detailed memory model of one training step: model states, activations, temporaries, and the
peak over the step's phases, with the breakdown at that moment.

Pure: typed inputs (`TrainingSetup`, an `Architecture`) to a typed `TrainingEstimate`; bytes are
integers. Every term names its source in a comment; activations are in
`vramplan.training.activations`.

Phases (the peak is the largest; see docs/memory-model.md):
- `backward_start`: the loss has just been computed and backward begins. Every saved activation is
  alive, plus the logits and the loss's vocabulary-sized tensors; with gradient accumulation the
  gradients of earlier micro-batches are already there.
- `backward_blocks`: backward runs through the last block: its gradients' temporaries beside every
  saved activation (and, under full checkpointing, the one block being recomputed).
- `embedding_backward` (the embedding trains): every gradient, the embedding's being formed.
- `optimizer_step`: activations are gone; the optimizer's temporaries join the states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction
from functools import cached_property

from vramplan.allocator import PYTORCH_DEFAULTS, AllocatorConfig
from vramplan.model.architecture import Architecture, MlpKind, NormKind
from vramplan.model.lora_targets import expand_targets
from vramplan.parts import Component, PartKind
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.presets.frameworks import (
    AXOLOTL_TILED_MLP_SHARD_TOKENS,
    AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE,
    MEGATRON_MAX_SUBTRACTED_IN_PLACE_SINCE,
    MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE,
    REMOTE_CODE,
    UnslothLossChunking,
    bitsandbytes_drops_4bit_input,
    framework_defaults,
    has_change,
    litgpt_code,
    runs_transformers_code,
    torchtitan_code,
    transformers_code,
    unsloth_code,
)
from vramplan.training.activations.attention import (
    masked_local_layer_bytes,
    masked_local_layers_bytes,
)
from vramplan.training.activations.backward import (
    RMSNORM_BACKWARD_FP32_TENSORS,
    block_backward_transient,
    recomputed_forward_peak,
    released_before_block_peak,
    scores_backward_extra,
)
from vramplan.training.activations.block import (
    block_saved,
    embedding_saved_bytes,
    first_block_graphless_linears,
    quantized_base_inputs,
)
from vramplan.training.activations.checkpointing import (
    block_input_bytes,
    kept_for_backward,
    largest_submodule_saved,
    submodule_checkpoint_inputs,
)
from vramplan.training.activations.head import HeadSpec, LossMemory, fused_loss_rows, head_and_loss
from vramplan.training.activations.mlp import tiled_mlp_backward
from vramplan.training.activations.spec import (
    FP32,
    LITGPT_LM_HEAD_CHUNK,
    BlockSpec,
    Saved,
    total_per_token,
)
from vramplan.training.allocations.optimizer import optimizer_step_temporaries
from vramplan.training.allocations.program import StepShape
from vramplan.training.allocations.step import (
    ReservedMemory,
    reserved_at_first_loss,
    reserved_memory,
)
from vramplan.training.dummy_wgrads import dummy_wgrad_bytes
from vramplan.training.setup import (
    TrainingSetup,
    accelerate_copies_outputs,
    allocator_config,
    autocast_casts_shifted_logits,
    autocast_casts_weights,
    autocasts_16bit_weights,
    block_framework,
    check_setup,
    checkpoint_reload_buffers,
    checkpoints_reentrant,
    compute_itemsize,
    first_pass_keeps_inputs,
    gradient_itemsize,
    gradients_kept,
    keeps_last_checkpoint_input,
    loop_keeps_logits,
    lora_dropout_active,
    lora_on_modules,
    lora_rank_of,
    lora_targets_of,
    loss_compiled,
    loss_in_16bit,
    model_dropout_active,
    model_loss_code,
    model_returns_fp32_logits,
    native_fused_cross_entropy,
    offloads_checkpoints,
    optimizer_states_exist,
    peft_casts_adapter_input,
    policy_pass,
    residual_itemsize,
    runs_autocast,
    trainable_itemsize,
    unsloth_fuses_loss,
    weight_itemsize,
)
from vramplan.training.states import (
    ModelStates,
    head_is_separate,
    model_states,
    stores_torchao_nf4,
    torchao_nf4_dequantize_bytes,
    trainable_tensors,
)
from vramplan.units import ceil_div
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    LoraTarget,
    Loss,
    Method,
    Metric,
    OptimizerImpl,
    Precision,
    Quant,
)


class Phase(StrEnum):
    """A moment of the training step."""

    LOSS_FORWARD = "loss_forward"
    """The loss has just been computed: every activation, the logits and the saved log-softmax;
    in litgpt's loop the previous micro-batch's graph is still referenced by `loss`."""

    BACKWARD_START = "backward_start"
    """Loss computed, backward starting: activations, logits and loss tensors all alive."""
    BACKWARD_BLOCKS = "backward_blocks"
    """Backward through the last block: its gradient temporaries beside the saved activations."""
    BACKWARD_END = "backward_end"
    """Backward through the first block: every gradient exists, activations are nearly gone (the
    first block's own, recomputed under full checkpointing, and its temporaries remain)."""
    EMBEDDING_BACKWARD = "embedding_backward"
    """Backward through the input embedding, when its weight trains: every other gradient
    exists and the embedding's is being formed (with a tied head, summed with the head's)."""
    OPTIMIZER_STEP = "optimizer_step"
    """The optimizer updates the weights: states, gradients and the step's temporaries."""
    UNIT_REDUCE = "unit_reduce"
    """Sharded training: a block's backward has run and its gradients are reduced (FSDP's
    unit-sized gradients), its saved activations freed."""
    GENERATION = "generation"
    """Preference and RL methods that generate (PPO, GRPO): completions are generated between
    optimizer steps; the gradients are freed, the optimizer states stay."""
    LOG_PROBS = "log_probs"
    """A pass without gradient before the policy's forward: GRPO's old-policy and reference
    log-probabilities, KTO's KL batch."""
    REFERENCE_PASS = "reference_pass"
    """The reference forward of DPO and KTO, while the policy's graph and logits are alive."""
    FIRST_MICRO_BATCH = "first_micro_batch"
    """The run's first micro-batch, where it holds more than later ones: Unsloth's
    checkpointing offloads no block input in its first pass
    (`vramplan.training.setup.first_pass_keeps_inputs`); no gradient or optimizer state exists
    yet. Its largest moment: the loss's forward, backward's start or backward through the last
    block."""
    LATER_MICRO_BATCH = "later_micro_batch"
    """When the largest batch comes first: a later, shorter micro-batch of gradient
    accumulation, counted by what does not depend on its length (the gradients kept from
    earlier micro-batches and the buffers of a backward), a lower bound."""



# --- results ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Part:
    """One named term of a phase, in bytes."""

    kind: PartKind
    memory_bytes: int

    @property
    def component(self) -> Component:
        return self.kind.component


@dataclass(frozen=True)
class PhaseMemory:
    phase: Phase
    parts: tuple[Part, ...]

    @cached_property
    def total_bytes(self) -> int:
        return sum(part.memory_bytes for part in self.parts)

    def by_component(self) -> dict[Component, int]:
        totals: dict[Component, int] = {}
        for part in self.parts:
            totals[part.component] = totals.get(part.component, 0) + part.memory_bytes
        return totals



class PeakOverPhases:
    """The peak of a step over its phases, read in each metric: `allocated` (tensors),
    `reserved` (plus what the caching allocator keeps cached: `allocator_cache_bytes`, from the
    step's program of allocations and frees replayed through `vramplan.allocator`) and `device`
    (plus the CUDA context, what paged optimizers keep resident in unified memory and NCCL's
    communicators).
    For estimates with a `phases` field and a `metric` (the one their setup asks for)."""

    __slots__ = ()
    phases: tuple[PhaseMemory, ...]

    @property
    def metric(self) -> Metric:
        raise NotImplementedError

    @property
    def allocator_cache_bytes(self) -> int:
        """Reserved beyond the allocated peak (block and segment rounding, cached blocks)."""
        raise NotImplementedError

    @property
    def managed_bytes(self) -> int:
        """Memory outside PyTorch's allocator that the device holds (paged optimizer states in
        CUDA unified memory, resident while the GPU has room)."""
        return 0

    @property
    def communicator_bytes(self) -> int:
        """NCCL's communicators, outside PyTorch's allocator (0 on one GPU:
        `vramplan.distributed.communicators`)."""
        return 0

    @property
    def outside_allocator_bytes(self) -> int:
        """What the device holds beyond PyTorch's allocator: the CUDA context, managed memory
        and NCCL's communicators."""
        return CUDA_CONTEXT_BYTES + self.managed_bytes + self.communicator_bytes

    @property
    def peak(self) -> PhaseMemory:
        return max(self.phases, key=lambda phase: phase.total_bytes)

    @property
    def allocated_bytes(self) -> int:
        return self.peak.total_bytes

    @property
    def reserved_bytes(self) -> int:
        return self.allocated_bytes + self.allocator_cache_bytes

    @property
    def device_bytes(self) -> int:
        return self.reserved_bytes + self.outside_allocator_bytes

    def floor_bytes(self, metric: Metric) -> int:
        """`metric_bytes` without the allocator's cache, which is never negative: a lower bound
        that replays nothing (the planner's searches rule a setup out on it)."""
        if metric is Metric.DEVICE:
            return self.allocated_bytes + self.outside_allocator_bytes
        return self.allocated_bytes

    def metric_bytes(self, metric: Metric) -> int:
        """The peak read in `metric`; only `reserved` and `device` replay the allocator."""
        if metric is Metric.ALLOCATED:
            return self.allocated_bytes
        if metric is Metric.RESERVED:
            return self.reserved_bytes
        return self.device_bytes

    @property
    def total_bytes(self) -> int:
        """The peak in the setup's metric (comparable to a measured case)."""
        return self.metric_bytes(self.metric)

@dataclass(frozen=True, slots=True)
class TrainingEstimate(PeakOverPhases):
    """The detailed estimate. `peak` is the phase with the most allocated memory."""

    setup: TrainingSetup
    arch: Architecture
    states: ModelStates
    block_saved: tuple[Saved, ...]
    """What one (non-first) block saves, per token: the activation breakdown by operation."""
    activations_bytes: int
    """All saved activations of the micro-batch (blocks, final norm, head inputs)."""
    loss: LossMemory
    phases: tuple[PhaseMemory, ...]
    metric_overheads: tuple[Part, ...] = field(default=())

    @property
    def metric(self) -> Metric:
        return self.setup.metric

    @property
    def allocator_cache_bytes(self) -> int:
        return reserved_memory_of(self.arch, self.setup, allocator_config(self.setup)).cache_bytes

    @property
    def managed_bytes(self) -> int:
        return self.states.managed_optimizer_bytes


def reserved_memory_of(arch: Architecture, setup: TrainingSetup,
                       config: AllocatorConfig = PYTORCH_DEFAULTS) -> ReservedMemory:
    """The step of `setup` through the simulated caching allocator
    (`vramplan.training.allocations`). For a preference or RL method, the policy's training
    pass (`policy_pass`): its other passes and models are not in the program."""
    setup = policy_pass(setup)
    return reserved_memory(arch, setup, step_shape(arch, setup), config=config)


def _loss_rows(arch: Architecture, setup: TrainingSetup, head: HeadSpec) -> int:
    """Rows of logits computed at once: all tokens, or a chunk (litgpt's 128-token head chunks
    in its LoRA scripts; a fused linear cross-entropy's chunk, Unsloth's
    (`HeadSpec.fused_rows`) or `fused_loss_rows`)."""
    tokens = setup.logit_tokens
    if not head.chunked:
        return tokens
    if setup.framework is Framework.LITGPT:
        return min(LITGPT_LM_HEAD_CHUNK, setup.seq_len) * setup.batch
    return head.fused_rows or fused_loss_rows(tokens, arch.vocab_size, arch.hidden_size)


UNSLOTH_LOSS_TARGET_CAP_BYTES = 4 * 2**30
"""`min(free_gb, 4.0)`: the most GiB a chunk's fp32 logits may take
(`UnslothLossChunking.HALF_FREE_CAPPED`, unsloth-zoo d9fe1f43)."""


def unsloth_loss_chunks(tokens: int, vocab: int, chunking: UnslothLossChunking,
                        free_bytes: int | None) -> int:
    """How many chunks `unsloth_fused_ce_loss` splits `tokens` rows into (unslothai/unsloth-zoo
    unsloth_zoo/fused_losses/cross_entropy_loss.py `get_chunk_size`, `_get_chunk_multiplier`
    @770de251 and @d9fe1f43): the fp32 logits' bytes over a target, `4 * vocab / 2**30 /
    target_gb` per row, n_chunks = max(4 * round(that / 4), 1) with Python's round (to even),
    or, capped, 1 when it is at most 1, else rounded up to a multiple of 4. The target is 1 GiB,
    or half of `torch.cuda.mem_get_info()`'s `free_bytes` at the first call (capped at 4 GiB
    from d9fe1f43). `free_bytes` None (no card): the 4 GiB cap, the largest target today's code
    takes; at most 0 (an estimate past the card): a chunk per row."""
    if chunking is UnslothLossChunking.ONE_GIB:
        target = Fraction(2**30)
    elif free_bytes is None:
        target = Fraction(UNSLOTH_LOSS_TARGET_CAP_BYTES)
    elif free_bytes <= 0:
        return tokens
    elif chunking is UnslothLossChunking.HALF_FREE:
        target = Fraction(free_bytes, 2)
    else:
        target = min(Fraction(free_bytes, 2), Fraction(UNSLOTH_LOSS_TARGET_CAP_BYTES))
    exact = FP32 * vocab * tokens / target
    if chunking is UnslothLossChunking.HALF_FREE_CAPPED:
        return 1 if exact <= 1 else 4 * math.ceil(exact / 4)
    return max(4 * round(exact / 4), 1)


def _unsloth_loss_rows(arch: Architecture, setup: TrainingSetup) -> int | None:
    """Rows of `unsloth_fused_ce_loss`'s first chunk (`torch.chunk`: ceil(rows / n_chunks)),
    None where the run does not call it (`UnslothCode.loss_chunking`). The free memory is the
    card's at load (`TrainingSetup.card_free_bytes`) less what the allocator holds when the
    first loss begins (`vramplan.training.allocations.step.reserved_at_first_loss`: the load and the
    first forward, which do not depend on the loss's chunks)."""
    chunking = unsloth_code(setup.code_date).loss_chunking if unsloth_fuses_loss(setup) else None
    if chunking is None:
        return None
    tokens = setup.logit_tokens
    free = None
    if chunking is not UnslothLossChunking.ONE_GIB and setup.card_free_bytes is not None:
        before_loss = StepShape(spec=block_spec(arch, setup), loss_rows=tokens)
        held = reserved_at_first_loss(arch, setup, before_loss, allocator_config(setup))
        free = setup.card_free_bytes - held
    return ceil_div(tokens, unsloth_loss_chunks(tokens, arch.vocab_size, chunking, free))


def step_shape(arch: Architecture, setup: TrainingSetup) -> StepShape:
    """What the step program (`vramplan.training.allocations`) needs from the analytic model."""
    head = _head_spec(arch, setup)
    return StepShape(spec=block_spec(arch, setup), loss_rows=_loss_rows(arch, setup, head),
                     fused_loss=head.fused_linear, head_grad_bytes=head.head_grad_bytes)


# --- the estimate -----------------------------------------------------------------------------

def estimate_training(arch: Architecture, setup: TrainingSetup) -> TrainingEstimate:
    """The peak memory of one training step of `arch` under `setup`, phase by phase."""
    check_setup(setup)
    states = model_states(arch, setup)
    spec = block_spec(arch, setup)
    saved = block_saved(_largest_kind(arch), spec, setup.seq_len)
    tokens = setup.batch * setup.seq_len
    blocks = _blocks_activation_bytes(arch, setup, spec, saved) * tokens
    loss = head_and_loss(arch, spec, _head_spec(arch, setup), setup.batch, setup.seq_len,
                         logit_len=setup.logit_len)
    autocast_copies = _autocast_weight_copies(arch, setup, spec)
    cached_copies = _cached_block_copies(arch, setup)
    needs_grad = _embedding_output_needs_grad(setup)
    embedding = embedding_saved_bytes(
        arch, spec, needs_grad, leaf=needs_grad and not _embedding_trains(setup)) * tokens
    graph = range(arch.n_layers - _blocks_with_graph(arch, setup), arch.n_layers)
    # what waits for the end of backward: the embeddings' output, the eager attention mask
    # (which a checkpoint without a graph drops with the rest of its context), and the buffers
    # Unsloth's offloaded checkpoints come back into (allocated for the run)
    kept_to_the_end = embedding + (_eager_mask_kept_bytes(setup, spec) * tokens if graph else 0) \
        + checkpoint_reload_buffers(setup) * block_input_bytes(arch, spec) * tokens
    activations = blocks + loss.saved_bytes + kept_to_the_end
    persistent = _persistent_parts(states, setup)
    # the blocks' backward: none when no block has a graph (`checkpoints_cut_the_graph`)
    transient = _backward_transient(arch, setup, spec, saved) * tokens \
        + _dequant_in_block_backward(arch, setup, spec) \
        + _gradients_before_scores(arch, setup, spec, saved) \
        + _mlp_gradients_between_tiles(arch, setup, spec, saved) \
        + _expert_gradient_sums(arch, setup) if graph else 0
    # copies of a MoE layer's expert weights its matmuls save (`_expert_weight_copies`): every
    # MoE layer's with a graph, or only the recomputed one's under full checkpointing
    layer_copies = _expert_weight_copies(arch, setup) if graph else 0
    full = setup.checkpointing is Checkpointing.FULL
    forward_copies = 0 if full else layer_copies * sum(map(arch.layer_is_moe, graph))
    first_copies = layer_copies if arch.layer_is_moe(0) else 0
    acts = (Part(PartKind.ACTIVATIONS, activations),
            Part(PartKind.AUTOCAST_COPIES, autocast_copies))
    # in backward the head's casts are gone; a checkpointed block recomputed under autocast
    # casts its weights again, and its matmuls save them for the block's backward
    recomputed_copies = _recomputed_block_copies(arch, setup) if graph else 0
    copies_in_blocks = Part(PartKind.AUTOCAST_COPIES, recomputed_copies
                            if setup.checkpointing is Checkpointing.FULL else autocast_copies)
    phases = (
        PhaseMemory(Phase.LOSS_FORWARD, (
            *persistent, acts[0],
            Part(PartKind.AUTOCAST_COPIES, autocast_copies + cached_copies),
            Part(PartKind.WEIGHT_COPIES, forward_copies),
            Part(PartKind.LOGITS_LOSS, loss.forward_peak_bytes),
            Part(PartKind.PREVIOUS_GRAPH, _previous_graph_bytes(arch, setup, spec)))),
        PhaseMemory(Phase.BACKWARD_START, (
            *persistent, *acts, Part(PartKind.WEIGHT_COPIES, forward_copies),
            *_loss_or_final_norm_backward(arch, setup, spec, loss))),
        PhaseMemory(Phase.BACKWARD_BLOCKS, (
            # the head's and the final norm's backward have run: their saved inputs are freed
            *persistent, Part(PartKind.ACTIVATIONS, activations - loss.saved_bytes),
            copies_in_blocks,
            Part(PartKind.WEIGHT_COPIES, layer_copies if full else forward_copies),
            Part(PartKind.LOGITS_LOSS, loss.logits_alive_bytes),
            Part(PartKind.BACKWARD_TEMPORARIES, transient))),
        PhaseMemory(Phase.BACKWARD_END, (
            *_persistent_parts(states, setup, with_gradients=gradients_kept(setup)),
            Part(PartKind.GRADIENTS,
                 0 if gradients_kept(setup) else _gradients_made(arch, setup, states)),
            # what the embeddings' output keeps waits for the embedding's backward, last; the
            # first block's call keeps the attention mask until its backward
            Part(PartKind.ACTIVATIONS, kept_to_the_end),
            Part(PartKind.LOGITS_LOSS, loss.logits_alive_bytes),
            # the first block, recomputed last under full checkpointing, with its casts
            Part(PartKind.AUTOCAST_COPIES, copies_in_blocks.memory_bytes
                 if setup.checkpointing is Checkpointing.FULL else 0),
            Part(PartKind.WEIGHT_COPIES, first_copies),
            Part(PartKind.BACKWARD_TEMPORARIES, transient))),
        *_embedding_backward(arch, setup, spec, states, loss),
        PhaseMemory(Phase.OPTIMIZER_STEP, (
            *_persistent_parts(states, setup, with_gradients=True, in_step=True),
            Part(PartKind.LOGITS_LOSS, _logits_in_step(setup, loss)),
            Part(PartKind.STEP_TEMPORARIES, optimizer_step_temporaries(arch, setup)))),
    )
    phases += _first_micro_batch(arch, setup, spec, phases)
    dummies = dummy_wgrad_bytes(arch, setup)
    if dummies:
        phases = tuple(PhaseMemory(phase.phase, (*phase.parts,
                                                 Part(PartKind.FROZEN_WEIGHTS, dummies)))
                       if dummy_wgrads_held(phase.phase, setup) else phase for phase in phases)
    return TrainingEstimate(setup=setup, arch=arch, states=states, block_saved=saved,
                            activations_bytes=activations, loss=loss, phases=phases)


_FIRST_MOMENTS = (Phase.LOSS_FORWARD, Phase.BACKWARD_START, Phase.BACKWARD_BLOCKS)


def _first_micro_batch(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                       phases: tuple[PhaseMemory, ...]) -> tuple[PhaseMemory, ...]:
    """Where the run's first micro-batch keeps every checkpointed input on the GPU
    (`first_pass_keeps_inputs`): the largest of its loss's forward, backward's start and
    backward through the last block, each the steady step's moment with every block's input in
    place of the last one's and the reload buffers (not grown yet), and without gradients (the
    first backward makes them) or optimizer states (the first step makes them)."""
    if not first_pass_keeps_inputs(setup):
        return ()
    per_token = block_input_bytes(arch, spec)
    steady = (1 + checkpoint_reload_buffers(setup)) * per_token
    inputs = (per_token * _blocks_with_graph(arch, setup) - steady) * setup.batch * setup.seq_len
    later_only = (PartKind.GRADIENTS, PartKind.OPTIMIZER_STATES)
    moments = (PhaseMemory(Phase.FIRST_MICRO_BATCH,
                           (*(part for part in phase.parts if part.kind not in later_only),
                            Part(PartKind.ACTIVATIONS, inputs)))
               for phase in phases if phase.phase in _FIRST_MOMENTS)
    return (max(moments, key=lambda moment: moment.total_bytes),)


def dummy_wgrads_held(phase: Phase, setup: TrainingSetup) -> bool:
    """The cached dummy weight gradients (`vramplan.training.dummy_wgrads`) exist at `phase`:
    made by the first backward, from the head's on, and kept, so in every phase of a later
    step; not yet in the first step's forward and loss, where a figure of the first step
    (`TrainingSetup.first_step_report`) can peak."""
    return not (setup.first_step_report
                and phase in (Phase.LOSS_FORWARD, Phase.BACKWARD_START))


def _loss_or_final_norm_backward(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                                 loss: LossMemory) -> tuple[Part, ...]:
    """Backward starts with the loss and the head, then the final norm, every block's saved
    tensors still alive: the larger of the loss's vocabulary-sized tensors and the final
    RMSNorm's fp32 backward (`RMSNORM_BACKWARD_FP32_TENSORS`; traced, it is the peak of a step
    whose vocabulary is small)."""
    norm = 0
    tokens = setup.batch * setup.seq_len
    head = _head_spec(arch, setup)
    if arch.final_norm and arch.norm is NormKind.RMSNORM and head.norm_input_needs_grad:
        norm = RMSNORM_BACKWARD_FP32_TENSORS * FP32 * arch.hidden_size * tokens
        if head.head_trains or head.head_keeps_input:
            # the head's saved input (the norm's output) went with the head's backward
            norm -= spec.residual_bytes * arch.hidden_size * tokens
    if norm > loss.backward_peak_bytes:
        return (Part(PartKind.BACKWARD_TEMPORARIES, norm),)
    return (Part(PartKind.LOGITS_LOSS, loss.backward_peak_bytes),)


def activation_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The most activation memory any phase holds for `batch` x `seq_len` (saved tensors,
    logits and loss, backward temporaries): the figure that fills the simple mode's A field,
    which adds it to the model states."""
    estimate = estimate_training(arch, setup)
    return max(phase.by_component().get(Component.ACTIVATIONS, 0) for phase in estimate.phases)


# --- model states -----------------------------------------------------------------------------

# --- activations ------------------------------------------------------------------------------

def _embedding_trains(setup: TrainingSetup) -> bool:
    """The embedding's output needs a gradient: its weight trains (full fine-tuning only;
    `freeze` trains the last blocks and the head)."""
    return setup.method is Method.FULL


def _embedding_output_needs_grad(setup: TrainingSetup) -> bool:
    """The embeddings' output needs a gradient: the embedding trains, or something made it
    require one (`TrainingSetup.input_require_grads`), by default transformers' full
    checkpointing (transformers 5's modeling_utils.py `activation_checkpointing_enable` calls
    `enable_input_require_grads()` for every `input_ids` model, so that frozen layers before
    the first checkpointed block let the gradient through; before v5 it did for a loaded peft
    adapter, and peft's `PeftModel` and `prepare_model_for_kbit_training` do the same)."""
    if setup.input_require_grads is not None:
        return _embedding_trains(setup) or setup.input_require_grads
    transformers_checkpointing = setup.checkpointing is Checkpointing.FULL \
        and runs_transformers_code(setup.framework)
    return _embedding_trains(setup) or transformers_checkpointing


def checkpoints_cut_the_graph(setup: TrainingSetup) -> bool:
    """No checkpointed block builds a graph: reentrant full checkpointing whose first input
    needs no gradient.

    torch.utils.checkpoint's reentrant `CheckpointFunction` is an autograd Function that runs
    its block under `no_grad`: its output requires a gradient only when one of its tensor
    inputs does (the block's parameters are not inputs), and autograd drops what it saved when
    none does (torch/csrc/autograd/python_function.cpp `process_outputs`: `_save_variables`
    only when `is_executable`; torch/utils/checkpoint.py warns "None of the inputs have
    requires_grad=True. Gradients will be None"). When the embeddings' output needs no gradient
    (`_embedding_output_needs_grad`) the first block's output needs none, and so on through
    every block: the blocks keep nothing for backward, nothing recomputes them, and their
    adapters (or, under `freeze`, their weights) never get a gradient. Only what trains after
    the last block does, an adapter on the head. Non-reentrant checkpointing records the
    blocks' parameters through saved-tensor hooks and trains them. ColossalChat's SFT with
    `--lora_rank` runs into it (hpcaitech/ColossalAI applications/ColossalChat @d888c378
    benchmarks/benchmark_sft.py: `convert_to_lora_module`, then `gradient_checkpointing_enable()`
    under transformers 4.39.3, reentrant, with no peft adapter loaded; coati/models/lora.py
    `LoraLinear` adapts every `nn.Linear`, the head's included)."""
    return checkpoints_reentrant(setup) and not _embedding_output_needs_grad(setup)


def _quantized_base_keeps_input(setup: TrainingSetup) -> bool:
    """A QLoRA base's matmul keeps its input in its autograd context when the input needs a
    gradient: bitsandbytes' `MatMul8bitLt` does, and its `MatMul4Bit` did until v0.43.2
    (`ctx.tensors = (A, B)`, then `(None, B)`: `BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`), the code of
    the run's date (None: today's), as its framework installed it (`bitsandbytes_drops_4bit_input`:
    litgpt pinned older releases). torchtune's base is torchao's NF4, whose `LinearNF4` keeps
    only the weight (torchao/dtypes/nf4tensor.py, from its first version, 66318dac)."""
    if setup.method is not Method.QLORA or setup.framework is Framework.TORCHTUNE:
        return False
    if setup.quant is Quant.INT8:
        return True
    return not bitsandbytes_drops_4bit_input(setup.framework, setup.code_date)


def _base_output_in_input_dtype(setup: TrainingSetup) -> bool:
    """A QLoRA base of bitsandbytes 4-bit linears under transformers' code, which hand their
    outputs back in their input's dtype (`BlockSpec.base_output_in_input_dtype`)."""
    return setup.method is Method.QLORA and runs_transformers_code(setup.framework) \
        and setup.quant is not Quant.INT8


def _megatron_probs_in_experts(setup: TrainingSetup) -> bool:
    """Megatron-LM's routed experts apply the routing probabilities in their activation
    (`MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE`; a row of unknown date runs today's code)."""
    return block_framework(setup) is Framework.MEGATRON and has_change(
        setup.code_date, MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE)


def _norm_head_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The normalized head weight a `NormHead` makes in every training forward and `F.linear`
    keeps for backward (Baichuan 2, `RemoteCode.norm_head`): vocabulary x hidden values in the
    weights' dtype. Its gradient in full fine-tuning is not counted."""
    remote = REMOTE_CODE.get(arch.family)
    if remote is None or not remote.norm_head or not runs_transformers_code(setup.framework):
        return 0
    return weight_itemsize(setup.precision) * arch.vocab_size * arch.hidden_size


def block_spec(arch: Architecture, setup: TrainingSetup) -> BlockSpec:
    """How a trained block behaves under `setup` (the last block, for `freeze`)."""
    uses_lora = setup.method.uses_lora
    # `all` as the block linears it names (a setup built in code may carry it unexpanded)
    targets = expand_targets(lora_targets_of(setup)) if uses_lora else frozenset()
    return BlockSpec(
        framework=block_framework(setup),
        residual_bytes=residual_itemsize(setup),
        compute_bytes=compute_itemsize(setup.precision),
        autocast=runs_autocast(setup),
        weights_train=setup.method in (Method.FULL, Method.FREEZE)
        or setup.frozen_weights_need_grad,
        base_keeps_input=_quantized_base_keeps_input(setup),
        base_output_in_input_dtype=_base_output_in_input_dtype(setup),
        moe_expert_loop=runs_transformers_code(setup.framework)
        and arch.family in transformers_code(setup.code_date).moe_expert_linears,
        moe_output_weighted=not _megatron_probs_in_experts(setup),
        lora_targets=targets - {LoraTarget.HEAD},
        lora_rank=lora_rank_of(setup),
        lora_dropout=uses_lora and lora_dropout_active(setup),
        lora_on_modules=lora_on_modules(setup),
        attention=_attention_kernel(arch, setup),
        model_dropout=model_dropout_active(setup),
        compiled=setup.compiled,
        linears_keep_input=setup.linears_keep_input,
        rmsnorm_scale_after_cast=block_framework(setup) is Framework.LITGPT
        and litgpt_code(setup.code_date).rmsnorm_scale_after_cast,
        scores_clamped=runs_transformers_code(setup.framework)
        and arch.family in transformers_code(setup.code_date).clamped_scores,
        liger_kernels=setup.liger_kernels and runs_transformers_code(setup.framework),
        autocast_16bit_weights=autocasts_16bit_weights(setup),
        adapter_input_fp32=uses_lora and peft_casts_adapter_input(setup),
        sdpa_output_saved=setup.framework is not Framework.TORCHTITAN
        or torchtitan_code(setup.code_date).saves_sdpa_output(setup.cuda_capability),
        tensor_parallel=setup.tensor_parallel,
        experts_gathered=setup.experts_gathered,
        experts_merged_per_token=_experts_merged_bytes_per_token(arch, setup, targets),
        reduce_scatter_saved=setup.framework is Framework.TORCHTITAN
        and torchtitan_code(setup.code_date).saves_reduce_scatter,
        mlp_tile_share=Fraction(mlp_tile_tokens(setup, arch.hidden_size),
                                setup.batch * setup.seq_len) if setup.tiled_mlp else None,
    )


def _experts_merged_bytes_per_token(arch: Architecture, setup: TrainingSetup,
                                    targets: frozenset[LoraTarget]) -> int:
    """peft's LoRA on transformers 5's fused routed experts (`BlockSpec.experts_merged_per_token`):
    the merged copies of one MoE layer's adapted expert parameters, `experts.gate_up_proj` for a
    gate or up target and `experts.down_proj` for down, in the weights' dtype, over the step's
    tokens. Not for transformers' per-expert loop of `nn.Linear` modules (before v5.0.0:
    `TransformersCode.moe_expert_linears`), whose adapters are peft's usual `lora_B(lora_A(x))`,
    nor for another stack's LoRA (Megatron-LM's, Unsloth's)."""
    if not (arch.is_moe and setup.method.uses_lora and lora_on_modules(setup)) \
            or arch.family in transformers_code(setup.code_date).moe_expert_linears:
        return 0
    width = arch.expert_intermediate_size
    gate_up = width * (2 if arch.mlp is MlpKind.GATED else 1)
    rows = (gate_up if {LoraTarget.GATE, LoraTarget.UP} & targets else 0) \
        + (width if LoraTarget.DOWN in targets else 0)
    merged = arch.n_experts * rows * arch.hidden_size * weight_itemsize(setup.precision)
    return ceil_div(merged, setup.batch * setup.seq_len)


def mlp_tile_tokens(setup: TrainingSetup, hidden: int) -> int:
    """Tokens of the largest tile a tiled MLP (`TrainingSetup.tiled_mlp`) runs at once, of the
    step's batch x seq_len:
    - Unsloth (unsloth-zoo unsloth_zoo/tiled_mlp.py @7209a767, `tiled_forward_arctic_size`, the
      "arctic" rule `unsloth_tiled_mlp=True` picks): tiles of `hidden` tokens of the flattened
      batch, `seq_len // hidden` of them, the rest in one last tile (`remainder = B*S -
      qlen_chunk_size * num_shards`), which holds the other sequences when the batch has more
      than one (the rule since 04ab6f11, 2025-11-25; for one sequence the same tiles as the
      first one's, c9c7693d, 2025-11-12);
    - axolotl: each sequence in `ceil(seq_len / hidden)` shards, `ceil(seq_len / 32768)` from
      2026-05-28 (`AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE`), along the sequence
      (src/axolotl/monkeypatch/tiled_mlp/base.py: `torch.chunk(x, chunks=shards, dim=1)`);
    - DeepSpeed's `TiledMLP` as its docstring's example calls it (Arctic Long Sequence
      Training: `num_shards = math.ceil(seqlen / hidden)`), whose backward chunks the
      flattened batch (deepspeed/runtime/sequence_parallel/ulysses_sp.py, 4d00b38ad)."""
    batch, seq_len = setup.batch, setup.seq_len
    tokens = batch * seq_len
    if setup.framework is Framework.UNSLOTH:
        chunk = min(hidden, tokens)
        return max(chunk, tokens - chunk * max(1, seq_len // hidden))
    if setup.framework is Framework.AXOLOTL:
        width = AXOLOTL_TILED_MLP_SHARD_TOKENS \
            if has_change(setup.code_date, AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE) else hidden
        return batch * ceil_div(seq_len, ceil_div(seq_len, width))
    return ceil_div(tokens, ceil_div(seq_len, hidden))


def _attention_kernel(arch: Architecture, setup: TrainingSetup) -> Attention:
    """The attention that runs: litgpt's code of before October 2023 gave SDPA a multi-query
    model's single key-value head unexpanded, and SDPA ran its math kernel (`LitgptCode
    .mqa_kv_expanded`), which `eager` stands for in litgpt. A transformers module without an
    SDPA or a FlashAttention path runs eager attention (`Architecture.sdpa_attention`,
    `flash_attention`: BLOOM, GPT-Neo)."""
    multi_query = arch.n_kv_heads == 1 < arch.n_heads
    if (setup.framework is Framework.LITGPT and setup.attention is Attention.SDPA
            and multi_query and not litgpt_code(setup.code_date).mqa_kv_expanded):
        return Attention.EAGER
    if runs_transformers_code(setup.framework) and (
            (setup.attention is Attention.SDPA and not arch.sdpa_attention)
            or (setup.attention is Attention.FLASH and not arch.flash_attention)):
        return Attention.EAGER
    return setup.attention


def _blocks_activation_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                             saved: tuple[Saved, ...]) -> int:
    """Per token, all blocks together, at the start of backward (dense and MoE blocks of a mixed
    model each with their own tensors)."""
    if setup.checkpointing is Checkpointing.FULL:
        # only block inputs stay (torch.utils.checkpoint saves its inputs); one block is
        # recomputed at a time in backward (counted in the backward_blocks phase). Unsloth's
        # checkpointing keeps them in host memory (`UnslothCode.offloads_checkpoints`), all but
        # the last block's since its smart checkpointing
        if offloads_checkpoints(setup):
            return block_input_bytes(arch, spec) if keeps_last_checkpoint_input(setup) else 0
        kept = submodule_checkpoint_inputs(arch, spec) if setup.checkpoint_submodules \
            else block_input_bytes(arch, spec)
        return kept * _blocks_with_graph(arch, setup)
    layers = range(arch.n_layers - _blocks_with_graph(arch, setup), arch.n_layers)
    per_kind = {moe: total_per_token(kept_for_backward(
        arch.kind_view(moe), spec, block_saved(arch.kind_view(moe), spec, setup.seq_len),
        setup.checkpointing)) for moe in {arch.layer_is_moe(layer) for layer in layers}}
    first = _first_trained_block_bytes(arch.kind_view(arch.layer_is_moe(layers[0])), setup,
                                       spec)
    masked = masked_local_layers_bytes(arch, spec, setup.seq_len, len(layers))
    return first + sum(per_kind[arch.layer_is_moe(layer)] for layer in layers[1:]) + masked


def _largest_kind(arch: Architecture) -> Architecture:
    """The architecture seen as its largest kind of block (the MoE one in a mixed model)."""
    return arch.kind_view(arch.is_moe)


def _trained_blocks(arch: Architecture, setup: TrainingSetup) -> int:
    """Blocks with trainable parameters: all, or the last `train_layers` under `freeze`."""
    if setup.method is Method.FREEZE:
        return min(setup.train_layers, arch.n_layers)
    return arch.n_layers


def _blocks_with_graph(arch: Architecture, setup: TrainingSetup) -> int:
    """Blocks whose forward builds an autograd graph: the trained ones (under `freeze`, no
    input needs a gradient before them), none when reentrant checkpoints cut the graph
    (`checkpoints_cut_the_graph`)."""
    if checkpoints_cut_the_graph(setup):
        return 0
    return _trained_blocks(arch, setup)


def _first_trained_block_bytes(arch: Architecture, setup: TrainingSetup,
                               spec: BlockSpec) -> int:
    """The first block with a graph: its input comes from frozen layers unless the embedding
    trains."""
    saved = block_saved(arch, spec, setup.seq_len, input_needs_grad=_embedding_trains(setup))
    return total_per_token(kept_for_backward(arch, spec, saved, setup.checkpointing))


def _backward_transient(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                        saved: tuple[Saved, ...]) -> int:
    """Per token: the last block's gradient temporaries, plus the block being recomputed under
    full checkpointing (its saved tensors exist again while its backward runs), or the
    recomputed forward's largest moment where that holds more (`recomputed_forward_peak`)."""
    transient = block_backward_transient(arch, spec, saved)
    if setup.checkpointing is Checkpointing.FULL:
        # a local layer's recomputed forward makes its float mask and expanded k and v again;
        # checkpointed sub-module by sub-module, one sub-module is recomputed at a time
        if setup.checkpoint_submodules:
            transient += largest_submodule_saved(saved)
        else:
            # the block's backward, or a moment of its recomputed forward
            transient = max(transient + total_per_token(saved)
                            - total_per_token(released_before_block_peak(arch, spec)),
                            recomputed_forward_peak(arch, spec, setup.seq_len,
                                                    reentrant=checkpoints_reentrant(setup)))
        transient += masked_local_layer_bytes(arch, spec, setup.seq_len)
        if offloads_checkpoints(setup) and not checkpoint_reload_buffers(setup) \
                and not any(item.name == "x_in" for item in saved):
            # an offloaded input comes back into a fresh tensor for its block's recomputation
            # (`CheckpointFunctionWithCPUOffload.backward`: `.to(ctx.x_device)`), beside what the
            # block saves unless the block saves its input itself
            transient += block_input_bytes(arch, spec)
    elif setup.checkpointing is Checkpointing.SELECTIVE:
        # what the policy recomputes exists again while the block runs backward: what autograd
        # saved less what the policy kept; not less what it keeps under tensor parallelism
        # beyond that (reduce-scatter outputs, w2's whole output), which autograd does not save
        one_gpu = replace(spec, tensor_parallel=1)
        kept = total_per_token(kept_for_backward(arch, one_gpu, saved, setup.checkpointing))
        transient += max(total_per_token(saved) - kept, 0)
    return transient


def _gradients_before_scores(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                             saved: tuple[Saved, ...]) -> int:
    """When eager attention's softmax backward is the block's backward peak
    (`scores_backward_extra` the largest of `block_backward_transient`'s candidates), the
    block's MLP and output projection have run their backward: their weights' gradients exist,
    when the block's weights train (full fine-tuning, and the trained blocks of `freeze`; an
    adapter's are too small to count). Not when gradients persist (kept over accumulation, or in
    a framework's gradient buffer: counted there) or are stepped on and freed as they are made.
    Traced: the gap between the model and the trace at a Llama block's eager peak was these
    gradients."""
    extra = scores_backward_extra(saved)
    if not spec.weights_train or not extra or extra < block_backward_transient(arch, spec, saved) \
            or gradients_kept(setup) or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return 0
    after_attention = sum(lin.params_each * lin.count for lin in arch.block_linears()
                          if lin.role not in _ATTENTION_INPUT_ROLES)
    return after_attention * trainable_itemsize(setup)


_MLP_ROLES = frozenset({"gate", "up", "down", "gate_up"})


def _mlp_gradients_between_tiles(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                                 saved: tuple[Saved, ...]) -> int:
    """A tiled MLP of more than one tile backpropagates each tile into its weights' gradients
    (`tiled_mlp_backward`): from the second tile on they sit beside the tile's tensors, where
    an untiled MLP makes them after its intermediates are freed. Counted when the tiled MLP's
    backward is the block's largest and the block's weights train, not when gradients persist
    or are stepped on as they are made (as `_gradients_before_scores`). Traced
    (`vramplan.tracer.tiled_mlp`, tests/test_trace_agreement.py): the peak of a tiled block's
    backward holds them."""
    share = spec.mlp_tile_share
    if share is None or share >= 1 or not spec.weights_train or gradients_kept(setup) \
            or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD \
            or tiled_mlp_backward(arch, spec, share) < block_backward_transient(arch, spec, saved):
        return 0
    mlp = sum(lin.params_each * lin.count for lin in arch.block_linears()
              if lin.role in _MLP_ROLES)
    return mlp * trainable_itemsize(setup)


def _eager_mask_kept_bytes(setup: TrainingSetup, spec: BlockSpec) -> int:
    """Per token: transformers' attention mask for eager attention, kept through backward under
    full checkpointing. The model builds one 4-D float mask per forward, batch x 1 x T x T in the
    model's dtype (masking_utils `eager_mask`: `torch.where(mask, 0.0, min_dtype)`), and passes
    it to every layer; a checkpointed layer's call keeps its arguments for the recomputation
    (`GradientCheckpointingLayer` binds them in the function it checkpoints), so the mask lives
    until the first layer's backward. Without checkpointing nothing saves it (the scores' `+`
    keeps no input) and it is freed with the forward. Traced: BLOOM, GPT-Neo, OPT, GPT-2, Qwen2
    and Llama hold it at their backward peak. SDPA and FlashAttention take no mask (`is_causal`)."""
    if setup.checkpointing is not Checkpointing.FULL or spec.attention is not Attention.EAGER \
            or not runs_transformers_code(setup.framework):
        return 0
    return setup.seq_len * spec.residual_bytes


def _runs_gpt_oss_expert_loop(arch: Architecture, setup: TrainingSetup) -> bool:
    """gpt-oss's experts train through transformers' per-expert loop
    (`TransformersCode.gpt_oss_expert_loop`): transformers' model code of the run's date, the
    Hub's MoE kernel not applied (`TrainingSetup.moe_hub_kernel`); Unsloth patches the experts
    with its own."""
    return arch.family == "gpt_oss" and runs_transformers_code(setup.framework) \
        and setup.framework is not Framework.UNSLOTH and not setup.moe_hub_kernel \
        and transformers_code(setup.code_date).gpt_oss_expert_loop


def _expert_weight_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Bytes one MoE layer's forward saves as copies of its experts' weights, `gate_up_proj`
    (hidden x 2 intermediate) and `down_proj` (intermediate x hidden) each: v4.55's gpt-oss loop
    indexes them with a one-element tensor, a copy of each hit expert's, which each matmul saves
    for its input's gradient (`TransformersCode.gpt_oss_expert_copies`; every expert is hit once
    the layer routes as many tokens, batch x length x experts per token); quantized experts
    are dequantized whole, which `grouped_mm` saves (`TrainingSetup.quantized_experts`). In the
    weights' dtype; under autocast the 16-bit cast the matmul saves."""
    if setup.quantized_experts and arch.is_moe:
        hit = arch.n_experts
    elif _runs_gpt_oss_expert_loop(arch, setup) \
            and transformers_code(setup.code_date).gpt_oss_expert_copies:
        hit = min(arch.n_experts, setup.batch * setup.seq_len * arch.experts_per_token)
    else:
        return 0
    itemsize = compute_itemsize(setup.precision) if runs_autocast(setup) \
        else weight_itemsize(setup.precision)
    return hit * 3 * arch.hidden_size * arch.expert_intermediate_size * itemsize


def _expert_gradient_sums(arch: Architecture, setup: TrainingSetup) -> int:
    """While a MoE layer's backward runs through the per-expert loop with its experts training,
    each expert's weight slice hands back a zero tensor of the whole 3-D parameter with its
    gradient in place, which autograd adds to the parameter's running sum: the whole experts'
    gradient exists from the first expert's backward on, beside one more `gate_up_proj`-sized
    zero tensor (`TransformersCode.gpt_oss_expert_loop`)."""
    if not _runs_gpt_oss_expert_loop(arch, setup) or setup.method not in (Method.FULL,
                                                                           Method.FREEZE):
        return 0
    experts = arch.n_experts * arch.hidden_size * arch.expert_intermediate_size
    # the running gradient of gate_up (2 x) and down (1 x), and one more gate_up-sized zero
    return (2 + 1 + 2) * experts * gradient_itemsize(setup)


def _dequant_in_block_backward(arch: Architecture, setup: TrainingSetup,
                               spec: BlockSpec) -> int:
    """The dequantized weight beside the block's backward peak (`_dequant_bytes`), but for a
    block recomputed under non-reentrant full checkpointing whose quantized linears keep no
    input (bitsandbytes v0.43.2 on, `BlockSpec.base_keeps_input`; not DeepSpeed ZeRO-3's
    linears, `BlockSpec.linears_keep_input`): there the frozen 4-bit down
    projection runs its backward before anything is recomputed (it unpacks no saved tensor) and
    frees its dequantized weight, the block then peaks at the MLP product's backward beside the
    recomputed tensors, and gate's and up's dequantized weights come after, when less is
    saved. Traced (vramplan.tracer, QLoRA on q,v and on every linear, full checkpointing, 2 x
    128 tokens, Llama, Qwen2, Phi, OPT): the peak holds the product's gradient, the product and
    the first gradient of its backward, and no dequantized weight; counting one put bf16 runs
    +3.9 to +4.0 % over."""
    if setup.checkpointing is Checkpointing.FULL and not checkpoints_reentrant(setup) \
            and not (spec.base_keeps_input or spec.linears_keep_input):
        return 0
    return _dequant_bytes(arch, setup)


def _dequant_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """A quantized linear dequantizes its whole weight to 16 bits for each matmul, forward and
    backward (bitsandbytes MatMul4Bit: `F.dequantize_4bit(B, quant_state)`): the largest block
    linear, as a transient."""
    if setup.method is not Method.QLORA:
        return 0
    largest = max(lin.in_features * lin.out_features for lin in arch.block_linears())
    return dequantized_bytes_per_value(setup) * largest


def dequantized_bytes_per_value(setup: TrainingSetup) -> int:
    """Bytes per weight value while a quantized linear dequantizes it for a matmul.

    bitsandbytes dequantizes a 4-bit weight to the dtype it was quantized from
    (functional.dequantize_4bit: `torch.empty(quant_state.shape, dtype=quant_state.dtype)`), and
    MatMul4Bit casts that to the input's dtype (`F.dequantize_4bit(B, quant_state).to(A.dtype)`),
    both alive during the cast. Lightning Fabric quantizes from float16 whatever the precision
    (Lightning-AI/pytorch-lightning src/lightning/fabric/plugins/precision/bitsandbytes.py @003e3070
    and @d9ff9f3b, `_Linear4bit.quantize` / `_quantize_weight`:
    `weight.contiguous().to(device=device, dtype=torch.half)`), so litgpt's bf16 runs hold a
    float16 and a bf16 copy; lit-gpt's own quantization before it (`LitgptCode.
    fabric_quantization`) quantized from the model's weights, fp32 under `amp`, whose
    dequantized copy autocast then casts to 16 bits inside `F.linear`; transformers quantizes
    from the checkpoint's dtype (no cast under its compute dtype). int8 (MatMul8bitLt) makes
    one 16-bit copy (`state.CB.to(ctx.dtype_A)`). torchtune's torchao NF4 dequantizes through
    int64 codes in eager mode (`vramplan.training.states.torchao_nf4_dequantize_bytes`);
    compiled, inductor fuses the dequantization into one kernel that writes the compute-dtype
    weight."""
    compute = compute_itemsize(setup.precision)
    four_bit = setup.quant not in (Quant.NONE, Quant.INT8)
    if stores_torchao_nf4(setup) and not setup.compiled:
        return torchao_nf4_dequantize_bytes(compute)
    if four_bit and setup.framework is Framework.LITGPT:
        if not litgpt_code(setup.code_date).fabric_quantization:
            weights = weight_itemsize(setup.precision)
            return weights + (compute if weights != compute else 0)
        return 2 + compute  # the float16 dequantized weight, then its cast (litgpt: bf16-true)
    return compute


def _head_spec(arch: Architecture, setup: TrainingSetup) -> HeadSpec:
    uses_lora = setup.method.uses_lora
    head_quantized = setup.method is Method.QLORA and setup.framework is Framework.LITGPT
    # litgpt's LoRA scripts chunk the head by 128 tokens; torchtune chunks its output for its
    # CEWithChunkedOutputLoss; elsewhere `chunked` means a fused linear cross-entropy
    default_chunked = (setup.framework is Framework.LITGPT and uses_lora) or \
        framework_defaults(setup.framework).loss is Loss.CHUNKED or \
        unsloth_fuses_loss(setup)
    chunked = setup.loss is Loss.CHUNKED if setup.loss is not None else default_chunked
    keeps_outputs = loop_keeps_logits(setup)
    spec = HeadSpec(
        framework=setup.framework,
        chunked=chunked,
        head_trains=setup.method is Method.FULL,
        head_lora=uses_lora and LoraTarget.HEAD in setup.lora_targets,
        head_keeps_input=(head_quantized and _quantized_base_keeps_input(setup))
        or setup.linears_keep_input,
        head_dequant_bytes=(dequantized_bytes_per_value(setup) * arch.hidden_size
                            * arch.vocab_size if head_quantized else 0)
        + _norm_head_bytes(arch, setup),
        quantized_head_output_bytes=_quantized_head_output_bytes(setup) if head_quantized else 0,
        previous_logits=(setup.framework is Framework.LITGPT
                         or (keeps_outputs and not setup.loop_frees_outputs))
        and setup.steady_state,
        outputs_kept=keeps_outputs,
        compiled=loss_compiled(setup),
        log_probs=setup.log_probs,
        coati_orpo=setup.coati_orpo_loss,
        autocast=runs_autocast(setup),
        loss_in_function=setup.loss_in_function,
        logits_fp32_in_model=model_returns_fp32_logits(setup, arch.family),
        shifts_logits=model_loss_code(setup, arch.family).shifts_logits,
        shift_cast_by_autocast=autocast_casts_shifted_logits(setup, arch.family),
        outputs_copied_fp32=accelerate_copies_outputs(setup),
        loss_16bit=loss_in_16bit(setup, arch.family),
        loss_parallel=setup.loss_parallel,
        te_cross_entropy=setup.te_cross_entropy and setup.framework is Framework.MEGATRON,
        native_fused_cross_entropy=native_fused_cross_entropy(setup),
        megatron_max_subtracted_apart=setup.framework is Framework.MEGATRON
        and setup.code_date is not None
        and setup.code_date < MEGATRON_MAX_SUBTRACTED_IN_PLACE_SINCE,
        norm_input_needs_grad=not checkpoints_cut_the_graph(setup),
    )
    if spec.fused_linear and setup.method is Method.FULL:
        spec = replace(spec, head_grad_bytes=weight_itemsize(setup.precision)
                       * arch.vocab_size * arch.hidden_size)
    if spec.fused_linear:
        spec = replace(spec, fused_rows=_unsloth_loss_rows(arch, setup))
    return spec


def _quantized_head_output_bytes(setup: TrainingSetup) -> int:
    """The dtype litgpt's quantized head returns its logits in (`HeadSpec.
    quantized_head_output_bytes`): Fabric's layer computes in the compute dtype; lit-gpt's own
    casts its output back to its input's, the final norm's output, fp32 under `amp`."""
    compute = compute_itemsize(setup.precision)
    if litgpt_code(setup.code_date).fabric_quantization:
        return compute
    return weight_itemsize(setup.precision)


def _gradients_made(arch: Architecture, setup: TrainingSetup, states: ModelStates) -> int:
    """Gradients alive when backward reaches the first block (one at a time when the optimizer
    steps inside backward)."""
    if setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return largest_gradient_bytes(states, setup)
    return _gradients_before_first_block(arch, setup)


def _gradients_before_first_block(arch: Architecture, setup: TrainingSetup) -> int:
    """Gradients already made when backward reaches the first block with a graph: all but that
    block's and the embedding's (the embedding's dense gradient comes last). With no block's
    graph (`checkpoints_cut_the_graph`), those of what trains outside the blocks: the head's
    adapter."""
    tensors = trainable_tensors(arch, setup)
    total = sum(g.elements * g.count for g in tensors)
    if not _blocks_with_graph(arch, setup):
        return _trained_outside_blocks(arch, setup, total) * trainable_itemsize(setup)
    if setup.method.uses_lora:
        done = total * (arch.n_layers - 1) // arch.n_layers
    elif setup.method is Method.FREEZE:
        layers = _blocks_with_graph(arch, setup)
        done = total * (layers - 1) // layers
    else:
        # a tied embedding is the head: its gradient starts with the head's, early in backward;
        # a learned position table's (GPT-2, GPT-Neo, OPT) comes with the embeddings', last
        embedding = 0 if _tied_in_framework(arch, setup) else arch.params_token_embedding
        done = total - arch.params_of_layer(0) - embedding - arch.params_position_embedding
    return done * trainable_itemsize(setup)


def _trained_outside_blocks(arch: Architecture, setup: TrainingSetup, total: int) -> int:
    """Of the `total` trainable values, those outside the blocks: the LoRA adapter on the head
    (A and B), or what `freeze` trains besides its blocks."""
    if setup.method.uses_lora:
        if LoraTarget.HEAD not in setup.lora_targets:
            return 0
        head = arch.head_linear()
        return lora_rank_of(setup) * (head.in_features + head.out_features)
    trained = range(arch.n_layers - _trained_blocks(arch, setup), arch.n_layers)
    return total - sum(map(arch.params_of_layer, trained))


def _embedding_backward(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                        states: ModelStates, loss: LossMemory) -> tuple[PhaseMemory, ...]:
    """The embedding's backward, last in the step's backward, when its weight trains: every
    other gradient exists, the gradient of the embedding's output arrives, and the embedding's
    weight gradient is formed (`embedding_dense_backward`: a dense vocabulary x hidden tensor).
    None when the embedding is frozen (no graph reaches it)."""
    if not _embedding_trains(setup):
        return ()
    kept = gradients_kept(setup)
    embedding = arch.params_token_embedding * weight_itemsize(setup.precision)
    if kept or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        others = 0  # kept in the persistent gradients, or stepped on and freed already
    else:
        others = _gradient_elements(arch, setup) * weight_itemsize(setup.precision) - embedding
    tokens = setup.batch * setup.seq_len
    return (PhaseMemory(Phase.EMBEDDING_BACKWARD, (
        *_persistent_parts(states, setup, with_gradients=kept),
        Part(PartKind.GRADIENTS, others),
        Part(PartKind.LOGITS_LOSS, loss.logits_alive_bytes),
        Part(PartKind.BACKWARD_TEMPORARIES,
             _embedding_gradients_in_flight(arch, setup) * embedding
             + block_input_bytes(arch, spec) * tokens))),)


def _embedding_gradients_in_flight(arch: Architecture, setup: TrainingSetup) -> int:
    """Embedding-sized gradients alive while the embedding's backward completes.

    Untied: its own, which AccumulateGrad then takes as `.grad`. Tied: autograd's engine sums
    the contributions of the head and of the embedding in the weight's input buffer before
    AccumulateGrad runs (torch/csrc/autograd/input_buffer.cpp `accumulate`). The head's
    contribution waits there from the start of backward; the sum is made in place only when
    that tensor can be stolen (`can_accumulate_inplace`: it alone holds its storage). The
    linear's weight gradient is a view (`mm_mat2_backward` returns `grad.t().mm(mat1).t()` for
    the transposed weight, then TBackward transposes it back), which shares its storage with its
    base: `old_var + var` makes a third tensor beside the head's and the embedding's. Under
    autocast the head's contribution is the fp32 output of the cast's backward (`_to_copy`), a
    tensor of its own, and the embedding's is added into it: two. Traced (vramplan trace,
    qwen2.5-0.5b full bf16-true, SGD: 3 x 259.7 MiB beside every other gradient at the peak;
    the tracer's dispatch mode turns the in-place sum under autocast into a third tensor too:
    ATen's `isTensorSubclassLike` is true while a dispatch mode is active). torchtune's chunked
    head calls the linear once per chunk: the buffer then holds the chunks' out-of-place sum, a
    tensor of its own that the embedding's gradient is added to in place (`_torchtune_loss`)."""
    if not _tied_in_framework(arch, setup):
        return 1
    if setup.framework is Framework.TORCHTUNE and _head_spec(arch, setup).chunked:
        return 2
    return 2 if setup.precision is Precision.AMP else 3


def _gradient_elements(arch: Architecture, setup: TrainingSetup) -> int:
    return sum(g.elements * g.count for g in trainable_tensors(arch, setup))


def _tied_in_framework(arch: Architecture, setup: TrainingSetup) -> bool:
    return arch.tied_embeddings and not head_is_separate(arch, setup)


def _autocast_weight_copies(arch: Architecture, setup: TrainingSetup, spec: BlockSpec) -> int:
    """Under autocast every fp32 linear weight is cast to 16 bits for its matmul, and the matmul
    saves that copy for its input's gradient until backward. Casts of frozen weights are not
    cached (torch autocast caches only leaves that require grad, autocast_mode.cpp
    `cached_cast`) and are saved only when the matmul's input needs a gradient: not those of
    the first block's linears under LoRA that read a tensor needing none
    (`first_block_graphless_linears`); trainable ones are cached."""
    if not autocast_casts_weights(setup):
        return 0
    if setup.checkpointing is Checkpointing.FULL:
        # a checkpointed block runs its forward without grad (torch.utils.checkpoint): its
        # matmuls save nothing, and no cast of a frozen weight is cached; the casts of
        # trainable weights live in autocast's cache until the forward's autocast region exits
        # (before backward). What stays is the head's cast, saved by the head's matmul outside
        # the blocks, whose input needs a gradient under every method (something before the
        # head trains) (traced: vramplan trace, qwen2.5-0.5b LoRA amp, full checkpointing)
        return 2 * _head_copies(arch, setup)
    if setup.method is Method.QLORA:
        # the blocks' linears are quantized, not fp32 parameters: autocast casts none of them
        return 2 * _head_copies(arch, setup)
    per_block = {lin.role: lin.params_each * lin.count
                 for lin in arch.kind_view(arch.layer_is_moe(0)).block_linears()}
    graph = _blocks_with_graph(arch, setup)
    linears = {kind.moe: sum(lin.params_each * lin.count for lin in kind.linears)
               for kind in arch.block_kinds()}
    block = sum(linears[arch.layer_is_moe(layer)]
                for layer in range(arch.n_layers - graph, arch.n_layers))
    copies = block + _head_copies(arch, setup)
    if setup.method.uses_lora:
        copies -= sum(per_block.get(role, 0) for role in first_block_graphless_linears(arch, spec))
    return 2 * copies


def _cached_block_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Under autocast with full checkpointing, the casts of the trainable block weights that
    autocast's cache holds until the forward's autocast region exits, after the loss
    (aten/src/ATen/autocast_mode.cpp `cached_cast`: leaves that require grad, whatever the grad
    mode, so also inside checkpoint's no-grad forward; the cache is cleared when the outermost
    autocast region exits). Without checkpointing they are the saved copies already counted.
    LoRA's adapters are cached too, a few MB, not counted."""
    if not autocast_casts_weights(setup) or setup.checkpointing is not Checkpointing.FULL:
        return 0
    if setup.method not in (Method.FULL, Method.FREEZE):
        return 0
    linears = {kind.moe: sum(lin.params_each * lin.count for lin in kind.linears)
               for kind in arch.block_kinds()}
    trained = range(arch.n_layers - _trained_blocks(arch, setup), arch.n_layers)
    return 2 * sum(linears[arch.layer_is_moe(layer)] for layer in trained)


def _head_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Values of the head's 16-bit casts: the head is cast once per call; litgpt's chunked
    head calls it once per 128-token chunk, and each chunk's matmul keeps its own copy."""
    chunked = _head_spec(arch, setup).chunked and setup.framework is Framework.LITGPT
    head_calls = ceil_div(setup.seq_len, LITGPT_LM_HEAD_CHUNK) if chunked else 1
    return head_calls * arch.hidden_size * arch.vocab_size


def _recomputed_block_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Under full checkpointing and autocast, the 16-bit casts of the block being recomputed
    for its backward (checkpoint restores the forward's autocast state), each saved by its
    matmul until that matmul's backward has run. At the block's backward peak
    (`block_backward_transient`): in the MLP's, every cast but the MLP's output projection's
    (its backward ran first); in attention's, the query, key and value projections' only. The
    largest kind of block. Traced (tests/test_trace_agreement.py, amp under full
    checkpointing). None under QLoRA, whose blocks' linears are quantized, not fp32 parameters
    (`_autocast_weight_copies`): traced, the recomputed QLoRA block holds its adapters' casts
    alone."""
    if not autocast_casts_weights(setup) or setup.method is Method.QLORA:
        return 0
    compute = compute_itemsize(setup.precision)
    alive = []
    for kind in arch.block_kinds():
        view = arch.kind_view(kind.moe)
        # block_backward_transient's two candidates: the MLP's gradients or attention's
        mlp_peak = 3 * compute * view.expert_intermediate_size >= \
            3 * compute * view.q_dim + FP32 * view.q_dim
        alive.append(sum(lin.params_each * lin.count for lin in kind.linears
                         if (lin.role != "down" if mlp_peak
                             else lin.role in _ATTENTION_INPUT_ROLES)))
    return 2 * max(alive)


_ATTENTION_INPUT_ROLES = frozenset({"q", "k", "v", "q_a", "q_b", "kv_a", "kv_b"})
"""Projections that run before the attention kernel: their casts are still saved when the
kernel's backward runs."""


def _previous_graph_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec) -> int:
    """litgpt's loop rebinds `loss` only after the next forward and loss: until then the previous
    micro-batch's graph is alive, and with it every bitsandbytes matmul's `ctx.tensors` (its
    input), which backward does not free (litgpt/finetune/lora.py `fit`). Steady state: the
    previous micro-batch had the same shape (batches padded to a length cap). A run whose largest
    batch comes first (litgpt's 2023 scripts forced the longest sample into the first batch)
    peaks before any previous graph exists."""
    if setup.framework is not Framework.LITGPT or not setup.steady_state:
        return 0
    tokens = setup.batch * setup.seq_len
    head = spec.residual_bytes * arch.hidden_size if setup.method is Method.QLORA else 0
    return (quantized_base_inputs(arch, spec) * arch.n_layers + head) * tokens


def _logits_in_step(setup: TrainingSetup, loss: LossMemory) -> int:
    """The logits the loop still holds during optimizer.step(): litgpt's loop variable
    `logits`, or the outputs a loop keeps (`HeadSpec.outputs_kept`)."""
    return loss.logits_alive_bytes


def _persistent_parts(states: ModelStates, setup: TrainingSetup,
                      with_gradients: bool | None = None,
                      in_step: bool = False) -> tuple[Part, ...]:
    grads = gradients_kept(setup) if with_gradients is None else with_gradients
    gradient_bytes = states.gradient_bytes if grads else 0
    if with_gradients and setup.precision is Precision.MIXED:
        # a master-weight optimizer steps on fp32 gradients of its masters: each 16-bit
        # gradient becomes an fp32 one (Megatron's `main_grad`, DeepSpeed's fp32 partition)
        gradient_bytes = 4 * states.trainable_params
    if grads and setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        gradient_bytes = largest_gradient_bytes(states, setup)
    return (
        Part(PartKind.TRAINABLE_WEIGHTS, states.trainable_weight_bytes),
        Part(PartKind.FROZEN_WEIGHTS, states.frozen_weight_bytes + states.buffer_bytes),
        Part(PartKind.GRADIENTS, gradient_bytes),
        Part(PartKind.MASTER_WEIGHTS, states.master_weight_bytes),
        Part(PartKind.OPTIMIZER_STATES,
             states.optimizer_state_bytes if in_step or optimizer_states_exist(setup) else 0),
    )


def largest_gradient_bytes(states: ModelStates, setup: TrainingSetup) -> int:
    """The optimizer stepping inside backward (torchtune `OptimizerInBackward`,
    torchtune/modules/optim.py: one optimizer per parameter, `register_post_accumulate_grad_hook`
    -> `step()` then `zero_grad()`) frees each gradient as soon as it is made: one parameter's
    gradient at a time, the largest at most."""
    return states.largest_trainable_params * states.gradient_itemsize


def activations_for_simple_mode(arch: Architecture, batch: int, seq_len: int,
                                method: Method = Method.FULL) -> int:
    """The simple mode's A from batch and sequence length: the activation memory at the peak
    (saved tensors, logits and loss, backward temporaries) of one step in mixed precision with
    SDPA, as transformers runs it, in bytes. The web page's Activations panel calls this."""
    setup = TrainingSetup(method=method, precision=Precision.MIXED, batch=batch, seq_len=seq_len,
                          framework=Framework.HF, gradient_accumulation=False,
                          quant=Quant.NF4 if method is Method.QLORA else Quant.NONE)
    return activation_bytes(arch, setup)  # LoRA: transformers' default rank and targets
