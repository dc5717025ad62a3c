"""The typed result of a training estimate: the step's phases (`Phase`), the parts of memory
in each (`PhaseMemory`), the peak over them (`PeakOverPhases`) and `TrainingEstimate`, whose
`reserved` and `device` figures replay the step's allocations (`vramplan.training.allocations`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from vramplan.allocator import PYTORCH_DEFAULTS, AllocatorConfig
from vramplan.model.architecture import Architecture
from vramplan.parts import Component, PartKind
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.training.activations.head import HeadSpec, LossMemory, fused_loss_rows
from vramplan.training.activations.spec import (
    LITGPT_LM_HEAD_CHUNK,
    Saved,
)
from vramplan.training.allocations.program import StepShape
from vramplan.training.allocations.step import (
    ReservedMemory,
    reserved_memory,
)
from vramplan.training.setup import (
    TrainingSetup,
    allocator_config,
    policy_pass,
)
from vramplan.training.specs import block_spec, head_spec
from vramplan.training.states import (
    ModelStates,
)
from vramplan.vocab import (
    Framework,
    Metric,
)


class Phase(StrEnum):
    """A moment of the training step."""

    LOSS_FORWARD = "loss_forward"
    """The loss has just been computed: every activation, the logits and the saved log-softmax;
    in litgpt's loop the previous micro-batch's graph is still referenced by `loss`."""

    BACKWARD_START = "backward_start"
    """Loss computed, backward starting: activations, logits and loss tensors all alive."""
    BACKWARD_BLOCKS = "backward_blocks"
    """Backward through the last block: its gradient temporaries beside the saved activations."""
    BACKWARD_END = "backward_end"
    """Backward through the first block: every gradient exists, activations are nearly gone (the
    first block's own, recomputed under full checkpointing, and its temporaries remain)."""
    EMBEDDING_BACKWARD = "embedding_backward"
    """Backward through the input embedding, when its weight trains: every other gradient
    exists and the embedding's is being formed (with a tied head, summed with the head's)."""
    OPTIMIZER_STEP = "optimizer_step"
    """The optimizer updates the weights: states, gradients and the step's temporaries."""
    UNIT_REDUCE = "unit_reduce"
    """Sharded training: a block's backward has run and its gradients are reduced (FSDP's
    unit-sized gradients), its saved activations freed."""
    GENERATION = "generation"
    """Preference and RL methods that generate (PPO, GRPO): completions are generated between
    optimizer steps; the gradients are freed, the optimizer states stay."""
    LOG_PROBS = "log_probs"
    """A pass without gradient before the policy's forward: GRPO's old-policy and reference
    log-probabilities, KTO's KL batch."""
    REFERENCE_PASS = "reference_pass"
    """The reference forward of DPO and KTO, while the policy's graph and logits are alive."""
    FIRST_MICRO_BATCH = "first_micro_batch"
    """The run's first micro-batch, where it holds more than later ones: Unsloth's
    checkpointing offloads no block input in its first pass
    (`vramplan.training.setup.first_pass_keeps_inputs`); no gradient or optimizer state exists
    yet. Its largest moment: the loss's forward, backward's start or backward through the last
    block."""
    LATER_MICRO_BATCH = "later_micro_batch"
    """When the largest batch comes first: a later, shorter micro-batch of gradient
    accumulation, counted by what does not depend on its length (the gradients kept from
    earlier micro-batches and the buffers of a backward), a lower bound."""



# --- results ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Part:
    """One named term of a phase, in bytes."""

    kind: PartKind
    memory_bytes: int

    @property
    def component(self) -> Component:
        return self.kind.component


@dataclass(frozen=True)
class PhaseMemory:
    phase: Phase
    parts: tuple[Part, ...]

    @cached_property
    def total_bytes(self) -> int:
        return sum(part.memory_bytes for part in self.parts)

    def by_component(self) -> dict[Component, int]:
        totals: dict[Component, int] = {}
        for part in self.parts:
            totals[part.component] = totals.get(part.component, 0) + part.memory_bytes
        return totals



class PeakOverPhases:
    """The peak of a step over its phases, read in each metric: `allocated` (tensors),
    `reserved` (plus what the caching allocator keeps cached: `allocator_cache_bytes`, from the
    step's program of allocations and frees replayed through `vramplan.allocator`) and `device`
    (plus the CUDA context, what paged optimizers keep resident in unified memory and NCCL's
    communicators).
    For estimates with a `phases` field and a `metric` (the one their setup asks for)."""

    __slots__ = ()
    phases: tuple[PhaseMemory, ...]

    @property
    def metric(self) -> Metric:
        raise NotImplementedError

    @property
    def allocator_cache_bytes(self) -> int:
        """Reserved beyond the allocated peak (block and segment rounding, cached blocks)."""
        raise NotImplementedError

    @property
    def managed_bytes(self) -> int:
        """Memory outside PyTorch's allocator that the device holds (paged optimizer states in
        CUDA unified memory, resident while the GPU has room)."""
        return 0

    @property
    def communicator_bytes(self) -> int:
        """NCCL's communicators, outside PyTorch's allocator (0 on one GPU:
        `vramplan.distributed.communicators`)."""
        return 0

    @property
    def outside_allocator_bytes(self) -> int:
        """What the device holds beyond PyTorch's allocator: the CUDA context, managed memory
        and NCCL's communicators."""
        return CUDA_CONTEXT_BYTES + self.managed_bytes + self.communicator_bytes

    @property
    def peak(self) -> PhaseMemory:
        return max(self.phases, key=lambda phase: phase.total_bytes)

    @property
    def allocated_bytes(self) -> int:
        return self.peak.total_bytes

    @property
    def reserved_bytes(self) -> int:
        return self.allocated_bytes + self.allocator_cache_bytes

    @property
    def device_bytes(self) -> int:
        return self.reserved_bytes + self.outside_allocator_bytes

    def floor_bytes(self, metric: Metric) -> int:
        """`metric_bytes` without the allocator's cache, which is never negative: a lower bound
        that replays nothing (the planner's searches rule a setup out on it)."""
        if metric is Metric.DEVICE:
            return self.allocated_bytes + self.outside_allocator_bytes
        return self.allocated_bytes

    def metric_bytes(self, metric: Metric) -> int:
        """The peak read in `metric`; only `reserved` and `device` replay the allocator."""
        if metric is Metric.ALLOCATED:
            return self.allocated_bytes
        if metric is Metric.RESERVED:
            return self.reserved_bytes
        return self.device_bytes

    @property
    def total_bytes(self) -> int:
        """The peak in the setup's metric (comparable to a measured case)."""
        return self.metric_bytes(self.metric)

@dataclass(frozen=True, slots=True)
class TrainingEstimate(PeakOverPhases):
    """The detailed estimate. `peak` is the phase with the most allocated memory."""

    setup: TrainingSetup
    arch: Architecture
    states: ModelStates
    block_saved: tuple[Saved, ...]
    """What one (non-first) block saves, per token: the activation breakdown by operation."""
    activations_bytes: int
    """All saved activations of the micro-batch (blocks, final norm, head inputs)."""
    loss: LossMemory
    phases: tuple[PhaseMemory, ...]
    metric_overheads: tuple[Part, ...] = field(default=())

    @property
    def metric(self) -> Metric:
        return self.setup.metric

    @property
    def allocator_cache_bytes(self) -> int:
        return reserved_memory_of(self.arch, self.setup, allocator_config(self.setup)).cache_bytes

    @property
    def managed_bytes(self) -> int:
        return self.states.managed_optimizer_bytes


def reserved_memory_of(arch: Architecture, setup: TrainingSetup,
                       config: AllocatorConfig = PYTORCH_DEFAULTS) -> ReservedMemory:
    """The step of `setup` through the simulated caching allocator
    (`vramplan.training.allocations`). For a preference or RL method, the policy's training
    pass (`policy_pass`): its other passes and models are not in the program."""
    setup = policy_pass(setup)
    return reserved_memory(arch, setup, step_shape(arch, setup), config=config)


def _loss_rows(arch: Architecture, setup: TrainingSetup, head: HeadSpec) -> int:
    """Rows of logits computed at once: all tokens, or a chunk (litgpt's 128-token head chunks
    in its LoRA scripts; a fused linear cross-entropy's chunk, Unsloth's
    (`HeadSpec.fused_rows`) or `fused_loss_rows`)."""
    tokens = setup.logit_tokens
    if not head.chunked:
        return tokens
    if setup.framework is Framework.LITGPT:
        return min(LITGPT_LM_HEAD_CHUNK, setup.seq_len) * setup.batch
    return head.fused_rows or fused_loss_rows(tokens, arch.vocab_size, arch.hidden_size)


def step_shape(arch: Architecture, setup: TrainingSetup) -> StepShape:
    """What the step program (`vramplan.training.allocations`) needs from the analytic model."""
    head = head_spec(arch, setup)
    return StepShape(spec=block_spec(arch, setup), loss_rows=_loss_rows(arch, setup, head),
                     fused_loss=head.fused_linear, head_grad_bytes=head.head_grad_bytes)
