"""What a trace measured: typed, torch-free, serialized by `vramplan.serialize.trace_to_json`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vramplan.parts import Component, PartKind
from vramplan.tracer.setup import TraceSetup

TRACED_PARTS = (
    PartKind.TRAINABLE_WEIGHTS,
    PartKind.FROZEN_WEIGHTS,
    PartKind.REFERENCE_WEIGHTS,
    PartKind.GRADIENTS,
    PartKind.MASTER_WEIGHTS,
    PartKind.OPTIMIZER_STATES,
    PartKind.ACTIVATIONS,
    PartKind.TEMPORARIES,
)
"""What a live allocation of a traced step holds, in order of precedence (an earlier part wins:
a weight saved for backward stays a weight). Frozen weights include buffers and 4-bit base
weights with their quantization constants; reference weights are the frozen copy of a DPO or GRPO
reference model (listed only when the step has one); optimizer states include step counters;
activations are every tensor autograd saved for backward, checkpoint inputs included."""


class Phase(StrEnum):
    """A phase of the training step, in order."""

    LOG_PROBS = "log_probs"
    """GRPO: the reference's log-probabilities without gradient, before the policy's forward."""
    FORWARD = "forward"
    LOSS = "loss"
    REFERENCE_PASS = "reference_pass"
    """DPO: the reference forward and its log-probabilities without gradient, while the
    policy's graph and logits are alive."""
    BACKWARD = "backward"
    OPTIMIZER_STEP = "optimizer_step"
    ZERO_GRAD = "zero_grad"


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Live bytes per traced part at one instant; the parts sum to `total_bytes`."""

    bytes_by_part: tuple[tuple[PartKind, int], ...]

    @property
    def total_bytes(self) -> int:
        return sum(n for _, n in self.bytes_by_part)

    def __getitem__(self, part: PartKind) -> int:
        return dict(self.bytes_by_part)[part]

    def by_component(self) -> dict[Component, int]:
        """The same bytes grouped as the estimator's components."""
        grouped: dict[Component, int] = {}
        for part, n_bytes in self.bytes_by_part:
            grouped[part.component] = grouped.get(part.component, 0) + n_bytes
        return grouped


@dataclass(frozen=True, slots=True)
class PhasePeak:
    """The highest live memory within one phase of the reported step, and what it held."""

    phase: Phase
    peak_bytes: int
    breakdown: Breakdown


@dataclass(frozen=True, slots=True)
class CudaPeaks:
    """torch.cuda's own counters for the same step run for real (`--device cuda`)."""

    device_name: str
    max_allocated_bytes: int
    max_reserved_bytes: int


@dataclass(frozen=True, slots=True)
class AllocatorPeaks:
    """The traced step's allocations and frees replayed through the simulated CUDA caching
    allocator (`vramplan.allocator`), over the reported step (peaks reset before it, as
    `torch.cuda.reset_peak_memory_stats()` does; the cache kept from step 1 counts)."""

    allocated_peak_bytes: int
    """`max_memory_allocated`: block sizes, with the remainders the allocator does not split."""
    reserved_peak_bytes: int
    """`max_memory_reserved`: the segments held from the driver."""
    cached_at_peak_bytes: int
    """Reserved but unallocated when reserved peaked: the cache and its fragmentation."""
    num_alloc_retries: int
    """Times the cache was freed to retry a failed segment allocation (with a capacity)."""

    @property
    def fragmentation(self) -> float:
        """Share of the reserved peak not allocated at that moment."""
        return self.cached_at_peak_bytes / self.reserved_peak_bytes \
            if self.reserved_peak_bytes else 0.0


@dataclass(frozen=True, slots=True)
class TraceResult:
    """The second of two training steps, counted allocation by allocation.

    Bytes are allocated tensor storage, each allocation rounded up to 512 bytes as the CUDA caching
    allocator does; no CUDA context, library workspaces or fragmentation (see docs/trace.md).
    """

    setup: TraceSetup
    params_total: int
    params_trainable: int
    peak_bytes: int
    peak_phase: Phase
    breakdown: Breakdown
    phases: tuple[PhasePeak, ...]
    paged_bytes: int
    """Optimizer state in CUDA managed memory (paged optimizers): outside the peak."""
    emulated: tuple[str, ...]
    """What was emulated instead of run (bitsandbytes storage), in plain words."""
    versions: tuple[tuple[str, str], ...]
    """(package, version) of torch, transformers and peft that ran the step."""
    real: bool = False
    """True when the step ran on real tensors (not fake ones)."""
    cuda: CudaPeaks | None = None
    allocator: AllocatorPeaks | None = None
    """The same step through the simulated caching allocator: reserved memory."""
    not_traced: tuple[str, ...] = ()
    """What the method runs that the trace does not (GRPO's generation), in plain words."""

    def phase(self, phase: Phase) -> PhasePeak:
        return next(p for p in self.phases if p.phase is phase)
