"""DPO's and GRPO's training micro-step, as huggingface/trl computes it (trl @f2cd5771; file and
line references are to that snapshot), on the real transformers model.

- DPO (`DPOTrainer._compute_loss`, trl/trainer/dpo_trainer.py :1329-1420): chosen and rejected
  rows concatenated (the collator's 2 x batch rows), the policy's forward with gradient,
  `selective_log_softmax` over the shifted logits, per-sequence sums; then, while the policy's
  output and graph are alive, the reference forward without gradient (a frozen copy, or the
  policy with its adapter disabled) and its log-probabilities, unless they were precomputed;
  the sigmoid loss on the log-ratios.
- GRPO (`GRPOTrainer._compute_loss` :2991-3141, `_get_per_token_logps_and_entropies`
  :1435-1541): when `beta` is not zero, the reference's log-probabilities without gradient
  first (:2626-2653, as `_generate_and_score_completions` computes them before the micro-steps);
  then the policy's forward over prompt and completion with `logits_to_keep` = completion + 1,
  the log-probabilities and the entropy (without gradient) of the completion's logits, and the
  default `dapo` loss: the clipped ratio to the old policy (`per_token_logps.detach()`, as TRL
  uses when generation and optimizer steps are aligned) times the advantages, plus `beta` times
  the KL estimate.

Generation is not traced: the completions are random token ids of the completion's length, and
the step traced is the training micro-step that follows a generation.

Under `amp` each forward is accelerate's prepared one: the model's forward under bf16 autocast,
its outputs converted to fp32 (`convert_outputs_to_fp32`, accelerate/utils/operations.py), for the
policy and for the reference (`prepare_model(ref, evaluation_mode=True)`) alike.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch import nn
from torch.nn import functional

from vramplan.tracer.result import Phase
from vramplan.tracer.setup import TraceSetup
from vramplan.tracer.tracker import StorageTracker
from vramplan.vocab import Method, Precision

DPO_BETA = 0.1
"""TRL `DPOConfig.beta` (trl/trainer/dpo_config.py)."""
GRPO_EPSILON = 0.2
"""TRL `GRPOConfig.epsilon` (and `epsilon_high`, which defaults to it): the ratio's clip."""
Batch = tuple[torch.Tensor, ...]
"""The batch's tensors, which the training loop keeps referenced through backward."""
GRPO_TEMPERATURE = 1.0
"""TRL `GRPOConfig.temperature`: the logits are divided by it in place (`logits.div_`)."""


def reference_pass_runs(setup: TraceSetup) -> bool:
    """The step computes reference log-probabilities: DPO unless precomputed, GRPO when its KL
    weight is not zero."""
    alignment = setup.alignment
    if alignment is None:
        return False
    if alignment.method is Method.DPO:
        return not alignment.precompute_ref
    return alignment.beta != 0


def reference_copy_kept(setup: TraceSetup) -> bool:
    """A separate frozen reference model is loaded: the reference pass runs and the policy is
    not a PEFT adapter (dpo_trainer.py :893-910, grpo_trainer.py :953-971)."""
    return reference_pass_runs(setup) and not setup.uses_lora


def frozen_reference(model: nn.Module) -> nn.Module:
    """TRL's reference: loaded like the policy (`create_model_from_path`, the same dtype),
    frozen, in evaluation mode, without gradient checkpointing."""
    model.requires_grad_(False)
    model.eval()
    return model


def selective_log_softmax(logits: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """TRL's `selective_log_softmax` (trl/trainer/utils.py :479-523), line for line: fp32 logits
    take a gather and one `logsumexp` per row; 16-bit ones one `log_softmax` per row."""
    squeeze = index.ndim == logits.ndim - 1
    if squeeze:
        index = index.unsqueeze(-1)
    if logits.dtype in (torch.float32, torch.float64):
        selected_logits = torch.gather(logits, dim=-1, index=index)
        logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
        per_token_logps = selected_logits - logsumexp_values.unsqueeze(-1)
    else:
        rows = []
        for row_logits, row_labels in zip(logits, index, strict=True):
            row_logps = functional.log_softmax(row_logits, dim=-1)
            rows.append(row_logps.gather(dim=-1, index=row_labels))
        per_token_logps = torch.stack(rows)
    if squeeze:
        per_token_logps = per_token_logps.squeeze(-1)
    return per_token_logps


def entropy_from_logits(logits: torch.Tensor, chunk_size: int = 128) -> torch.Tensor:
    """TRL's `entropy_from_logits` (trl/trainer/utils.py :526-560): rows flattened (a copy when
    the logits are a strided slice), 128 at a time."""
    flat_logits = logits.reshape(-1, logits.shape[-1])
    entropies = []
    for chunk in torch.split(flat_logits, chunk_size, dim=0):
        logps = functional.log_softmax(chunk, dim=-1)
        entropies.append(-(torch.exp(logps) * logps).sum(-1))
    return torch.cat(entropies, dim=0).reshape(logits.shape[:-1])


def prepared_forward(model: nn.Module, setup: TraceSetup, device: str,
                     **inputs: Any) -> torch.Tensor:
    """The logits of accelerate's prepared forward: under `amp`, the model's forward under bf16
    autocast and its outputs converted to fp32 outside it (accelerate `prepare_model`:
    `torch.autocast(...)(forward)` then `convert_outputs_to_fp32`, which calls `.float()` on each
    16-bit output, so the 16-bit logits are freed once copied)."""
    if setup.precision is not Precision.AMP:
        logits: torch.Tensor = model(**inputs, use_cache=False).logits
        return logits
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        logits = model(**inputs, use_cache=False).logits
    return logits.float()


@contextlib.contextmanager
def reference_of(model: nn.Module, reference: nn.Module | None) -> Any:
    """The model that gives the reference log-probabilities: the frozen copy, or the policy with
    its adapter disabled (TRL `use_adapter(model, adapter_name=None)`, utils.py :1200-1236).
    TRL also switches gradient checkpointing off around these passes
    (`disable_gradient_checkpointing`, to avoid a reentrant-checkpoint warning); under
    `torch.no_grad` a checkpointed block saves nothing, so the trace leaves it on."""
    if reference is not None:
        yield reference
        return
    peft_model: Any = model
    with peft_model.disable_adapter():
        yield model


# --- DPO ----------------------------------------------------------------------------------------

def dpo_loss(model: nn.Module, reference: nn.Module | None, setup: TraceSetup, *,
             tracker: StorageTracker, device: str, vocab_size: int) -> tuple[torch.Tensor, Batch]:
    """DPO's loss on 2 x batch concatenated rows, its graph alive for backward; and the
    batch."""
    tracker.start_phase(Phase.FORWARD)
    rows = 2 * setup.batch
    input_ids = torch.randint(0, vocab_size, (rows, setup.seq_len))
    completion_mask = torch.ones(rows, setup.seq_len, dtype=torch.long)
    logits = prepared_forward(model, setup, device, input_ids=input_ids)
    tracker.start_phase(Phase.LOSS)
    shift_labels = input_ids[..., 1:]
    shift_mask = completion_mask[..., 1:]
    chosen_logps, rejected_logps = _sequence_logps(logits, shift_labels, shift_mask).chunk(2)
    assert setup.alignment is not None
    if setup.alignment.precompute_ref:  # two floats per pair, read from the dataset
        ref_chosen_logps = torch.randn(setup.batch)
        ref_rejected_logps = torch.randn(setup.batch)
    else:
        tracker.start_phase(Phase.REFERENCE_PASS)
        with torch.no_grad(), reference_of(model, reference) as ref_model:
            ref_logits = prepared_forward(ref_model, setup, device, input_ids=input_ids)
        ref_logps = _sequence_logps(ref_logits, shift_labels, shift_mask)
        del ref_logits
        ref_chosen_logps, ref_rejected_logps = ref_logps.chunk(2)
        tracker.start_phase(Phase.LOSS)
    delta_score = (chosen_logps - ref_chosen_logps) - (rejected_logps - ref_rejected_logps)
    loss = -functional.logsigmoid(DPO_BETA * delta_score).mean()
    del logits  # TRL's `outputs` lives until `_compute_loss` returns
    return loss, (input_ids, completion_mask)


def _sequence_logps(logits: torch.Tensor, shift_labels: torch.Tensor,
                    shift_mask: torch.Tensor) -> torch.Tensor:
    """Per-sequence sums of the completion's log-probabilities (dpo_trainer.py :1343-1350).
    TRL zeroes the prompt's positions with a boolean index (`per_token_logps[mask == 0] = 0.0`),
    whose indices a fake tensor cannot count; `masked_fill_` writes the same values (what the
    index keeps for backward is a few int64 per prompt token, no vocabulary dimension)."""
    per_token_logps = selective_log_softmax(logits[..., :-1, :], shift_labels)
    per_token_logps.masked_fill_(shift_mask == 0, 0.0)
    return per_token_logps.sum(dim=1)


# --- GRPO ---------------------------------------------------------------------------------------

def grpo_loss(model: nn.Module, reference: nn.Module | None, setup: TraceSetup, *,
              tracker: StorageTracker, device: str, vocab_size: int) -> tuple[torch.Tensor, Batch]:
    """GRPO's `dapo` loss on `batch` completions (prompt and completion in `seq_len`); and the
    batch."""
    alignment = setup.alignment
    assert alignment is not None
    completion = alignment.completion_tokens
    tracker.start_phase(Phase.LOG_PROBS if reference_pass_runs(setup) else Phase.FORWARD)
    input_ids = torch.randint(0, vocab_size, (setup.batch, setup.seq_len))
    completion_mask = torch.ones(setup.batch, completion, dtype=torch.int32)
    advantages = torch.randn(setup.batch)
    ref_per_token_logps = None
    if reference_pass_runs(setup):
        with torch.no_grad(), reference_of(model, reference) as ref_model:
            ref_per_token_logps, _ = _per_token_logps(
                ref_model, input_ids, completion, setup=setup, tracker=tracker, device=device,
                training=False)
    tracker.start_phase(Phase.FORWARD)
    per_token_logps, _entropies = _per_token_logps(
        model, input_ids, completion, setup=setup, tracker=tracker, device=device, training=True)
    old_per_token_logps = per_token_logps.detach()
    coef_1 = torch.exp(per_token_logps - old_per_token_logps)
    coef_2 = torch.clamp(coef_1, 1 - GRPO_EPSILON, 1 + GRPO_EPSILON)
    per_token_loss = -torch.min(coef_1 * advantages.unsqueeze(1), coef_2 * advantages.unsqueeze(1))
    if ref_per_token_logps is not None:
        per_token_kl = (torch.exp(ref_per_token_logps - per_token_logps)
                        - (ref_per_token_logps - per_token_logps) - 1)
        per_token_loss = per_token_loss + alignment.beta * per_token_kl
    normalizer = completion_mask.sum().clamp(min=1.0)  # num_items_in_batch, one process
    loss = (per_token_loss * completion_mask).sum() / normalizer
    return loss, (input_ids, completion_mask, advantages)


def _per_token_logps(model: nn.Module, input_ids: torch.Tensor, completion: int, *,
                     setup: TraceSetup, tracker: StorageTracker, device: str,
                     training: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """`_get_per_token_logps_and_entropies` on one chunk of rows: logits for the completion's
    positions and one more, the last dropped, divided by the temperature in place, their
    log-probabilities; in training, also their entropy without gradient (`compute_entropy`)."""
    logits = prepared_forward(model, setup, device, input_ids=input_ids,
                              logits_to_keep=completion + 1)
    if training:
        tracker.start_phase(Phase.LOSS)
    logits = logits[:, :-1, :]
    logits = logits[:, -completion:, :]
    logits.div_(GRPO_TEMPERATURE)
    logps = selective_log_softmax(logits, input_ids[:, -completion:])
    entropies = None
    if training:
        with torch.no_grad():
            entropies = entropy_from_logits(logits)
    return logps, entropies
