"""The JSON API of "Will it fit?" and of the Activations estimate:

- `GET /api/v1/fit`: the object `vramplan fit --json` prints (`serialize.fit_to_json`), for the
  same options, named as the CLI's long options in snake_case (`--seq-len` -> `seq_len`,
  `--tp`/`--tensor-parallel` -> `tensor_parallel`).
- `GET /api/v1/activations`: the simple mode's A from a model, batch and sequence length, as
  `vramplan estimate --model M --batch B --seq-len T --method X` computes it.

Query values are text read by the CLI's rules; every 4xx has the API's one error shape.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from vramplan.bounds import parse_decimal
from vramplan.errors import MissingValue
from vramplan.planner.report import fit_report
from vramplan.planner.verdict import usable_share_from_percent
from vramplan.presets.gpus import find_gpu
from vramplan.presets.models import MODELS, architecture_of, find_model
from vramplan.requests.training import FitFields, fit_setup
from vramplan.serialize import SCHEMA_VERSION, fit_to_json, memory
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    Loss,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)
from vramplan.web.api import FastJSONResponse, query_parameters, read_query
from vramplan.web.fit_panel import TRAINING_METHODS, simple_activations_query
from vramplan.web.schemas import ErrorOut, GpuName, LangQuery, OptionalNumberText, _text

router = APIRouter(prefix="/api/v1", tags=["v1"])

MODEL_NAMES = [name for preset in MODELS for name in (preset.name, *preset.aliases)]
ModelName = Annotated[str, _text({"enum": MODEL_NAMES})]


def _choice(values: list[str]) -> Any:
    """Text naming one of `values`; empty means the default, as an empty form field."""
    return Annotated[str, _text({"enum": ["", *values]})]


def _values(enum: Any) -> list[str]:
    return [member.value for member in enum]


_TEXT = " Text, read like the CLI's option."


class ActivationsQuery(LangQuery):
    """`GET /api/v1/activations`'s query."""

    model: ModelName = Field(description="Registry model (GET /api/v1/models).")
    batch: OptionalNumberText | None = Field(None, description="Micro-batch; default 1." + _TEXT)
    seq_len: OptionalNumberText | None = Field(
        None, description="Sequence length in tokens; default 2048." + _TEXT)
    method: _choice([m.value for m in TRAINING_METHODS]) | None = Field(  # type: ignore[valid-type]
        None, description="full (default), freeze, lora or qlora.")


class FitQuery(LangQuery):
    """`GET /api/v1/fit`'s query: `vramplan fit`'s options, same names, same defaults."""

    model: ModelName = Field(description="Registry model (GET /api/v1/models).")
    gpu: GpuName = Field(description="GPU type (GET /api/v1/gpus).")
    gpus: OptionalNumberText | None = Field(None, description="GPU count; default 1." + _TEXT)
    gpus_per_node: OptionalNumberText | None = Field(None, description="Default 8." + _TEXT)
    sharding: _choice(_values(Scheme)) | None = Field(  # type: ignore[valid-type]
        None, description="Default: none on one GPU, ddp on more.")
    offload: _choice(_values(Offload)) | None = Field(None)  # type: ignore[valid-type]
    margin: OptionalNumberText | None = Field(
        None, description="Usable share of GPU memory in percent; default 80 (Fujii et al. "
        "2024, arXiv:2411.06465)." + _TEXT)
    tensor_parallel: OptionalNumberText | None = Field(None, description="Default 1." + _TEXT)
    pipeline_parallel: OptionalNumberText | None = Field(None, description="Default 1." + _TEXT)
    expert_parallel: OptionalNumberText | None = Field(
        None, description="Expert parallelism of a mixture of experts; default 1." + _TEXT)
    method: _choice(_values(Method)) | None = Field(None)  # type: ignore[valid-type]
    precision: _choice(_values(Precision)) | None = Field(None)  # type: ignore[valid-type]
    optimizer: _choice(_values(Optimizer)) | None = Field(None)  # type: ignore[valid-type]
    optimizer_impl: _choice(_values(OptimizerImpl)) | None = Field(  # type: ignore[valid-type]
        None)
    quant: _choice(_values(Quant)) | None = Field(None)  # type: ignore[valid-type]
    lora_r: OptionalNumberText | None = Field(None, description="LoRA rank." + _TEXT)
    lora_targets: str | None = Field(None, description="Comma-separated, or `all`.")
    batch: OptionalNumberText | None = Field(None, description="Micro-batch; default 1." + _TEXT)
    seq_len: OptionalNumberText | None = Field(None, description="Default 2048." + _TEXT)
    checkpointing: _choice(_values(Checkpointing)) | None = Field(  # type: ignore[valid-type]
        None)
    attention: _choice(_values(Attention)) | None = Field(None)  # type: ignore[valid-type]
    loss: _choice(_values(Loss)) | None = Field(None)  # type: ignore[valid-type]
    framework: _choice(_values(Framework)) | None = Field(None)  # type: ignore[valid-type]
    metric: _choice(_values(Metric)) | None = Field(None)  # type: ignore[valid-type]
    grad_accum: OptionalNumberText | None = Field(None, description="Accumulation steps." + _TEXT)


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GpuVerdictOut(_Out):
    gpu: str
    display_name: str
    capacity_bytes: int
    capacity_gb: float
    capacity_gib: float
    usable_share: float
    usable_bytes: int
    usable_gb: float
    usable_gib: float
    peak_bytes: int
    peak_gb: float
    peak_gib: float
    fits: bool = Field(description="The peak stays within the usable share.")
    fits_at_capacity: bool
    headroom_bytes: int
    headroom_gb: float
    headroom_gib: float
    usage_share: float
    margin_source: str


class SchemeAnswerOut(_Out):
    sharding: str
    offload: str
    gpus: int | None = Field(description="Fewest GPUs; null: none up to 4096.")
    peak_bytes: int | None
    peak_gb: float | None
    peak_gib: float | None


class ChangeOut(_Out):
    change: str
    detail: str
    fits: bool
    peak_bytes: int
    peak_gb: float
    peak_gib: float
    saved_bytes: int
    saved_gb: float
    saved_gib: float
    speed_cost: str
    quality_cost: str
    source: str


class FitOut(_Out):
    """The `vramplan fit --json` object (docs/sharding.md)."""

    schema_version: int
    model: str
    setup: dict[str, Any]
    lora_targets: list[str]
    per_gpu: dict[str, Any] = Field(description="Per-GPU peak, its parts, every phase, host.")
    verdict: GpuVerdictOut
    max_batch: int | None
    max_seq_len: int | None
    fewest_gpus: list[SchemeAnswerOut]
    cheapest: SchemeAnswerOut | None
    changes: list[ChangeOut]
    combined: list[ChangeOut]


class ActivationsOut(_Out):
    schema_version: int
    model: str
    batch: int
    seq_len: int
    method: str
    precision: Literal["mixed"]
    attention: Literal["sdpa"]
    checkpointing: Literal["none"]
    activations_bytes: int
    activations_gb: float
    activations_gib: float


_Q = TypeVar("_Q", bound=LangQuery)
_ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorOut, "description": "A bad value: the message names field and value."},
}


def fit_payload(query: FitQuery) -> dict[str, Any]:
    """`vramplan fit --json` for these options."""
    if not query.model.strip():
        raise MissingValue("model")
    preset = find_model(query.model)
    texts = FitFields(**{name: getattr(query, name) for name in FitFields.__dataclass_fields__})
    setup = fit_setup(architecture_of(preset), preset.name, texts)
    share = usable_share_from_percent(parse_decimal("margin", query.margin or "80"))
    return fit_to_json(fit_report(setup, find_gpu(query.gpu), share))


@router.get("/fit", response_model=None, responses={200: {"model": FitOut}, **_ERRORS},
            openapi_extra=query_parameters(FitQuery))
async def get_fit(request: Request) -> JSONResponse:
    """Will a training run fit on GPUs of a type, and what to change if not: the object
    `vramplan fit --json` prints for the same options."""
    return FastJSONResponse(fit_payload(read_query(request, FitQuery)))


@router.get("/activations", response_model=None,
            responses={200: {"model": ActivationsOut}, **_ERRORS},
            openapi_extra=query_parameters(ActivationsQuery))
async def get_activations(request: Request) -> JSONResponse:
    """The simple mode's activation memory A from batch and sequence length (detailed model:
    mixed precision, SDPA, no checkpointing), as `vramplan estimate --seq-len` computes it."""
    query = read_query(request, ActivationsQuery)
    result = simple_activations_query({"model": query.model, "batch": query.batch or "",
                                       "seq_len": query.seq_len or "",
                                       "method": query.method or ""})
    return FastJSONResponse({
        "schema_version": SCHEMA_VERSION, "model": result.model.name, "batch": result.batch,
        "seq_len": result.seq_len, "method": result.method.value, "precision": "mixed",
        "attention": "sdpa", "checkpointing": "none",
        **memory("activations", result.activations_bytes),
    })
