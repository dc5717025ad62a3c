"""Where the server computes: one worker thread at a time, off the event loop.

The estimates are pure Python and hold the GIL while they run: threads add no parallelism, and
many of them at once take turns with the event loop for the GIL, so that a cheap request (health,
a static file) waits behind every expensive one. Computing in one worker thread at a time keeps
the loop free to answer: requests that compute queue for that thread, which is as fast as a pool
on the GIL, and everything else is answered at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from anyio import CapacityLimiter, to_thread

P = ParamSpec("P")
T = TypeVar("T")

_WORKERS = 1
_limiter: CapacityLimiter | None = None


def _the_limiter() -> CapacityLimiter:
    global _limiter  # noqa: PLW0603 - one limiter per process, made inside the event loop
    if _limiter is None:
        _limiter = CapacityLimiter(_WORKERS)
    return _limiter


async def compute(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`function(*args, **kwargs)` in the computing thread."""
    return await to_thread.run_sync(lambda: function(*args, **kwargs), limiter=_the_limiter())
