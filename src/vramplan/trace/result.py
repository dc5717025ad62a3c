"""What a trace measured: typed, torch-free, serialized by `vramplan.serialize.trace_to_json`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vramplan.parts import Component
from vramplan.trace.setup import TraceSetup


class Category(StrEnum):
    """What a live allocation holds. Each maps onto one estimator `Component`."""

    WEIGHTS_TRAINABLE = "weights_trainable"
    """Parameters that receive gradients."""
    WEIGHTS_FROZEN = "weights_frozen"
    """Frozen parameters, buffers, and 4-bit base weights with their quantization constants."""
    GRADIENTS = "gradients"
    """`.grad` of trainable weights (and the fp32 gradients of master copies)."""
    MASTER_WEIGHTS = "master_weights"
    """fp32 master copies of 16-bit trainable weights (precision `mixed`)."""
    OPTIMIZER_STATES = "optimizer_states"
    """Optimizer state tensors, step counters included."""
    SAVED_ACTIVATIONS = "saved_activations"
    """Tensors autograd saved in forward for backward (checkpoint inputs included)."""
    TEMPORARIES = "temporaries"
    """Everything else live: the batch, outputs in flight, kernels' intermediate results."""

    @property
    def component(self) -> Component:
        return _COMPONENTS[self]


_COMPONENTS = {
    Category.WEIGHTS_TRAINABLE: Component.WEIGHTS,
    Category.WEIGHTS_FROZEN: Component.WEIGHTS,
    Category.GRADIENTS: Component.GRADIENTS,
    Category.MASTER_WEIGHTS: Component.MASTER_WEIGHTS,
    Category.OPTIMIZER_STATES: Component.OPTIMIZER_STATES,
    Category.SAVED_ACTIVATIONS: Component.ACTIVATIONS,
    Category.TEMPORARIES: Component.ACTIVATIONS,
}


class Phase(StrEnum):
    """A phase of the training step, in order."""

    FORWARD = "forward"
    LOSS = "loss"
    BACKWARD = "backward"
    OPTIMIZER_STEP = "optimizer_step"
    ZERO_GRAD = "zero_grad"


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Live bytes per category at one instant; the categories sum to `total_bytes`."""

    bytes_by_category: tuple[tuple[Category, int], ...]

    @property
    def total_bytes(self) -> int:
        return sum(n for _, n in self.bytes_by_category)

    def __getitem__(self, category: Category) -> int:
        return dict(self.bytes_by_category)[category]

    def by_component(self) -> dict[Component, int]:
        """The same bytes grouped as the estimator's components."""
        grouped: dict[Component, int] = {}
        for category, n_bytes in self.bytes_by_category:
            grouped[category.component] = grouped.get(category.component, 0) + n_bytes
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

    def phase(self, phase: Phase) -> PhasePeak:
        return next(p for p in self.phases if p.phase is phase)
