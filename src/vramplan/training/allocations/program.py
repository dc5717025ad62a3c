"""The program a training step is written as (`StepProgram`, a `vramplan.allocator.Program`),
what persists across its steps (`PersistentState`), how the step is sharded over GPUs
(`Sharding`) and its shape (`StepShape`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from vramplan.allocator import K_SMALL_SIZE, Program
from vramplan.model.architecture import Architecture
from vramplan.training.activations.spec import BlockSpec
from vramplan.training.allocations.tensors import (
    ParamTensor,
    block_kinds,
    outer_tensors,
    trained_blocks,
)
from vramplan.training.setup import TrainingSetup
from vramplan.units import ceil_div

GATHER_STREAM = 1
"""FSDP gathers parameters on a stream of its own (FSDP1 `_unshard_stream`,
torch/distributed/fsdp/_runtime_utils.py `_init_streams`; FSDP2 `all_gather_stream`,
_fully_shard/_fsdp_param_group.py `FSDPCommContext`): the caching allocator keeps its blocks
apart from the default stream's."""
REDUCE_STREAM = 2
"""FSDP reduce-scatters gradients on a third stream (`_post_backward_stream`,
`reduce_scatter_stream`)."""
PRE_UNSHARD_STREAM = 3
"""FSDP1 copies a CPU-offloaded shard to the GPU on a fourth stream before gathering it
(`_pre_unshard_stream`, torch/distributed/fsdp/_runtime_utils.py @01caf79e `_unshard`)."""


class StepTensors(Enum):
    """What a sharded run's optimizer steps (`optimizer_step`)."""

    MODEL = "model"
    """This GPU's share of each of the model's tensors, with their shapes."""
    SHARDS = "shards"
    """A 1-D shard of each tensor (ColossalAI's ZeRO: `vramplan.distributed.sharding.
    steps_1d_tensors`)."""
    PARTITION = "partition"
    """This GPU's partition as one flat tensor (DeepSpeed's ZeRO-1/2:
    `vramplan.distributed.sharding.steps_flat_partition`; ZeRO-3 steps its sub-groups,
    `_sub_group_step`)."""


@dataclass(frozen=True, slots=True)
class Sharding:
    """How one GPU of a data-parallel run holds and moves the model states (built by
    `vramplan.distributed.per_gpu` from the sharding model). Divisors: 1 keeps a tensor whole,
    N splits it over N GPUs, 0 puts it in host memory."""

    weights: int = 1
    gradients: int = 1
    states: int = 1
    """Optimizer states and fp32 masters."""
    flat_units: bool = False
    """FSDP1: the shards of a unit's parameters are one flat tensor."""
    copy_out: bool = False
    """FSDP2: a unit's all-gather writes one flat output on the gather stream, which is then
    copied out into the unsharded parameters on the default stream (`_gather`)."""
    gather_bytes: int = 0
    """A block's gathered parameters, allocated on `GATHER_STREAM` for its forward and its
    backward, freed after (the next block's gather is issued first: one unit prefetched)."""
    keep_gathered: bool = False
    """Gathered blocks stay from forward to backward (SHARD_GRAD_OP, ZeRO-1/2: no gather)."""
    pinned_by_autograd: bool = False
    """ZeRO-3 on a model built outside `zero.Init`: each block's gathered weights, which its
    linears saved for backward, stay alive after the coordinator releases them, until the
    block's backward has run, where the coordinator gathers the block again
    (`vramplan.distributed.zero3_run._PinnedByAutograd`); not under checkpointing, whose forward
    saves nothing."""
    prefetch_late: bool = False
    """In backward, the block before is gathered when a block's backward has run, not when it
    starts (FSDP1 with each adapter a unit: `vramplan.distributed.fsdp.prefetches_late`)."""
    root_gathered_bytes: int = 0
    """The root unit (embeddings, head), gathered from forward to the end of backward."""
    unit_grad_bytes: int = 0
    """A block's unsharded gradient while it is formed and reduce-scattered."""
    unit_grad_shard_bytes: int = 0
    """The block's gradient shard this GPU keeps, made on `REDUCE_STREAM` in the sharded
    parameters' dtype (the unsharded gradient is in the gathered copies')."""
    persistent_bytes: tuple[int, ...] = ()
    """Buffers allocated once and kept (DDP's gradient buckets, ZeRO-3's bucket)."""
    adapter_units: bool = False
    """FSDP1: each LoRA adapter matrix is a unit of its own, wrapped before its block (peft's
    `fsdp_auto_wrap_policy`)."""
    sync_bucket_bytes: int = 0
    """FSDP1 `sync_module_states=True`: each unit's parameters are broadcast from rank 0 as it is
    wrapped, flattened into buckets of up to this many bytes (`FSDP1_SYNC_BUCKET_BYTES`); 0: no
    broadcast."""
    step_group_elements: int | None = None
    """DeepSpeed ZeRO-3: the gradient partition is one flat buffer allocated with the optimizer
    and kept; masters and optimizer states are flat per sub-group of this many elements, and
    the step runs sub-group by sub-group (deepspeed/runtime/zero/stage3.py @38327e07
    `_setup_for_real_optimizer`, `_create_fp16_sub_groups`, `step`). None: tensor by tensor."""
    step_tensors: StepTensors = StepTensors.MODEL
    """What the optimizer steps (ZeRO-1/2)."""
    zero_init_buffer: bool = False
    """DeepSpeed's ZeRO optimizer allocates an fp32 gradient buffer at construction and frees it
    (`_zero_init_buffer`); its states are made at the first step, as torch.optim's are."""
    whole_at_init: bool = False
    """Every parameter tensor is on this GPU whole before ZeRO-3 offloads its partition, and
    nothing empties the cache after (`_moved_whole_then_offloaded`)."""
    tensor_parallel: int = 1
    """Megatron-LM's tensor parallelism: the shapes of the weights one GPU holds, which its
    cached dummy weight gradients take (`vramplan.training.dummy_wgrads`)."""
    param_buffer_ranks: int = 0
    """Megatron-LM's distributed optimizer over this many data-parallel ranks: the parameters
    are copied into one flat buffer and this rank's masters and states are pieces of its
    buckets (`megatron_buffers`); 0: no distributed optimizer."""
    bucket_elements: int | None = None
    """Megatron-LM's bucket size in elements (`DistributedDataParallelConfig.bucket_size`);
    None: the whole buffer is one bucket."""
    backward_bucket_bytes: int = 0
    """DeepSpeed ZeRO-1/2's gradient bucket, made whole by its optimizer's `backward()` before
    the loss's backward and freed by the epilogue at the end of backward
    (`vramplan.distributed.parallelism.ShardedStates.backward_bucket_bytes`); 0: none."""
    zero3_bucket_elements: int = 0
    """DeepSpeed ZeRO-3 with its gradient partition on the GPU: `reduce_bucket_size`, the
    elements its gradient bucket holds before it is reduced (`_zero3_gradients`); 0: another
    scheme."""


WHOLE = Sharding()


class StepProgram(Program):
    """A step's program (`vramplan.allocator.Program`), with the FSDP2 all-gather output still
    waiting for the next unit's copy-out (`_gather`)."""

    def __init__(self, backward_bucket_bytes: int = 0) -> None:
        super().__init__()
        self.gather_output: int | None = None
        """FSDP2's last flat all-gather output, freed by the next unit's copy-out."""
        self.reduce_scatter_input: int | None = None
        """FSDP2's last reduce-scatter input, freed by the next unit's post-backward."""
        self.backward_bucket_bytes = backward_bucket_bytes
        """ZeRO-1/2's gradient bucket, made when backward starts (`backward_begins`)."""
        self.backward_bucket: int | None = None

    def backward_begins(self) -> None:
        """The loss's forward is done and its backward about to run: DeepSpeed's ZeRO-1/2
        optimizer makes its gradient bucket here (`Sharding.backward_bucket_bytes`), freed at
        the end of backward (`_end_of_backward`)."""
        if self.backward_bucket_bytes and self.backward_bucket is None:
            self.backward_bucket = self.alloc(self.backward_bucket_bytes)


@dataclass(slots=True)
class _Bucket:
    """What ZeRO-3's gradient bucket holds (`_zero3_gradients`)."""

    elements: int = 0
    n_bytes: int = 0
    outside: list[int] = field(default_factory=list)
    """Gradients too large for the bucket, kept as autograd made them until it is reduced."""


@dataclass(slots=True)
class PersistentState:
    """What persists across steps: parameter tensors, gradients, masters and states by id."""

    params: tuple[ParamTensor, ...]
    sharding: Sharding
    grads: dict[int, tuple[int, int]]
    """Gradient id and bytes, by parameter index (or -1 - block for a unit's shard)."""
    states: list[int]
    masters: list[int]
    flat_grads: int | None = None
    """ZeRO-3's flat gradient partition (`Sharding.step_group_elements`) or Megatron-LM's
    gradient buffer: gradients land in it."""
    dummy_wgrads: tuple[int, ...] = ()
    """Megatron-LM's cached dummy weight gradients still to be made, by the first backward."""
    reload_buffers: tuple[int, ...] = ()
    """Unsloth's buffers that offloaded checkpoints come back into, made by the first forward
    that offloads (`_Sizes.reload_buffers`)."""
    micro_batches: int = 0
    """Micro-batches run so far."""
    zero3: Zero3Gradients | None = None
    """ZeRO-3's gradients, parameter by parameter (`Sharding.zero3_bucket_elements`)."""
    bucket: _Bucket = field(default_factory=_Bucket)
    """ZeRO-3's gradient bucket, not yet reduced."""
    kept_logits: int | None = None
    """The logits the model returned for the last micro-batch, which a loop that keeps the
    model's outputs still holds (`vramplan.training.setup.loop_keeps_logits`)."""


@dataclass(frozen=True, slots=True)
class Zero3Gradients:
    """The trainable parameter tensors one by one, in the order backward makes their gradients
    (a block's in reverse module order): ZeRO-3 handles each parameter's gradient on its own
    (`_zero3_gradients`), where the program's merged tensors (`by_lifetime`) would make one
    gradient of a whole block."""

    head: tuple[ParamTensor, ...]
    """After the blocks (final norm, an untied head): the start of backward."""
    blocks: tuple[tuple[ParamTensor, ...], ...]
    embeddings: tuple[ParamTensor, ...]
    """Before the blocks (a tied head's too): the end of backward."""
    divisor: int
    """The GPUs a gradient is partitioned over."""

    @staticmethod
    def of(arch: Architecture, setup: TrainingSetup, divisor: int) -> Zero3Gradients:
        before, after = outer_tensors(arch, setup)
        kinds = {kind: tuple(t for t in reversed(tensors) if t.trainable)
                 for kind, tensors in block_kinds(arch, setup).items()}
        return Zero3Gradients(
            head=tuple(t for t in reversed(after) if t.trainable),
            blocks=tuple(kinds[trains, arch.layer_is_moe(block)]
                         for block, trains in enumerate(trained_blocks(arch, setup))),
            embeddings=tuple(t for t in reversed(before) if t.trainable),
            divisor=divisor)

    def partitions(self) -> Iterator[int]:
        """The elements of this GPU's partition of each trainable parameter's gradient, in
        module order."""
        for tensors in (self.embeddings, *self.blocks, self.head):
            for tensor in reversed(tensors):
                yield ceil_div(tensor.elements, self.divisor)


@dataclass(frozen=True, slots=True)
class StepShape:
    """What the step program needs from the analytic model besides the setup."""

    spec: BlockSpec
    """How a trained block behaves (`vramplan.training.specs.block_spec`)."""
    loss_rows: int
    """Rows of logits computed at once (all tokens, or a chunk)."""
    fused_loss: bool = False
    """The loss is a fused linear cross-entropy (Liger-Kernel): `fused_linear_loss`."""
    head_grad_bytes: int = 0
    """The head weight's gradient a fused linear cross-entropy makes in forward (0: none)."""


def packed_requests(sizes: Iterable[int]) -> tuple[int, ...]:
    """Tensors made together, as requests: each of more than 1 MiB on its own, the smaller ones
    gathered into requests of at most 1 MiB (they stay in the allocator's small pool, packed into
    its 2 MiB segments either way), which keeps a program of many blocks short."""
    requests: list[int] = []
    small = 0
    for n_bytes in sizes:
        if n_bytes > K_SMALL_SIZE:
            requests.append(n_bytes)
        elif small + n_bytes > K_SMALL_SIZE:
            requests.append(small)
            small = n_bytes
        else:
            small += n_bytes
    return (*requests, small) if small else tuple(requests)


LOSS_PHASE = "loss"
"""The mark the step program puts where a micro-batch's loss begins."""
