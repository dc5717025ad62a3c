"""GPU verdicts: does a total fit on one card, by how much, and how many cards at the least.

Bytes are compared with bytes: an "80 GB" card holds 80 GiB (see `vramplan.presets.gpus`).
"""

from __future__ import annotations

from typing import NamedTuple

from vramplan.presets.gpus import Gpu
from vramplan.units import ceil_div


# Records on the CLI's start path are NamedTuples, not dataclasses: importing dataclasses
# (and inspect) and building frozen dataclasses took ~10 ms of a ~46 ms start
# (benchmarks/cli_startup.py). They are immutable and typed all the same.
class GpuVerdict(NamedTuple):
    """How `required_bytes` compares with one GPU's memory."""

    gpu: Gpu
    required_bytes: int

    @property
    def fits(self) -> bool:
        return self.required_bytes <= self.gpu.capacity_bytes

    @property
    def headroom_bytes(self) -> int:
        """Capacity left (positive) or missing (negative)."""
        return self.gpu.capacity_bytes - self.required_bytes

    @property
    def usage_share(self) -> float:
        """Required memory as a share of the card's capacity (1.0 = exactly full)."""
        return self.required_bytes / self.gpu.capacity_bytes

    @property
    def min_gpus_lower_bound(self) -> int:
        """Fewest such cards that could hold the total if it were split evenly with no overhead.

        A lower bound only: real sharding replicates some tensors and adds buffers.
        """
        return max(1, ceil_div(self.required_bytes, self.gpu.capacity_bytes))


def verdicts(required_bytes: int, gpus: tuple[Gpu, ...]) -> tuple[GpuVerdict, ...]:
    return tuple(GpuVerdict(gpu, required_bytes) for gpu in gpus)
