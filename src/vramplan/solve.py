"""Will it fit, and what to change: verdicts with a safety margin, inverse solving, and a ranked
list of changes that make a run fit, each computed by the same estimate as the run itself.

Pure: the functions take an estimate function (setup -> peak bytes per GPU) and typed setups;
no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from vramplan.inputs import NumberField
from vramplan.presets.gpus import Gpu

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
