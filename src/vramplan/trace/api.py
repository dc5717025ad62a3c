"""The Python API: `vramplan.trace(model="llama-3.1-8b", method="lora", ...)` -> TraceResult.

The analytic memory model uses it as its referee: `result.peak_bytes`, `result.breakdown` (bytes per
traced part, `PartKind`, or `.by_component()` in the estimator's components) and `result.phases`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vramplan.errors import ConflictingOptions, MissingValue
from vramplan.trace.result import TraceResult
from vramplan.trace.setup import TraceSetup, make_setup

Progress = Callable[[str], None]
"""Called with a stage name: `build`, `step1`, `step2`, `cuda` (see vramplan.trace.run)."""


def trace(model: str | None = None, *, config: Mapping[str, Any] | str | Path | None = None,
          method: str | None = None, precision: str | None = None,
          optimizer: str | None = None, optimizer_impl: str | None = None,
          quant: str | None = None, lora_r: int | None = None,
          lora_targets: str | tuple[str, ...] | list[str] | None = None,
          train_layers: int | None = None, batch: int = 1, seq_len: int = 512,
          checkpointing: str | None = None, attention: str | None = None,
          device: str | None = None, alloc_conf: str | None = None, real: bool = False,
          progress: Progress | None = None) -> TraceResult:
    """Trace two training steps of `model` (a registry name) or `config` (a config.json mapping, a
    config.json path or a model folder) and return the second. Option values are those of the
    case format (docs/cases-format.md); empty means the default; `alloc_conf` is a
    `PYTORCH_CUDA_ALLOC_CONF` string for the simulated caching allocator. `real=True` runs real
    CPU tensors instead of fake ones (small models only: it allocates the memory it counts)."""
    setup = setup_for(model, config, method=method, precision=precision, optimizer=optimizer,
                      optimizer_impl=optimizer_impl, quant=quant, lora_r=lora_r,
                      lora_targets=lora_targets, train_layers=train_layers, batch=batch,
                      seq_len=seq_len, checkpointing=checkpointing, attention=attention,
                      device=device, alloc_conf=alloc_conf)
    from vramplan.trace.run import run_trace

    return run_trace(setup, real=real, progress=progress)


def setup_for(model: str | None, config: Mapping[str, Any] | str | Path | None,
              **options: Any) -> TraceSetup:
    """A checked setup from a registry name or a config, and the case-format options."""
    name, config_keys = resolve_model(model, config)
    return make_setup(name, config_keys, **options)


def resolve_model(model: str | None,
                  config: Mapping[str, Any] | str | Path | None) -> tuple[str, Mapping[str, Any]]:
    """(display name, config.json key/values) of a registry name, a Hub repo id or a config."""
    if model is not None and config is not None:
        raise ConflictingOptions("model", "config")
    if model is not None:
        from vramplan.model.resolve import resolve_model as resolve_name

        resolved = resolve_name(model)  # a preset, or a Hugging Face repo id
        return resolved.name, resolved.config
    if config is None:
        raise MissingValue("model")
    if isinstance(config, Mapping):
        return str(config.get("_name_or_path") or config.get("model_type") or "config"), config
    from vramplan.model.hf_config import read_config_file

    keys = read_config_file(config)
    return str(keys.get("_name_or_path") or Path(config).name), keys
