"""The JSON API's response shapes, for the OpenAPI document: what `vramplan.serialize` (the one
serializer, shared with every `--json` of the CLI) builds. schemathesis checks that answers
conform (tests/test_api_schemathesis.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vramplan.i18n import Lang
from vramplan.presets.optimizers import OptimizerPreset


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


# --- /api/v1/fit and /api/v1/activations ------------------------------------------------------


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
    detail: str = Field(description="The settings as `field=value` pairs.")
    settings: dict[str, Any] = Field(
        description="The fields of the request that change, with their new values.")
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


# --- /api/v1/inference -------------------------------------------------------------------------


class WeightsGroupOut(_Out):
    group: Literal["linears", "head", "embedding", "other"]
    storage: str
    params: int
    on_gpu: bool
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class InferencePartOut(_Out):
    part: str = Field(description="weights, kv_cache, prefill_activations, logits, "
                      "quant_transient, engine_buffers (per GPU; they add up to allocated_bytes)")
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
    beyond_trained_context: bool = Field(
        description="The context exceeds the model's max_position_embeddings.")
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


# --- /api/v1/lora ----------------------------------------------------------------------------

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
