"""The one serializer: typed results to JSON-ready dicts, for `--json`, the API and the page.

Field names carry their units (`_bytes`, `_gb` = 10**9 bytes, `_gib` = 2**30 bytes). The shape is
documented in docs/json.md and checked by tests; add fields, never rename or drop them.
"""

from __future__ import annotations

import dataclasses
from enum import Enum, StrEnum
from typing import TYPE_CHECKING

from vramplan.planner.changes import Change, settings_text
from vramplan.units import bytes_to_gb, bytes_to_gib

if TYPE_CHECKING:
    from typing import Any

    from vramplan.distributed.per_gpu import PerGpuEstimate
    from vramplan.inference.estimate import InferenceEstimate
    from vramplan.inference.limits import InferenceVerdict
    from vramplan.lora_calculator import LoraResult
    from vramplan.model.architecture import Architecture, LinearSpec
    from vramplan.model.resolve import ResolvedModel
    from vramplan.planner.report import FitReport
    from vramplan.planner.search import SchemeAnswer
    from vramplan.presets.gpus import Gpu
    from vramplan.presets.models import ModelPreset
    from vramplan.seed import SeedEstimate
    from vramplan.tracer.result import Breakdown, TraceResult
    from vramplan.training.estimate import PhaseMemory, TrainingEstimate
    from vramplan.validation import ValidationReport
    from vramplan.verdict import GpuVerdict

SCHEMA_VERSION = 1

JSON = dict[str, "Any"]


def memory(prefix: str, n_bytes: int) -> JSON:
    """`{prefix}_bytes`, `{prefix}_gb` and `{prefix}_gib` for one quantity."""
    return {f"{prefix}_bytes": n_bytes, f"{prefix}_gb": bytes_to_gb(n_bytes),
            f"{prefix}_gib": bytes_to_gib(n_bytes)}


def gpu_to_json(gpu: Gpu) -> JSON:
    return {
        "name": gpu.name,
        "display_name": gpu.display_name,
        "vendor": gpu.vendor,
        "memory_gib": gpu.memory_gib,
        "capacity_bytes": gpu.capacity_bytes,
        "aliases": list(gpu.aliases),
        "source": gpu.source,
    }


def verdict_to_json(verdict: GpuVerdict) -> JSON:
    gpu = verdict.gpu
    return {
        "gpu": gpu.name,
        "display_name": gpu.display_name,
        "capacity_bytes": gpu.capacity_bytes,
        "capacity_gib": gpu.memory_gib,
        "fits": verdict.fits,
        **memory("headroom", verdict.headroom_bytes),
        "usage_share": verdict.usage_share,
        "min_gpus_lower_bound": verdict.min_gpus_lower_bound,
    }


def seed_to_json(estimate: SeedEstimate, verdicts: tuple[GpuVerdict, ...]) -> JSON:
    """The `vramplan estimate --json` object (simple mode)."""
    inputs = estimate.inputs
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "simple",
        "params_billion": float(inputs.params_billion),
        "params": estimate.params,
        "optimizer": inputs.optimizer.value if inputs.optimizer else None,
        "bytes_per_param": float(estimate.bytes_per_param),
        "breakdown": [
            {
                "part": item.kind.value,
                "component": item.component.value,
                "bytes_per_param": float(item.bytes_per_param),
                **memory("memory", item.memory_bytes),
            }
            for item in estimate.breakdown
        ],
        **memory("model_states", estimate.model_states_bytes),
        **memory("activations", estimate.activations_bytes),
        **memory("total", estimate.total_bytes),
        "verdicts": [verdict_to_json(v) for v in verdicts],
    }


def linear_to_json(linear: LinearSpec) -> JSON:
    return {
        "role": linear.role,
        "in_features": linear.in_features,
        "out_features": linear.out_features,
        "bias": linear.bias,
        "count": linear.count,
        "routed": linear.routed,
        "params": linear.params,
    }


def architecture_to_json(arch: Architecture) -> JSON:
    """The spec (every field of `Architecture`, enums as their values, nested specs as objects)
    and its derived sizes."""
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


def param_counts_to_json(arch: Architecture) -> JSON:
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


def preset_to_json(preset: ModelPreset, arch: Architecture) -> JSON:
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


def model_to_json(preset: ModelPreset | None, arch: Architecture,
                  resolved: ResolvedModel | None = None) -> JSON:
    """`vramplan model NAME --json`: the preset (None for a repo id or a user's config.json), spec
    and counts; with `resolved`, the config.json read and where it came from (`source`)."""
    payload: JSON = {
        "schema_version": SCHEMA_VERSION,
        "preset": preset_to_json(preset, arch) if preset is not None else None,
        "architecture": architecture_to_json(arch),
        "counts": param_counts_to_json(arch),
    }
    if resolved is not None:
        payload["config"] = dict(resolved.config)
        payload["source"] = resolved.source
    return payload


def trace_to_json(result: TraceResult) -> JSON:
    """The `vramplan trace --json` object: the setup, the peak, its breakdown, each phase's peak."""
    setup = result.setup

    def breakdown(parts: Breakdown) -> list[JSON]:
        return [{"part": part.value, "component": part.component.value,
                 **memory("memory", n_bytes)} for part, n_bytes in parts.bytes_by_part]

    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "trace",
        "model": setup.model_name,
        "setup": {
            "method": setup.method.value, "precision": setup.precision.value,
            "optimizer": setup.optimizer.value, "optimizer_impl": setup.optimizer_impl.value,
            "quant": setup.quant.value, "lora_r": setup.lora_r,
            "lora_targets": list(setup.lora_targets), "train_layers": setup.train_layers,
            "batch": setup.batch, "seq_len": setup.seq_len,
            "checkpointing": setup.checkpointing.value, "attention": setup.attention.value,
            "device": setup.device.value,
        },
        "params_total": result.params_total,
        "params_trainable": result.params_trainable,
        "real_tensors": result.real,
        **memory("peak", result.peak_bytes),
        "peak_phase": result.peak_phase.value,
        "breakdown": breakdown(result.breakdown),
        "phases": [{"phase": p.phase.value, **memory("peak", p.peak_bytes),
                    "breakdown": breakdown(p.breakdown)} for p in result.phases],
        **memory("paged", result.paged_bytes),
        "emulated": list(result.emulated),
        "versions": dict(result.versions),
        "cuda": None if result.cuda is None else {
            "device_name": result.cuda.device_name,
            **memory("max_allocated", result.cuda.max_allocated_bytes),
            **memory("max_reserved", result.cuda.max_reserved_bytes),
        },
    }


# --- inference (vramplan infer, /api/infer) ------------------------------------------------------

def inference_to_json(estimate: InferenceEstimate,
                      verdicts: tuple[InferenceVerdict, ...] = (), *,
                      beyond_context: bool = False) -> JSON:
    """The `vramplan infer --json` object: inputs, weights by tensor group, parts per GPU, totals,
    and one verdict per GPU (with `max_context`/`max_batch` when the limits were asked for).
    `beyond_context`: the context exceeds what the model was trained for."""
    inputs = estimate.inputs
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
        "weights_breakdown": [
            {"group": part.group.value, "storage": part.storage, "params": part.params,
             "on_gpu": part.on_gpu, **memory("memory", part.bytes)}
            for part in estimate.weights.parts
        ],
        "parts": [{"part": item.part.value, **memory("memory", item.bytes)}
                  for item in estimate.items],
        "kv_bytes_per_token": estimate.kv_bytes_per_token,
        **memory("allocated", estimate.allocated_bytes),
        **memory("cuda_context", estimate.cuda_context_bytes),
        **memory("device", estimate.device_bytes),
        "engine_memory_utilization": estimate.engine_reserve_share,
        "verdicts": [inference_verdict_to_json(v) for v in verdicts],
    }


def inference_verdict_to_json(line: InferenceVerdict) -> JSON:
    verdict, limits = line.verdict, line.limits
    return {
        "gpu": verdict.gpu.name,
        "display_name": verdict.gpu.display_name,
        "capacity_bytes": verdict.gpu.capacity_bytes,
        **memory("usable", verdict.usable_bytes),
        "fits": verdict.fits,
        **memory("headroom", verdict.headroom_bytes),
        "max_context": limits.max_context if limits else None,
        "max_batch": limits.max_batch if limits else None,
        "context_cap": limits.context_cap if limits else None,
    }


# --- LoRA calculator (vramplan lora, /api/lora) --------------------------------------------------

def lora_to_json(result: LoraResult) -> JSON:
    """The `vramplan lora --json` object."""
    from vramplan.lora_calculator import AdapterDtype

    inputs = result.inputs
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "lora",
        "model": inputs.model_name or None,
        "rank": inputs.rank,
        "targets": [m.target.value for m in result.matrices],
        "dora": inputs.dora,
        "rslora": inputs.rslora,
        "matrices": [
            {"target": m.target.value, "in_features": m.in_features,
             "out_features": m.out_features, "copies": m.copies, "params": m.params}
            for m in result.matrices
        ],
        "lora_params": result.lora_params,
        "dora_params": result.dora_params,
        "trainable_params": result.trainable_params,
        "model_params": result.model_params,
        "share_of_model": result.share_of_model,
        "adapter_files": [
            {"dtype": dtype.value, **memory("size", result.adapter_file(dtype).total_bytes),
             "header_bytes": result.adapter_file(dtype).header_bytes}
            for dtype in AdapterDtype
        ],
        **memory("training", result.training_bytes),
        "training_bytes_per_param": 16,
        "training_setup": result.training_setup(),
    }



def training_to_json(estimate: TrainingEstimate) -> JSON:
    """The detailed training estimate: peak, its phase and breakdown, every phase, states."""
    setup = estimate.setup
    peak = estimate.peak
    return {
        "setup": {name: (value.value if hasattr(value, "value") else value)
                  for name, value in (("method", setup.method), ("precision", setup.precision),
                                      ("optimizer", setup.optimizer), ("quant", setup.quant),
                                      ("batch", setup.batch), ("seq_len", setup.seq_len),
                                      ("framework", setup.framework),
                                      ("metric", setup.metric))},
        "peak_phase": peak.phase.value,
        **memory("allocated", estimate.allocated_bytes),
        **memory("reserved", estimate.reserved_bytes),
        **memory("device", estimate.device_bytes),
        **memory("activations", estimate.activations_bytes),
        "trainable_params": estimate.states.trainable_params,
        "frozen_params": estimate.states.frozen_params,
        **memory("managed_optimizer", estimate.states.managed_optimizer_bytes),
        "phases": [
            {"phase": phase.phase.value, **memory("total", phase.total_bytes),
             "parts": [{"part": part.kind.value,
                        "component": part.component.value, **memory("memory", part.memory_bytes)}
                       for part in phase.parts]}
            for phase in estimate.phases
        ],
        "block_saved_per_token": [{"tensor": s.name, "bytes_per_token": s.bytes_per_token}
                                  for s in estimate.block_saved],
    }


def validation_to_json(report: ValidationReport) -> JSON:
    """`vramplan validate --json`: the summary, then one object per row."""
    return {
        "summary": {
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
        },
        "rows": [
            {"id": s.case.id, "model": s.case.model, "method": s.case.method.value,
             "outcome": s.outcome.value, "estimated_by": s.model_kind,
             "metric": s.case.metric.value, "estimate_bytes": s.estimate_bytes,
             "measured_bytes": s.case.measured_bytes, "error_pct": s.error_pct,
             "oom_right": s.oom_right, "device_estimate_bytes": s.device_bytes,
             "gpu": s.case.gpu.name if s.case.gpu else None,
             "capacity_bytes": s.case.gpu.capacity_bytes if s.case.gpu else None,
             "peak_phase": s.peak_phase or None}
            for s in report.scores
        ],
    }


# --- vramplan fit: per-GPU estimate, verdict with margin, inverse solving, changes ------


def _phase_to_json(phase: PhaseMemory) -> JSON:
    return {"phase": phase.phase.value, **memory("total", phase.total_bytes),
            "parts": [{"part": part.kind.value, "component": part.component.value,
                       **memory("memory", part.memory_bytes)} for part in phase.parts]}


def per_gpu_to_json(estimate: PerGpuEstimate) -> JSON:
    """What one GPU holds: the peak phase's breakdown, every phase, the host memory."""
    plan = estimate.parallelism
    return {
        "parallelism": {"sharding": plan.scheme.value, "gpus": plan.gpus,
                        "gpus_per_node": plan.gpus_per_node, "offload": plan.offload.value,
                        "fsdp_version": plan.fsdp_version.value,
                        "accumulate_without_sync": plan.accumulate_without_sync,
                        "tensor_parallel": plan.tensor_parallel,
                        "pipeline_parallel": plan.pipeline_parallel,
                        "pipeline_schedule": plan.pipeline_schedule.value,
                        "shard_degree": estimate.sharded.shard_degree},
        "stage": estimate.stage.name,
        "peak_phase": estimate.peak.phase.value,
        **memory("total", estimate.total_bytes),
        **memory("allocated", estimate.allocated_bytes),
        **memory("reserved", estimate.reserved_bytes),
        **memory("device", estimate.device_bytes),
        **memory("host_per_node", estimate.host_bytes_per_node),
        **memory("pinned_host_per_node", estimate.sharded.pinned_host_bytes_per_node),
        "peak": _phase_to_json(estimate.peak),
        "phases": [_phase_to_json(phase) for phase in estimate.phases],
    }


def fit_verdict_to_json(verdict: GpuVerdict) -> JSON:
    return {
        "gpu": verdict.gpu.name, "display_name": verdict.gpu.display_name,
        **memory("capacity", verdict.capacity_bytes),
        "usable_share": verdict.usable_share,
        **memory("usable", verdict.usable_bytes),
        **memory("peak", verdict.required_bytes),
        "fits": verdict.fits, "fits_at_capacity": verdict.fits_at_capacity,
        **memory("headroom", verdict.headroom_bytes),
        "usage_share": verdict.usage_share,
        "margin_source": "Fujii et al. 2024, arXiv:2411.06465",
    }


def _scheme_answer_to_json(answer: SchemeAnswer) -> JSON:
    peak = memory("peak", answer.peak_bytes) if answer.peak_bytes is not None else {
        "peak_bytes": None, "peak_gb": None, "peak_gib": None}
    return {"sharding": answer.scheme.value, "offload": answer.offload.value,
            "gpus": answer.gpus, **peak}


def change_to_json(change: Change) -> JSON:
    cost = change.cost
    return {"change": change.kind.value, "detail": settings_text(change.settings),
            "settings": {name: value.value if isinstance(value, StrEnum) else value
                         for name, value in change.settings},
            "fits": change.fits,
            **memory("peak", change.peak_bytes), **memory("saved", change.saved_bytes),
            "speed_cost": cost.speed.value, "quality_cost": cost.quality.value,
            "source": cost.source}


def fit_to_json(report: FitReport) -> JSON:
    """The `vramplan fit --json` object (and the web page's "Will it fit?" data)."""
    setup = report.setup
    return {
        "schema_version": SCHEMA_VERSION,
        "model": setup.model,
        "setup": {name: (value.value if isinstance(value, Enum) else value)
                  for name, value in (
                      ("method", setup.training.method), ("precision", setup.training.precision),
                      ("optimizer", setup.training.optimizer), ("quant", setup.training.quant),
                      ("lora_r", setup.training.lora_rank),
                      ("batch", setup.training.batch), ("seq_len", setup.training.seq_len),
                      ("checkpointing", setup.training.checkpointing),
                      ("attention", setup.training.attention),
                      ("framework", setup.training.framework),
                      ("gradient_accumulation", setup.training.gradient_accumulation),
                      ("metric", setup.training.metric))},
        "lora_targets": sorted(t.value for t in setup.training.lora_targets),
        "per_gpu": per_gpu_to_json(report.estimate),
        "verdict": fit_verdict_to_json(report.verdict),
        "max_batch": report.max_batch,
        "max_seq_len": report.max_seq_len,
        "fewest_gpus": [_scheme_answer_to_json(a) for a in report.fewest_gpus],
        "cheapest": (_scheme_answer_to_json(report.cheapest) if report.cheapest is not None
                     else None),
        "changes": [change_to_json(c) for c in report.changes],
        "combined": [change_to_json(c) for c in report.combined],
    }
