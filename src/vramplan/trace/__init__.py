"""`vramplan trace`: one real training step of the transformers model on fake tensors, counted.

The setup and result types import without torch; `run_trace` (in `vramplan.trace.run`) imports
torch, transformers and peft, so import it only when a trace is asked for.
"""

from vramplan.trace.result import Breakdown, Category, CudaPeaks, Phase, PhasePeak, TraceResult
from vramplan.trace.setup import TraceSetup, make_setup

__all__ = ["Breakdown", "Category", "CudaPeaks", "Phase", "PhasePeak", "TraceResult",
           "TraceSetup", "make_setup"]
