"""The tracer behind `vramplan trace`: one real training step of the transformers model on fake
tensors, every allocation counted (and replayed through the simulated caching allocator).

The setup and result types import without torch; running a trace imports torch, transformers and
peft, only then. The Python API runs it as `vramplan.trace(...)` (`vramplan.api.trace`, through the
request vocabulary); `.value` of its answer is the `TraceResult`.
"""

from __future__ import annotations

from vramplan.tracer.result import Breakdown, CudaPeaks, Phase, PhasePeak, TraceResult
from vramplan.tracer.setup import TraceSetup, make_setup

__all__ = ["Breakdown", "CudaPeaks", "Phase", "PhasePeak", "TraceResult", "TraceSetup",
           "make_setup"]
