"""vramplan: how much GPU memory it takes to train, fine-tune or run a large language model.

The public library API lives here; every entry point (CLI, JSON API, web page) is a thin layer over
these pure functions. Nothing heavy is imported at package import time.
"""

from vramplan.seed import SeedEstimate, SeedInputs, estimate_seed

__version__ = "0.1.0"

__all__ = ["SeedEstimate", "SeedInputs", "__version__", "estimate_seed", "trace"]


def __getattr__(name: str) -> object:
    """`vramplan.trace(...)`: the trace package, imported on first use (it is callable; torch is
    imported only when a trace runs)."""
    if name == "trace":
        import vramplan.trace

        return vramplan.trace
    raise AttributeError(f"module 'vramplan' has no attribute {name!r}")
