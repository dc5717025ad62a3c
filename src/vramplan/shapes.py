"""The shapes of the JSON answers, declared once: one TypedDict per object `vramplan.serialize`
builds (every `--json` of the CLI, `Result.to_json()`, every answer of the JSON API).

mypy checks each serializer's dict against its shape; the web layer generates the OpenAPI
document's schemas from the same classes (`vramplan.web.api.schemas`, with pydantic: an attribute
docstring becomes a field's description there). The CLI never imports this module (the serializer
names its shapes for the type checker only), so it costs the CLI nothing to start.

Field names carry their units: `_bytes` (integer bytes), `_gb` (10**9 bytes), `_gib` (2**30
bytes); each quantity comes in the three. A field holding an enum's value is
`Annotated[str, ValueOf(Enum)]`: a plain string in the answer, whose accepted values the API's
schema lists. Fields are added, never renamed or dropped (docs/json.md).
"""

# No `from __future__ import annotations`: pydantic (in the web layer) reads these annotations, and
# evaluating them here fails at import, not when the API's document is first built.

import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, Literal, NotRequired

from vramplan.distributed.parallelism import PipelineSchedule
from vramplan.i18n import Lang
from vramplan.lora_calculator import AdapterDtype
from vramplan.model.architecture import ParamGroup
from vramplan.model.weight_storage import WeightGroup
from vramplan.parts import Component, PartKind
from vramplan.planner.changes import ChangeKind, QualityCost, SpeedCost
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.presets.quant_formats import FormatFamily
from vramplan.tracer.result import Phase as TracePhase
from vramplan.training.result import Phase
from vramplan.validation.cases import Reading
from vramplan.validation.scoring import Outcome
from vramplan.vocab import (
    Attention,
    Checkpointing,
    ComputeDtype,
    Device,
    Engine,
    Framework,
    FsdpVersion,
    Generation,
    KvDtype,
    LoraTarget,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)

if sys.version_info >= (3, 12):
    from typing import TypedDict
else:  # before 3.12 pydantic reads a TypedDict's fields from typing_extensions' class only
    from typing_extensions import TypedDict


@dataclass(frozen=True, slots=True)
class ValueOf:
    """Marks a string field that holds the value of one of `enum`'s members:
    `Annotated[str, ValueOf(Method)]`."""

    enum: type[Enum]

    def __get_pydantic_core_schema__(self, source: object,
                                     handler: Callable[[object], object]) -> object:
        """pydantic's hook for annotation metadata, called by name when the web layer documents a
        shape (nothing of pydantic is imported here): the field is the Literal of the enum's
        values, which the schema lists and a validation checks."""
        values = tuple(member.value for member in self.enum)
        return handler(Literal[values])


# --- the catalogues: vramplan gpus|models --json, /api/v1/gpus, /api/v1/models ----------------


class GpuOut(TypedDict):
    name: str
    display_name: str
    vendor: str
    memory_gib: int
    """The memory as sold, in GiB (an "80 GB" card holds 80 GiB)."""
    capacity_bytes: int
    cuda_total_bytes: int | None
    """What CUDA hands out on the card (`torch.cuda.get_device_properties().total_memory`) where
    a figure is published: the memory as sold less ECC's share and the driver's reserve."""
    aliases: list[str]
    source: str


class GpusOut(TypedDict):
    """The GPU catalogue (`vramplan gpus --json`)."""

    gpus: list[GpuOut]


class ModelOut(TypedDict):
    """A preset of the model registry."""

    name: str
    display_name: str
    family: str
    """The config.json `model_type`."""
    hf_repo: str
    aliases: list[str]
    params: int
    """Exact parameter count, from the architecture."""
    params_billion: float
    source: str
    """URL of the official config.json."""
    read_from: str


class ModelsOut(TypedDict):
    """The model registry (`vramplan models --json`)."""

    models: list[ModelOut]


class HealthOut(TypedDict):
    status: Literal["ok"]
    version: str


# --- one model: vramplan model NAME --json, and `model` in an estimate ---------------------------


class LinearOut(TypedDict):
    """A linear layer of a block (or the head)."""

    role: str
    in_features: int
    out_features: int
    bias: bool
    count: int
    """Copies of the matrix in a block (experts, fused projections)."""
    routed: bool
    params: int


class ParamCountsOut(TypedDict):
    """Exact parameter counts, total, by component and derived."""

    params: int
    params_billion: float
    params_embedding: int
    params_non_embedding: int
    params_head: int
    params_per_block: int
    params_blocks: int
    params_final_norm: int
    params_active: int
    """Parameters one token goes through (the routed experts it uses, not all)."""
    by_component: dict[Annotated[str, ValueOf(ParamGroup)], int]
    """Every parameter by where it lives: one entry per group, summing to `params`."""


class SafetensorsCheckOut(TypedDict):
    """The count checked against a local model.safetensors.index.json."""

    total_size_bytes: int
    dtype_bytes: int
    params_from_index: float
    """`total_size` / `dtype_bytes` (not whole when tensors of several dtypes are stored)."""
    params_from_config: int
    difference: float
    matches: bool


class ModelDetailOut(TypedDict):
    """One model: its preset, spec and exact counts (`vramplan model NAME --json`)."""

    schema_version: int
    preset: ModelOut | None
    """The registry's entry; null for a Hub repository id or a config.json."""
    architecture: dict[str, Any]
    """Every field of `vramplan.model.architecture.Architecture` (enums as their values, nested
    specs as objects), then `norms_per_block`, `expert_intermediate_size`, `block_linears` and
    `head_linear`: its keys are the dataclass's fields, declared there."""
    counts: ParamCountsOut
    config: NotRequired[dict[str, Any]]
    """The config.json the architecture was read from (its own keys)."""
    source: NotRequired[str]
    """Where that config.json is: the Hub URL or the local path."""
    safetensors_check: NotRequired[SafetensorsCheckOut | None]
    """`vramplan model --config`: the count against the checkpoint's index, when it has one."""


# --- the seed rule: vramplan estimate --json, /api/v1/estimate ---------------------------------


class BreakdownPartOut(TypedDict):
    part: Annotated[str, ValueOf(PartKind)]
    component: Annotated[str, ValueOf(Component)]
    """The stacked bar's category."""
    bytes_per_param: float
    """This part's bytes per parameter (2 + 2 + 4 + 4 + 4 = 16 for Adam)."""
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class VerdictOut(TypedDict):
    gpu: str
    display_name: str
    capacity_bytes: int
    capacity_gib: int
    fits: bool
    headroom_bytes: int
    """Capacity left (positive) or missing (negative)."""
    headroom_gb: float
    headroom_gib: float
    usage_share: float
    """Total / capacity (1.0 = exactly full)."""
    min_gpus_lower_bound: int
    """Fewest such cards if split evenly: a bound."""


class EstimateOut(TypedDict):
    """The `vramplan estimate --json` object (docs/json.md)."""

    schema_version: int
    mode: Literal["simple"]
    params_billion: float
    params: int
    optimizer: Annotated[str, ValueOf(OptimizerPreset)] | None
    """The preset of B; null for a custom `bytes_per_param`."""
    bytes_per_param: float
    breakdown: list[BreakdownPartOut]
    """The parts of B (empty for a custom B)."""
    model_states_bytes: int
    """M = N·B."""
    model_states_gb: float
    model_states_gib: float
    activations_bytes: int
    activations_gb: float
    activations_gib: float
    total_bytes: int
    """V = M + A."""
    total_gb: float
    total_gib: float
    verdicts: list[VerdictOut]
    model: NotRequired[ModelDetailOut]
    """With `model`: the model N was counted from."""


class ActivationsOut(TypedDict):
    """The seed rule's A from a model, batch and sequence length (`/api/v1/activations`)."""

    schema_version: int
    model: str
    batch: int
    seq_len: int
    method: Literal["full"]
    precision: Literal["mixed"]
    attention: Literal["sdpa"]
    checkpointing: Literal["none"]
    activations_bytes: int
    activations_gb: float
    activations_gib: float


# --- parts and phases of a training step (detailed estimate, fit, trace) ------------------------


class PartOut(TypedDict):
    part: Annotated[str, ValueOf(PartKind)]
    component: Annotated[str, ValueOf(Component)]
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class PhaseOut(TypedDict):
    """One phase of the step: its total and its parts."""

    phase: Annotated[str, ValueOf(Phase)]
    total_bytes: int
    total_gb: float
    total_gib: float
    parts: list[PartOut]


class SavedTensorOut(TypedDict):
    tensor: str
    bytes_per_token: int


class TrainingEstimateSetupOut(TypedDict):
    """The detailed estimate's setup."""

    method: Annotated[str, ValueOf(Method)]
    precision: Annotated[str, ValueOf(Precision)]
    optimizer: Annotated[str, ValueOf(Optimizer)]
    quant: Annotated[str, ValueOf(Quant)]
    batch: int
    seq_len: int
    framework: Annotated[str, ValueOf(Framework)]
    metric: Annotated[str, ValueOf(Metric)]


class TrainingEstimateOut(TypedDict):
    """The detailed training estimate on one GPU: peak, phases, states."""

    setup: TrainingEstimateSetupOut
    peak_phase: Annotated[str, ValueOf(Phase)]
    allocated_bytes: int
    allocated_gb: float
    allocated_gib: float
    reserved_bytes: int
    reserved_gb: float
    reserved_gib: float
    device_bytes: int
    device_gb: float
    device_gib: float
    activations_bytes: int
    activations_gb: float
    activations_gib: float
    trainable_params: int
    frozen_params: int
    managed_optimizer_bytes: int
    managed_optimizer_gb: float
    managed_optimizer_gib: float
    phases: list[PhaseOut]
    block_saved_per_token: list[SavedTensorOut]


# --- vramplan trace --json --------------------------------------------------------------------


class TraceSetupOut(TypedDict):
    method: Annotated[str, ValueOf(Method)]
    """How the model trains, or the preference or RL method (dpo, grpo) around the policy."""
    policy: Annotated[str, ValueOf(Method)] | None
    """dpo, grpo: how the policy trains (full, lora, qlora); null otherwise."""
    precompute_ref: bool
    """dpo: reference log-probabilities precomputed (no reference pass)."""
    beta: float
    """grpo: the KL weight (a reference pass when not 0)."""
    completion_len: int | None
    """grpo: the completion's tokens, within seq_len; null otherwise."""
    precision: Annotated[str, ValueOf(Precision)]
    optimizer: Annotated[str, ValueOf(Optimizer)]
    optimizer_impl: Annotated[str, ValueOf(OptimizerImpl)]
    quant: Annotated[str, ValueOf(Quant)]
    lora_r: int | None
    lora_targets: list[str]
    """The adapted modules' names."""
    adapters_fp32: bool
    """LoRA's adapters in fp32 (peft's default upcast); false: in the model's dtype, or no LoRA."""
    train_layers: int
    batch: int
    seq_len: int
    checkpointing: Annotated[str, ValueOf(Checkpointing)]
    attention: Annotated[str, ValueOf(Attention)]
    device: Annotated[str, ValueOf(Device)]


class TracePhaseOut(TypedDict):
    phase: Annotated[str, ValueOf(TracePhase)]
    peak_bytes: int
    peak_gb: float
    peak_gib: float
    breakdown: list[PartOut]


class CudaPeaksOut(TypedDict):
    """torch.cuda's own counters for the same step run for real."""

    device_name: str
    max_allocated_bytes: int
    max_allocated_gb: float
    max_allocated_gib: float
    max_reserved_bytes: int
    max_reserved_gb: float
    max_reserved_gib: float


class AllocatorPeaksOut(TypedDict):
    """The traced step's allocations and frees replayed through the simulated caching
    allocator (`vramplan.allocator`)."""

    allocated_peak_bytes: int
    reserved_peak_bytes: int
    reserved_peak_gb: float
    reserved_peak_gib: float
    cached_at_peak_bytes: int
    """Reserved but unallocated when reserved peaked: the cache and its fragmentation."""
    fragmentation: float
    """cached_at_peak_bytes / reserved_peak_bytes."""
    num_alloc_retries: int


class TraceOut(TypedDict):
    """The `vramplan trace --json` object (docs/trace.md)."""

    schema_version: int
    mode: Literal["trace"]
    model: str
    setup: TraceSetupOut
    params_total: int
    params_trainable: int
    real_tensors: bool
    peak_bytes: int
    peak_gb: float
    peak_gib: float
    peak_phase: Annotated[str, ValueOf(TracePhase)]
    breakdown: list[PartOut]
    phases: list[TracePhaseOut]
    paged_bytes: int
    paged_gb: float
    paged_gib: float
    emulated: list[str]
    not_traced: list[str]
    """What the method runs that the trace does not (GRPO's generation), in plain words."""
    versions: dict[str, str]
    """The version of each package the step ran with, by package name."""
    cuda: CudaPeaksOut | None
    allocator: AllocatorPeaksOut | None


# --- vramplan infer --json, /api/v1/inference -----------------------------------------------------


class WeightsGroupOut(TypedDict):
    group: Annotated[str, ValueOf(WeightGroup)]
    storage: str
    """The stored type: `bf16`, `nf4-dq`, `gptq-4bit-g128`, `Q6_K`, ... (`host` off the GPU)."""
    params: int
    on_gpu: bool
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class InferencePartOut(TypedDict):
    part: Annotated[str, ValueOf(PartKind)]
    """weights, kv_cache, prefill_activations, logits, quant_transient, engine_buffers (per GPU;
    they add up to allocated_bytes)."""
    memory_bytes: int
    memory_gb: float
    memory_gib: float


class InferenceVerdictOut(TypedDict):
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
    max_context: int | None
    """With limits: the longest context that fits."""
    max_batch: int | None
    """With limits: the most sequences that fit."""
    context_cap: int | None


class InferenceOut(TypedDict):
    """The `vramplan infer --json` object (docs/inference.md)."""

    schema_version: int
    mode: Literal["inference"]
    model: str | None
    beyond_trained_context: bool
    """The context exceeds the model's max_position_embeddings."""
    weights: str
    """The weight format's name."""
    weights_family: Annotated[str, ValueOf(FormatFamily)]
    engine: Annotated[str, ValueOf(Engine)]
    context: int
    prompt: int
    batch: int
    kv_dtype: Annotated[str, ValueOf(KvDtype)]
    compute_dtype: Annotated[str, ValueOf(ComputeDtype)]
    tensor_parallel: int
    attention: Annotated[str, ValueOf(Attention)]
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
    """The share of the card the engine reserves (vLLM's gpu_memory_utilization); null if none."""
    verdicts: list[InferenceVerdictOut]


# --- vramplan lora --json, /api/v1/lora ---------------------------------------------------------


class LoraMatrixOut(TypedDict):
    target: Annotated[str, ValueOf(LoraTarget)]
    in_features: int
    out_features: int
    copies: int
    params: int


class AdapterFileOut(TypedDict):
    dtype: Annotated[str, ValueOf(AdapterDtype)]
    size_bytes: int
    size_gb: float
    size_gib: float
    header_bytes: int


class TrainingSetupOut(TypedDict):
    """The setup to enter in the training calculator, in the case-file vocabulary."""

    model: str | None
    method: Literal["lora"]
    lora_r: int
    lora_targets: str
    """The targets joined by `;`."""
    dora: bool


class LoraOut(TypedDict):
    """The `vramplan lora --json` object (docs/lora.md)."""

    schema_version: int
    mode: Literal["lora"]
    model: str | None
    rank: int
    targets: list[Annotated[str, ValueOf(LoraTarget)]]
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


# --- vramplan validate --json ---------------------------------------------------------------------


class SkippedCaseOut(TypedDict):
    id: str
    reason: str


class UnreadRowOut(TypedDict):
    row: int
    id: str
    reason: str


class ValidationSummaryOut(TypedDict):
    rows_total: int
    rows_scored: int
    median_abs_error_pct: float | None
    p90_abs_error_pct: float | None
    max_abs_error_pct: float | None
    within_10pct_share: float | None
    oom_right: int
    oom_total: int
    skipped: list[SkippedCaseOut]
    unread: list[UnreadRowOut]


class ValidationRowOut(TypedDict):
    id: str
    model: str
    method: Annotated[str, ValueOf(Method)]
    outcome: Annotated[str, ValueOf(Outcome)]
    estimated_by: str
    metric: Annotated[str, ValueOf(Metric)]
    estimate_bytes: int | None
    measured_bytes: int | None
    error_pct: float | None
    oom_right: bool | None
    device_estimate_bytes: int | None
    gpu: str | None
    capacity_bytes: int | None
    peak_phase: str | None
    readings: list[Annotated[str, ValueOf(Reading)]]
    """What was assumed to estimate the row (cells left open): `reading.<value>` says it."""


class ValidationOut(TypedDict):
    """The `vramplan validate FILE --json` object: the file, the summary, then one object per
    row."""

    file: str
    """The case file's name."""
    summary: ValidationSummaryOut
    rows: list[ValidationRowOut]


class ShippedValidationOut(TypedDict):
    """`vramplan validate --json` without a file: each case file shipped with vramplan."""

    files: list[ValidationOut]


# --- vramplan fit --json, /api/v1/fit -----------------------------------------------------------


class AlignmentOut(TypedDict):
    """A preference or RL method around the policy (TRL's trainers)."""

    method: Annotated[str, ValueOf(Method)]
    reference: str
    """Where reference log-probabilities come from: model (a frozen copy), adapter (the policy
    with its adapter disabled), precomputed, or none."""
    precompute_ref: bool
    beta: float
    completion_len: int | None
    """Tokens generated per sequence (GRPO, PPO); null for the other methods."""
    generation: Annotated[str, ValueOf(Generation)]
    generated_together: int
    """Sequences generated at once per GPU."""
    vllm_share: float
    vllm_sleep: bool
    value_adapters: bool
    """PPO: the value model trains the policy's adapters only (ms-swift), not in full (TRL)."""
    engine_bytes: int
    """The colocated vLLM engine's share of the GPU (0 without one)."""


class FitSetupOut(TypedDict):
    """The training run, in the request vocabulary."""

    method: Annotated[str, ValueOf(Method)]
    precision: Annotated[str, ValueOf(Precision)]
    optimizer: Annotated[str, ValueOf(Optimizer)]
    optimizer_impl: Annotated[str, ValueOf(OptimizerImpl)]
    """How the optimizer steps: as asked, else the framework's default today
    (`vramplan.training.setup.optimizer_impl`: the transformers Trainer's fused AdamW)."""
    quant: Annotated[str, ValueOf(Quant)]
    lora_r: int | None
    batch: int
    """The micro-batch per GPU."""
    seq_len: int
    checkpointing: Annotated[str, ValueOf(Checkpointing)]
    attention: Annotated[str, ValueOf(Attention)]
    framework: Annotated[str, ValueOf(Framework)]
    gradient_accumulation: bool
    metric: Annotated[str, ValueOf(Metric)]
    alignment: AlignmentOut | None
    """A preference or RL method (`method` is then its policy's); null for supervised
    fine-tuning."""


class ParallelismOut(TypedDict):
    sharding: Annotated[str, ValueOf(Scheme)]
    gpus: int
    gpus_per_node: int
    offload: Annotated[str, ValueOf(Offload)]
    fsdp_version: Annotated[str, ValueOf(FsdpVersion)]
    accumulate_without_sync: bool
    tensor_parallel: int
    pipeline_parallel: int
    pipeline_schedule: Annotated[str, ValueOf(PipelineSchedule)]
    shard_degree: int
    """The GPUs each sharded state is split over."""


class PerGpuOut(TypedDict):
    """What one GPU holds: the peak phase's breakdown, every phase, the host memory."""

    parallelism: ParallelismOut
    stage: str
    """The pipeline stage estimated (the most loaded)."""
    peak_phase: Annotated[str, ValueOf(Phase)]
    total_bytes: int
    total_gb: float
    total_gib: float
    allocated_bytes: int
    allocated_gb: float
    allocated_gib: float
    reserved_bytes: int
    reserved_gb: float
    reserved_gib: float
    device_bytes: int
    """Reserved memory plus the CUDA context, managed memory and NCCL's communicators: what the
    card must hold."""
    device_gb: float
    device_gib: float
    nccl_bytes: int
    """NCCL's communicators on this GPU, outside PyTorch's allocator (part of `device_bytes`)."""
    nccl_gb: float
    nccl_gib: float
    host_per_node_bytes: int
    host_per_node_gb: float
    host_per_node_gib: float
    pinned_host_per_node_bytes: int
    pinned_host_per_node_gb: float
    pinned_host_per_node_gib: float
    peak: PhaseOut
    phases: list[PhaseOut]


class GpuVerdictOut(TypedDict):
    gpu: str
    display_name: str
    capacity_bytes: int
    capacity_gb: float
    capacity_gib: float
    usable_share: float
    """The share of the card a plan may use (the safety margin)."""
    usable_bytes: int
    usable_gb: float
    usable_gib: float
    peak_bytes: int
    peak_gb: float
    peak_gib: float
    fits: bool
    """The peak stays within the usable share."""
    fits_at_capacity: bool
    headroom_bytes: int
    headroom_gb: float
    headroom_gib: float
    usage_share: float
    margin_source: str


class SchemeAnswerOut(TypedDict):
    sharding: Annotated[str, ValueOf(Scheme)]
    offload: Annotated[str, ValueOf(Offload)]
    gpus: int | None
    """Fewest GPUs; null: none up to 4096."""
    peak_bytes: int | None
    peak_gb: float | None
    peak_gib: float | None


class ChangeOut(TypedDict):
    change: Annotated[str, ValueOf(ChangeKind)]
    detail: str
    """The settings as `field=value` pairs."""
    settings: dict[str, bool | int | float | str]
    """The fields of the request that change, with their new values (which fields depends on
    the change)."""
    fits: bool
    peak_bytes: int
    peak_gb: float
    peak_gib: float
    saved_bytes: int
    saved_gb: float
    saved_gib: float
    speed_cost: Annotated[str, ValueOf(SpeedCost)]
    quality_cost: Annotated[str, ValueOf(QualityCost)]
    source: str


class FitOut(TypedDict):
    """The `vramplan fit --json` object (docs/sharding.md)."""

    schema_version: int
    model: str
    setup: FitSetupOut
    lora_targets: list[Annotated[str, ValueOf(LoraTarget)]]
    per_gpu: PerGpuOut
    verdict: GpuVerdictOut
    max_batch: int | None
    max_seq_len: int | None
    max_completion_len: int | None
    """GRPO, PPO: the longest completion that fits after the same prompt."""
    fewest_gpus: list[SchemeAnswerOut]
    cheapest: SchemeAnswerOut | None
    changes: list[ChangeOut]
    combined: list[ChangeOut]


# --- errors (API) -------------------------------------------------------------------------------


class ErrorDetail(TypedDict):
    code: str
    """Stable machine name: not_a_number, out_of_range, missing, ..."""
    field: str | None
    """The query parameter or body field at fault."""
    value: str | None
    """The value as received, as text."""
    message: str
    """One line naming the field, the value and what is accepted."""
    lang: Annotated[str, ValueOf(Lang)]


class ErrorOut(TypedDict):
    """The one shape of every 4xx answer."""

    error: ErrorDetail
