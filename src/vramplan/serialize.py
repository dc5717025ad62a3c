"""The one serializer: typed results to JSON-ready dicts, for `--json`, the API and the page.

Each function returns a shape of `vramplan.shapes` (declared once there, with the OpenAPI
document generated from it), so mypy checks every dict below against it. Field names carry their
units (`_bytes`, `_gb` = 10**9 bytes, `_gib` = 2**30 bytes); add fields, never rename or drop them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any

from vramplan.presets.cuda import published_cuda_total_bytes
from vramplan.units import bytes_to_gb, bytes_to_gib
from vramplan.vocab import Method

if TYPE_CHECKING:
    from vramplan.distributed.per_gpu import PerGpuEstimate
    from vramplan.inference.estimate import InferenceEstimate, InferenceItem
    from vramplan.inference.limits import InferenceVerdict
    from vramplan.lora_calculator import AdapterDtype, LoraResult
    from vramplan.model.architecture import Architecture, LinearSpec
    from vramplan.model.hf_config import SafetensorsCheck
    from vramplan.model.lora_targets import LoraMatrix
    from vramplan.model.resolve import ResolvedModel
    from vramplan.model.weight_storage import WeightPart
    from vramplan.planner.changes import Change
    from vramplan.planner.report import FitReport
    from vramplan.planner.search import SchemeAnswer
    from vramplan.presets.gpus import Gpu
    from vramplan.presets.models import ModelPreset
    from vramplan.requests.seed import SimpleActivations
    from vramplan.seed import BreakdownItem, SeedEstimate
    from vramplan.shapes import (
        ActivationsOut,
        AdapterFileOut,
        AlignmentOut,
        AllocatorPeaksOut,
        BreakdownPartOut,
        ChangeOut,
        CudaPeaksOut,
        EstimateOut,
        FitOut,
        FitSetupOut,
        GpuOut,
        GpusOut,
        GpuVerdictOut,
        InferenceOut,
        InferencePartOut,
        InferenceVerdictOut,
        LinearOut,
        LoraMatrixOut,
        LoraOut,
        ModelDetailOut,
        ModelOut,
        ModelsOut,
        ParallelismOut,
        ParamCountsOut,
        PartOut,
        PerGpuOut,
        PhaseOut,
        SafetensorsCheckOut,
        SchemeAnswerOut,
        TraceOut,
        TracePhaseOut,
        TraceSetupOut,
        TrainingEstimateOut,
        TrainingEstimateSetupOut,
        ValidationOut,
        ValidationRowOut,
        ValidationSummaryOut,
        VerdictOut,
        WeightsGroupOut,
    )
    from vramplan.tracer.result import (
        AllocatorPeaks,
        Breakdown,
        CudaPeaks,
        PhasePeak,
        TraceResult,
    )
    from vramplan.tracer.setup import TraceSetup
    from vramplan.training.result import Part, PhaseMemory, TrainingEstimate
    from vramplan.training.setup import TrainingSetup
    from vramplan.validation.scoring import CaseScore, ValidationReport
    from vramplan.verdict import GpuVerdict

SCHEMA_VERSION = 1


def gpu_to_json(gpu: Gpu) -> GpuOut:
    return {
        "name": gpu.name,
        "display_name": gpu.display_name,
        "vendor": gpu.vendor,
        "memory_gib": gpu.memory_gib,
        "capacity_bytes": gpu.capacity_bytes,
        "cuda_total_bytes": published_cuda_total_bytes(gpu),
        "aliases": list(gpu.aliases),
        "source": gpu.source,
    }


def gpus_to_json(gpus: Iterable[Gpu]) -> GpusOut:
    """The GPU catalogue: `vramplan gpus --json` and `/api/v1/gpus`."""
    return {"gpus": [gpu_to_json(gpu) for gpu in gpus]}


def verdict_to_json(verdict: GpuVerdict) -> VerdictOut:
    gpu = verdict.gpu
    headroom = verdict.headroom_bytes
    return {
        "gpu": gpu.name,
        "display_name": gpu.display_name,
        "capacity_bytes": gpu.capacity_bytes,
        "capacity_gib": gpu.memory_gib,
        "fits": verdict.fits,
        "headroom_bytes": headroom,
        "headroom_gb": bytes_to_gb(headroom),
        "headroom_gib": bytes_to_gib(headroom),
        "usage_share": verdict.usage_share,
        "min_gpus_lower_bound": verdict.min_gpus_lower_bound,
    }


def seed_to_json(estimate: SeedEstimate, verdicts: tuple[GpuVerdict, ...]) -> EstimateOut:
    """The `vramplan estimate --json` object (simple mode)."""
    inputs = estimate.inputs
    states, activations = estimate.model_states_bytes, estimate.activations_bytes
    total = estimate.total_bytes
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "simple",
        "params_billion": float(inputs.params_billion),
        "params": estimate.params,
        "optimizer": inputs.optimizer.value if inputs.optimizer else None,
        "bytes_per_param": float(estimate.bytes_per_param),
        "breakdown": [_seed_part_to_json(item) for item in estimate.breakdown],
        "model_states_bytes": states,
        "model_states_gb": bytes_to_gb(states),
        "model_states_gib": bytes_to_gib(states),
        "activations_bytes": activations,
        "activations_gb": bytes_to_gb(activations),
        "activations_gib": bytes_to_gib(activations),
        "total_bytes": total,
        "total_gb": bytes_to_gb(total),
        "total_gib": bytes_to_gib(total),
        "verdicts": [verdict_to_json(v) for v in verdicts],
    }


def _seed_part_to_json(item: BreakdownItem) -> BreakdownPartOut:
    n_bytes = item.memory_bytes
    return {"part": item.kind.value, "component": item.component.value,
            "bytes_per_param": float(item.bytes_per_param),
            "memory_bytes": n_bytes, "memory_gb": bytes_to_gb(n_bytes),
            "memory_gib": bytes_to_gib(n_bytes)}


def activations_to_json(result: SimpleActivations) -> ActivationsOut:
    """`/api/v1/activations`: the seed rule's A for a model, batch and sequence length."""
    n_bytes = result.activations_bytes
    return {"schema_version": SCHEMA_VERSION, "model": result.model.name, "batch": result.batch,
            "seq_len": result.seq_len, "method": "full", "precision": "mixed",
            "attention": "sdpa", "checkpointing": "none", "activations_bytes": n_bytes,
            "activations_gb": bytes_to_gb(n_bytes), "activations_gib": bytes_to_gib(n_bytes)}


def linear_to_json(linear: LinearSpec) -> LinearOut:
    return {
        "role": linear.role,
        "in_features": linear.in_features,
        "out_features": linear.out_features,
        "bias": linear.bias,
        "count": linear.count,
        "routed": linear.routed,
        "params": linear.params,
    }


def architecture_to_json(arch: Architecture) -> dict[str, Any]:
    """The spec (every field of `Architecture`, enums as their values, nested specs as objects)
    and its derived sizes: a mapping, as its keys are the dataclass's fields (`shapes` says so)."""
    return {
        **{field.name: _plain(getattr(arch, field.name)) for field in dataclasses.fields(arch)},
        "norms_per_block": arch.norms_per_block,
        "expert_intermediate_size": arch.expert_intermediate_size,
        "block_linears": [linear_to_json(linear) for linear in arch.block_linears()],
        "head_linear": linear_to_json(arch.head_linear()),
    }


def _plain(value: object) -> object:
    """`value` in JSON's types: an enum's value, a record's fields, a tuple's items."""
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name))
                for field in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def param_counts_to_json(arch: Architecture) -> ParamCountsOut:
    """Exact parameter counts: total, by component, and the derived totals."""
    return {
        "params": arch.params_total,
        "params_billion": arch.params_total / 10**9,
        "params_embedding": arch.params_embedding,
        "params_non_embedding": arch.params_non_embedding,
        "params_head": arch.params_head,
        "params_per_block": arch.params_per_block,
        "params_blocks": arch.params_blocks,
        "params_final_norm": arch.params_final_norm,
        "params_active": arch.params_active,
        "by_component": {group.value: n for group, n in arch.params_by_component().items()},
    }


def preset_to_json(preset: ModelPreset, arch: Architecture) -> ModelOut:
    """One line of `vramplan models --json` (and of the API's model list)."""
    return {
        "name": preset.name,
        "display_name": preset.display_name,
        "family": preset.family,
        "hf_repo": preset.hf_repo,
        "aliases": list(preset.aliases),
        "params": arch.params_total,
        "params_billion": arch.params_total / 10**9,
        "source": preset.source,
        "read_from": preset.read_from,
    }


def models_to_json(presets: Iterable[tuple[ModelPreset, Architecture]]) -> ModelsOut:
    """The model registry: `vramplan models --json` and `/api/v1/models`."""
    return {"models": [preset_to_json(preset, arch) for preset, arch in presets]}


def model_to_json(preset: ModelPreset | None, arch: Architecture,
                  resolved: ResolvedModel | None = None) -> ModelDetailOut:
    """`vramplan model NAME --json`: the preset (None for a repo id or a user's config.json), spec
    and counts; with `resolved`, the config.json read and where it came from (`source`)."""
    payload: ModelDetailOut = {
        "schema_version": SCHEMA_VERSION,
        "preset": preset_to_json(preset, arch) if preset is not None else None,
        "architecture": architecture_to_json(arch),
        "counts": param_counts_to_json(arch),
    }
    if resolved is not None:
        payload["config"] = dict(resolved.config)
        payload["source"] = resolved.source
    return payload


def safetensors_check_to_json(check: SafetensorsCheck | None) -> SafetensorsCheckOut | None:
    """`safetensors_check` of `vramplan model --config ... --json`."""
    if check is None:
        return None
    return {
        "total_size_bytes": check.total_size_bytes,
        "dtype_bytes": check.dtype_bytes,
        "params_from_index": check.params_from_index,
        "params_from_config": check.params_from_config,
        "difference": check.difference,
        "matches": check.matches,
    }


def trace_to_json(result: TraceResult) -> TraceOut:
    """The `vramplan trace --json` object: the setup, the peak, its breakdown, each phase's peak."""
    peak, paged = result.peak_bytes, result.paged_bytes
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "trace",
        "model": result.setup.model_name,
        "setup": _trace_setup_to_json(result.setup),
        "params_total": result.params_total,
        "params_trainable": result.params_trainable,
        "real_tensors": result.real,
        "peak_bytes": peak,
        "peak_gb": bytes_to_gb(peak),
        "peak_gib": bytes_to_gib(peak),
        "peak_phase": result.peak_phase.value,
        "breakdown": _traced_parts_to_json(result.breakdown),
        "phases": [_trace_phase_to_json(phase) for phase in result.phases],
        "paged_bytes": paged,
        "paged_gb": bytes_to_gb(paged),
        "paged_gib": bytes_to_gib(paged),
        "emulated": list(result.emulated),
        "not_traced": list(result.not_traced),
        "versions": dict(result.versions),
        "cuda": None if result.cuda is None else _cuda_peaks_to_json(result.cuda),
        "allocator": None if result.allocator is None else _allocator_peaks_to_json(
            result.allocator),
    }


def _trace_setup_to_json(setup: TraceSetup) -> TraceSetupOut:
    alignment = setup.alignment
    return {
        "method": (setup.method if alignment is None else alignment.method).value,
        "policy": None if alignment is None else setup.method.value,
        "precompute_ref": alignment is not None and alignment.precompute_ref,
        "beta": 0.0 if alignment is None else alignment.beta,
        "completion_len": (alignment.completion_tokens if alignment is not None
                           and alignment.method is Method.GRPO else None),
        "precision": setup.precision.value,
        "optimizer": setup.optimizer.value, "optimizer_impl": setup.optimizer_impl.value,
        "quant": setup.quant.value, "lora_r": setup.lora_r,
        "lora_targets": list(setup.lora_targets),
        "adapters_fp32": setup.uses_lora and setup.adapters_fp32,
        "train_layers": setup.train_layers,
        "batch": setup.batch, "seq_len": setup.seq_len,
        "checkpointing": setup.checkpointing.value, "attention": setup.attention.value,
        "device": setup.device.value,
    }


def _traced_parts_to_json(parts: Breakdown) -> list[PartOut]:
    return [{"part": part.value, "component": part.component.value, "memory_bytes": n_bytes,
             "memory_gb": bytes_to_gb(n_bytes), "memory_gib": bytes_to_gib(n_bytes)}
            for part, n_bytes in parts.bytes_by_part]


def _trace_phase_to_json(phase: PhasePeak) -> TracePhaseOut:
    peak = phase.peak_bytes
    return {"phase": phase.phase.value, "peak_bytes": peak, "peak_gb": bytes_to_gb(peak),
            "peak_gib": bytes_to_gib(peak), "breakdown": _traced_parts_to_json(phase.breakdown)}


def _allocator_peaks_to_json(peaks: AllocatorPeaks) -> AllocatorPeaksOut:
    reserved = peaks.reserved_peak_bytes
    return {
        "allocated_peak_bytes": peaks.allocated_peak_bytes,
        "reserved_peak_bytes": reserved,
        "reserved_peak_gb": bytes_to_gb(reserved),
        "reserved_peak_gib": bytes_to_gib(reserved),
        "cached_at_peak_bytes": peaks.cached_at_peak_bytes,
        "fragmentation": peaks.fragmentation,
        "num_alloc_retries": peaks.num_alloc_retries,
    }


def _cuda_peaks_to_json(cuda: CudaPeaks) -> CudaPeaksOut:
    allocated, reserved = cuda.max_allocated_bytes, cuda.max_reserved_bytes
    return {
        "device_name": cuda.device_name,
        "max_allocated_bytes": allocated,
        "max_allocated_gb": bytes_to_gb(allocated),
        "max_allocated_gib": bytes_to_gib(allocated),
        "max_reserved_bytes": reserved,
        "max_reserved_gb": bytes_to_gb(reserved),
        "max_reserved_gib": bytes_to_gib(reserved),
    }


# --- inference (vramplan infer, /api/infer) ------------------------------------------------------

def inference_to_json(estimate: InferenceEstimate,
                      verdicts: tuple[InferenceVerdict, ...] = (), *,
                      beyond_context: bool = False) -> InferenceOut:
    """The `vramplan infer --json` object: inputs, weights by tensor group, parts per GPU, totals,
    and one verdict per GPU (with `max_context`/`max_batch` when the limits were asked for).
    `beyond_context`: the context exceeds what the model was trained for."""
    inputs = estimate.inputs
    allocated, context, device = (estimate.allocated_bytes, estimate.cuda_context_bytes,
                                  estimate.device_bytes)
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "inference",
        "model": inputs.model_name or None,
        "beyond_trained_context": beyond_context,
        "weights": inputs.weights.name,
        "weights_family": inputs.weights.family.value,
        "engine": inputs.engine.value,
        "context": inputs.context,
        "prompt": inputs.prompt_tokens,
        "batch": inputs.batch,
        "kv_dtype": inputs.kv_dtype.value,
        "compute_dtype": inputs.compute_dtype.value,
        "tensor_parallel": inputs.tensor_parallel,
        "attention": inputs.attention.value,
        "params": estimate.weights.params,
        "weights_breakdown": [_weights_group_to_json(part) for part in estimate.weights.parts],
        "parts": [_inference_part_to_json(item) for item in estimate.items],
        "kv_bytes_per_token": estimate.kv_bytes_per_token,
        "allocated_bytes": allocated,
        "allocated_gb": bytes_to_gb(allocated),
        "allocated_gib": bytes_to_gib(allocated),
        "cuda_context_bytes": context,
        "cuda_context_gb": bytes_to_gb(context),
        "cuda_context_gib": bytes_to_gib(context),
        "device_bytes": device,
        "device_gb": bytes_to_gb(device),
        "device_gib": bytes_to_gib(device),
        "engine_memory_utilization": estimate.engine_reserve_share,
        "verdicts": [inference_verdict_to_json(v) for v in verdicts],
    }


def _weights_group_to_json(part: WeightPart) -> WeightsGroupOut:
    n_bytes = part.bytes
    return {"group": part.group.value, "storage": part.storage, "params": part.params,
            "on_gpu": part.on_gpu, "memory_bytes": n_bytes, "memory_gb": bytes_to_gb(n_bytes),
            "memory_gib": bytes_to_gib(n_bytes)}


def _inference_part_to_json(item: InferenceItem) -> InferencePartOut:
    n_bytes = item.bytes
    return {"part": item.part.value, "memory_bytes": n_bytes, "memory_gb": bytes_to_gb(n_bytes),
            "memory_gib": bytes_to_gib(n_bytes)}


def inference_verdict_to_json(line: InferenceVerdict) -> InferenceVerdictOut:
    verdict, limits = line.verdict, line.limits
    usable, headroom = verdict.usable_bytes, verdict.headroom_bytes
    return {
        "gpu": verdict.gpu.name,
        "display_name": verdict.gpu.display_name,
        "capacity_bytes": verdict.gpu.capacity_bytes,
        "usable_bytes": usable,
        "usable_gb": bytes_to_gb(usable),
        "usable_gib": bytes_to_gib(usable),
        "fits": verdict.fits,
        "headroom_bytes": headroom,
        "headroom_gb": bytes_to_gb(headroom),
        "headroom_gib": bytes_to_gib(headroom),
        "max_context": limits.max_context if limits else None,
        "max_batch": limits.max_batch if limits else None,
        "context_cap": limits.context_cap if limits else None,
    }


# --- LoRA calculator (vramplan lora, /api/lora) --------------------------------------------------

def lora_to_json(result: LoraResult) -> LoraOut:
    """The `vramplan lora --json` object."""
    from vramplan.lora_calculator import AdapterDtype

    inputs = result.inputs
    training = result.training_bytes
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "lora",
        "model": inputs.model_name or None,
        "rank": inputs.rank,
        "targets": [m.target.value for m in result.matrices],
        "dora": inputs.dora,
        "rslora": inputs.rslora,
        "matrices": [_lora_matrix_to_json(m) for m in result.matrices],
        "lora_params": result.lora_params,
        "dora_params": result.dora_params,
        "trainable_params": result.trainable_params,
        "model_params": result.model_params,
        "share_of_model": result.share_of_model,
        "adapter_files": [_adapter_file_to_json(result, dtype) for dtype in AdapterDtype],
        "training_bytes": training,
        "training_gb": bytes_to_gb(training),
        "training_gib": bytes_to_gib(training),
        "training_bytes_per_param": 16,
        "training_setup": result.training_setup(),
    }


def _lora_matrix_to_json(matrix: LoraMatrix) -> LoraMatrixOut:
    return {"target": matrix.target.value, "in_features": matrix.in_features,
            "out_features": matrix.out_features, "copies": matrix.copies,
            "params": matrix.params}


def _adapter_file_to_json(result: LoraResult, dtype: AdapterDtype) -> AdapterFileOut:
    adapter = result.adapter_file(dtype)
    size = adapter.total_bytes
    return {"dtype": dtype.value, "size_bytes": size, "size_gb": bytes_to_gb(size),
            "size_gib": bytes_to_gib(size), "header_bytes": adapter.header_bytes}


def training_to_json(estimate: TrainingEstimate) -> TrainingEstimateOut:
    """The detailed training estimate: peak, its phase and breakdown, every phase, states."""
    states = estimate.states
    allocated, reserved, device = (estimate.allocated_bytes, estimate.reserved_bytes,
                                   estimate.device_bytes)
    activations, managed = estimate.activations_bytes, states.managed_optimizer_bytes
    return {
        "setup": _training_setup_to_json(estimate.setup),
        "peak_phase": estimate.peak.phase.value,
        "allocated_bytes": allocated,
        "allocated_gb": bytes_to_gb(allocated),
        "allocated_gib": bytes_to_gib(allocated),
        "reserved_bytes": reserved,
        "reserved_gb": bytes_to_gb(reserved),
        "reserved_gib": bytes_to_gib(reserved),
        "device_bytes": device,
        "device_gb": bytes_to_gb(device),
        "device_gib": bytes_to_gib(device),
        "activations_bytes": activations,
        "activations_gb": bytes_to_gb(activations),
        "activations_gib": bytes_to_gib(activations),
        "trainable_params": states.trainable_params,
        "frozen_params": states.frozen_params,
        "managed_optimizer_bytes": managed,
        "managed_optimizer_gb": bytes_to_gb(managed),
        "managed_optimizer_gib": bytes_to_gib(managed),
        "phases": [_phase_to_json(phase) for phase in estimate.phases],
        "block_saved_per_token": [{"tensor": s.name, "bytes_per_token": s.bytes_per_token}
                                  for s in estimate.block_saved],
    }


def _training_setup_to_json(setup: TrainingSetup) -> TrainingEstimateSetupOut:
    return {"method": setup.method.value, "precision": setup.precision.value,
            "optimizer": setup.optimizer.value, "quant": setup.quant.value,
            "batch": setup.batch, "seq_len": setup.seq_len,
            "framework": setup.framework.value, "metric": setup.metric.value}


def validation_to_json(report: ValidationReport, file: str) -> ValidationOut:
    """`vramplan validate FILE --json`: the file's name, the summary, then one object per row."""
    return {"file": file, "summary": _validation_summary_to_json(report),
            "rows": [_score_to_json(score) for score in report.scores]}


def _validation_summary_to_json(report: ValidationReport) -> ValidationSummaryOut:
    return {
        "rows_total": report.rows_total,
        "rows_scored": report.rows_scored,
        "median_abs_error_pct": report.median_abs_error_pct,
        "p90_abs_error_pct": report.p90_abs_error_pct,
        "max_abs_error_pct": report.max_abs_error_pct,
        "within_10pct_share": report.within_10pct_share,
        "oom_right": report.oom_right,
        "oom_total": report.oom_total,
        "skipped": [{"id": s.case.id, "reason": s.skip_reason} for s in report.skipped],
        "unread": [{"row": row.row, "id": row.id, "reason": row.reason}
                   for row in report.unread],
    }


def _score_to_json(score: CaseScore) -> ValidationRowOut:
    case = score.case
    return {"id": case.id, "model": case.model, "method": case.method.value,
            "outcome": score.outcome.value, "estimated_by": score.model_kind,
            "metric": case.metric.value, "estimate_bytes": score.estimate_bytes,
            "measured_bytes": case.measured_bytes, "error_pct": score.error_pct,
            "oom_right": score.oom_right, "device_estimate_bytes": score.device_bytes,
            "gpu": case.gpu.name if case.gpu else None,
            "capacity_bytes": case.gpu.capacity_bytes if case.gpu else None,
            "peak_phase": score.peak_phase or None,
            "readings": [reading.value for reading in case.readings]}


# --- vramplan fit: per-GPU estimate, verdict with margin, inverse solving, changes ------


def _phase_to_json(phase: PhaseMemory) -> PhaseOut:
    total = phase.total_bytes
    return {"phase": phase.phase.value, "total_bytes": total, "total_gb": bytes_to_gb(total),
            "total_gib": bytes_to_gib(total),
            "parts": [_part_to_json(part) for part in phase.parts]}


def _part_to_json(part: Part) -> PartOut:
    n_bytes = part.memory_bytes
    return {"part": part.kind.value, "component": part.component.value, "memory_bytes": n_bytes,
            "memory_gb": bytes_to_gb(n_bytes), "memory_gib": bytes_to_gib(n_bytes)}


def per_gpu_to_json(estimate: PerGpuEstimate) -> PerGpuOut:
    """What one GPU holds: the peak phase's breakdown, every phase, the host memory."""
    total, allocated, reserved, device = (estimate.total_bytes, estimate.allocated_bytes,
                                          estimate.reserved_bytes, estimate.device_bytes)
    host, pinned = estimate.host_bytes_per_node, estimate.sharded.pinned_host_bytes_per_node
    nccl = estimate.communicator_bytes
    return {
        "parallelism": _parallelism_to_json(estimate),
        "stage": estimate.stage.name,
        "peak_phase": estimate.peak.phase.value,
        "total_bytes": total,
        "total_gb": bytes_to_gb(total),
        "total_gib": bytes_to_gib(total),
        "allocated_bytes": allocated,
        "allocated_gb": bytes_to_gb(allocated),
        "allocated_gib": bytes_to_gib(allocated),
        "reserved_bytes": reserved,
        "reserved_gb": bytes_to_gb(reserved),
        "reserved_gib": bytes_to_gib(reserved),
        "device_bytes": device,
        "device_gb": bytes_to_gb(device),
        "device_gib": bytes_to_gib(device),
        "nccl_bytes": nccl,
        "nccl_gb": bytes_to_gb(nccl),
        "nccl_gib": bytes_to_gib(nccl),
        "host_per_node_bytes": host,
        "host_per_node_gb": bytes_to_gb(host),
        "host_per_node_gib": bytes_to_gib(host),
        "pinned_host_per_node_bytes": pinned,
        "pinned_host_per_node_gb": bytes_to_gb(pinned),
        "pinned_host_per_node_gib": bytes_to_gib(pinned),
        "peak": _phase_to_json(estimate.peak),
        "phases": [_phase_to_json(phase) for phase in estimate.phases],
    }


def _parallelism_to_json(estimate: PerGpuEstimate) -> ParallelismOut:
    plan = estimate.parallelism
    return {"sharding": plan.scheme.value, "gpus": plan.gpus,
            "gpus_per_node": plan.gpus_per_node, "offload": plan.offload.value,
            "fsdp_version": plan.fsdp_version.value,
            "accumulate_without_sync": plan.accumulate_without_sync,
            "tensor_parallel": plan.tensor_parallel,
            "pipeline_parallel": plan.pipeline_parallel,
            "pipeline_schedule": plan.pipeline_schedule.value,
            "shard_degree": estimate.sharded.shard_degree}


def fit_verdict_to_json(verdict: GpuVerdict) -> GpuVerdictOut:
    capacity, usable, peak, headroom = (verdict.capacity_bytes, verdict.usable_bytes,
                                        verdict.required_bytes, verdict.headroom_bytes)
    return {
        "gpu": verdict.gpu.name, "display_name": verdict.gpu.display_name,
        "capacity_bytes": capacity,
        "capacity_gb": bytes_to_gb(capacity),
        "capacity_gib": bytes_to_gib(capacity),
        "usable_share": verdict.usable_share,
        "usable_bytes": usable,
        "usable_gb": bytes_to_gb(usable),
        "usable_gib": bytes_to_gib(usable),
        "peak_bytes": peak,
        "peak_gb": bytes_to_gb(peak),
        "peak_gib": bytes_to_gib(peak),
        "fits": verdict.fits, "fits_at_capacity": verdict.fits_at_capacity,
        "headroom_bytes": headroom,
        "headroom_gb": bytes_to_gb(headroom),
        "headroom_gib": bytes_to_gib(headroom),
        "usage_share": verdict.usage_share,
        "margin_source": "Fujii et al. 2024, arXiv:2411.06465",
    }


def _scheme_answer_to_json(answer: SchemeAnswer) -> SchemeAnswerOut:
    peak = answer.peak_bytes
    return {"sharding": answer.scheme.value, "offload": answer.offload.value,
            "gpus": answer.gpus, "peak_bytes": peak,
            "peak_gb": None if peak is None else bytes_to_gb(peak),
            "peak_gib": None if peak is None else bytes_to_gib(peak)}


def change_to_json(change: Change) -> ChangeOut:
    # the planner and the training model load with the commands that serialize their results
    # (fit, the API), not with the CLI's other commands (benchmarks/cli_startup.py)
    from vramplan.planner.changes import settings_text

    cost = change.cost
    peak, saved = change.peak_bytes, change.saved_bytes
    return {"change": change.kind.value, "detail": settings_text(change.settings),
            "settings": {name: value.value if isinstance(value, StrEnum) else value
                         for name, value in change.settings},
            "fits": change.fits,
            "peak_bytes": peak, "peak_gb": bytes_to_gb(peak), "peak_gib": bytes_to_gib(peak),
            "saved_bytes": saved, "saved_gb": bytes_to_gb(saved),
            "saved_gib": bytes_to_gib(saved),
            "speed_cost": cost.speed.value, "quality_cost": cost.quality.value,
            "source": cost.source}


def fit_to_json(report: FitReport) -> FitOut:
    """The `vramplan fit --json` object (and the web page's "Will it fit?" data)."""
    from vramplan.training.setup import lora_targets_of

    setup = report.setup
    return {
        "schema_version": SCHEMA_VERSION,
        "model": setup.model,
        "setup": _fit_setup_to_json(setup.training),
        "lora_targets": sorted(t.value for t in lora_targets_of(setup.training))
        if setup.training.method.uses_lora else [],
        "per_gpu": per_gpu_to_json(report.estimate),
        "verdict": fit_verdict_to_json(report.verdict),
        "max_batch": report.max_batch,
        "max_seq_len": report.max_seq_len,
        "max_completion_len": report.max_completion_len,
        "fewest_gpus": [_scheme_answer_to_json(a) for a in report.fewest_gpus],
        "cheapest": (_scheme_answer_to_json(report.cheapest) if report.cheapest is not None
                     else None),
        "changes": [change_to_json(c) for c in report.changes],
        "combined": [change_to_json(c) for c in report.combined],
    }


def _fit_setup_to_json(training: TrainingSetup) -> FitSetupOut:
    from vramplan.training.setup import lora_rank_of, optimizer_impl

    return {"method": training.method.value, "precision": training.precision.value,
            "optimizer": training.optimizer.value,
            "optimizer_impl": optimizer_impl(training).value, "quant": training.quant.value,
            "lora_r": lora_rank_of(training) if training.method.uses_lora else None,
            "batch": training.batch,
            "seq_len": training.seq_len, "checkpointing": training.checkpointing.value,
            "attention": training.attention.value, "framework": training.framework.value,
            "gradient_accumulation": training.gradient_accumulation,
            "metric": training.metric.value,
            "alignment": _alignment_to_json(training)}


def _alignment_to_json(training: TrainingSetup) -> AlignmentOut | None:
    from vramplan.training.alignment import generated_at_once, reference_kind

    alignment = training.alignment
    if alignment is None:
        return None
    return {"method": alignment.method.value, "reference": reference_kind(training),
            "precompute_ref": alignment.precompute_ref, "beta": alignment.beta,
            "completion_len": (alignment.completion_tokens if alignment.method.generates
                               else None),
            "generation": alignment.generation.value,
            "generated_together": generated_at_once(training),
            "vllm_share": alignment.vllm_share, "vllm_sleep": alignment.vllm_sleep,
            "value_adapters": alignment.value_adapters,
            "engine_bytes": alignment.engine_budget_bytes}
