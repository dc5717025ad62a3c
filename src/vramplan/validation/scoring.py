"""Scoring estimates against measured runs: every row is estimated by the module that owns its
kind of run: single-GPU training by `vramplan.training.estimate`, multi-GPU training by
`vramplan.distributed.per_gpu` (sharding), inference by `vramplan.inference.estimate`.

A measured `OOM` row is classified right when the run would not fit: when the estimate of what the
device must hold (the allocated peak, the allocator's overhead and the CUDA context, the `device`
metric) exceeds the GPU's memory.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.parallelism import PipelineSchedule
from vramplan.distributed.per_gpu import PerGpuEstimate, estimate_per_gpu
from vramplan.errors import UnknownName, VramplanError
from vramplan.i18n import Lang
from vramplan.inference.allocations import growing_cache_reserve_bytes
from vramplan.inference.estimate import InferenceEstimate, estimate_inference
from vramplan.inference.setup import inference_inputs, transformers_generate_settings
from vramplan.parts import PartKind
from vramplan.presets.cuda import cuda_total_bytes, free_at_load_bytes
from vramplan.presets.frameworks.torchtune import torchtune_rope_modules
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.presets.gpus import Gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format
from vramplan.training.alignment import estimate_step
from vramplan.training.result import PeakOverPhases
from vramplan.training.setup import AlignmentSetup, TrainingSetup, with_gpu_memory
from vramplan.validation.cases import Case, UnreadRow
from vramplan.validation.notes import (
    ALLOCATED_PLUS_OUTSIDE_NOTE,
    BNB_COMPUTE_16BIT_NOTE,
    CHECKPOINT_IN_UNITS_NOTE,
    CHECKPOINTS_ON_HOST_NOTE,
    COATI_TRAINER_NOTE,
    COLOSSALAI_REDUCE_BUCKET_ELEMENTS,
    COLOSSALAI_ZERO_NOTE,
    CROSS_ENTROPY_FUSION_NOTE,
    DEVICE_MAP_NOTE,
    EMPTY_CACHE_NOTE,
    GRAD_BUFFER_16BIT_NOTE,
    KBIT_PREPARATION_NOTE,
    LAYER_SPLIT_NOTE,
    LIGER_KERNELS_NOTE,
    LOSS_ALONE_COMPILED,
    NO_AUTOCAST_NOTE,
    NO_GRADIENT_ACCUMULATION_FUSION_NOTE,
    NO_INPUT_REQUIRE_GRADS_NOTE,
    OUTPUTS_FREED_NOTE,
    OUTSIDE_ZERO_INIT_NOTE,
    OVERLAP_GRAD_REDUCE_NOTE,
    QUANTIZED_EXPERTS_NOTE,
    SUBMODULE_CHECKPOINT_NOTE,
    TE_CROSS_ENTROPY_NOTE,
    TILED_MLP_NOTE,
    VLLM_NOTE,
    accumulates,
    alloc_conf,
    code_date,
    compiled,
    embedding_sharded_apart,
    first_step_only,
    float_quant_storage,
    fsdp_version,
    largest_batch_first,
    loop_keeps_outputs,
    lora_dropout,
    lora_rank,
    loss_in_function,
    loss_on_16bit_logits,
    megatron_distributed_optimizer,
    model_parallel,
    moe_hub_kernel,
    ms_swift_rlhf,
    nvml_v1_reserve_bytes,
    reentrant_checkpointing,
    runs_litgpt_model,
    torchtune_generate_cache,
    trained_blocks,
    unquantized_modules,
    vllm_memory_utilization,
    zero3_config_file,
)
from vramplan.vocab import (
    Attention,
    ComputeDtype,
    Engine,
    Framework,
    KvDtype,
    Method,
    Metric,
    Offload,
    Quant,
    Scheme,
)

WITHIN_SHARE_PCT = 10.0
"""The summary's `within_10pct_share` threshold."""


# --- scoring ----------------------------------------------------------------------------------

class Outcome(StrEnum):
    """What happened to a row."""

    SCORED = "scored"
    """A measured peak, compared with the estimate."""
    OOM = "oom"
    """A run that did not fit: right when the estimate does not fit either."""
    SKIPPED = "skipped"
    """Not scored: the row's kind of run is not modelled yet (the reason says which)."""


@dataclass(frozen=True, slots=True)
class CaseScore:
    case: Case
    outcome: Outcome
    estimate_bytes: int | None = None
    """The estimate in the row's metric."""
    device_bytes: int | None = None
    """The estimate of what the device must hold (for OOM verdicts)."""
    peak_phase: str = ""
    model_kind: str = ""
    """Which model estimated the row: `training`, `per_gpu`, `inference`."""
    skip_error: VramplanError | None = None
    """Why the row was not estimated (`skip_error.message(lang)` in any language)."""

    @property
    def skip_reason(self) -> str:
        """Why the row was not estimated, in English ("" for an estimated row)."""
        return self.skip_error.message(Lang.EN) if self.skip_error is not None else ""

    @property
    def error_pct(self) -> float | None:
        """(estimate - measured) / measured, in percent."""
        if self.estimate_bytes is None or not self.case.measured_bytes:
            return None
        return 100 * (self.estimate_bytes - self.case.measured_bytes) / self.case.measured_bytes

    @property
    def card_bytes(self) -> int | None:
        """What the row's card can give a process: all that CUDA hands out on it
        (`cuda_total_bytes`); None without a card."""
        return cuda_total_bytes(self.case.gpu) if self.case.gpu is not None else None

    @property
    def oom_right(self) -> bool | None:
        card = self.card_bytes
        if self.outcome is not Outcome.OOM or self.device_bytes is None or card is None:
            return None
        return self.device_bytes > card


@dataclass(frozen=True, slots=True)
class ValidationReport:
    scores: tuple[CaseScore, ...]
    unread: tuple[UnreadRow, ...] = ()
    """Rows of the file that could not be read (and so were not scored)."""

    def _errors(self) -> list[float]:
        return sorted(abs(s.error_pct) for s in self.scores if s.error_pct is not None)

    @property
    def rows_total(self) -> int:
        return len(self.scores) + len(self.unread)

    @property
    def rows_scored(self) -> int:
        return len(self._errors())

    @property
    def median_abs_error_pct(self) -> float | None:
        errors = self._errors()
        return statistics.median(errors) if errors else None

    @property
    def p90_abs_error_pct(self) -> float | None:
        """90th percentile, linear interpolation between closest ranks (numpy's default)."""
        return _percentile(self._errors(), 0.9)

    @property
    def max_abs_error_pct(self) -> float | None:
        errors = self._errors()
        return errors[-1] if errors else None

    @property
    def within_10pct_share(self) -> float | None:
        errors = self._errors()
        if not errors:
            return None
        return sum(1 for e in errors if e <= WITHIN_SHARE_PCT) / len(errors)

    @property
    def oom_total(self) -> int:
        return sum(1 for s in self.scores if s.outcome is Outcome.OOM)

    @property
    def oom_right(self) -> int:
        return sum(1 for s in self.scores if s.oom_right)

    @property
    def skipped(self) -> tuple[CaseScore, ...]:
        return tuple(s for s in self.scores if s.outcome is Outcome.SKIPPED)


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def score_cases(cases: Sequence[Case], unread: Sequence[UnreadRow] = ()) -> ValidationReport:
    """Estimate every case and compare it with its measurement (`unread`: the file's rows that
    could not be read, carried into the report)."""
    return ValidationReport(tuple(score_case(case) for case in cases), tuple(unread))


def score_case(case: Case) -> CaseScore:
    """One row: estimated by the model that owns its kind of run. A row that no model takes (a
    model missing from the registry, a combination the models refuse) is skipped with the reason,
    so that one such row does not stop the others from being scored."""
    try:
        if case.method is Method.INFERENCE:
            score = _score_inference(case)
        elif case.sharding is not Scheme.NONE or case.gpus > 1 \
                or case.offload is not Offload.NONE or model_parallel(case).splits_model:
            score = _score_multi_gpu(case)
        else:
            score = _score_training(case)
    except VramplanError as error:
        return CaseScore(case, Outcome.SKIPPED, skip_error=error)
    reserve = nvml_v1_reserve_bytes(case)
    if reserve and score.estimate_bytes is not None:
        # the reader counts the driver's reserve beside the process (`NVML_V1_NOTE`)
        score = replace(score, estimate_bytes=score.estimate_bytes + reserve)
    return score


def _outcome(case: Case) -> Outcome:
    return Outcome.OOM if case.measured_bytes is None else Outcome.SCORED


def training_setup_of(case: Case) -> TrainingSetup:
    """The detailed model's inputs for a training row. A preference or RL row trains its
    `policy` (full when empty); its `new_tokens` are the tokens each sequence generates (GRPO,
    PPO; empty: TRL's default), and a colocated engine takes its share of the row's GPU."""
    aligned = case.method.is_alignment
    method = (case.policy or Method.FULL) if aligned else case.method
    uses_lora = method.uses_lora
    loss_alone = LOSS_ALONE_COMPILED.search(case.notes) is not None
    alignment = AlignmentSetup(
        case.method, completion_len=case.new_tokens if case.method.generates else None,
        value_adapters=ms_swift_rlhf(case),
        coati=COATI_TRAINER_NOTE.search(case.notes) is not None) if aligned else None
    setup = TrainingSetup(
        alignment=alignment,
        method=method, precision=case.precision, optimizer=case.optimizer,
        optimizer_impl=case.optimizer_impl, quant=case.quant,
        lora_rank=lora_rank(case) if uses_lora else None,
        lora_targets=case.lora_targets if uses_lora else frozenset(),
        batch=case.batch, seq_len=case.seq_len or _shortest_sequence(alignment),
        checkpointing=case.checkpointing,
        attention=case.attention, loss=case.loss, framework=case.framework, metric=case.metric,
        train_layers=trained_blocks(case),
        float_quant_storage=float_quant_storage(case),
        lora_dropout=lora_dropout(case) if uses_lora else None,
        alloc_conf=alloc_conf(case),
        gradient_accumulation=accumulates(case),
        empty_cache_between_steps=EMPTY_CACHE_NOTE.search(case.notes) is not None,
        reentrant_checkpointing=reentrant_checkpointing(case),
        input_require_grads=False if NO_INPUT_REQUIRE_GRADS_NOTE.search(case.notes) else None,
        checkpoint_in_units=CHECKPOINT_IN_UNITS_NOTE.search(case.notes) is not None,
        checkpoint_submodules=SUBMODULE_CHECKPOINT_NOTE.search(case.notes) is not None,
        kbit_upcast=True if KBIT_PREPARATION_NOTE in case.notes else None,
        compiled=compiled(case) and not loss_alone,
        loss_compiled_alone=loss_alone,
        grad_buffer_16bit=GRAD_BUFFER_16BIT_NOTE.search(case.notes) is not None,
        liger_kernels=LIGER_KERNELS_NOTE.search(case.notes) is not None,
        tiled_mlp=TILED_MLP_NOTE.search(case.notes) is not None,
        checkpoints_on_host=CHECKPOINTS_ON_HOST_NOTE.search(case.notes) is not None,
        unquantized_modules=unquantized_modules(case),
        no_autocast=NO_AUTOCAST_NOTE.search(case.notes) is not None,
        te_cross_entropy=TE_CROSS_ENTROPY_NOTE.search(case.notes) is not None,
        native_fused_cross_entropy=CROSS_ENTROPY_FUSION_NOTE.search(case.notes) is not None,
        gradient_accumulation_fusion=NO_GRADIENT_ACCUMULATION_FUSION_NOTE.search(
            case.notes) is None,
        steady_state=not (largest_batch_first(case) or first_step_only(case)),
        first_step_report=first_step_only(case),
        code_date=code_date(case),
        loss_in_function=loss_in_function(case), loss_16bit=loss_on_16bit_logits(case),
        loop_keeps_outputs=loop_keeps_outputs(case),
        loop_frees_outputs=OUTPUTS_FREED_NOTE.search(case.notes) is not None,
        quantized_experts=QUANTIZED_EXPERTS_NOTE.search(case.notes) is not None,
        moe_hub_kernel=moe_hub_kernel(case), litgpt_model=runs_litgpt_model(case))
    # the card's memory, as a request naming it sets it (free at load, the colocated engine's
    # share, the compute capability)
    return with_gpu_memory(setup, case.gpu) if case.gpu is not None else setup


def _shortest_sequence(alignment: AlignmentSetup | None) -> int:
    """The length a row without `seq_len` is estimated at (`Reading.SEQ_LEN_UNKNOWN`): one
    token, or for an online method its completion after a one-token prompt."""
    if alignment is not None and alignment.method.generates:
        return alignment.completion_tokens + 1
    return 1


def card_free_bytes(case: Case) -> int | None:
    """What the row's card has free when the model loads (`torch.cuda.mem_get_info`): what
    CUDA hands out less the CUDA context (`free_at_load_bytes`); None without a card."""
    return free_at_load_bytes(case.gpu) if case.gpu else None


def metric_on_card(estimate: PeakOverPhases, metric: Metric, gpu: Gpu | None) -> int:
    """The estimate in `metric`, on the row's card: the caching allocator cannot reserve more
    than the card gives it. When `cudaMalloc` fails it releases its free cached segments and
    retries (c10/cuda/CUDACachingAllocator.cpp `release_cached_blocks`, counted in
    `num_alloc_retries`), so a run whose tensors fit reserves at most what CUDA hands out on
    the card (`cuda_total_bytes`) less the CUDA context (and what managed memory holds)."""
    value = estimate.metric_bytes(metric)
    if gpu is None or metric is Metric.ALLOCATED:
        return value
    room = cuda_total_bytes(gpu) - estimate.outside_allocator_bytes
    if estimate.allocated_bytes > room:
        return value
    reserved = min(estimate.reserved_bytes, room)
    return reserved if metric is Metric.RESERVED else \
        reserved + estimate.outside_allocator_bytes


def _score_training(case: Case) -> CaseScore:
    from vramplan.presets.models import architecture_of, find_model

    estimate = estimate_step(architecture_of(find_model(case.model)), training_setup_of(case))
    return CaseScore(case, _outcome(case), metric_on_card(estimate, case.metric, case.gpu),
                     estimate.device_bytes, estimate.peak.phase.value, "training")


def _score_multi_gpu(case: Case) -> CaseScore:
    estimate = multi_gpu_estimate(case)
    return CaseScore(case, _outcome(case), metric_on_card(estimate, case.metric, case.gpu),
                     estimate.device_bytes, estimate.peak.phase.value, "per_gpu")


def multi_gpu_estimate(case: Case) -> PerGpuEstimate:
    """One GPU's estimate of a row on several GPUs, with the parallelism its cells and notes
    give."""
    from vramplan.presets.models import architecture_of, find_model

    setup = training_setup_of(case)
    split = model_parallel(case)
    if case.sharding is Scheme.NONE and case.gpus > 1 and not split.splits_model:
        # no data parallelism on several GPUs: the model split across them by layers
        plan = default_parallelism(setup, case.sharding, case.gpus, case.offload,
                                   pipeline_parallel=case.gpus,
                                   pipeline_schedule=PipelineSchedule.SEQUENTIAL)
    else:
        scheme = case.sharding
        if scheme in (Scheme.NONE, Scheme.DDP) and megatron_distributed_optimizer(case):
            scheme = Scheme.ZERO1
        if scheme is Scheme.NONE and case.gpus > split.tensor * split.pipeline:
            scheme = Scheme.DDP  # copies of the model beside the split: data parallelism
        plan = default_parallelism(setup, scheme, case.gpus, case.offload,
                                   tensor_parallel=split.tensor, pipeline_parallel=split.pipeline,
                                   expert_parallel=split.expert,
                                   fsdp_version=fsdp_version(case), on=setup.code_date)
    if embedding_sharded_apart(case):
        plan = replace(plan, embedding_apart=True)
    if case.sharding is Scheme.ZERO3 and OUTSIDE_ZERO_INIT_NOTE.search(case.notes):
        plan = replace(plan, zero3_built_outside_init=True)
    if case.framework is Framework.MEGATRON and OVERLAP_GRAD_REDUCE_NOTE.search(case.notes):
        plan = replace(plan, overlap_grad_reduce=True)
    if case.sharding in (Scheme.ZERO1, Scheme.ZERO2) and COLOSSALAI_ZERO_NOTE.search(case.notes):
        buffers = replace(plan.buffers,
                          zero_reduce_bucket_elements=COLOSSALAI_REDUCE_BUCKET_ELEMENTS)
        plan = replace(plan, offload_keeps_gradients=True, deepspeed_zero=False,
                       buffers=buffers)
    return estimate_per_gpu(architecture_of(find_model(case.model)), setup, plan,
                            zero3_config=zero3_config_file(case))


def _score_inference(case: Case) -> CaseScore:
    vllm = case.engine is Engine.VLLM or VLLM_NOTE.search(case.notes) is not None
    cache_tokens, kv_all_heads = torchtune_generate_cache(case)
    arch = architecture_of(find_model(case.model))
    # transformers' generate as the release of the row's date runs the model
    generate = {} if vllm or case.framework is not Framework.HF else \
        transformers_generate_settings(arch, transformers_code(code_date(case)),
                                       _CASE_DTYPES[case.precision.value]).as_kwargs()
    estimate = estimate_inference_case(
        case.model, case.precision.value, case.quant.value, batch=case.batch,
        seq_len=case.seq_len, new_tokens=case.new_tokens,
        framework=Engine.VLLM.value if vllm else (case.engine or case.framework).value,
        gpus=case.gpus, attention=case.attention.value,
        layer_split=case.gpus > 1 and LAYER_SPLIT_NOTE.search(case.notes) is not None,
        cache_tokens=cache_tokens, kv_all_heads=kv_all_heads,
        bnb_compute_16bit=BNB_COMPUTE_16BIT_NOTE.search(case.notes) is not None,
        torchtune_rope_modules=torchtune_rope_modules(arch.n_layers, code_date(case))
        if case.framework is Framework.TORCHTUNE else 0, **generate)
    allocated, device = estimate.allocated_bytes, estimate.device_bytes
    if case.metric is not Metric.ALLOCATED and not vllm:
        # `reserved` and `device` read the allocator's cache: what a growing KV cache leaves
        # behind (`vramplan.inference.allocations`), and transformers' warm-up segment, which
        # the tensors fill first
        growth = growing_cache_reserve_bytes(estimate, card_free_bytes(case))
        warmup = warmup_reserved_bytes(case, estimate)
        allocated = max(allocated + growth, warmup)
        device = max(device + growth, warmup + estimate.cuda_context_bytes)
    if vllm and case.gpu is not None:
        # vLLM takes `requested_memory = total_memory * gpu_memory_utilization` and gives the
        # KV cache whatever its weights, profiled activations and non-torch memory leave of it
        # (vllm/v1/worker/gpu_worker.py `init_device`, `determine_available_memory`): the
        # process holds its share of the card whatever the request. `total_memory` is
        # `torch.cuda.mem_get_info()`'s total (`MemorySnapshot`): what CUDA hands out.
        requested = round(vllm_memory_utilization(case) * cuda_total_bytes(case.gpu))
        device = max(device, requested)
        allocated = max(allocated, requested - estimate.cuda_context_bytes)
    # compare the allocated peak with allocated/reserved, the device total with device
    value = device if case.metric is Metric.DEVICE else allocated
    if case.metric is Metric.ALLOCATED and ALLOCATED_PLUS_OUTSIDE_NOTE.search(case.notes):
        value += estimate.cuda_context_bytes
    return CaseScore(case, _outcome(case), value, device, "", "inference")


def warmup_reserved_bytes(case: Case, estimate: InferenceEstimate) -> int:
    """What transformers' loading left reserved for a `hf` inference row, by the release of the
    row's date (`vramplan.presets.frameworks.transformers.TransformersCode`, dated by its source and
    notes; none: today's): its allocator warm-up, one segment whose unused part the step's tensors
    fill first. A bitsandbytes load (whose `device_map` transformers sets itself) warms up half the
    meta model's bytes, its linears at full shape in the 16-bit load dtype (factor 4), more than
    its 4-bit weights; an unquantized load with a `device_map` (its notes say so) warms up its
    weights exactly, plus the tied matrix counted twice from v4.50 to v4.53. 0 otherwise."""
    if case.framework is not Framework.HF:
        return 0
    code = transformers_code(code_date(case))
    arch = estimate.inputs.arch
    tied = arch.params_token_embedding if arch.tied_embeddings else 0
    itemsize = estimate.inputs.compute_dtype.bytes
    free = card_free_bytes(case)
    if case.quant is not Quant.NONE:
        return code.quantized_warmup_bytes(arch.params_total, tied, itemsize, free)
    if not (tied and code.warmup_counts_tied) or DEVICE_MAP_NOTE.search(case.notes) is None:
        return 0
    return code.warmup_bytes(estimate.bytes_of(PartKind.WEIGHTS) + tied * itemsize,
                             UNQUANTIZED_WARMUP_FACTOR, free)


UNQUANTIZED_WARMUP_FACTOR = 2
"""`caching_allocator_warmup`'s factor without a quantizer: the whole model."""


# --- inference rows -----------------------------------------------------------------------------

UNPUBLISHED_PROMPT_TOKENS = 8
"""Prompt length assumed when a measured case does not publish it: the published runs used short
prompts ('Hello, my name is', 'What food do llamas eat?'), 5 to 8 tokens with their tokenizers."""

_CASE_DTYPES = {"bf16-true": ComputeDtype.BF16, "mixed": ComputeDtype.BF16,
                "fp16-true": ComputeDtype.FP16, "16-true": ComputeDtype.FP16,
                "fp32": ComputeDtype.FP32, "amp": ComputeDtype.FP32}
_CASE_ENGINES = {"litgpt": Engine.LITGPT, "hf": Engine.HF, "vllm": Engine.VLLM,
                 "llama.cpp": Engine.LLAMA_CPP, "generic": Engine.GENERIC}


def estimate_inference_case(model: str, precision: str, quant: str, *, batch: int,
                            seq_len: int | None, new_tokens: int | None, framework: str = "",
                            gpus: int = 1, attention: str = "", layer_split: bool = False,
                            cache_tokens: int | None = None,
                            kv_all_heads: bool | None = None,
                            previous_cache_alive: bool = False, prompt_logits_bytes: int = 0,
                            prompt_logits_kept: bool = False,
                            prompt_logits_cloned: bool = False,
                            bnb_compute_16bit: bool = False,
                            rope_tables: bool = False,
                            fused_qkv_cache_views: bool = False, mask_buffer_bytes: int = 0,
                            eager_softmax_16bit: bool = False,
                            torchtune_rope_modules: int = 0) -> InferenceEstimate:
    """Estimate one `method=inference` row of a cases file (columns as in docs/cases-format.md):
    `seq_len` is the prompt length (UNPUBLISHED_PROMPT_TOKENS when empty), the cache holds prompt
    plus `new_tokens`, the KV cache and activations are in the precision's dtype, `quant` picks the
    weight format (`none` keeps the precision's dtype), `gpus` is the tensor-parallel degree, or,
    with `layer_split`, the GPUs the blocks are placed on in consecutive chunks; `cache_tokens`,
    `kv_all_heads`, `previous_cache_alive`, `prompt_logits_bytes`, `prompt_logits_kept`,
    `prompt_logits_cloned`,
    `bnb_compute_16bit`, `rope_tables`, `fused_qkv_cache_views`, `mask_buffer_bytes`,
    `eager_softmax_16bit` and `torchtune_rope_modules` as in
    `vramplan.inference.setup.InferenceInputs`.
    Compare `allocated_bytes` with metric `allocated`/`reserved`, `device_bytes` with `device`."""
    if precision not in _CASE_DTYPES:
        raise UnknownName("precision", precision, list(_CASE_DTYPES))
    dtype = _CASE_DTYPES[precision]
    weights = find_format(dtype.value if quant in ("", "none") else quant)
    engine = _CASE_ENGINES.get(framework or "generic", Engine.GENERIC)
    prompt = seq_len or UNPUBLISHED_PROMPT_TOKENS
    kv = {ComputeDtype.FP32: KvDtype.FP32, ComputeDtype.BF16: KvDtype.BF16}.get(dtype, KvDtype.FP16)
    kernel = Attention.EAGER if attention == "eager" else Attention.SDPA
    return estimate_inference(inference_inputs(
        architecture_of(find_model(model)), weights, context=prompt + (new_tokens or 0),
        batch=batch, prompt=prompt, kv_dtype=kv, compute_dtype=dtype, engine=engine,
        tensor_parallel=1 if layer_split else gpus, attention=kernel, model_name=model,
        layer_split=gpus if layer_split else 1, cache_tokens=cache_tokens,
        kv_all_heads=kv_all_heads, previous_cache_alive=previous_cache_alive,
        prompt_logits_bytes=prompt_logits_bytes, prompt_logits_kept=prompt_logits_kept,
        prompt_logits_cloned=prompt_logits_cloned, bnb_compute_16bit=bnb_compute_16bit,
        rope_tables=rope_tables,
        fused_qkv_cache_views=fused_qkv_cache_views, mask_buffer_bytes=mask_buffer_bytes,
        eager_softmax_16bit=eager_softmax_16bit,
        torchtune_rope_modules=torchtune_rope_modules))
