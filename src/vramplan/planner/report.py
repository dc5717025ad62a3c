"""The report behind `vramplan fit`: verdict, limits, fewest GPUs per scheme, and changes.

Pure: typed setups in, a typed `FitReport` out; no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.distributed.per_gpu import PerGpuEstimate
from vramplan.planner.changes import Change, combined_changes, rank_changes, single_changes
from vramplan.planner.search import (
    SchemeAnswer,
    fewest_gpus,
    generates,
    max_completion,
    max_micro_batch,
    max_sequence,
)
from vramplan.planner.setup import FitSetup, estimate_fit_setup
from vramplan.planner.verdict import DEFAULT_USABLE_SHARE
from vramplan.presets.gpus import Gpu
from vramplan.verdict import GpuVerdict
from vramplan.vocab import Offload, Scheme


@dataclass(frozen=True, slots=True)
class FitReport:
    """Everything `vramplan fit` says about one setup and one GPU type."""

    setup: FitSetup
    estimate: PerGpuEstimate
    verdict: GpuVerdict
    max_batch: int | None
    """Largest micro-batch that fits (None: not even 1)."""
    max_seq_len: int | None
    """Longest sequence that fits, up to the model's context (None: not even 1 token)."""
    max_completion_len: int | None
    """An online method (GRPO, PPO): the longest completion that fits after the same prompt
    (None: not even 1 token, or a method that does not generate)."""
    fewest_gpus: tuple[SchemeAnswer, ...]
    cheapest: SchemeAnswer | None
    """Fewest GPUs of this type over every scheme, then the simplest scheme."""
    changes: tuple[Change, ...]
    """Single changes that save memory, ranked (see `rank_key`)."""
    combined: tuple[Change, ...]
    """Changes applied one after the other, cheapest first, until the run fits (empty when it
    already fits); each entry's peak is after all the changes so far."""


_SCHEME_CANDIDATES = (
    (Scheme.NONE, Offload.NONE), (Scheme.ZERO1, Offload.NONE), (Scheme.ZERO2, Offload.NONE),
    (Scheme.FSDP_GRAD_OP, Offload.NONE), (Scheme.FSDP, Offload.NONE), (Scheme.ZERO3, Offload.NONE),
    (Scheme.ZERO2, Offload.OPTIMIZER), (Scheme.ZERO3, Offload.OPTIMIZER),
    (Scheme.ZERO3, Offload.PARAMS_OPTIMIZER),
)
"""In order of simplicity and speed: the tie-break of the cheapest combination."""


def fit_report(setup: FitSetup, gpu: Gpu,
               usable_share: float = DEFAULT_USABLE_SHARE) -> FitReport:
    """Verdict, inverse solving and changes for `setup` on GPUs of type `gpu`."""
    estimate = estimate_fit_setup(setup)
    verdict = GpuVerdict(gpu, estimate.total_bytes, usable_share)
    usable = verdict.usable_bytes
    answers = tuple(fewest_gpus(setup, scheme, offload, usable)
                    for scheme, offload in _SCHEME_CANDIDATES)
    fitting = [a for a in answers if a.gpus is not None]
    cheapest = min(fitting, key=lambda a: (a.gpus or 0, answers.index(a))) if fitting else None
    changes = tuple(rank_changes(single_changes(setup, estimate.total_bytes, usable)))
    return FitReport(
        setup=setup, estimate=estimate, verdict=verdict,
        max_batch=max_micro_batch(setup, usable),
        max_seq_len=max_sequence(setup, usable),
        max_completion_len=max_completion(setup, usable) if generates(setup) else None,
        fewest_gpus=answers, cheapest=cheapest, changes=changes,
        combined=() if verdict.fits else combined_changes(setup, usable),
    )
