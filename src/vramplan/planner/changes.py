"""What to change so that a run fits: each change applied to the setup and estimated by the same
core, with what it costs in speed and quality (data, with sources), ranked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

from vramplan.errors import VramplanError
from vramplan.planner.search import (
    max_completion,
    max_micro_batch,
    max_sequence,
    with_completion,
)
from vramplan.planner.setup import FitSetup, peak_bytes, with_parallelism, with_training
from vramplan.training.alignment import engine_bytes_needed
from vramplan.units import ceil_div
from vramplan.vocab import (
    BLOCK_TARGETS,
    Attention,
    Checkpointing,
    Generation,
    LoraTarget,
    Loss,
    Method,
    Offload,
    Optimizer,
    Quant,
    Scheme,
)


class SpeedCost(StrEnum):
    """What a change does to the time per optimizer step."""

    FASTER = "faster"
    """Less work per step."""
    NONE = "none"
    """No measurable change reported."""
    SMALL = "small"
    """A few percent to about 15% slower."""
    MODERATE = "moderate"
    """About 20% to 50% slower."""
    LARGE = "large"
    """Can be several times slower (host transfers on the critical path)."""


class QualityCost(StrEnum):
    """What a change does to the trained model."""

    NONE = "none"
    """The same mathematics: results equal up to floating-point rounding."""
    NEGLIGIBLE = "negligible"
    """Approximate, but reported on par with the original in its paper's benchmarks."""
    TASK_DEPENDENT = "task_dependent"
    """Reported close on some tasks and worse on others."""
    CHANGES_DATA = "changes_data"
    """Trains on something different (shorter examples)."""


class ChangeKind(StrEnum):
    """A change that can make a run fit (CLI and JSON `change`)."""

    ATTENTION_KERNEL = "attention_kernel"
    """A fused attention kernel (SDPA/FlashAttention) instead of eager attention."""
    CHUNKED_LOSS = "chunked_loss"
    """Cross-entropy computed in chunks instead of on the whole logits tensor."""
    CHECKPOINTING = "checkpointing"
    """Activation checkpointing of every block."""
    OPTIMIZER_8BIT = "optimizer_8bit"
    """8-bit AdamW (bitsandbytes) instead of 32-bit AdamW."""
    MICRO_BATCH = "micro_batch"
    """A smaller micro-batch, with gradient accumulation to keep the global batch."""
    SHARDING = "sharding"
    """A ZeRO stage or FSDP over the same GPUs."""
    OFFLOAD_OPTIMIZER = "offload_optimizer"
    """Optimizer states and master weights in host memory (ZeRO-Offload)."""
    OFFLOAD_PARAMS = "offload_params"
    """Parameters too in host memory (ZeRO-3 offload_param, FSDP CPUOffload)."""
    LORA = "lora"
    """Train low-rank adapters instead of every weight."""
    QLORA = "qlora"
    """LoRA on a 4-bit (NF4) frozen base."""
    SHORTER_SEQUENCE = "shorter_sequence"
    """Truncate training sequences."""
    SHORTER_COMPLETION = "shorter_completion"
    """Generate shorter completions (GRPO, PPO)."""
    PRECOMPUTE_REF = "precompute_ref"
    """Compute the reference log-probabilities once before training (DPO, KTO)."""
    VLLM_SLEEP = "vllm_sleep"
    """The colocated vLLM engine sleeps between generations."""
    VLLM_SHARE = "vllm_share"
    """A smaller share of the GPU for the colocated vLLM engine."""


@dataclass(frozen=True, slots=True)
class ChangeCost:
    """What a change costs, and where that judgement comes from."""

    speed: SpeedCost
    quality: QualityCost
    source: str


CHANGE_COSTS: dict[ChangeKind, ChangeCost] = {
    ChangeKind.ATTENTION_KERNEL: ChangeCost(
        SpeedCost.FASTER, QualityCost.NONE,
        "Dao et al. 2022, FlashAttention, arXiv:2205.14135: exact attention, faster, memory "
        "linear in sequence length"),
    ChangeKind.CHUNKED_LOSS: ChangeCost(
        SpeedCost.NONE, QualityCost.NONE,
        "Hsu et al. 2024, Liger Kernel, arXiv:2410.10989 (fused linear cross entropy): the same "
        "loss without materializing all logits"),
    ChangeKind.CHECKPOINTING: ChangeCost(
        SpeedCost.MODERATE, QualityCost.NONE,
        "Chen et al. 2016, arXiv:1604.06174 (one extra forward per step); Korthikanti et al. "
        "2022, arXiv:2205.05198, section 5 (full recomputation: 30-40% overhead)"),
    ChangeKind.OPTIMIZER_8BIT: ChangeCost(
        SpeedCost.NONE, QualityCost.NEGLIGIBLE,
        "Dettmers et al. 2022, 8-bit Optimizers via Block-wise Quantization, arXiv:2110.02861: "
        "8-bit states maintain 32-bit optimizer performance"),
    ChangeKind.MICRO_BATCH: ChangeCost(
        SpeedCost.SMALL, QualityCost.NONE,
        "gradient accumulation sums the same gradients over micro-batches (same global batch); "
        "smaller micro-batches use the GPU less efficiently"),
    ChangeKind.SHARDING: ChangeCost(
        SpeedCost.SMALL, QualityCost.NONE,
        "Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054, section 7: P_os and P_os+g move the "
        "same volume as data parallelism, P_os+g+p 1.5 times it"),
    ChangeKind.OFFLOAD_OPTIMIZER: ChangeCost(
        SpeedCost.MODERATE, QualityCost.NONE,
        "Ren et al. 2021, ZeRO-Offload, arXiv:2101.06840: the optimizer step runs on the CPU, "
        "gradients and parameters cross PCIe every step"),
    ChangeKind.OFFLOAD_PARAMS: ChangeCost(
        SpeedCost.LARGE, QualityCost.NONE,
        "Rajbhandari et al. 2021, ZeRO-Infinity, arXiv:2104.07857: parameters fetched over PCIe "
        "for every forward and backward"),
    ChangeKind.LORA: ChangeCost(
        SpeedCost.FASTER, QualityCost.TASK_DEPENDENT,
        "Hu et al. 2021, LoRA, arXiv:2106.09685 (on par on GLUE, E2E); Biderman et al. 2024, "
        "LoRA Learns Less and Forgets Less, arXiv:2405.09673 (below full fine-tuning on code, "
        "math)"),
    ChangeKind.QLORA: ChangeCost(
        SpeedCost.MODERATE, QualityCost.TASK_DEPENDENT,
        "Dettmers et al. 2023, QLoRA, arXiv:2305.14314: NF4 with double quantization matches "
        "16-bit LoRA; weights are dequantized at every use"),
    ChangeKind.SHORTER_SEQUENCE: ChangeCost(
        SpeedCost.FASTER, QualityCost.CHANGES_DATA,
        "truncation drops every token past the limit: the model no longer sees long contexts"),
    ChangeKind.SHORTER_COMPLETION: ChangeCost(
        SpeedCost.FASTER, QualityCost.CHANGES_DATA,
        "completions stop at the limit (TRL max_completion_length): long reasoning is cut "
        "and rewarded as it stands"),
    ChangeKind.PRECOMPUTE_REF: ChangeCost(
        SpeedCost.FASTER, QualityCost.NONE,
        "TRL precompute_ref_log_probs: the frozen reference gives the same "
        "log-probabilities computed once before training, and needs no memory during it"),
    ChangeKind.VLLM_SLEEP: ChangeCost(
        SpeedCost.SMALL, QualityCost.NONE,
        "TRL vllm_enable_sleep_mode: vLLM frees its weights and KV cache after each "
        "generation and reloads them for the next"),
    ChangeKind.VLLM_SHARE: ChangeCost(
        SpeedCost.SMALL, QualityCost.NONE,
        "vLLM gpu_memory_utilization: a smaller KV cache pool runs fewer sequences at once "
        "(same completions, in more waves)"),
}

_QUALITY_ORDER = tuple(QualityCost)
_SPEED_ORDER = (SpeedCost.FASTER, SpeedCost.NONE, SpeedCost.SMALL, SpeedCost.MODERATE,
                SpeedCost.LARGE)


@dataclass(frozen=True, slots=True)
class Change:
    """One change applied to a setup, with its effect computed by the estimate."""

    kind: ChangeKind
    setup: FitSetup
    """The setup after the change."""
    settings: tuple[Setting, ...]
    """What exactly changes: the request vocabulary's fields and their new values
    (`(("batch", 2), ("grad_accum", 4))`), worded by each interface."""
    peak_bytes: int
    saved_bytes: int
    """Peak before minus peak after (negative: the change costs memory)."""
    fits: bool

    @property
    def cost(self) -> ChangeCost:
        return CHANGE_COSTS[self.kind]


def rank_key(change: Change) -> tuple[int, int, int, int]:
    """Changes that make the run fit first; then the smallest quality cost, the smallest speed
    cost, and the most memory saved."""
    cost = change.cost
    return (0 if change.fits else 1, _QUALITY_ORDER.index(cost.quality),
            _SPEED_ORDER.index(cost.speed), -change.saved_bytes)


def rank_changes(changes: list[Change]) -> list[Change]:
    """Only changes that save memory, best first (see `rank_key`)."""
    return sorted((c for c in changes if c.saved_bytes > 0), key=rank_key)


MAX_COMBINED_STEPS = 8
"""Most changes chained by `combined_changes` (each of the 11 kinds applies at most once): a bound
on the loop, not a physical figure."""

LORA_RANK_SUGGESTED = 16
"""The rank suggested when switching to LoRA/QLoRA, on every linear layer of the blocks, as the
QLoRA paper recommends ("LoRA on all linear transformer block layers are required to match full
finetuning performance", Dettmers et al. 2023, arXiv:2305.14314, section 4)."""


Setting = tuple[str, "bool | int | float | StrEnum"]
"""A field of the request vocabulary and its value (`("batch", 2)`, `("sharding", Scheme.FSDP)`)."""
_Applied = tuple[FitSetup, tuple[Setting, ...]] | None
_ChangeFn = Callable[[FitSetup, int], _Applied]


def _attention(setup: FitSetup, usable: int) -> _Applied:
    if setup.training.attention is not Attention.EAGER:
        return None
    return with_training(setup, attention=Attention.SDPA), (("attention", Attention.SDPA),)


def _chunked_loss(setup: FitSetup, usable: int) -> _Applied:
    if setup.training.loss is Loss.CHUNKED:
        return None
    return with_training(setup, loss=Loss.CHUNKED), (("loss", Loss.CHUNKED),)


def _checkpointing(setup: FitSetup, usable: int) -> _Applied:
    if setup.training.checkpointing is Checkpointing.FULL:
        return None
    return (with_training(setup, checkpointing=Checkpointing.FULL),
            (("checkpointing", Checkpointing.FULL),))


_EIGHT_BIT = {Optimizer.ADAMW: Optimizer.ADAMW_8BIT,
              Optimizer.PAGED_ADAMW: Optimizer.PAGED_ADAMW_8BIT}


def _optimizer_8bit(setup: FitSetup, usable: int) -> _Applied:
    target = _EIGHT_BIT.get(setup.training.optimizer)
    if target is None:
        return None
    return with_training(setup, optimizer=target), (("optimizer", target),)


def _micro_batch(setup: FitSetup, usable: int) -> _Applied:
    batch = setup.training.batch
    if batch == 1 or peak_bytes(setup) <= usable:
        return None  # nothing to gain from a smaller micro-batch when the run fits
    smaller = max_micro_batch(setup, usable, below=batch - 1) or 1
    accumulation = ceil_div(batch, smaller)
    changed = with_training(setup, batch=smaller, gradient_accumulation=True)
    return changed, (("batch", smaller), ("grad_accum", accumulation))


def _sharding(setup: FitSetup, usable: int) -> _Applied:
    plan = setup.parallelism
    if plan.data_parallel == 1:
        return None
    options = [s for s in (Scheme.ZERO1, Scheme.ZERO2, Scheme.FSDP, Scheme.ZERO3)
               if s is not plan.scheme]
    candidates = [with_parallelism(setup, s, plan.gpus, Offload.NONE) for s in options]
    best = min(candidates, key=peak_bytes)
    return best, (("sharding", best.parallelism.scheme),)


def _offload_optimizer(setup: FitSetup, usable: int) -> _Applied:
    plan = setup.parallelism
    if plan.offload is not Offload.NONE or plan.scheme in (Scheme.FSDP, Scheme.FSDP_GRAD_OP,
                                                          Scheme.HSDP):
        return None
    scheme = plan.scheme if plan.scheme in (Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3) \
        else Scheme.ZERO2
    changed = with_parallelism(setup, scheme, plan.gpus, Offload.OPTIMIZER)
    return changed, (("sharding", scheme), ("offload", Offload.OPTIMIZER))


def _offload_params(setup: FitSetup, usable: int) -> _Applied:
    plan = setup.parallelism
    if plan.offload is Offload.PARAMS_OPTIMIZER:
        return None
    scheme = plan.scheme if plan.scheme in (Scheme.FSDP, Scheme.HSDP, Scheme.ZERO3) \
        else Scheme.ZERO3
    changed = with_parallelism(setup, scheme, plan.gpus, Offload.PARAMS_OPTIMIZER)
    return changed, (("sharding", scheme), ("offload", Offload.PARAMS_OPTIMIZER))


def _method_field(setup: FitSetup) -> str:
    """The field that says how the weights train: `policy` for a preference or RL method."""
    return "method" if setup.training.alignment is None else "policy"


def _lora(setup: FitSetup, usable: int) -> _Applied:
    if setup.training.method not in (Method.FULL, Method.FREEZE):
        return None
    changed = with_training(setup, method=Method.LORA, lora_rank=LORA_RANK_SUGGESTED,
                             lora_targets=BLOCK_TARGETS)
    return changed, ((_method_field(setup), Method.LORA), ("lora_r", LORA_RANK_SUGGESTED),
                     ("lora_targets", LoraTarget.ALL))


def _qlora(setup: FitSetup, usable: int) -> _Applied:
    training = setup.training
    if training.method is Method.QLORA:
        return None
    rank = training.lora_rank or LORA_RANK_SUGGESTED
    targets = training.lora_targets or BLOCK_TARGETS
    if training.method is not Method.LORA:
        rank, targets = LORA_RANK_SUGGESTED, BLOCK_TARGETS
    changed = with_training(setup, method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=rank,
                             lora_targets=targets)
    return changed, ((_method_field(setup), Method.QLORA), ("quant", Quant.NF4_DQ),
                     ("lora_r", rank))


def _shorter_sequence(setup: FitSetup, usable: int) -> _Applied:
    seq = setup.training.seq_len
    if seq == 1 or peak_bytes(setup) <= usable:
        return None  # truncating data is only worth it to make the run fit
    shorter = max_sequence(setup, usable, below=seq - 1)
    if shorter is None:
        return None
    return with_training(setup, seq_len=shorter), (("seq_len", shorter),)


def _shorter_completion(setup: FitSetup, usable: int) -> _Applied:
    alignment = setup.training.alignment
    if alignment is None or not alignment.method.generates or peak_bytes(setup) <= usable:
        return None
    if alignment.completion_tokens == 1:
        return None
    shorter = max_completion(setup, usable, below=alignment.completion_tokens - 1)
    if shorter is None:
        return None
    return with_completion(setup, shorter), (("completion_len", shorter),)


def _precompute_ref(setup: FitSetup, usable: int) -> _Applied:
    alignment = setup.training.alignment
    if alignment is None or alignment.method not in (Method.DPO, Method.KTO) \
            or alignment.precompute_ref:
        return None
    changed = with_training(setup, alignment=replace(alignment, precompute_ref=True))
    return changed, (("precompute_ref", True),)


def _vllm_sleep(setup: FitSetup, usable: int) -> _Applied:
    alignment = setup.training.alignment
    if alignment is None or alignment.generation is not Generation.VLLM_COLOCATE \
            or alignment.vllm_sleep:
        return None
    changed = with_training(setup, alignment=replace(alignment, vllm_sleep=True))
    return changed, (("vllm_sleep", True),)


def _vllm_share(setup: FitSetup, usable: int) -> _Applied:
    """The smallest share that still holds the engine's 16-bit weights and the KV cache of the
    sequences generated at once (vLLM refuses to start when its KV pool cannot hold one
    sequence of the model's length, and preempts sequences when it cannot hold them all), in
    hundredths."""
    alignment = setup.training.alignment
    if alignment is None or alignment.generation is not Generation.VLLM_COLOCATE \
            or alignment.gpu_memory_bytes is None:
        return None
    needed = engine_bytes_needed(setup.arch, setup.training)
    share = ceil_div(needed * 100, alignment.gpu_memory_bytes) / 100
    if share >= alignment.vllm_share or share >= 1:
        return None
    changed = with_training(setup, alignment=replace(alignment, vllm_share=share))
    return changed, (("vllm_share", share),)


CHANGES: dict[ChangeKind, _ChangeFn] = {
    ChangeKind.ATTENTION_KERNEL: _attention,
    ChangeKind.CHUNKED_LOSS: _chunked_loss,
    ChangeKind.CHECKPOINTING: _checkpointing,
    ChangeKind.OPTIMIZER_8BIT: _optimizer_8bit,
    ChangeKind.MICRO_BATCH: _micro_batch,
    ChangeKind.SHARDING: _sharding,
    ChangeKind.OFFLOAD_OPTIMIZER: _offload_optimizer,
    ChangeKind.OFFLOAD_PARAMS: _offload_params,
    ChangeKind.LORA: _lora,
    ChangeKind.QLORA: _qlora,
    ChangeKind.SHORTER_SEQUENCE: _shorter_sequence,
    ChangeKind.SHORTER_COMPLETION: _shorter_completion,
    ChangeKind.PRECOMPUTE_REF: _precompute_ref,
    ChangeKind.VLLM_SLEEP: _vllm_sleep,
    ChangeKind.VLLM_SHARE: _vllm_share,
}


def single_changes(setup: FitSetup, before_bytes: int, usable_bytes: int,
                   skip: frozenset[ChangeKind] = frozenset()) -> list[Change]:
    """Every applicable change, each estimated by the same core, unranked."""
    found = []
    for kind, apply in CHANGES.items():
        if kind in skip:
            continue
        try:
            result = apply(setup, usable_bytes)
        except VramplanError:
            continue  # a combination the setup does not accept (e.g. quantizing an fp32 base)
        if result is None:
            continue
        changed, settings = result
        after = peak_bytes(changed)
        found.append(Change(kind, changed, settings, after, before_bytes - after,
                            after <= usable_bytes))
    return found


def combined_changes(setup: FitSetup, usable_bytes: int) -> tuple[Change, ...]:
    """Apply the best-ranked change, then the best on the result, until the run fits."""
    steps: list[Change] = []
    current, before = setup, peak_bytes(setup)
    while before > usable_bytes and len(steps) < MAX_COMBINED_STEPS:
        done = frozenset(step.kind for step in steps)
        ranked = rank_changes(single_changes(current, before, usable_bytes, skip=done))
        if not ranked:
            break
        step = ranked[0]
        steps.append(step)
        current, before = step.setup, step.peak_bytes
    return tuple(steps)


def settings_text(settings: tuple[Setting, ...], label: Callable[[str], str] = str,
                  separator: str = "; ") -> str:
    """The settings as `field=value` pairs, each field worded by `label` (`--batch` on the CLI)."""
    return separator.join(label(name) if value is True else f"{label(name)}={_value_text(value)}"
                          for name, value in settings)


def _value_text(value: bool | int | float | StrEnum) -> str:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
