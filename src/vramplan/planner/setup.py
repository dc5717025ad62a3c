"""What the planner varies: a model, a training setup and how it spreads over GPUs."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.per_gpu import PerGpuEstimate, estimate_per_gpu
from vramplan.model.architecture import Architecture
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import Offload, Scheme


@dataclass(frozen=True, slots=True)
class FitSetup:
    """A model, a training setup and how it spreads over GPUs."""

    arch: Architecture
    training: TrainingSetup
    parallelism: Parallelism
    model: str = ""
    """The model's registry name, for display."""


@lru_cache(maxsize=1024)
def estimate_fit_setup(setup: FitSetup) -> PerGpuEstimate:
    """The per-GPU estimate of `setup`, once per setup: a report asks for a setup's floor, then
    its peak, and the report's own setup again for its verdict and changes. About 12 KB an
    estimate (1,000 of llama-2-70b's: 11.9 MB of resident memory), so fewer are kept than
    `peak_bytes`'s integers; a report makes about 50."""
    return estimate_per_gpu(setup.arch, setup.training, setup.parallelism)


@lru_cache(maxsize=4096)
def peak_bytes(setup: FitSetup) -> int:
    """The per-GPU peak in the setup's metric. A report looks at the same setups more than once
    (a change, then the same change among the combined ones; a search's last step), so each is
    estimated once."""
    return estimate_fit_setup(setup).total_bytes


def floor_bytes(setup: FitSetup) -> int:
    """The per-GPU peak without the allocator's cache (`PeakOverPhases.floor_bytes`): what a
    search's guess of its edge is made from, with no replay."""
    estimate = estimate_fit_setup(setup)
    return estimate.floor_bytes(estimate.metric)


def fits(setup: FitSetup, usable_bytes: int) -> bool:
    """The per-GPU peak fits in `usable_bytes`. A setup whose peak without the allocator's
    cache (`floor_bytes`) is already over does not fit whatever the cache: the replay of the
    caching allocator, most of an estimate's time, runs only for the others."""
    return floor_bytes(setup) <= usable_bytes and peak_bytes(setup) <= usable_bytes


def clear_memos() -> None:
    """Forget every estimate (a benchmark's fresh report)."""
    estimate_fit_setup.cache_clear()
    peak_bytes.cache_clear()


def with_training(setup: FitSetup, **fields: object) -> FitSetup:
    return replace(setup, training=replace(setup.training, **fields))  # type: ignore[arg-type]


def with_parallelism(setup: FitSetup, scheme: Scheme, gpus: int,
                      offload: Offload) -> FitSetup:
    """`setup` on `gpus` GPUs with `scheme`, keeping its tensor, pipeline and expert
    parallelism."""
    current = setup.parallelism
    plan = default_parallelism(setup.training, scheme, gpus, offload, current.gpus_per_node,
                               tensor_parallel=current.tensor_parallel,
                               pipeline_parallel=current.pipeline_parallel,
                               # the largest expert split that still divides the data-parallel
                               # ranks of the new count
                               expert_parallel=math.gcd(current.expert_parallel, max(
                                   gpus // (current.tensor_parallel * current.pipeline_parallel),
                                   1)))
    return replace(setup, parallelism=plan)
