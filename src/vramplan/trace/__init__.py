"""`vramplan trace`: one real training step of the transformers model on fake tensors, counted.

The setup and result types import without torch; running a trace imports torch, transformers and
peft, only then. The package is callable: `vramplan.trace(model=..., ...)` is
`vramplan.trace.api.trace` (see docs/trace.md).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from vramplan.trace.result import Breakdown, CudaPeaks, Phase, PhasePeak, TraceResult
from vramplan.trace.setup import TraceSetup, make_setup

__all__ = ["Breakdown", "CudaPeaks", "Phase", "PhasePeak", "TraceResult",
           "TraceSetup", "make_setup", "trace"]


def trace(*args: Any, **kwargs: Any) -> TraceResult:
    """Trace a training step: see `vramplan.trace.api.trace` for the arguments."""
    from vramplan.trace.api import trace as run

    return run(*args, **kwargs)


class _CallablePackage(types.ModuleType):
    """`vramplan.trace` names both this package and the API function: calling the package calls
    the function, so `import vramplan.trace.run` cannot shadow `vramplan.trace(...)`."""

    def __call__(self, *args: Any, **kwargs: Any) -> TraceResult:
        return trace(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
