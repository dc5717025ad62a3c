"""The Python API: `vramplan.estimate`, `fit`, `infer`, `lora`, `trace` and `validate`.

Each takes the CLI's fields as keyword arguments, with the same names, defaults and accepted values
(`vramplan.requests.vocabulary`): numbers as numbers, flags as booleans, choices as their names
(or the enum members of `vramplan.vocab`), LoRA targets as a list or `"q,v"`. Each returns a
`Result`: the core's typed result in `value`, the very object the CLI's `--json` prints from
`to_json()`, and a table in Jupyter.

    >>> import vramplan
    >>> vramplan.estimate(params=7, activations=20).to_json()["total_gb"]
    132.0
    >>> vramplan.fit(model="llama-3.1-8b", gpu="h100-80gb", method="lora").value.verdict.fits
    True
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from vramplan.i18n import Lang
from vramplan.inference.estimate import InferenceEstimate, estimate_inference
from vramplan.inference.limits import InferenceVerdict, inference_verdicts
from vramplan.lora_calculator import LoraResult, estimate_lora
from vramplan.planner.report import FitReport, fit_report
from vramplan.requests.inference import inference_request
from vramplan.requests.lora import lora_request
from vramplan.requests.reading import read
from vramplan.requests.seed import seed_request
from vramplan.requests.training import fit_request
from vramplan.requests.vocabulary import FIT, INFERENCE, LORA, SEED, TRACE
from vramplan.seed import SeedEstimate, estimate_seed
from vramplan.serialize import (
    fit_to_json,
    inference_to_json,
    lora_to_json,
    model_to_json,
    seed_to_json,
    trace_to_json,
    validation_to_json,
)
from vramplan.tracer.result import TraceResult
from vramplan.units import format_gb, format_gib, format_number
from vramplan.validation.cases import PUBLIC_CASES, parse_cases, read_case_file, shipped_cases
from vramplan.validation.scoring import ValidationReport, score_cases
from vramplan.verdict import GpuVerdict, verdicts

T = TypeVar("T")
JSON = Mapping[str, Any]
"""A JSON answer: one of the shapes of `vramplan.shapes`."""


@dataclass(frozen=True)
class Result(Generic[T]):
    """One calculator's answer: `value` is the core's typed result, `to_json()` the object the
    CLI's `--json` prints (the one serializer), `summary` the headline figures as rows."""

    kind: str
    value: T
    payload: JSON
    summary: tuple[tuple[str, str], ...]

    def to_json(self) -> JSON:
        return self.payload

    def _repr_html_(self) -> str:
        """A two-column table for Jupyter."""
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
                       f"<td style='text-align:right'>{html.escape(value)}</td></tr>"
                       for name, value in self.summary)
        return f"<table><caption>vramplan {html.escape(self.kind)}</caption>{rows}</table>"

    def __str__(self) -> str:
        width = max(len(name) for name, _ in self.summary)
        return "\n".join(f"{name.ljust(width)}  {value}" for name, value in self.summary)


def _gb(n_bytes: int) -> str:
    return f"{format_gb(n_bytes, Lang.EN)} ({format_gib(n_bytes, Lang.EN)})"


def _verdict_rows(results: tuple[GpuVerdict, ...]) -> list[tuple[str, str]]:
    return [(v.gpu.display_name, ("fits" if v.fits else "does not fit")
             + f", headroom {format_gib(v.headroom_bytes, Lang.EN)}") for v in results]


def estimate(**fields: Any) -> Result[SeedEstimate]:
    """The seed rule M = N·B, V = M + A (`vramplan estimate`): `params` or `model`,
    `optimizer` or `bytes_per_param`, `activations` (or `batch`/`seq_len` with a model), `gpu`."""
    seed = seed_request(read(SEED, fields, text=False))
    value = estimate_seed(seed.inputs)
    results = verdicts(value.total_bytes, seed.gpus)
    payload = seed_to_json(value, results)
    if seed.model is not None:
        payload["model"] = model_to_json(seed.model.preset, seed.model.arch)
    summary = [("N (parameters)", format_number(value.params, Lang.EN, 0)),
               ("B (bytes/param)", format_number(value.bytes_per_param, Lang.EN)),
               ("M = N·B", _gb(value.model_states_bytes)), ("A", _gb(value.activations_bytes)),
               ("V = M + A", _gb(value.total_bytes)), *_verdict_rows(results)]
    return Result("estimate", value, payload, tuple(summary))


def fit(**fields: Any) -> Result[FitReport]:
    """Will a training run fit, and what to change (`vramplan fit`): `model` (or `config`),
    `gpu`, and any training or parallelism field."""
    request = fit_request(read(FIT, fields, text=False))
    report = fit_report(request.setup, request.gpu, request.usable_share)
    verdict = report.verdict
    summary = [
        ("peak per GPU", _gb(verdict.required_bytes)),
        ("usable", f"{format_gib(verdict.usable_bytes, Lang.EN)} "
                   f"({format_number(100 * verdict.usable_share, Lang.EN, 1)} % of "
                   f"{format_gib(verdict.capacity_bytes, Lang.EN, 0)})"),
        ("fits", "yes" if verdict.fits else "no"),
        ("largest micro-batch", _or_none(report.max_batch)),
        ("longest sequence", _or_none(report.max_seq_len)),
        *((f"change: {c.kind.value}", _gb(c.peak_bytes)) for c in report.changes[:5]),
    ]
    return Result("fit", report, fit_to_json(report), tuple(summary))


def _or_none(value: int | None) -> str:
    return "none" if value is None else format_number(value, Lang.EN, 0)


def infer(**fields: Any) -> Result[InferenceEstimate]:
    """Inference memory (`vramplan infer`): `model`, `weights`, `context`, `batch`, `kv_dtype`,
    `engine`, `tensor_parallel`, `gpu`, `limits`..."""
    request = inference_request(read(INFERENCE, fields, text=False))
    value = estimate_inference(request.inputs)
    lines: tuple[InferenceVerdict, ...] = inference_verdicts(value, request.gpus,
                                                             request.limits)
    summary = [(item.part.value, _gb(item.bytes)) for item in value.items if item.bytes]
    summary += [("allocated peak", _gb(value.allocated_bytes)),
                ("device (with CUDA context)", _gb(value.device_bytes)),
                *_verdict_rows(tuple(line.verdict for line in lines))]
    payload = inference_to_json(value, lines, beyond_context=request.beyond_context)
    return Result("infer", value, payload, tuple(summary))


def lora(**fields: Any) -> Result[LoraResult]:
    """LoRA's trainable parameters (`vramplan lora`): `model`, `lora_r`, `lora_targets`, `dora`,
    `rslora`."""
    value = estimate_lora(lora_request(read(LORA, fields, text=False)))
    summary = [("trainable parameters", format_number(value.trainable_params, Lang.EN, 0)),
               ("share of the model",
                f"{format_number(100 * value.share_of_model, Lang.EN, 4)} %"),
               ("training memory (AdamW)", _gb(value.training_bytes))]
    return Result("lora", value, lora_to_json(value), tuple(summary))


def trace(*, config: Mapping[str, Any] | str | Path | None = None, real: bool = False,
          progress: Callable[[str], None] | None = None,
          **fields: Any) -> Result[TraceResult]:
    """A real training step of the transformers model on fake tensors (`vramplan trace`; needs
    the `trace` extra): `model` or `config` (also a config.json mapping), and the training
    fields; `real=True` runs real CPU tensors (small models only)."""
    from vramplan.requests.trace import trace_setup
    from vramplan.tracer.run import run_trace

    if isinstance(config, Mapping):
        setup = trace_setup(read(TRACE, fields, text=False), config)
    else:
        given = {**fields, "config": str(config)} if config is not None else fields
        setup = trace_setup(read(TRACE, given, text=False))
    value = run_trace(setup, real=real, progress=progress)
    summary = [("peak", _gb(value.peak_bytes)), ("at phase", value.peak_phase.value),
               *((part.value, _gb(n)) for part, n in value.breakdown.bytes_by_part if n)]
    return Result("trace", value, trace_to_json(value), tuple(summary))


def validate(path: str | Path | None = None) -> Result[ValidationReport]:
    """Score the estimates against a case file (`vramplan validate`); by default the public set
    shipped with the package."""
    text = read_case_file(path) if path is not None else shipped_cases(PUBLIC_CASES)
    parsed = parse_cases(text)
    value = score_cases(parsed.cases, parsed.unread)

    def pct(share: float | None) -> str:
        return "-" if share is None else f"{share:.2f} %"

    summary = [("rows scored", str(value.rows_scored)),
               ("median |error|", pct(value.median_abs_error_pct)),
               ("p90 |error|", pct(value.p90_abs_error_pct)),
               ("OOM rows right", f"{value.oom_right} of {value.oom_total}")]
    name = Path(path).name if path is not None else PUBLIC_CASES
    return Result("validate", value, validation_to_json(value, name), tuple(summary))
