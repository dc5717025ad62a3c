"""Inverse solving: the largest micro-batch or sequence and the fewest GPUs that fit."""

from __future__ import annotations

from dataclasses import dataclass, replace

from vramplan.bisection import inverse_guess, largest_fitting, linear_guess, smallest_fitting
from vramplan.planner.setup import FitSetup, peak_bytes, with_parallelism, with_training
from vramplan.vocab import Offload, Scheme

MAX_BATCH = 4096
"""Upper end of the micro-batch search."""
MAX_GPUS = 4096
"""Upper end of the GPU-count search."""


@dataclass(frozen=True, slots=True)
class SchemeAnswer:
    """The fewest GPUs for one scheme (None: no count up to MAX_GPUS fits)."""

    scheme: Scheme
    offload: Offload
    gpus: int | None
    peak_bytes: int | None


def max_micro_batch(setup: FitSetup, usable_bytes: int, below: int = MAX_BATCH) -> int | None:
    """Largest micro-batch in [1, below] that fits."""
    def peak_at(batch: int) -> int:
        return peak_bytes(with_training(setup, batch=batch))

    guess = linear_guess(peak_at, usable_bytes, 1, min(2, below))
    return largest_fitting(lambda b: peak_at(b) <= usable_bytes, 1, below, guess)


def max_sequence(setup: FitSetup, usable_bytes: int, below: int | None = None) -> int | None:
    """Longest sequence in [shortest, below] that fits (default: the model's context length;
    an online method's sequence holds its completion and at least one prompt token)."""
    high = below if below is not None else setup.arch.max_position_embeddings
    low = _completion(setup) + 1
    if high < low:
        return None

    def peak_at(seq_len: int) -> int:
        return peak_bytes(with_training(setup, seq_len=seq_len))

    guess = linear_guess(peak_at, usable_bytes, low, high)
    return largest_fitting(lambda n: peak_at(n) <= usable_bytes, low, high, guess)


def max_completion(setup: FitSetup, usable_bytes: int,
                   below: int | None = None) -> int | None:
    """An online method (GRPO, PPO): the longest completion in [1, below] that fits after the
    same prompt (default: up to the model's context length); None when not even 1 fits."""
    alignment = setup.training.alignment
    assert alignment is not None and alignment.method.generates
    prompt = setup.training.seq_len - alignment.completion_tokens
    high = below if below is not None else setup.arch.max_position_embeddings - prompt
    if high < 1:
        return None

    def peak_at(completion: int) -> int:
        return peak_bytes(with_completion(setup, completion))

    guess = linear_guess(peak_at, usable_bytes, 1, high)
    return largest_fitting(lambda n: peak_at(n) <= usable_bytes, 1, high, guess)


def with_completion(setup: FitSetup, completion: int) -> FitSetup:
    """`setup` generating `completion` tokens after the same prompt."""
    alignment = setup.training.alignment
    assert alignment is not None
    prompt = setup.training.seq_len - alignment.completion_tokens
    return with_training(setup, seq_len=prompt + completion,
                         alignment=replace(alignment, completion_len=completion))


def generates(setup: FitSetup) -> bool:
    """The setup's method generates its completions (GRPO, PPO)."""
    alignment = setup.training.alignment
    return alignment is not None and alignment.method.generates


def _completion(setup: FitSetup) -> int:
    alignment = setup.training.alignment
    return alignment.completion_tokens if generates(setup) and alignment is not None else 0


def fewest_gpus(setup: FitSetup, scheme: Scheme, offload: Offload,
                usable_bytes: int) -> SchemeAnswer:
    """Fewest GPUs for `scheme` with `offload`, keeping the tensor and pipeline parallelism: the
    search runs over copies of the model (without sharding one copy is the only meaningful
    one). One copy is tried first: it runs no collective, and from two on NCCL's communicators
    join (`vramplan.distributed.communicators`), so a scheme that does not shard the weights
    (ZeRO-1, ZeRO-2) can fit on one GPU and on no more; from two copies on, per-GPU memory never
    grows with more copies (a property test checks it)."""
    model_parallel = setup.parallelism.model_parallel

    def peak_at(copies: int) -> int:
        return peak_bytes(with_parallelism(setup, scheme, copies * model_parallel, offload))

    high = 1 if scheme is Scheme.NONE else max(MAX_GPUS // model_parallel, 1)
    copies: int | None = 1
    if peak_at(1) > usable_bytes:
        copies = None if high == 1 else smallest_fitting(
            lambda n: peak_at(n) <= usable_bytes, 2, high,
            inverse_guess(peak_at, usable_bytes, 2, high))
    if copies is None:
        return SchemeAnswer(scheme, offload, None, None)
    return SchemeAnswer(scheme, offload, copies * model_parallel, peak_at(copies))
