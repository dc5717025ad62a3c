"""Inverse solving: the largest micro-batch or sequence and the fewest GPUs that fit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from vramplan.bisection import inverse_guess, largest_fitting, linear_guess, smallest_fitting
from vramplan.planner.setup import (
    FitSetup,
    fits,
    floor_bytes,
    peak_bytes,
    with_parallelism,
    with_training,
)
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
    def at(batch: int) -> FitSetup:
        return with_training(setup, batch=batch)

    return _largest(at, usable_bytes, 1, below, guess_from=(1, min(2, below)))


def max_sequence(setup: FitSetup, usable_bytes: int, below: int | None = None) -> int | None:
    """Longest sequence in [shortest, below] that fits (default: the model's context length;
    an online method's sequence holds its completion and at least one prompt token)."""
    high = below if below is not None else setup.arch.max_position_embeddings
    low = _completion(setup) + 1
    if high < low:
        return None

    def at(seq_len: int) -> FitSetup:
        return with_training(setup, seq_len=seq_len)

    return _largest(at, usable_bytes, low, high, guess_from=(low, high))


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
    return _largest(lambda completion: with_completion(setup, completion), usable_bytes, 1, high,
                    guess_from=(1, high))


def _largest(at: Callable[[int], FitSetup], usable_bytes: int, low: int, high: int, *,
             guess_from: tuple[int, int]) -> int | None:
    """The largest v in [low, high] whose setup `at(v)` fits, from a guess of the edge that the
    peaks without the allocator's cache at the two `guess_from` values make (`floor_bytes`:
    no replay). The guess changes the number of estimates, and the answer only where the
    replayed cache is not monotonic near the edge: Mixtral-8x7B LoRA on 4 A100 80GB under
    ZeRO-3 fits 4,339 tokens and not 4,335, and the search found 4,334 from the guess that
    replayed peaks made (2026-12-06)."""
    guess = linear_guess(lambda v: floor_bytes(at(v)), usable_bytes, *guess_from)
    return largest_fitting(lambda v: fits(at(v), usable_bytes), low, high, guess)


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

    def spread(copies: int) -> FitSetup:
        return with_parallelism(setup, scheme, copies * model_parallel, offload)

    high = 1 if scheme is Scheme.NONE else max(MAX_GPUS // model_parallel, 1)
    copies: int | None = 1
    if not fits(spread(1), usable_bytes):
        copies = None if high == 1 else smallest_fitting(
            lambda n: fits(spread(n), usable_bytes), 2, high,
            inverse_guess(lambda n: floor_bytes(spread(n)), usable_bytes, 2, high))
    if copies is None:
        return SchemeAnswer(scheme, offload, None, None)
    return SchemeAnswer(scheme, offload, copies * model_parallel, peak_bytes(spread(copies)))
