"""Will it fit, and what to change: verdicts with a safety margin, inverse solving, and a ranked
list of changes that make a run fit, each computed by the same estimate as the run itself.

Pure: the functions take an estimate function (setup -> peak bytes per GPU) and typed setups;
no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Generic, TypeVar

from vramplan.bounds import NumberField
from vramplan.distributed.per_gpu import PerGpuEstimate, default_parallelism, estimate_per_gpu
from vramplan.distributed.sharding import Offload, Parallelism, Scheme
from vramplan.errors import VramplanError
from vramplan.model.architecture import Architecture
from vramplan.model.lora_targets import BLOCK_TARGETS
from vramplan.presets.gpus import Gpu
from vramplan.training.estimate import TrainingSetup
from vramplan.units import ceil_div
from vramplan.vocab import Attention, Checkpointing, Loss, Method, Optimizer, Quant

S = TypeVar("S")

DEFAULT_USABLE_SHARE = 0.80
"""Plan to use at most 80% of a GPU's memory: over 454 training runs on A100 and H100, "when the
estimated memory usage is below 80% of the available GPU memory, the training never encounters
out-of-memory errors" (Fujii, Watanabe & Yokota 2024, "Accelerating Large Language Model Training
with 4D Parallelism and Memory Consumption Estimator", arXiv:2411.06465, abstract)."""

USABLE_SHARE = NumberField("margin", minimum=0, maximum=100)
"""The usable share of a GPU's memory, in percent (CLI `--margin 80`; 100 = no margin)."""


@dataclass(frozen=True, slots=True)
class FitVerdict:
    """How a per-GPU peak compares with one GPU type, with the safety margin applied."""

    gpu: Gpu
    peak_bytes: int
    usable_share: float = DEFAULT_USABLE_SHARE
    """Share of the capacity the plan may use (0.8 = keep 20% free)."""

    @property
    def capacity_bytes(self) -> int:
        return self.gpu.capacity_bytes

    @property
    def usable_bytes(self) -> int:
        """The capacity times the usable share, rounded down."""
        return int(self.gpu.capacity_bytes * self.usable_share)

    @property
    def fits(self) -> bool:
        """The peak stays within the usable share."""
        return self.peak_bytes <= self.usable_bytes

    @property
    def fits_at_capacity(self) -> bool:
        """The peak stays within the whole capacity (no margin): may still run out of memory."""
        return self.peak_bytes <= self.gpu.capacity_bytes

    @property
    def headroom_bytes(self) -> int:
        """Usable bytes left (positive) or missing (negative)."""
        return self.usable_bytes - self.peak_bytes

    @property
    def usage_share(self) -> float:
        """Peak as a share of the whole capacity."""
        return self.peak_bytes / self.gpu.capacity_bytes


def usable_share_from_percent(percent: float) -> float:
    """A checked percentage (`--margin 80`) as a share (0.8)."""
    return USABLE_SHARE.check(percent) / 100


# --- Inverse solving over one integer knob ----------------------------------------------------


def largest_fitting(peak_at: Callable[[int], int], usable_bytes: int, low: int,
                    high: int) -> int | None:
    """The largest value v in [low, high] with peak_at(v) <= usable_bytes, for a peak that never
    decreases as v grows (micro-batch, sequence length); None when even `low` does not fit.
    Binary search: O(log(high - low)) estimates."""
    if peak_at(low) > usable_bytes:
        return None
    lo, hi = low, high
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if peak_at(mid) <= usable_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def smallest_fitting(peak_at: Callable[[int], int], usable_bytes: int, low: int,
                     high: int) -> int | None:
    """The smallest value v in [low, high] with peak_at(v) <= usable_bytes, for a peak that never
    increases as v grows (GPU count under sharding); None when even `high` does not fit."""
    if peak_at(high) > usable_bytes:
        return None
    lo, hi = low, high
    while lo < hi:
        mid = (lo + hi) // 2
        if peak_at(mid) <= usable_bytes:
            hi = mid
        else:
            lo = mid + 1
    return lo


# --- What a change costs: data, with sources ----------------------------------------------------


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
}

_QUALITY_ORDER = tuple(QualityCost)
_SPEED_ORDER = (SpeedCost.FASTER, SpeedCost.NONE, SpeedCost.SMALL, SpeedCost.MODERATE,
                SpeedCost.LARGE)


@dataclass(frozen=True, slots=True)
class Change(Generic[S]):
    """One change applied to a setup, with its effect computed by the estimate."""

    kind: ChangeKind
    setup: S
    """The setup after the change."""
    detail: str
    """What exactly changes, as `field=value` pairs (`batch=2, accumulation=x4`)."""
    peak_bytes: int
    saved_bytes: int
    """Peak before minus peak after (negative: the change costs memory)."""
    fits: bool

    @property
    def cost(self) -> ChangeCost:
        return CHANGE_COSTS[self.kind]


def rank_key(change: Change[S]) -> tuple[int, int, int, int]:
    """Changes that make the run fit first; then the smallest quality cost, the smallest speed
    cost, and the most memory saved."""
    cost = change.cost
    return (0 if change.fits else 1, _QUALITY_ORDER.index(cost.quality),
            _SPEED_ORDER.index(cost.speed), -change.saved_bytes)


def rank_changes(changes: list[Change[S]]) -> list[Change[S]]:
    """Only changes that save memory, best first (see `rank_key`)."""
    return sorted((c for c in changes if c.saved_bytes > 0), key=rank_key)


# --- A training setup on GPUs: the report behind `vramplan fit` -----------------------------------

MAX_BATCH = 4096
"""Upper end of the micro-batch search."""
MAX_GPUS = 4096
"""Upper end of the GPU-count search."""
MAX_COMBINED_STEPS = 8
"""Most changes chained by `combined_changes` (each of the 11 kinds applies at most once): a bound
on the loop, not a physical figure."""

LORA_RANK_SUGGESTED = 16
"""The rank suggested when switching to LoRA/QLoRA, on every linear layer of the blocks, as the
QLoRA paper recommends ("LoRA on all linear transformer block layers are required to match full
finetuning performance", Dettmers et al. 2023, arXiv:2305.14314, section 4)."""


@dataclass(frozen=True, slots=True)
class FitSetup:
    """A model, a training setup and how it spreads over GPUs."""

    arch: Architecture
    training: TrainingSetup
    parallelism: Parallelism
    model: str = ""
    """The model's registry name, for display."""


def estimate_fit_setup(setup: FitSetup) -> PerGpuEstimate:
    return estimate_per_gpu(setup.arch, setup.training, setup.parallelism)


def peak_bytes(setup: FitSetup) -> int:
    """The per-GPU peak in the setup's metric."""
    return estimate_fit_setup(setup).total_bytes


@dataclass(frozen=True, slots=True)
class SchemeAnswer:
    """The fewest GPUs for one scheme (None: no count up to MAX_GPUS fits)."""

    scheme: Scheme
    offload: Offload
    gpus: int | None
    peak_bytes: int | None


@dataclass(frozen=True, slots=True)
class FitReport:
    """Everything `vramplan fit` says about one setup and one GPU type."""

    setup: FitSetup
    estimate: PerGpuEstimate
    verdict: FitVerdict
    max_batch: int | None
    """Largest micro-batch that fits (None: not even 1)."""
    max_seq_len: int | None
    """Longest sequence that fits, up to the model's context (None: not even 1 token)."""
    fewest_gpus: tuple[SchemeAnswer, ...]
    cheapest: SchemeAnswer | None
    """Fewest GPUs of this type over every scheme, then the simplest scheme."""
    changes: tuple[Change[FitSetup], ...]
    """Single changes that save memory, ranked (see `rank_key`)."""
    combined: tuple[Change[FitSetup], ...]
    """Changes applied one after the other, cheapest first, until the run fits (empty when it
    already fits); each entry's peak is after all the changes so far."""


_SCHEME_CANDIDATES = (
    (Scheme.NONE, Offload.NONE), (Scheme.ZERO1, Offload.NONE), (Scheme.ZERO2, Offload.NONE),
    (Scheme.FSDP_GRAD_OP, Offload.NONE), (Scheme.FSDP, Offload.NONE), (Scheme.ZERO3, Offload.NONE),
    (Scheme.ZERO2, Offload.OPTIMIZER), (Scheme.ZERO3, Offload.OPTIMIZER),
    (Scheme.ZERO3, Offload.PARAMS_OPTIMIZER),
)
"""In order of simplicity and speed: the tie-break of the cheapest combination."""


def fit_report(setup: FitSetup, gpu: Gpu,
               usable_share: float = DEFAULT_USABLE_SHARE) -> FitReport:
    """Verdict, inverse solving and changes for `setup` on GPUs of type `gpu`."""
    estimate = estimate_fit_setup(setup)
    verdict = FitVerdict(gpu, estimate.total_bytes, usable_share)
    usable = verdict.usable_bytes
    answers = tuple(fewest_gpus(setup, scheme, offload, usable)
                    for scheme, offload in _SCHEME_CANDIDATES)
    fitting = [a for a in answers if a.gpus is not None]
    cheapest = min(fitting, key=lambda a: (a.gpus or 0, answers.index(a))) if fitting else None
    changes = tuple(rank_changes(single_changes(setup, estimate.total_bytes, usable)))
    return FitReport(
        setup=setup, estimate=estimate, verdict=verdict,
        max_batch=max_micro_batch(setup, usable),
        max_seq_len=max_sequence(setup, usable),
        fewest_gpus=answers, cheapest=cheapest, changes=changes,
        combined=() if verdict.fits else combined_changes(setup, usable),
    )


def _with_training(setup: FitSetup, **fields: object) -> FitSetup:
    return replace(setup, training=replace(setup.training, **fields))  # type: ignore[arg-type]


def _with_parallelism(setup: FitSetup, scheme: Scheme, gpus: int,
                      offload: Offload) -> FitSetup:
    """`setup` on `gpus` GPUs with `scheme`, keeping its tensor and pipeline parallelism."""
    current = setup.parallelism
    plan = default_parallelism(setup.training, scheme, gpus, offload, current.gpus_per_node,
                               tensor_parallel=current.tensor_parallel,
                               pipeline_parallel=current.pipeline_parallel)
    return replace(setup, parallelism=plan)


def max_micro_batch(setup: FitSetup, usable_bytes: int, below: int = MAX_BATCH) -> int | None:
    """Largest micro-batch in [1, below] that fits."""
    return largest_fitting(lambda b: peak_bytes(_with_training(setup, batch=b)), usable_bytes,
                           1, below)


def max_sequence(setup: FitSetup, usable_bytes: int, below: int | None = None) -> int | None:
    """Longest sequence in [1, below] that fits (default: the model's context length)."""
    high = below if below is not None else setup.arch.max_position_embeddings
    return largest_fitting(lambda n: peak_bytes(_with_training(setup, seq_len=n)), usable_bytes,
                           1, high)


def fewest_gpus(setup: FitSetup, scheme: Scheme, offload: Offload,
                usable_bytes: int) -> SchemeAnswer:
    """Fewest GPUs for `scheme` with `offload`, keeping the tensor and pipeline parallelism: the
    search runs over copies of the model (per-GPU memory never grows with more copies under
    sharding, a property test checks it; without sharding one copy is the only meaningful one)."""
    model_parallel = setup.parallelism.model_parallel

    def peak_at(copies: int) -> int:
        return peak_bytes(_with_parallelism(setup, scheme, copies * model_parallel, offload))

    high = 1 if scheme is Scheme.NONE else max(MAX_GPUS // model_parallel, 1)
    copies = smallest_fitting(peak_at, usable_bytes, 1, high)
    if copies is None:
        return SchemeAnswer(scheme, offload, None, None)
    return SchemeAnswer(scheme, offload, copies * model_parallel, peak_at(copies))


# --- the changes --------------------------------------------------------------------------------

_ChangeFn = Callable[[FitSetup, int], "tuple[FitSetup, str] | None"]


def _attention(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    if setup.training.attention is not Attention.EAGER:
        return None
    return _with_training(setup, attention=Attention.SDPA), "attention=sdpa"


def _chunked_loss(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    if setup.training.loss is Loss.CHUNKED:
        return None
    return _with_training(setup, loss=Loss.CHUNKED), "loss=chunked"


def _checkpointing(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    if setup.training.checkpointing is Checkpointing.FULL:
        return None
    return _with_training(setup, checkpointing=Checkpointing.FULL), "checkpointing=full"


_EIGHT_BIT = {Optimizer.ADAMW: Optimizer.ADAMW_8BIT,
              Optimizer.PAGED_ADAMW: Optimizer.PAGED_ADAMW_8BIT}


def _optimizer_8bit(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    target = _EIGHT_BIT.get(setup.training.optimizer)
    if target is None:
        return None
    return _with_training(setup, optimizer=target), f"optimizer={target.value}"


def _micro_batch(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    batch = setup.training.batch
    if batch == 1 or peak_bytes(setup) <= usable:
        return None  # nothing to gain from a smaller micro-batch when the run fits
    smaller = max_micro_batch(setup, usable, below=batch - 1) or 1
    accumulation = ceil_div(batch, smaller)
    changed = _with_training(setup, batch=smaller, gradient_accumulation=True)
    return changed, f"batch={smaller}; gradient_accumulation=x{accumulation}"


def _sharding(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    plan = setup.parallelism
    if plan.data_parallel == 1:
        return None
    options = [s for s in (Scheme.ZERO1, Scheme.ZERO2, Scheme.FSDP, Scheme.ZERO3)
               if s is not plan.scheme]
    candidates = [_with_parallelism(setup, s, plan.gpus, Offload.NONE) for s in options]
    best = min(candidates, key=peak_bytes)
    return best, f"sharding={best.parallelism.scheme.value}"


def _offload_optimizer(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    plan = setup.parallelism
    if plan.offload is not Offload.NONE or plan.scheme in (Scheme.FSDP, Scheme.FSDP_GRAD_OP,
                                                          Scheme.HSDP):
        return None
    scheme = plan.scheme if plan.scheme in (Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3) \
        else Scheme.ZERO2
    changed = _with_parallelism(setup, scheme, plan.gpus, Offload.OPTIMIZER)
    return changed, f"sharding={scheme.value}; offload={Offload.OPTIMIZER.value}"


def _offload_params(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    plan = setup.parallelism
    if plan.offload is Offload.PARAMS_OPTIMIZER:
        return None
    scheme = plan.scheme if plan.scheme in (Scheme.FSDP, Scheme.HSDP, Scheme.ZERO3) \
        else Scheme.ZERO3
    changed = _with_parallelism(setup, scheme, plan.gpus, Offload.PARAMS_OPTIMIZER)
    return changed, f"sharding={scheme.value}; offload={Offload.PARAMS_OPTIMIZER.value}"


def _lora(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    if setup.training.method not in (Method.FULL, Method.FREEZE):
        return None
    changed = _with_training(setup, method=Method.LORA, lora_rank=LORA_RANK_SUGGESTED,
                             lora_targets=BLOCK_TARGETS)
    return changed, f"method=lora; lora_r={LORA_RANK_SUGGESTED}; lora_targets=all"


def _qlora(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    training = setup.training
    if training.method is Method.QLORA:
        return None
    rank = training.lora_rank or LORA_RANK_SUGGESTED
    targets = training.lora_targets or BLOCK_TARGETS
    if training.method is not Method.LORA:
        rank, targets = LORA_RANK_SUGGESTED, BLOCK_TARGETS
    changed = _with_training(setup, method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=rank,
                             lora_targets=targets)
    return changed, f"method=qlora; quant={Quant.NF4_DQ.value}; lora_r={rank}"


def _shorter_sequence(setup: FitSetup, usable: int) -> tuple[FitSetup, str] | None:
    seq = setup.training.seq_len
    if seq == 1 or peak_bytes(setup) <= usable:
        return None  # truncating data is only worth it to make the run fit
    shorter = max_sequence(setup, usable, below=seq - 1)
    if shorter is None:
        return None
    return _with_training(setup, seq_len=shorter), f"seq_len={shorter}"


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
}


def single_changes(setup: FitSetup, before_bytes: int, usable_bytes: int,
                   skip: frozenset[ChangeKind] = frozenset()) -> list[Change[FitSetup]]:
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
        changed, detail = result
        after = peak_bytes(changed)
        found.append(Change(kind, changed, detail, after, before_bytes - after,
                            after <= usable_bytes))
    return found


def combined_changes(setup: FitSetup, usable_bytes: int) -> tuple[Change[FitSetup], ...]:
    """Apply the best-ranked change, then the best on the result, until the run fits."""
    steps: list[Change[FitSetup]] = []
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
