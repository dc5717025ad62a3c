"""Inverse solving over one integer knob: the edge where a monotonic memory stops fitting.

Memory never decreases as a micro-batch, a sequence or a context grows, and never increases as
sharded GPUs are added: a bisection finds the edge in O(log(high - low)) estimates.
"""

from __future__ import annotations

from collections.abc import Callable


def largest_fitting(fits: Callable[[int], bool], low: int, high: int) -> int | None:
    """The largest v in [low, high] with fits(v), for a predicate that holds up to an edge and
    fails beyond it; None when even `low` does not fit."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def smallest_fitting(fits: Callable[[int], bool], low: int, high: int) -> int | None:
    """The smallest v in [low, high] with fits(v), for a predicate that fails up to an edge and
    holds beyond it; None when even `high` does not fit."""
    if not fits(high):
        return None
    while low < high:
        mid = (low + high) // 2
        if fits(mid):
            high = mid
        else:
            low = mid + 1
    return low
