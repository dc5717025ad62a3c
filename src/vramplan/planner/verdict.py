"""Does a per-GPU peak fit on a GPU type, with a safety margin."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.bounds import NumberField
from vramplan.presets.gpus import Gpu

DEFAULT_USABLE_SHARE = 0.80
"""Plan to use at most 80% of a GPU's memory: over 454 training runs on A100 and H100, "when the
estimated memory usage is below 80% of the available GPU memory, the training never encounters
out-of-memory errors" (Fujii, Watanabe & Yokota 2024, "Accelerating Large Language Model Training
with 4D Parallelism and Memory Consumption Estimator", arXiv:2411.06465, abstract)."""

USABLE_SHARE = NumberField("margin", minimum=0, maximum=100)
"""The usable share of a GPU's memory, in percent (CLI `--margin 80`; 100 = no margin)."""


@dataclass(frozen=True, slots=True)
class FitVerdict:
    """How a per-GPU peak compares with one GPU type, with the safety margin applied."""

    gpu: Gpu
    peak_bytes: int
    usable_share: float = DEFAULT_USABLE_SHARE
    """Share of the capacity the plan may use (0.8 = keep 20% free)."""

    @property
    def capacity_bytes(self) -> int:
        return self.gpu.capacity_bytes

    @property
    def usable_bytes(self) -> int:
        """The capacity times the usable share, rounded down."""
        return int(self.gpu.capacity_bytes * self.usable_share)

    @property
    def fits(self) -> bool:
        """The peak stays within the usable share."""
        return self.peak_bytes <= self.usable_bytes

    @property
    def fits_at_capacity(self) -> bool:
        """The peak stays within the whole capacity (no margin): may still run out of memory."""
        return self.peak_bytes <= self.gpu.capacity_bytes

    @property
    def headroom_bytes(self) -> int:
        """Usable bytes left (positive) or missing (negative)."""
        return self.usable_bytes - self.peak_bytes

    @property
    def usage_share(self) -> float:
        """Peak as a share of the whole capacity."""
        return self.peak_bytes / self.gpu.capacity_bytes


def usable_share_from_percent(percent: float) -> float:
    """A checked percentage (`--margin 80`) as a share (0.8)."""
    return USABLE_SHARE.check(percent) / 100
