"""vramplan: how much GPU memory it takes to train, fine-tune or run a large language model.

The library API: `vramplan.estimate`, `fit`, `infer`, `lora`, `trace` and `validate` take the
CLI's fields as keyword arguments and return results that print as the CLI's `--json` objects
(`vramplan.api`). They are imported on first use, so that `import vramplan` (which every CLI run
does) stays light.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "estimate", "fit", "infer", "lora", "trace", "validate"]

_API = frozenset({"estimate", "fit", "infer", "lora", "trace", "validate", "Result"})


def __getattr__(name: str) -> Any:
    """The API's functions, from `vramplan.api` on first use (PEP 562)."""
    if name in _API:
        from vramplan import api

        return getattr(api, name)
    raise AttributeError(f"module 'vramplan' has no attribute {name!r}")
