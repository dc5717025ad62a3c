"""The JSON API's models: a strict request body and the documented response shapes.

Strict means no silent coercion: `"7"` and `false` are not numbers here (JSON numbers only), and a
field the API does not know is an error. Query strings are text, read by `vramplan.web.query` with
the CLI's number rules instead. The response models document `vramplan.serialize` (the one
serializer, shared with `vramplan estimate --json`); schemathesis checks the two agree.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from vramplan.bounds import ACTIVATIONS_GB, BYTES_PER_PARAM, NUMBER_PATTERN, PARAMS_BILLION
from vramplan.i18n import Lang
from vramplan.presets.gpus import GPUS
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.web.query import CUSTOM

GPU_NAMES = [name for gpu in GPUS for name in (gpu.name, *gpu.aliases)]
"""Names `gpu` accepts (any case), for the schema's `enum`; `find_gpu` does the checking."""
LANGS = [lang.value for lang in Lang]
NUMBER_TEXT = rf"^\s*(?:{NUMBER_PATTERN})\s*$"
"""Query-string numbers, as `vramplan.bounds.parse_decimal` reads them (documentation only: the
parser checks, so a bad value gets its own message rather than a pattern mismatch)."""
OPTIONAL_NUMBER_TEXT = rf"^\s*(?:{NUMBER_PATTERN})?\s*$"


def _text(schema: dict[str, Any]) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", **schema})


GpuName = Annotated[str, _text({"enum": GPU_NAMES})]
LangName = Annotated[str, _text({"enum": LANGS})]
NumberText = Annotated[str, _text({"pattern": NUMBER_TEXT, "examples": ["7", "7,5"]})]
OptionalNumberText = Annotated[str, _text({"pattern": OPTIONAL_NUMBER_TEXT})]
OptimizerText = Annotated[
    str, _text({"enum": [*(preset.value for preset in OptimizerPreset), CUSTOM]})
]


class EstimateRequest(BaseModel):
    """The seed calculator's inputs, named like the CLI's options."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={
        # optimizer and bytes_per_param exclude each other, as on the CLI.
        "not": {
            "required": ["optimizer", "bytes_per_param"],
            "properties": {"optimizer": {"type": "string"}, "bytes_per_param": {"type": "number"}},
        },
    })

    params: float = Field(
        gt=PARAMS_BILLION.minimum, le=PARAMS_BILLION.maximum, allow_inf_nan=False,
        description="Parameter count N, in billions (a JSON number).", examples=[7],
    )
    optimizer: OptimizerPreset | None = Field(
        None, strict=False,
        description="Memory-per-parameter preset; default adam-mixed. Excludes bytes_per_param.",
    )
    bytes_per_param: float | None = Field(
        None, gt=BYTES_PER_PARAM.minimum, le=BYTES_PER_PARAM.maximum, allow_inf_nan=False,
        description="Custom memory per parameter B, in bytes. Excludes optimizer.",
    )
    activations: float = Field(
        0.0, ge=ACTIVATIONS_GB.minimum, le=ACTIVATIONS_GB.maximum, allow_inf_nan=False,
        description="Activation memory A, in GB (10**9 bytes).", examples=[20],
    )
    gpu: GpuName | None = Field(
        None, description="GPU to compare with (GET /api/v1/gpus); default: the common cards.",
    )


_NUMBER_TEXT = " Text, read like the CLI's options: `7.5` and `7,5` both mean 7.5."


class LangQuery(BaseModel):
    """The query of every endpoint: only `lang`; any other parameter is refused."""

    model_config = ConfigDict(extra="forbid")

    lang: LangName | None = Field(
        None, description="Language of error messages, `fr` or `en` (else Accept-Language).",
    )


class EstimateQuery(LangQuery):
    """`GET /api/v1/estimate`'s query: text, parsed with the CLI's rules (see the module doc)."""

    params: NumberText = Field(description="Parameter count N, in billions." + _NUMBER_TEXT)
    optimizer: OptimizerText | None = Field(
        None, description="adam-mixed (default), adam-8bit or sgd-momentum; `custom` (or no "
        "optimizer) with bytes_per_param.",
    )
    bytes_per_param: OptionalNumberText | None = Field(
        None, description="Custom memory per parameter B, in bytes." + _NUMBER_TEXT,
    )
    activations: OptionalNumberText | None = Field(
        None, description="Activation memory A, in GB (10**9 bytes); default 0." + _NUMBER_TEXT,
    )
    gpu: GpuName | None = Field(
        None, description="GPU to compare with (GET /api/v1/gpus); default: the common cards.",
    )


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BreakdownPartOut(_Out):
    part: str
    component: str
    bytes_per_param: float
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class VerdictOut(_Out):
    gpu: str
    display_name: str
    capacity_bytes: int
    capacity_gib: int
    fits: bool
    headroom_bytes: int = Field(description="Capacity left (positive) or missing (negative).")
    headroom_gb: float
    headroom_gib: float
    usage_share: float
    min_gpus_lower_bound: int = Field(description="Fewest such cards if split evenly: a bound.")


class EstimateOut(_Out):
    """The `vramplan estimate --json` object (docs/json.md)."""

    schema_version: int
    mode: Literal["simple"]
    params_billion: float
    params: int
    optimizer: OptimizerPreset | None
    bytes_per_param: float
    breakdown: list[BreakdownPartOut]
    model_states_bytes: int
    model_states_gb: float
    model_states_gib: float
    activations_bytes: int
    activations_gb: float
    activations_gib: float
    total_bytes: int
    total_gb: float
    total_gib: float
    verdicts: list[VerdictOut]


class GpuOut(_Out):
    name: str
    display_name: str
    vendor: str
    memory_gib: int
    capacity_bytes: int
    aliases: list[str]
    source: str


class ModelOut(_Out):
    name: str
    display_name: str
    family: str = Field(description="The config.json `model_type`.")
    hf_repo: str
    aliases: list[str]
    params: int = Field(description="Exact parameter count, from the architecture.")
    params_billion: float
    source: str = Field(description="URL of the official config.json.")
    read_from: str


class ModelsOut(_Out):
    models: list[ModelOut]


class GpusOut(_Out):
    gpus: list[GpuOut]


class HealthOut(_Out):
    status: Literal["ok"]
    version: str


class ErrorDetail(_Out):
    code: str = Field(description="Stable machine name: not_a_number, out_of_range, missing, ...")
    field: str | None = Field(description="The query parameter or body field at fault.")
    value: str | None = Field(description="The value as received, as text.")
    message: str = Field(description="One line naming the field, the value and what is accepted.")
    lang: Lang


class ErrorOut(_Out):
    """The one shape of every 4xx answer."""

    error: ErrorDetail
