"""How an inference estimate compares with GPUs: a verdict per GPU under the engine's own cap,
and the inverse (the longest context and the most concurrent sequences that fit)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from vramplan.bisection import largest_fitting
from vramplan.inference.estimate import InferenceEstimate, estimate_inference
from vramplan.inference.setup import InferenceInputs
from vramplan.presets.gpus import Gpu
from vramplan.verdict import GpuVerdict


@dataclass(frozen=True, slots=True)
class InferenceLimits:
    """The largest setups that fit one GPU model (per GPU, with the CUDA context and the engine's
    cap)."""

    gpu: Gpu
    max_context: int
    """Longest context for the given batch (0: not even one token; capped at the model's
    max_position_embeddings)."""
    max_batch: int
    """Most concurrent sequences at the given context (0: not even one)."""
    context_cap: int


def _fits_with(inputs: InferenceInputs, gpu: Gpu, context: int, batch: int,
               prompt: int | None) -> bool:
    changed = dataclasses.replace(inputs, context=context, batch=batch, prompt=prompt)
    return estimate_inference(changed).verdict(gpu).fits


MAX_BATCH_SEARCH = 1_000_000
"""Upper end of the concurrent-sequence search."""


def inference_limits(inputs: InferenceInputs, gpu: Gpu) -> InferenceLimits:
    """Longest context at `inputs.batch` and most sequences at `inputs.context` that fit `gpu`
    (memory grows with both, so a bisection finds the edge). The prompt follows the context when it
    was left to default; a fixed prompt longer than the context searched is cut to it."""
    cap = inputs.arch.max_position_embeddings

    def with_context(context: int) -> bool:
        prompt = None if inputs.prompt is None else min(inputs.prompt, context)
        return _fits_with(inputs, gpu, context, inputs.batch, prompt)

    def with_batch(batch: int) -> bool:
        return _fits_with(inputs, gpu, inputs.context, batch, inputs.prompt)

    return InferenceLimits(gpu, largest_fitting(with_context, 1, cap) or 0,
                           largest_fitting(with_batch, 1, MAX_BATCH_SEARCH) or 0, cap)


@dataclass(frozen=True, slots=True)
class InferenceVerdict:
    """How one estimate compares with one GPU model (per GPU of a tensor-parallel group): the
    device total against the card, or the engine's share of it (vLLM `gpu_memory_utilization`);
    with the limits when they were asked for."""

    verdict: GpuVerdict
    limits: InferenceLimits | None = None


def inference_verdicts(estimate: InferenceEstimate, gpus: tuple[Gpu, ...],
                       with_limits: bool = False) -> tuple[InferenceVerdict, ...]:
    """One verdict per GPU; with `with_limits`, also the longest context and most sequences."""
    return tuple(
        InferenceVerdict(estimate.verdict(gpu),
                         inference_limits(estimate.inputs, gpu) if with_limits else None)
        for gpu in gpus)
