"""Dated changes in the stacks' code: whether a change had landed by a run's date (`has_change`,
None meaning today's code) and whether a date falls in a window (`during`)."""

from __future__ import annotations

from datetime import date


def has_change(on: date | None, since: date) -> bool:
    """A run of the code of `on` (None: today's code) has the change dated `since`."""
    return on is None or on >= since


def during(on: date | None, window: tuple[date, date]) -> bool:
    """A run of the code of `on` has the behaviour of `window` (from its first date, until its
    second); None: today's code, after every window that has ended."""
    start, end = window
    return on is not None and start <= on < end
