"""The sister calculators' API models: `/api/v1/inference` and `/api/v1/lora`.

Queries are text, read by `vramplan.sister_api` with the CLI's rules. POST bodies are strict JSON
(whole numbers are JSON integers, flags JSON booleans, unknown fields refused); every field's schema
is written inline (no `$ref`), so the body's schema can be put in the OpenAPI document as it is.
The response models document the objects of `vramplan infer --json` and `vramplan lora --json`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from vramplan.bounds import BATCH, CONTEXT, LORA_RANK, PROMPT, TENSOR_PARALLEL
from vramplan.inference.setup import ComputeDtype, KvDtype
from vramplan.model.lora_targets import LoraTarget
from vramplan.presets.inference_engines import Engine
from vramplan.web.schemas import NUMBER_TEXT, OPTIONAL_NUMBER_TEXT, GpuName, LangQuery


def _text(schema: dict[str, Any]) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", **schema})


def _names(values: list[str]) -> WithJsonSchema:
    return _text({"enum": values})


ModelName = Annotated[str, _text({"minLength": 1, "examples": ["llama-3.1-8b"]})]
Weights = Annotated[str, _text({"examples": ["bf16", "nf4", "awq-4bit-g128", "q4_k_m"]})]
KvName = Annotated[str, _names([kv.value for kv in KvDtype])]
DtypeName = Annotated[str, _names([dtype.value for dtype in ComputeDtype])]
EngineName = Annotated[str, _names([engine.value for engine in Engine])]
AttentionName = Annotated[str, _names(["flash", "eager"])]
IntText = Annotated[str, _text({"pattern": NUMBER_TEXT})]
OptionalIntText = Annotated[str, _text({"pattern": OPTIONAL_NUMBER_TEXT})]
FlagText = Annotated[str, _text({"enum": ["", "0", "1", "true", "false", "on", "off"]})]
TargetsText = Annotated[str, _text({"pattern": r"^\s*[A-Za-z]+(\s*[,;]\s*[A-Za-z]+)*\s*$",
                                    "examples": ["q,v", "all,head"]})]

_TEXT = " Text, read like the CLI's option."


def _int(field: Any, description: str) -> Any:
    """A strict JSON integer within `field`'s range (a `NumberField` of the core)."""
    return Field(None, ge=int(field.minimum), le=int(field.maximum), strict=True,
                 description=description)


# --- inference -----------------------------------------------------------------------------------

class InferenceQuery(LangQuery):
    """`GET /api/v1/inference`: the query of `vramplan infer`, as text."""

    model: ModelName = Field(description="A registry model (GET /api/v1/models) or its HF repo.")
    weights: Weights | None = Field(None, description="Weight format; default bf16." + _TEXT)
    context: OptionalIntText | None = Field(None, description="Tokens per sequence; default 4096.")
    prompt: OptionalIntText | None = Field(None, description="Prefill tokens; default = context.")
    batch: OptionalIntText | None = Field(None, description="Concurrent sequences; default 1.")
    kv_dtype: KvName | None = Field(None, description="KV cache dtype; default fp16.")
    dtype: DtypeName | None = Field(None, description="Compute dtype; default bf16.")
    engine: EngineName | None = Field(None, description="Default generic (llama.cpp for GGUF).")
    tensor_parallel: OptionalIntText | None = Field(None, description="GPUs; default 1.")
    attention: AttentionName | None = Field(None, description="flash (default) or eager.")
    gpu: GpuName | None = Field(None, description="One GPU; default: the common cards.")
    limits: FlagText | None = Field(
        None, description="`1`: add max_context and max_batch to each GPU's verdict.")


class InferenceRequest(BaseModel):
    """`POST /api/v1/inference`: the same fields as a strict JSON object."""

    model_config = ConfigDict(strict=True, extra="forbid")

    model: ModelName = Field(description="A registry model (GET /api/v1/models) or its HF repo.")
    weights: Weights | None = Field(None, description="Weight format; default bf16.")
    context: int | None = _int(CONTEXT, "Tokens per sequence; default 4096.")
    prompt: int | None = _int(PROMPT, "Prefill tokens, at most context; default = context.")
    batch: int | None = _int(BATCH, "Concurrent sequences; default 1.")
    kv_dtype: KvName | None = Field(None, description="KV cache dtype; default fp16.")
    dtype: DtypeName | None = Field(None, description="Compute dtype; default bf16.")
    engine: EngineName | None = Field(None, description="Default generic (llama.cpp for GGUF).")
    tensor_parallel: int | None = _int(TENSOR_PARALLEL, "Tensor-parallel GPUs; default 1.")
    attention: AttentionName | None = Field(None, description="flash (default) or eager.")
    gpu: GpuName | None = Field(None, description="One GPU; default: the common cards.")
    limits: bool = Field(False, description="Add max_context and max_batch to each verdict.")


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WeightsGroupOut(_Out):
    group: Literal["linears", "head", "embedding", "other"]
    storage: str
    params: int
    on_gpu: bool
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class InferencePartOut(_Out):
    part: str = Field(description="weights, kv_cache, activations, logits, quant_transient, "
                      "engine_buffers (per GPU; they add up to allocated_bytes)")
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class InferenceVerdictOut(_Out):
    gpu: str
    display_name: str
    capacity_bytes: int
    usable_bytes: int
    usable_gb: float
    usable_gib: float
    fits: bool
    headroom_bytes: int
    headroom_gb: float
    headroom_gib: float
    max_context: int | None = Field(description="With limits: the longest context that fits.")
    max_batch: int | None = Field(description="With limits: the most sequences that fit.")
    context_cap: int | None


class InferenceOut(_Out):
    """The `vramplan infer --json` object (docs/inference.md)."""

    schema_version: int
    mode: Literal["inference"]
    model: str | None
    weights: str
    weights_family: str
    engine: str
    context: int
    prompt: int
    batch: int
    kv_dtype: str
    compute_dtype: str
    tensor_parallel: int
    attention: str
    params: int
    weights_breakdown: list[WeightsGroupOut]
    parts: list[InferencePartOut]
    kv_bytes_per_token: int
    allocated_bytes: int
    allocated_gb: float
    allocated_gib: float
    cuda_context_bytes: int
    cuda_context_gb: float
    cuda_context_gib: float
    device_bytes: int
    device_gb: float
    device_gib: float
    engine_memory_utilization: float | None
    verdicts: list[InferenceVerdictOut]


# --- LoRA ----------------------------------------------------------------------------------------

class LoraQuery(LangQuery):
    """`GET /api/v1/lora`: the query of `vramplan lora`, as text."""

    model: ModelName = Field(description="A registry model (GET /api/v1/models) or its HF repo.")
    lora_r: OptionalIntText | None = Field(None, description="Rank r; default 16." + _TEXT)
    lora_targets: TargetsText | None = Field(
        None, description="q, k, v, o, gate, up, down, head or all, separated by `,` or `;`; "
        "default q,v.")
    dora: FlagText | None = Field(None, description="`1`: DoRA's magnitude vectors.")
    rslora: FlagText | None = Field(None, description="`1`: rsLoRA scaling (same memory).")


TargetName = Annotated[str, _names([target.value for target in LoraTarget])]


class LoraRequest(BaseModel):
    """`POST /api/v1/lora`: the same fields as a strict JSON object."""

    model_config = ConfigDict(strict=True, extra="forbid")

    model: ModelName = Field(description="A registry model (GET /api/v1/models) or its HF repo.")
    lora_r: int | None = _int(LORA_RANK, "Rank r; default 16.")
    lora_targets: list[TargetName] | None = Field(
        None, min_length=1, description="Adapted modules; default [\"q\", \"v\"].")
    dora: bool = Field(False, description="DoRA's magnitude vectors.")
    rslora: bool = Field(False, description="rsLoRA scaling (same memory).")


class LoraMatrixOut(_Out):
    target: str
    in_features: int
    out_features: int
    copies: int
    params: int


class AdapterFileOut(_Out):
    dtype: Literal["fp32", "bf16", "fp16"]
    size_bytes: int
    size_gb: float
    size_gib: float
    header_bytes: int


class TrainingSetupOut(_Out):
    model: str | None
    method: Literal["lora"]
    lora_r: int
    lora_targets: str
    dora: bool


class LoraOut(_Out):
    """The `vramplan lora --json` object (docs/lora.md)."""

    schema_version: int
    mode: Literal["lora"]
    model: str | None
    rank: int
    targets: list[str]
    dora: bool
    rslora: bool
    matrices: list[LoraMatrixOut]
    lora_params: int
    dora_params: int
    trainable_params: int
    model_params: int
    share_of_model: float
    adapter_files: list[AdapterFileOut]
    training_bytes: int
    training_gb: float
    training_gib: float
    training_bytes_per_param: int
    training_setup: TrainingSetupOut
