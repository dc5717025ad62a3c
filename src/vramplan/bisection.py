"""Inverse solving over one integer knob: the edge where a monotonic memory stops fitting.

Memory never decreases as a micro-batch, a sequence or a context grows, and never increases as
sharded GPUs are added: a bisection finds the edge in O(log(high - low)) estimates. A guess of the
edge (from a linear model of the memory: a + b·v, or a + b/v across sharded GPUs) is tried first:
when it is right, two estimates confirm it; when it is not, the search goes on in the part of the
range it points to. The answer is the same either way; only the number of estimates changes.
"""

from __future__ import annotations

from collections.abc import Callable


def largest_fitting(fits: Callable[[int], bool], low: int, high: int,
                    guess: int | None = None) -> int | None:
    """The largest v in [low, high] with fits(v), for a predicate that holds up to an edge and
    fails beyond it; None when even `low` does not fit."""
    if not fits(low):
        return None
    if guess is not None and low < guess <= high:
        if not fits(guess):
            high = guess - 1
        elif guess == high or not fits(guess + 1):
            return guess
        else:
            low = guess + 1
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def smallest_fitting(fits: Callable[[int], bool], low: int, high: int,
                     guess: int | None = None) -> int | None:
    """The smallest v in [low, high] with fits(v), for a predicate that fails up to an edge and
    holds beyond it; None when even `high` does not fit."""
    if not fits(high):
        return None
    if guess is not None and low <= guess < high:
        if fits(guess):
            if guess == low or not fits(guess - 1):
                return guess
            high = guess - 1
        else:
            low = guess + 1
    while low < high:
        mid = (low + high) // 2
        if fits(mid):
            high = mid
        else:
            low = mid + 1
    return low


def linear_guess(value_at: Callable[[int], int], limit: int, low: int, high: int) -> int | None:
    """Where a + b·v reaches `limit`, from the values at `low` and `high` (None when flat)."""
    at_low, at_high = value_at(low), value_at(high)
    if at_high == at_low or high == low:
        return None
    slope = (at_high - at_low) / (high - low)
    return int(low + (limit - at_low) / slope)


def inverse_guess(value_at: Callable[[int], int], limit: int, low: int, high: int) -> int | None:
    """Where a + b/v falls to `limit`, from the values at `low` and `high` (None when flat or out
    of reach)."""
    at_low, at_high = value_at(low), value_at(high)
    if at_low == at_high or high == low:
        return None
    shared = (at_low - at_high) / (1 / low - 1 / high)
    fixed = at_low - shared / low
    if limit <= fixed:
        return None
    return max(low, int(shared / (limit - fixed)) + 1)
