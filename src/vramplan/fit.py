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
    """How `required_bytes` compares with one GPU's memory, computed once by `verdict`."""

    gpu: Gpu
    required_bytes: int
    fits: bool
    headroom_bytes: int
    """Capacity left (positive) or missing (negative)."""
    usage_share: float
    """Required memory as a share of the card's capacity (1.0 = exactly full)."""
    min_gpus_lower_bound: int
    """Fewest such cards that could hold the total if it were split evenly with no overhead.

    A lower bound only: real sharding replicates some tensors and adds buffers.
    """


def verdict(gpu: Gpu, required_bytes: int) -> GpuVerdict:
    """Does `required_bytes` fit on one `gpu`, by how much, and on how many at the least."""
    capacity = gpu.capacity_bytes
    return GpuVerdict(
        gpu, required_bytes, required_bytes <= capacity, capacity - required_bytes,
        required_bytes / capacity, max(1, ceil_div(required_bytes, capacity)),
    )


def verdicts(required_bytes: int, gpus: tuple[Gpu, ...]) -> tuple[GpuVerdict, ...]:
    return tuple([verdict(gpu, required_bytes) for gpu in gpus])
