"""Does a memory requirement fit on one GPU: one verdict for the seed rule, the fit planner and
inference alike.

Bytes are compared with bytes: an "80 GB" card holds 80 GiB (see `vramplan.presets.gpus`). What
may be used is the capacity times a usable share: 1 for the seed rule, the planner's safety
margin (`vramplan.planner.verdict`), or an engine's own cap (vLLM `gpu_memory_utilization`).
"""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.presets.gpus import Gpu
from vramplan.units import ceil_div


@dataclass(frozen=True, slots=True)
class GpuVerdict:
    """How `required_bytes` compares with what one `gpu` lets a run use."""

    gpu: Gpu
    required_bytes: int
    usable_share: float = 1.0
    """Share of the capacity the run may use (0.8 = keep 20% free)."""

    @property
    def capacity_bytes(self) -> int:
        return self.gpu.capacity_bytes

    @property
    def usable_bytes(self) -> int:
        """The capacity times the usable share, rounded down."""
        return int(self.gpu.capacity_bytes * self.usable_share)

    @property
    def fits(self) -> bool:
        """The requirement stays within the usable bytes."""
        return self.required_bytes <= self.usable_bytes

    @property
    def fits_at_capacity(self) -> bool:
        """The requirement stays within the whole capacity (it may still fail with no margin)."""
        return self.required_bytes <= self.gpu.capacity_bytes

    @property
    def headroom_bytes(self) -> int:
        """Usable bytes left (positive) or missing (negative)."""
        return self.usable_bytes - self.required_bytes

    @property
    def usage_share(self) -> float:
        """The requirement as a share of the whole capacity (1.0 = exactly full)."""
        return self.required_bytes / self.gpu.capacity_bytes

    @property
    def min_gpus_lower_bound(self) -> int:
        """Fewest such cards that could hold the requirement if it were split evenly with no
        overhead. A lower bound only: real sharding replicates some tensors and adds buffers."""
        return max(1, ceil_div(self.required_bytes, self.usable_bytes))


def verdicts(required_bytes: int, gpus: tuple[Gpu, ...],
             usable_share: float = 1.0) -> tuple[GpuVerdict, ...]:
    """One verdict per GPU for the same requirement."""
    return tuple(GpuVerdict(gpu, required_bytes, usable_share) for gpu in gpus)
