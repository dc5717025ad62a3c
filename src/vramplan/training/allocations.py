"""A training step as the caching allocator sees it: the analytic model's tensors, one by one, in
the order a training loop allocates and frees them, and what `torch.cuda.max_memory_reserved`
reports for them.

`reserved` is not allocated memory times a constant: the caching allocator (PyTorch
c10/cuda/CUDACachingAllocator.cpp, simulated in `vramplan.allocator`) rounds each tensor to its
block and segment, keeps every freed block cached for later requests of the same stream, and
never returns memory to the driver while the program runs. What it holds at its peak depends on
the sizes of the tensors and on their order: optimizer states created at the first step land in
blocks that the first backward freed, so the second step's activations need new segments; a
vocabulary-sized tensor freed in backward is carved into smaller blocks, and so on. This module
writes the step as a program of allocations and frees (the model states tensor by tensor, each
block's saved tensors and working tensors, the logits and the loss, the gradients in backward
order, the optimizer's states and temporaries), replays two steps (the first creates the
optimizer states; peaks are reset before the second, which keeps the first one's cache) and
returns the cache the allocator holds beyond the allocated peak. `vramplan trace` records the
same program from a real step (every ATen op), and tests/test_allocations.py compares the two.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache

from vramplan.allocator import (
    EMPTY_CACHE,
    K_SMALL_SIZE,
    PYTORCH_DEFAULTS,
    RESET_PEAKS,
    AllocatorConfig,
    Event,
    Program,
    ReplayResult,
    mark,
    replay,
)
from vramplan.model.architecture import Architecture
from vramplan.model.lora_targets import lora_breakdown
from vramplan.presets.frameworks import (
    AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE,
    PEFT_EMPTY_CACHE_AFTER_UPCAST_SINCE,
    TransformersCode,
    has_change,
    runs_transformers_code,
    torchtune_rope_cache_bytes,
    torchtune_rope_modules,
    transformers_code,
)
from vramplan.presets.quant_formats import BNB_BLOCKSIZE, BNB_DQ_BLOCKSIZE
from vramplan.training.activations.backward import (
    block_backward_transient,
    released_before_block_peak,
)
from vramplan.training.activations.block import block_saved
from vramplan.training.activations.checkpointing import kept_for_backward
from vramplan.training.activations.head import UNSLOTH_RETURNED_LOGITS_COPY
from vramplan.training.activations.spec import BlockSpec
from vramplan.training.dummy_wgrads import dummy_wgrad_tensors
from vramplan.training.setup import (
    TrainingSetup,
    accelerate_copies_outputs,
    autocast_casts_shifted_logits,
    checkpoint_reload_buffers,
    compute_itemsize,
    first_pass_keeps_inputs,
    for_loop_tensors_at_once,
    gradient_itemsize,
    loop_keeps_logits,
    lora_on_modules,
    lora_rank_of,
    lora_targets_of,
    loss_compiled,
    loss_in_16bit,
    main_grad_buffer,
    model_loss_code,
    native_fused_cross_entropy,
    offloads_checkpoints,
    optimizer_impl,
    trainable_itemsize,
    trainable_state_itemsize,
    upcasts_at_load,
    weight_itemsize,
)
from vramplan.training.states import (
    ADAFACTOR_ITEMSIZE,
    BNB_MIN_8BIT_SIZE,
    BNB_PAGED_MIN_ELEMENTS,
    TORCHAO_V01_FACTOR_BYTES,
    causal_mask_buffers,
    head_is_separate,
    stored_quant,
    torchao_v01_nf4,
)
from vramplan.units import ceil_div
from vramplan.vocab import (
    Checkpointing,
    Framework,
    LoraTarget,
    Method,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
)

FP32 = 4
TOKEN_ID_BYTES = 8
"""Token ids and labels are int64."""


@dataclass(frozen=True, slots=True)
class ParamTensor:
    """One stored parameter tensor (or one piece of a quantized one)."""

    elements: int
    n_bytes: int
    trainable: bool
    block: int | None
    """The block it belongs to (None: embeddings, final norm, head)."""
    rows: int = 0
    """A matrix's rows (`elements // rows` columns); 0: a vector, a quantized piece or tensors
    merged into one. Adafactor keeps a row and a column statistic of a matrix."""

    def in_block(self, block: int) -> ParamTensor:
        """The same tensor in `block` (a MoE model lists tens of thousands: built directly,
        `dataclasses.replace` costs several times more)."""
        return ParamTensor(self.elements, self.n_bytes, self.trainable, block, self.rows)


def parameter_tensors(arch: Architecture, setup: TrainingSetup) -> tuple[ParamTensor, ...]:
    """Every parameter tensor as the framework stores it, in module order: the embeddings, each
    block's linears (quantized pieces under QLoRA), biases, norms and adapters, the final norm
    and the head."""
    before, after = _outer_tensors(arch, setup)
    kinds = _block_kinds(arch, setup)
    blocks = [tensor.in_block(block)
              for block, trains in enumerate(_trained_blocks(arch, setup))
              for tensor in kinds[trains]]
    return (*before, *blocks, *after)


def stored_unit_bytes(arch: Architecture, setup: TrainingSetup) -> tuple[int, int]:
    """The bytes of the largest block and of everything outside the blocks, as
    `parameter_tensors` stores them; blocks of one kind (trained or frozen) hold the same
    tensors, so each kind is summed once."""
    before, after = _outer_tensors(arch, setup)
    kinds = _block_kinds(arch, setup)
    block = max((sum(t.n_bytes for t in kinds[trains])
                 for trains in set(_trained_blocks(arch, setup))), default=0)
    return block, sum(t.n_bytes for t in (*before, *after))


def _trained_blocks(arch: Architecture, setup: TrainingSetup) -> list[bool]:
    """Whether each block's own weights train: all of them (full), the last `train_layers`
    (freeze) or none (the adapters of LoRA train, the weights stay frozen)."""
    first_trained = arch.n_layers - min(setup.train_layers, arch.n_layers)
    full = setup.method is Method.FULL
    return [full or (setup.method is Method.FREEZE and block >= first_trained)
            for block in range(arch.n_layers)]


def _block_kinds(arch: Architecture, setup: TrainingSetup) -> dict[bool, list[ParamTensor]]:
    """One block's tensors (block 0), for a block whose weights train and for one whose weights
    are frozen: the blocks are alike but for their index, so a model's tensors are listed from
    these two rather than block by block."""
    return {trains: _block_tensors(arch, setup, 0, trains)
            for trains in set(_trained_blocks(arch, setup))}


def _outer_tensors(arch: Architecture,
                   setup: TrainingSetup) -> tuple[list[ParamTensor], list[ParamTensor]]:
    """The tensors before the blocks (embeddings) and after them (final norm, head, the head's
    adapters)."""
    w = weight_itemsize(setup.precision)
    full = setup.method is Method.FULL
    before = [ParamTensor(arch.params_token_embedding, w * arch.params_token_embedding,
                          full, None, rows=arch.params_token_embedding // arch.hidden_size)]
    if arch.params_position_embedding:
        before.append(ParamTensor(arch.params_position_embedding,
                                  w * arch.params_position_embedding, full, None))
    if arch.params_embedding_norm:
        before.append(ParamTensor(arch.params_embedding_norm,
                                  w * arch.params_embedding_norm, full, None))
    after: list[ParamTensor] = []
    if arch.final_norm and arch.norm_params:
        after.append(ParamTensor(arch.norm_params, w * arch.norm_params, full, None))
    head = arch.head_linear()
    if head_is_separate(arch, setup):
        elements = head.in_features * head.out_features
        after += _linear_weight(setup, elements, full, None, rows=head.out_features,
                                quantized=setup.method is Method.QLORA
                                and setup.framework is Framework.LITGPT)
    if head.bias:
        after.append(ParamTensor(head.out_features, w * head.out_features, full, None))
    if setup.method.uses_lora and LoraTarget.HEAD in (setup.lora_targets or frozenset()):
        rank = lora_rank_of(setup)
        a = trainable_itemsize(setup)
        after += [ParamTensor(rank * head.in_features, a * rank * head.in_features, True, None,
                              rows=rank),
                  ParamTensor(head.out_features * rank, a * head.out_features * rank, True,
                              None, rows=head.out_features)]
    return before, after


def _block_tensors(arch: Architecture, setup: TrainingSetup, block: int,
                   trains: bool) -> list[ParamTensor]:
    w = weight_itemsize(setup.precision)
    quantized = setup.method is Method.QLORA
    tensors: list[ParamTensor] = []
    for linear in arch.block_linears():
        for _ in range(linear.count):
            tensors += _linear_weight(setup, linear.in_features * linear.out_features, trains,
                                      block, rows=linear.out_features, quantized=quantized)
            if linear.bias:
                tensors.append(ParamTensor(linear.out_features, w * linear.out_features,
                                           trains, block))
    per_norm = arch.hidden_size
    for _ in range(arch.norms_per_block * (int(arch.norm_weight) + int(arch.norm_bias))):
        tensors.append(ParamTensor(per_norm, w * per_norm, trains, block))
    if arch.params_qk_norm:
        tensors.append(ParamTensor(arch.params_qk_norm, w * arch.params_qk_norm, trains, block))
    if setup.method.uses_lora:
        rank = lora_rank_of(setup)
        targets = lora_targets_of(setup) - {LoraTarget.HEAD}
        a = trainable_itemsize(setup)
        for matrix in lora_breakdown(arch, rank, targets, fused_modules=lora_on_modules(setup)):
            copies = max(matrix.copies // arch.n_layers, 1)
            for _ in range(copies):
                tensors += [ParamTensor(rank * matrix.in_features,
                                        a * rank * matrix.in_features, True, block, rows=rank),
                            ParamTensor(matrix.out_features * rank,
                                        a * matrix.out_features * rank, True, block,
                                        rows=matrix.out_features)]
    return tensors


def _linear_weight(setup: TrainingSetup, elements: int, trains: bool, block: int | None, *,
                   quantized: bool, rows: int = 0) -> list[ParamTensor]:
    """A linear weight, or the pieces bitsandbytes stores for a quantized one (packed codes,
    absmax, and with double quantization its own absmax; `functional.quantize_4bit`)."""
    if not quantized:
        return [ParamTensor(elements, weight_itemsize(setup.precision) * elements, trains,
                            block, rows)]
    quant = stored_quant(setup)
    if quant is Quant.INT8:
        return [ParamTensor(elements, elements, False, block)]
    blocks = ceil_div(elements, BNB_BLOCKSIZE)
    pieces = [ParamTensor(elements, (elements + 1) // 2, False, block)]
    if quant in (Quant.NF4_DQ, Quant.FP4_DQ):
        pieces += [ParamTensor(blocks, blocks, False, block),
                   ParamTensor(ceil_div(blocks, BNB_DQ_BLOCKSIZE),
                               FP32 * ceil_div(blocks, BNB_DQ_BLOCKSIZE), False, block),
                   ParamTensor(1, FP32, False, block)]  # the nested quantization's offset
    else:
        pieces.append(ParamTensor(blocks, FP32 * blocks, False, block))
    return pieces


def _state_tensors(tensor: ParamTensor, setup: TrainingSetup) -> list[int]:
    """The optimizer's device tensors for one trainable parameter, in bytes (paged states live
    outside the allocator: bitsandbytes `get_state_buffer` pages tensors of 1e5 values or more)."""
    n, s = tensor.elements, trainable_state_itemsize(setup)
    kind = setup.optimizer
    paged = kind in (Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT) \
        and n >= BNB_PAGED_MIN_ELEMENTS
    eight_bit = kind in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT)
    if eight_bit and n >= BNB_MIN_8BIT_SIZE:
        absmax = FP32 * ceil_div(n, 256)
        return [absmax, absmax] if paged else [n, n, absmax, absmax]
    if kind is Optimizer.ADAFACTOR:
        # a matrix's row and column statistics, a vector's whole (`optimizer_state_bytes`)
        rows = tensor.rows
        return [ADAFACTOR_ITEMSIZE * rows, ADAFACTOR_ITEMSIZE * (n // rows)] if rows \
            else [ADAFACTOR_ITEMSIZE * n]
    per_state = {Optimizer.ADAMW: (s, 2), Optimizer.PAGED_ADAMW: (FP32, 2),
                 Optimizer.ADAMW_8BIT: (FP32, 2), Optimizer.PAGED_ADAMW_8BIT: (FP32, 2),
                 Optimizer.SGD_MOMENTUM: (s, 1)}
    itemsize, count = per_state.get(kind, (0, 0))
    return [] if paged else [itemsize * n] * count


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
    """What a sharded run's optimizer steps (`_optimizer_step`)."""

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
    (`vramplan.distributed.per_gpu._PinnedByAutograd`); not under checkpointing, whose forward
    saves nothing."""
    prefetch_late: bool = False
    """In backward, the block before is gathered when a block's backward has run, not when it
    starts (FSDP1 with each adapter a unit: `vramplan.distributed.sharding.prefetches_late`)."""
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
    buckets (`_megatron_buffers`); 0: no distributed optimizer."""
    bucket_elements: int | None = None
    """Megatron-LM's bucket size in elements (`DistributedDataParallelConfig.bucket_size`);
    None: the whole buffer is one bucket."""
    backward_bucket_bytes: int = 0
    """DeepSpeed ZeRO-1/2's gradient bucket, made whole by its optimizer's `backward()` before
    the loss's backward and freed by the epilogue at the end of backward
    (`vramplan.distributed.sharding.ShardedStates.backward_bucket_bytes`); 0: none."""
    zero3_bucket_elements: int = 0
    """DeepSpeed ZeRO-3 with its gradient partition on the GPU: `reduce_bucket_size`, the
    elements its gradient bucket holds before it is reduced (`_zero3_gradients`); 0: another
    scheme."""


WHOLE = Sharding()


class _Program(Program):
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
class _Model:
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
    zero3: _Zero3Gradients | None = None
    """ZeRO-3's gradients, parameter by parameter (`Sharding.zero3_bucket_elements`)."""
    bucket: _Bucket = field(default_factory=_Bucket)
    """ZeRO-3's gradient bucket, not yet reduced."""
    kept_logits: int | None = None
    """The logits the model returned for the last micro-batch, which a loop that keeps the
    model's outputs still holds (`vramplan.training.setup.loop_keeps_logits`)."""


@dataclass(frozen=True, slots=True)
class _Zero3Gradients:
    """The trainable parameter tensors one by one, in the order backward makes their gradients
    (a block's in reverse module order): ZeRO-3 handles each parameter's gradient on its own
    (`_zero3_gradients`), where the program's merged tensors (`_by_lifetime`) would make one
    gradient of a whole block."""

    head: tuple[ParamTensor, ...]
    """After the blocks (final norm, an untied head): the start of backward."""
    blocks: tuple[tuple[ParamTensor, ...], ...]
    embeddings: tuple[ParamTensor, ...]
    """Before the blocks (a tied head's too): the end of backward."""
    divisor: int
    """The GPUs a gradient is partitioned over."""

    @staticmethod
    def of(arch: Architecture, setup: TrainingSetup, divisor: int) -> _Zero3Gradients:
        before, after = _outer_tensors(arch, setup)
        kinds = {trains: tuple(t for t in reversed(tensors) if t.trainable)
                 for trains, tensors in _block_kinds(arch, setup).items()}
        return _Zero3Gradients(
            head=tuple(t for t in reversed(after) if t.trainable),
            blocks=tuple(kinds[trains] for trains in _trained_blocks(arch, setup)),
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
    """How a trained block behaves (`vramplan.training.estimate.block_spec`)."""
    loss_rows: int
    """Rows of logits computed at once (all tokens, or a chunk)."""
    fused_loss: bool = False
    """The loss is a fused linear cross-entropy (Liger-Kernel): `_fused_linear_loss`."""
    head_grad_bytes: int = 0
    """The head weight's gradient a fused linear cross-entropy makes in forward (0: none)."""


def step_program(arch: Architecture, setup: TrainingSetup, shape: StepShape,
                 sharding: Sharding = WHOLE, steps: int | None = None) -> list[Event]:
    """The model's load, then `steps` training steps (peaks reset before the last), as a
    program of allocations and frees, on one GPU of a run sharded as `sharding` says; `steps`
    None: two, a steady step after a first, or one for a figure of the first step
    (`TrainingSetup.first_step_report`)."""
    steps = steps if steps is not None else 1 if setup.first_step_report else 2
    # a run whose first micro-batch holds more than later ones is read from its start
    reset_at = 0 if first_pass_keeps_inputs(setup) else steps - 1
    program = _Program(sharding.backward_bucket_bytes)
    params = _by_lifetime(arch, setup)
    built: list[tuple[ParamTensor, int]] = []
    # routed experts go to buffers of their own, over the expert-data-parallel ranks
    # (megatron/core/distributed/distributed_data_parallel.py `expert_parallel_buffers`): not
    # written here, a MoE model's program keeps the plain one
    megatron = bool(sharding.param_buffer_ranks) and not arch.is_moe
    if megatron:
        built = _megatron_build(program, arch, setup, sharding)
    elif sharding.flat_units:
        _wrap_flat_units(program, parameter_tensors(arch, setup), sharding)
    else:
        _load(program, params, sharding, setup, arch)
    _module_buffers(program, arch, setup)
    _end_of_load(program, setup)
    dummy_wgrads = dummy_wgrad_tensors(arch, setup, sharding.tensor_parallel)
    if megatron:
        model = _megatron_buffers(program, setup, sharding, built)
    else:
        model = _wrapped(program, setup, sharding, params)
        if sharding.zero3_bucket_elements:
            model.zero3 = _Zero3Gradients.of(arch, setup, sharding.gradients)
    model.dummy_wgrads = dummy_wgrads
    for n_bytes in sharding.persistent_bytes:
        program.alloc(n_bytes)
    for step in range(steps):
        if step == steps - 1 and setup.empty_cache_between_steps:
            program.events.append(mark(EMPTY_CACHE))
        if step == reset_at:
            program.events.append(mark(RESET_PEAKS))
        _step(program, arch, setup, shape, model)
    return program.events


def _step(program: _Program, arch: Architecture, setup: TrainingSetup, shape: StepShape,
          model: _Model) -> None:
    """One optimizer step: its micro-batches (two under gradient accumulation), then the
    optimizer's update."""
    micro_batches = 2 if setup.gradient_accumulation else 1
    for index in range(micro_batches):
        _micro_batch(program, arch, setup, shape, model)
        if index == micro_batches - 1:
            _optimizer_step(program, setup, model)
        if setup.loop_frees_outputs and model.kept_logits is not None:
            # the loop drops its outputs at the end of each iteration (`output = None`)
            program.free(model.kept_logits)
            model.kept_logits = None


def _wrapped(program: _Program, setup: TrainingSetup, sharding: Sharding,
             params: tuple[ParamTensor, ...]) -> _Model:
    """The masters, the optimizer's construction and the gradient buffers made before the
    first step."""
    model = _Model(params, sharding, grads={}, states=[], masters=[])
    if setup.precision is Precision.MIXED and sharding.states:
        masters = [ceil_div(FP32 * t.elements, sharding.states) for t in params if t.trainable]
        if sharding.step_group_elements is not None:
            masters = [FP32 * n for n in _sub_groups(params, sharding)]
        model.masters = [program.alloc(n_bytes) for n_bytes in masters]
    if sharding.zero_init_buffer and sharding.states:
        _zero_init_buffer(program, params, sharding)
    if sharding.step_group_elements is not None and sharding.gradients:
        model.flat_grads = program.alloc(sum(
            ceil_div(t.n_bytes, sharding.gradients) for t in params if t.trainable))
    elif main_grad_buffer(setup) and sharding.gradients:
        # Megatron-LM's gradient buffer, made when the model is wrapped: gradients land in it
        # (`vramplan.presets.frameworks.FrameworkDefaults.main_grad_buffer`)
        model.flat_grads = program.alloc(sum(
            ceil_div(gradient_itemsize(setup) * t.elements, sharding.gradients)
            for t in params if t.trainable))
    return model


def _megatron_build(program: _Program, arch: Architecture, setup: TrainingSetup,
                    sharding: Sharding) -> list[tuple[ParamTensor, int]]:
    """Megatron-LM builds its model on the GPU in the parameters' 16-bit dtype, one tensor per
    parameter (Transformer Engine's modules and Megatron's own take `params_dtype` and the
    current device), this GPU's tensor- and pipeline-parallel share of each. Returns each
    tensor with its allocation."""
    tensors = [replace(t, elements=ceil_div(t.elements, sharding.weights),
                       n_bytes=ceil_div(t.n_bytes, sharding.weights))
               for t in parameter_tensors(arch, setup)]
    return [(t, program.alloc(t.n_bytes)) for t in tensors]


def _megatron_buffers(program: _Program, setup: TrainingSetup, sharding: Sharding,
                      built: list[tuple[ParamTensor, int]]) -> _Model:
    """Megatron-LM's DistributedDataParallel under its distributed optimizer, then the
    optimizer (NVIDIA/Megatron-LM @f4fa7d6b, the same at core_r0.11.0): `_ParamAndGradBuffer`
    allocates `param_data` (the 16-bit parameters, padded) and then `grad_data`, and copies
    each trained parameter into `param_data` in reverse order, freeing its own tensor
    (megatron/core/distributed/param_and_grad_buffer.py: `param.data = new_param_data`,
    `del old_param_data`); those blocks stay cached. The optimizer clones this rank's range of
    each bucket, parameter by parameter, as fp32 masters (megatron/core/optimizer/
    distrib_optimizer.py `_build_model_and_main_param_groups`: `shard_model_param.clone()
    .float()`), and Adam's states are made like them at the first step: pieces of whole
    parameters, which the freed 16-bit blocks hold only where one is large enough."""
    trained = [(t, allocation) for t, allocation in built if t.trainable]
    numel, pieces = megatron_rank_pieces([t.elements for t, _ in reversed(trained)],
                                          sharding.param_buffer_ranks, sharding.bucket_elements)
    program.alloc(weight_itemsize(setup.precision) * numel)
    flat_grads = program.alloc(gradient_itemsize(setup) * numel)
    for _, allocation in reversed(trained):
        program.free(allocation)
    tensors = tuple(ParamTensor(n, weight_itemsize(setup.precision) * n, True, None)
                    for n in pieces)
    masters = [program.alloc(FP32 * n) for n in pieces] \
        if setup.precision is Precision.MIXED else []
    return _Model(tensors, replace(sharding, states=1), grads={}, states=[], masters=masters,
                  flat_grads=flat_grads)


MEGATRON_PARAM_ALIGNMENT = 64
"""A parameter starts at a multiple of 64 elements in the buffer under the distributed optimizer
(param_and_grad_buffer.py `_pad_start_of_param_if_needed`)."""
MEGATRON_BUCKET_ALIGNMENT = 128
"""A bucket ends at a multiple of lcm(data-parallel ranks, 128) elements
(`_pad_end_of_bucket_if_needed`, without `pad_buckets_for_high_nccl_busbw`)."""


def megatron_rank_pieces(elements: list[int], ranks: int,
                          bucket_elements: int | None) -> tuple[int, list[int]]:
    """The buffer's padded length and the pieces of parameters that the first data-parallel
    rank's range of each bucket holds, for parameters of `elements` in the buffer's order
    (param_and_grad_buffer.py `_ParamAndGradBuffer.__init__`: a bucket closes once it holds
    `bucket_elements`; distrib_optimizer.py `_build_model_gbuf_range`: each bucket cut in
    `ranks` equal ranges)."""
    multiple = math.lcm(ranks, MEGATRON_BUCKET_ALIGNMENT)
    buckets: list[list[tuple[int, int]]] = [[]]
    bounds: list[tuple[int, int]] = []
    bucket_start = start = 0
    for n in elements:
        start = _round_up(start, MEGATRON_PARAM_ALIGNMENT)
        buckets[-1].append((start, start + n))
        start += n
        if bucket_elements is not None and start - bucket_start >= bucket_elements:
            bounds.append((bucket_start, _round_up(start, multiple)))
            bucket_start = start = bounds[-1][1]
            buckets.append([])
    if buckets[-1]:
        bounds.append((bucket_start, _round_up(start, multiple)))
    pieces = []
    for params, (first, end) in zip(buckets, bounds, strict=False):
        last = first + (end - first) // ranks
        pieces += [min(e, last) - max(s, first) for s, e in params if s < last]
    return bounds[-1][1] if bounds else 0, pieces


def _round_up(n: int, multiple: int) -> int:
    return ceil_div(n, multiple) * multiple


def _end_of_load(program: _Program, setup: TrainingSetup) -> None:
    """The framework empties the allocator's cache once the model is loaded: axolotl since
    `AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE` (a run without a date runs today's code)."""
    if setup.framework is Framework.AXOLOTL and has_change(
            setup.code_date, AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE):
        program.events.append(mark(EMPTY_CACHE))


def _moved_whole_then_offloaded(program: _Program, arch: Architecture,
                                setup: TrainingSetup) -> None:
    """ZeRO-3 with parameter offload on a model built outside `zero.Init`
    (deepspeedai/DeepSpeed v0.6.5 and edaa7221): `deepspeed.initialize` casts the model to its
    16-bit dtype on the host and moves it to the GPU (runtime/engine.py
    `_configure_distributed_model`: `self.module.half()`, `self.module.to(self.device)`; since
    `is_zero_init_model` only a model not made under `zero.Init`), one segment per tensor; the
    ZeRO-3 optimizer then partitions each parameter in turn (stage3.py
    `_convert_to_zero_parameters` -> partition_parameters.py `Init(module=...)`,
    `param.partition()`), its partition going to the host and the whole tensor freed. Only the
    path that keeps partitions on the GPU empties the cache after (`defragment`:
    `empty_cache()`); with parameter offload the freed segments stay reserved, on the default
    stream, usable only by requests that fit in them."""
    tensors = [program.alloc(t.n_bytes) for t in parameter_tensors(arch, setup)]
    program.free_all(tensors)


def _module_buffers(program: _Program, arch: Architecture, setup: TrainingSetup) -> None:
    """The model's own buffers, one per layer (`Architecture.buffer_bytes`: GPT-Neo's causal
    masks), transformers' causal masks (`causal_mask_buffers`) and torchtune's
    rotary caches (`torchtune_rope_bytes`), made with the model and never freed; whole on every
    rank."""
    if arch.buffer_bytes:
        for _ in range(arch.n_layers):
            program.alloc(arch.buffer_bytes // arch.n_layers)
    for mask in causal_mask_buffers(arch, setup):
        program.alloc(mask)
    if setup.framework is Framework.TORCHTUNE:
        for _ in range(torchtune_rope_modules(arch.n_layers, setup.code_date)):
            program.alloc(torchtune_rope_cache_bytes(arch))


def _by_lifetime(arch: Architecture, setup: TrainingSetup) -> tuple[ParamTensor, ...]:
    """One tensor per block for its trainable parameters and one for its frozen ones (their
    gradients, masters and states are made and freed together); the embeddings, final norm
    and head stay apart, each group of them (trainable or frozen) where its first tensor comes
    in module order. Fewer, larger requests: the program stays short enough for the planner's
    searches, and the blocks' tensors share their lifetimes anyway."""
    before, after = _outer_tensors(arch, setup)
    merged_kinds = {trains: _merged(tensors)
                    for trains, tensors in _block_kinds(arch, setup).items()}
    groups: dict[tuple[int | None, bool], list[ParamTensor]] = {}
    for tensor in before:
        groups.setdefault((None, tensor.trainable), []).append(tensor)
    for block, trains in enumerate(_trained_blocks(arch, setup)):
        for tensor in merged_kinds[trains]:
            groups[(block, tensor.trainable)] = [tensor.in_block(block)]
    for tensor in after:
        groups.setdefault((None, tensor.trainable), []).append(tensor)
    return tuple(tensor for tensors in groups.values() for tensor in tensors)


def _merged(tensors: list[ParamTensor]) -> list[ParamTensor]:
    """A block's tensors as one trainable and one frozen tensor, in the order each kind first
    appears."""
    by_kind: dict[bool, list[ParamTensor]] = {}
    for tensor in tensors:
        by_kind.setdefault(tensor.trainable, []).append(tensor)
    return [ParamTensor(sum(t.elements for t in group), sum(t.n_bytes for t in group),
                        trainable, tensors[0].block) for trainable, group in by_kind.items()]


def _load(program: _Program, params: tuple[ParamTensor, ...], sharding: Sharding,
          setup: TrainingSetup, arch: Architecture) -> None:
    """The parameters this GPU holds: each tensor, or its shard (FSDP1's flat units:
    `_wrap_flat_units`). A QLoRA run prepared for k-bit training (`upcasts_at_load`) loads
    the base, then `_upcast_and_back`; torchtune's QLoRA of before June 2024 builds its model
    as `_torchtune_nf4_build` says. Parameters offloaded to the host may pass through the GPU
    first (`_moved_whole_then_offloaded`)."""
    if not sharding.weights:
        if sharding.whole_at_init:
            _moved_whole_then_offloaded(program, arch, setup)
        return
    if sharding.weights == 1:
        warmup = allocator_warmup_bytes(arch, setup)
        if warmup:
            program.free(program.alloc(warmup))
    if sharding.weights == 1 and torchao_v01_nf4(setup):
        _torchtune_nf4_build(program, params, arch, setup)
        return
    if sharding.weights > 1 or not upcasts_at_load(setup):
        for tensor in params:
            program.alloc(ceil_div(tensor.n_bytes, sharding.weights))
        return
    frozen = {index: program.alloc(t.n_bytes) for index, t in enumerate(params)
              if not t.trainable}
    empty_cache = has_change(setup.code_date, PEFT_EMPTY_CACHE_AFTER_UPCAST_SINCE)
    _upcast_and_back(program, params, frozen, empty_cache=empty_cache)


def allocator_warmup_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The segment transformers' `from_pretrained` reserves before it loads a QLoRA base with its
    `device_map` (`TransformersCode.warms_up_allocator`): half the bytes of the meta model's
    parameters, every one at its full shape in the 16-bit load dtype (a tied head twice while
    `warmup_counts_tied`), capped by what the card has free (`TrainingSetup.card_free_bytes`,
    when known). 0 for other runs: an unquantized model
    loaded with a `device_map` fills its warm-up segment exactly, and the training stacks load
    it without one."""
    if setup.method is not Method.QLORA or not runs_transformers_code(setup.framework):
        return 0
    tied = arch.params_token_embedding if arch.tied_embeddings else 0
    return transformers_code(setup.code_date).quantized_warmup_bytes(
        arch.params_total, tied, compute_itemsize(setup.precision),
        free_bytes=setup.card_free_bytes)


def _torchtune_nf4_build(program: _Program, params: tuple[ParamTensor, ...],
                         arch: Architecture, setup: TrainingSetup) -> None:
    """torchtune's QLoRA model as its recipe built it with torchao v0.1 (recipes/
    lora_finetune_single_device.py @ff594c231, `with self._device: config.instantiate(...)`, then
    `load_state_dict`), on the GPU:
    - the builder makes one template layer, whose `LoRALinear`s quantize their new bf16 weights
      at once (`to_nf4`), then the embeddings and the head;
    - `TransformerDecoder` deep-copies the template for every layer (torchtune/modules/
      transformer.py `_get_clones`: `copy.deepcopy`); an NF4 weight's `__deepcopy__` calls
      `clone`, which torchtune overrides as `to_nf4(get_original_weight())` (torchtune/utils/
      _register_nf4_dispatch_ops.py): a dequantization and a quantization per weight, then
      the copies of the clone's tensors, the clone's own freed;
    - the template goes;
    - `load_state_dict` copies each checkpoint tensor in: torchtune's `copy_` override moves it
      to the GPU and quantizes it there (`to_nf4(src.to(dest.device))`), and the new codes
      replace the old.
    Traced with torchao v0.1's and torchtune's code on the meta device and replayed through the
    simulated allocator: 9.133 GB reserved after the build, where the QLoRA tutorial published
    9.13 GB "after model init" (docs/source/tutorials/qlora_finetune.rst @0914d5cf). The
    tensors outside the quantized linears (norms, adapters, embeddings, head) are allocated as
    `params` lists them."""
    linears = [lin.in_features * lin.out_features
               for lin in arch.block_linears() for _ in range(lin.count)]
    stored_linears = sum(piece.n_bytes for n in linears
                         for piece in _linear_weight(setup, n, False, 0, quantized=True))
    per_block = sum(t.n_bytes for t in params if t.block == 0)
    others = per_block - stored_linears
    template: list[int] = []
    for n in linears:
        weight = program.alloc(2 * n)
        template += _torchao_v01_to_nf4(program, weight, n)
        program.free(weight)
    template.append(program.alloc(others))
    for tensor in params:
        if tensor.block is None:
            program.alloc(tensor.n_bytes)
    layers: list[list[list[int]]] = []
    for _ in range(arch.n_layers):
        layer: list[list[int]] = []
        for n in linears:
            weight = _torchao_v01_dequantize(program, n)
            clone = _torchao_v01_to_nf4(program, weight, n)
            program.free(weight)
            # `__deepcopy__` copies the clone's tensors and drops the clone's own
            layer.append(_torchao_v01_alloc_kept(program, n))
            _torchao_v01_free_kept(program, clone)
        program.alloc(others)
        layers.append(layer)
    program.free_all(template)
    for layer in layers:
        for index, n in enumerate(linears):
            weight = program.alloc(2 * n)
            new = _torchao_v01_to_nf4(program, weight, n)
            program.free(weight)
            _torchao_v01_free_kept(program, layer[index])
            layer[index] = new


def _torchao_v01_alloc_kept(program: _Program, n: int) -> list[int]:
    """A copy of what torchao v0.1's `NF4Tensor` of n values keeps (torchao/dtypes/nf4tensor.py
    `from_tensor`), as `copy.deepcopy` of its `__dict__` allocates them: the int8 scalers (one
    per 64 values), the quantization factor's storage (`TORCHAO_V01_FACTOR_BYTES`: a strided
    view that keeps its whole bf16 tensor), the scalers' mean (a bf16 scalar) and the packed
    codes (two per byte). Returned in `_torchao_v01_to_nf4`'s order: mean, factor, scalers,
    codes."""
    scalers = program.alloc(n // BNB_BLOCKSIZE)
    factor = program.alloc(int(n * TORCHAO_V01_FACTOR_BYTES))
    mean = program.alloc(2)
    return [mean, factor, scalers, program.alloc(n // 2)]


def _torchao_v01_free_kept(program: _Program, kept: list[int]) -> None:
    """Frees an `NF4Tensor`'s tensors (`_torchao_v01_to_nf4`'s order) in the order traced when
    the tensor goes: scalers, factor, mean, codes."""
    mean, factor, scalers, codes = kept
    program.free_all([scalers, factor, mean, codes])


def _torchao_v01_to_nf4(program: _Program, weight: int, n: int) -> list[int]:
    """torchao v0.1 `to_nf4` on a bf16 weight of n values (`NF4Tensor.from_tensor`), its
    allocations and frees in order as traced on the meta device: the per-block absolute maxima
    (`max(dim=-1)`'s bf16 values and int64 indices over `abs()`), the scalers' double
    quantization (`double_quantize_scalers`: mean, centring, their own maxima per 256, the
    factor, `round`, `clamp`, the int8 cast), then the codes: the blocks scaled, `value - nf4`
    and its `abs()` (16 bf16 entries per value: 32n bytes each), `min(dim=-1)`'s values and
    int64 indices, the packing's int64 shift and or, and the uint8 codes. `weight` stays the
    caller's. Returns what the tensor keeps: mean, factor, scalers, codes
    (`_torchao_v01_alloc_kept`)."""
    blocks = n // BNB_BLOCKSIZE
    maxima = _absolute_maxima(program, 2 * n, blocks)
    mean = program.alloc(2)
    centred = program.alloc(2 * blocks)
    program.free(maxima)
    group_max = _absolute_maxima(program, 2 * blocks, blocks // 256)
    scaled = program.alloc(2 * blocks)
    inverse = program.alloc(2 * blocks)
    factor = program.alloc(2 * blocks)
    program.free(inverse)
    program.free(scaled)
    product = program.alloc(2 * blocks)
    rounded = program.alloc(2 * blocks)
    program.free(product)
    clamped = program.alloc(2 * blocks)
    program.free(rounded)
    scalers = program.alloc(blocks)
    program.free_all([centred, group_max, clamped])
    maxima = _absolute_maxima(program, 2 * n, blocks)
    normalized = program.alloc(2 * n)
    difference = program.alloc(32 * n)
    distance = program.alloc(32 * n)
    program.free(difference)
    values, nearest = program.alloc(2 * n), program.alloc(8 * n)
    program.free(values)
    program.free(distance)
    shifted = program.alloc(4 * n)
    packed = program.alloc(4 * n)
    program.free(shifted)
    codes = program.alloc(n // 2)
    program.free_all([maxima, normalized, nearest, packed])
    return [mean, factor, scalers, codes]


def _absolute_maxima(program: _Program, n_bytes: int, groups: int) -> int:
    """`values.abs().max(dim=-1)` over `groups` groups of bf16 values (`n_bytes` of them): the
    absolute values, then the maxima and their int64 indices, of which the maxima stay."""
    absolute = program.alloc(n_bytes)
    maxima, indices = program.alloc(2 * groups), program.alloc(8 * groups)
    program.free(absolute)
    program.free(indices)
    return maxima


def _torchao_v01_dequantize(program: _Program, n: int) -> int:
    """torchao v0.1 `get_original_weight` of n values (`NF4Tensor.dequantize` in its order): each
    nibble as int64 codes (`(codes >> 4).to(torch.long)`, `(codes & 0b1111)`), each half looked
    up in the NF4 table, the scalers dequantized, both halves scaled, and their `torch.stack`:
    the bf16 weight returned, the rest freed."""
    blocks = n // BNB_BLOCKSIZE
    high = program.alloc(n // 2)
    high_codes = program.alloc(4 * n)
    program.free(high)
    low = program.alloc(n // 2)
    low_codes = program.alloc(4 * n)
    program.free(low)
    high_values, low_values = program.alloc(n), program.alloc(n)
    divided = program.alloc(2 * blocks)
    scalers = program.alloc(2 * blocks)
    program.free(divided)
    temporaries = [high_codes, low_codes, high_values, low_values, scalers]
    for _ in range(2):
        flat = program.alloc(n)
        temporaries.append(program.alloc(n))
        program.free(flat)
    weight = program.alloc(2 * n)
    program.free_all(temporaries)
    return weight


def _upcast_and_back(program: _Program, params: tuple[ParamTensor, ...],
                     frozen: dict[int, int], *, empty_cache: bool) -> None:
    """peft `prepare_model_for_kbit_training` (huggingface/peft src/peft/utils/other.py
    @5d602fdb) replaces each 16-bit parameter that is not `Params4bit` by its fp32 copy
    (`param.data = param.data.to(torch.float32)`: the copy is made, then the 16-bit tensor is
    freed into the cache) and, since v0.20.0 (`empty_cache`), calls `torch.cuda.empty_cache()`;
    `get_peft_model` then makes the adapters; TRL's `peft_module_casting_to_bf16`
    (trl/models/utils.py @e2ab4354) casts the embeddings and the head back to 16-bit, each
    16-bit copy made before its fp32 tensor is freed. Only the tensors outside the blocks are
    written: the blocks' norms and biases are small-pool tensors of a few KB; the final norm,
    which TRL keeps in fp32, is cast back here too (its hidden-sized bytes are not counted)."""
    outer = [index for index in frozen
             if params[index].block is None and params[index].n_bytes == 2 * params[index].elements]
    fp32 = {}
    for index in outer:
        fp32[index] = program.alloc(2 * params[index].n_bytes)
        program.free(frozen[index])
    if empty_cache:
        program.events.append(mark(EMPTY_CACHE))
    for tensor in params:
        if tensor.trainable:
            program.alloc(tensor.n_bytes)
    for index in outer:
        program.alloc(params[index].n_bytes)
        program.free(fp32[index])


FSDP1_SYNC_BUCKET_BYTES = 250 * 1024 * 1024
"""pytorch/pytorch torch/distributed/fsdp/_init_utils.py @01caf79e `PARAM_BROADCAST_BUCKET_SIZE`:
`_sync_module_params_and_buffers` broadcasts a unit's parameters with `_broadcast_coalesced`
in buckets of 250 MiB."""
SYNC_BUCKETS_IN_FLIGHT = 2
"""torch/csrc/distributed/c10d/comm.cpp `broadcast_coalesced`: "We maintain a maximum of 2 in
flight broadcast operations to avoid allocating too much memory"; each `BroadcastWork` holds its
bucket flattened into one new tensor (`flatten_dense_tensors`) until it finishes."""


def _wrap_flat_units(program: _Program, tensors: tuple[ParamTensor, ...],
                     sharding: Sharding) -> None:
    """FSDP1 wraps the model unit by unit, the nested units first and the root last
    (torch/distributed/fsdp/fully_sharded_data_parallel.py @01caf79e: `_auto_wrap` runs before
    the root's own `_init_param_handle_from_module`). Each unit's parameters come to the GPU one
    by one (`_move_module_to_device` from the CPU, `_materialize_meta_module` from the meta
    device), are broadcast from rank 0 under
    `sync_module_states` (`sync_bucket_bytes`), flattened into one tensor
    (_flat_param.py `flatten_tensors`: `torch.cat`), and the rank's chunk is cloned as its shard
    (`_get_shard`; with CPU offload the shard then goes to the host, `flat_param_to(cpu)`); the
    parameters and the flat copy are then freed, and stay cached."""
    for unit in _flat_units(tensors, sharding.adapter_units).values():
        sizes = [t.n_bytes for t in unit]
        whole = [program.alloc(n) for n in _requests(sizes)]
        _broadcast_buckets(program, sizes, sharding.sync_bucket_bytes)
        flat = program.alloc(sum(sizes))
        shard = program.alloc(ceil_div(sum(sizes), max(sharding.gradients, 1)))
        if not sharding.weights:  # offloaded: the shard goes to the host
            program.free(shard)
        program.free_all(whole)
        program.free(flat)


def _flat_units(tensors: tuple[ParamTensor, ...],
                adapter_units: bool) -> dict[tuple[int, bool], list[ParamTensor]]:
    """The units in the order FSDP1 wraps them: by block, its adapters first when they are units
    of their own (written as one: each is a few MB, a small-pool block either way), then the
    block; the root (embeddings, final norm, head) last."""
    units: dict[tuple[int, bool], list[ParamTensor]] = {}
    root = len(tensors)  # after every block
    for tensor in tensors:
        block = root if tensor.block is None else tensor.block
        apart = adapter_units and tensor.trainable and block != root
        units.setdefault((block, not apart), []).append(tensor)
    return dict(sorted(units.items()))


def _broadcast_buckets(program: _Program, sizes: list[int], bucket_bytes: int) -> None:
    """`broadcast_coalesced` on the unit's tensors: a bucket closes once it reaches
    `bucket_bytes` (c10d `compute_bucket_assignment_by_size`), each is flattened into a tensor of
    its own, two at most alive at once."""
    if not bucket_bytes:
        return
    buckets, filled = [], 0
    for n_bytes in sizes:
        filled += n_bytes
        if filled >= bucket_bytes:
            buckets.append(filled)
            filled = 0
    if filled:
        buckets.append(filled)
    in_flight: list[int] = []
    for n_bytes in buckets:
        if len(in_flight) == SYNC_BUCKETS_IN_FLIGHT:
            program.free(in_flight.pop(0))
        in_flight.append(program.alloc(n_bytes))
    program.free_all(in_flight)


def _micro_batch(program: _Program, arch: Architecture, setup: TrainingSetup, shape: StepShape,
                 model: _Model) -> None:
    tokens = setup.batch * setup.seq_len
    batch = [program.alloc(TOKEN_ID_BYTES * tokens), program.alloc(TOKEN_ID_BYTES * tokens)]
    root = _gather(program, model.sharding, model.sharding.root_gathered_bytes)
    sizes = _Sizes.of(arch, setup, shape)
    if model.micro_batches == 0 and first_pass_keeps_inputs(setup):
        sizes = replace(sizes, offloaded=False)
    model.micro_batches += 1
    if sizes.offloaded and not model.reload_buffers:
        # grown to the first offloaded input (`GPU_BUFFER.resize_`), kept for the run
        model.reload_buffers = tuple(program.alloc(sizes.residual)
                                     for _ in range(sizes.reload_buffers))
    program.events.append(mark("forward"))
    hidden, kept, gathered = _forward(program, arch, sizes, model.sharding)
    program.events.append(mark(LOSS_PHASE))
    head_grad: int | None = None
    if shape.fused_loss:
        grad_hidden, head_grad = _fused_linear_loss(
            program, arch, rows=shape.loss_rows, tokens=tokens, hidden=hidden,
            compute=compute_itemsize(setup.precision), head_grad_bytes=shape.head_grad_bytes)
    elif setup.framework is Framework.MEGATRON and shape.loss_rows == tokens:
        grad_hidden = _vocab_parallel_loss(program, arch, tokens=tokens, hidden=hidden,
                                           compute=compute_itemsize(setup.precision),
                                           compiled=native_fused_cross_entropy(setup),
                                           te_kernel=setup.te_cross_entropy)
    elif setup.framework is Framework.UNSLOTH and shape.loss_rows == tokens:
        grad_hidden = _in_place_loss(program, arch, tokens=tokens, hidden=hidden,
                                     compute=compute_itemsize(setup.precision))
    elif setup.framework is Framework.TORCHTITAN and loss_compiled(setup):
        grad_hidden = _compiled_loss(program, arch, tokens=tokens, hidden=hidden,
                                     compute=compute_itemsize(setup.precision))
    elif setup.loss_parallel and shape.loss_rows == tokens:
        grad_hidden = _loss_parallel(program, arch, tokens=tokens, hidden=hidden,
                                     compute=compute_itemsize(setup.precision))
    else:
        # a loop that keeps the model's outputs holds the logits they return through backward
        # and the step, and the previous micro-batch's until this forward returns
        # (`vramplan.training.activations.head.HeadSpec.outputs_kept`, `previous_logits`)
        keeps = loop_keeps_logits(setup) and shape.loss_rows == tokens
        grad_hidden, returned = _loss(
            program, arch, rows=shape.loss_rows, tokens=tokens, hidden=hidden,
            compute=compute_itemsize(setup.precision), code=model_loss_code(setup, arch.family),
            batch=setup.batch, loss_16bit=loss_in_16bit(setup, arch.family), keep=keeps,
            previous=model.kept_logits,
            cast_after_shift=autocast_casts_shifted_logits(setup, arch.family),
            outputs_fp32=accelerate_copies_outputs(setup))
        model.kept_logits = returned
    program.events.append(mark("backward"))
    # made once, from the head's backward on, and kept (`vramplan.training.dummy_wgrads`)
    for n_bytes in model.dummy_wgrads:
        program.alloc(n_bytes)
    model.dummy_wgrads = ()
    trainable_by_block = _trainable_by_block(model.params)
    if head_grad is not None:
        # the fused loss's head gradient is handed over as the head's: one tensor, not two
        program.free(head_grad)
    _make_grads(program, model, trainable_by_block.pop(None, []))
    for block in reversed(range(arch.n_layers)):
        grad_hidden = _backward_block(program, model, sizes, block, kept=kept[block],
                                      gathered=gathered,
                                      trainable=trainable_by_block.get(block, []),
                                      grad_hidden=grad_hidden)
    _end_of_backward(program, model, gathered)
    program.free(root)
    program.free(grad_hidden)
    program.free_all(batch)


def _end_of_backward(program: _Program, model: _Model, gathered: list[int]) -> None:
    """What backward's last hooks free or make: the units still gathered, ZeRO-3's last
    gradients, FSDP2's last reduce-scatter input."""
    program.free_all(gathered)
    if program.backward_bucket is not None:
        program.free(program.backward_bucket)
        program.backward_bucket = None
    if model.zero3 is not None:
        # the embeddings' gradient comes last; the epilogue reduces what the bucket holds
        # (stage3.py `independent_gradient_partition_epilogue`)
        _zero3_gradients(program, model, model.zero3.embeddings)
        _zero3_reduce(program, model)
    if program.reduce_scatter_input is not None:
        # the root's post-backward callback clears the states at the end of backward
        program.free(program.reduce_scatter_input)
        program.reduce_scatter_input = None


@dataclass(frozen=True, slots=True)
class _Sizes:
    """The bytes of a micro-batch's per-block tensors."""

    residual: int
    """The residual stream (a block's input and output)."""
    working: int
    """The MLP's intermediate-wide working tensor."""
    saved: tuple[int, ...]
    """What one block saves for backward, tensor by tensor. Kept from forward to backward they
    are one request (their lifetimes are the same); a block recomputed under checkpointing makes
    them again one by one in its backward, when the cache holds the blocks that the loss's
    vocabulary-sized tensors left, and each takes its own block there."""
    transient: int
    """One block's backward working tensors."""
    checkpointed: bool
    released: tuple[int, ...] = ()
    """Of a recomputed block's saved tensors, those its backward frees before its working
    tensors exist (`vramplan.training.activations.backward.released_before_block_peak`), as
    requests; `saved` holds the others."""
    offloaded: bool = False
    """Checkpointed blocks keep their inputs in host memory and bring each back to recompute it
    (Unsloth's checkpointing, `vramplan.training.setup.offloads_checkpoints`)."""
    reload_buffers: int = 0
    """Offloaded inputs come back into this many buffers made once, and the last block keeps
    its input on the GPU (`vramplan.training.setup.checkpoint_reload_buffers`); 0: each comes
    back into a fresh tensor."""

    @staticmethod
    def of(arch: Architecture, setup: TrainingSetup, shape: StepShape) -> _Sizes:
        tokens = setup.batch * setup.seq_len
        width = arch.token_mlp_width
        saved = kept_for_backward(arch, shape.spec, block_saved(arch, shape.spec, setup.seq_len),
                                  setup.checkpointing)
        checkpointed = setup.checkpointing is Checkpointing.FULL
        released = {item.name for item in released_before_block_peak(arch, shape.spec)} \
            if checkpointed else set()
        return _Sizes(residual=shape.spec.residual_bytes * arch.hidden_size * tokens,
                      working=shape.spec.compute_bytes * width * tokens,
                      saved=_requests(item.bytes_per_token * tokens for item in saved
                                      if item.name not in released),
                      released=_requests(item.bytes_per_token * tokens for item in saved
                                         if item.name in released),
                      transient=block_backward_transient(arch, shape.spec, saved) * tokens,
                      checkpointed=checkpointed,
                      offloaded=offloads_checkpoints(setup),
                      reload_buffers=checkpoint_reload_buffers(setup))


def _requests(sizes: Iterable[int]) -> tuple[int, ...]:
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


def _gather(program: _Program, sharding: Sharding, n_bytes: int) -> int:
    """A unit gathered on `GATHER_STREAM`. With its shard offloaded, FSDP1 first copies the shard
    to the GPU on `PRE_UNSHARD_STREAM` (_flat_param.py `pre_unshard`: `flat_param_to(device,
    non_blocking=True)`, "This creates a new tensor distinct from any attributes"), all-gathers
    from that copy, which `_use_unsharded_flat_param` then drops (`_all_gather_flat_param`
    records it on the unshard stream).

    FSDP2 (`Sharding.copy_out`) all-gathers into one flat output allocated on its copy-in
    stream, then copies it out into the unsharded parameters, allocated on the default stream
    (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py `foreach_all_gather`,
    `foreach_all_gather_copy_out`: `alloc_all_gather_outputs`); the flat output lives until the
    next unit's copy-out (_fsdp_param_group.py `wait_for_unshard`: `all_gather_state = None`
    "free the all-gather result"). Returns the unsharded parameters."""
    if sharding.copy_out:
        flat = program.alloc(n_bytes, GATHER_STREAM)
        if program.gather_output is not None:
            program.free(program.gather_output)
        program.gather_output = flat
        return program.alloc(n_bytes)
    copy = program.alloc(ceil_div(n_bytes, max(sharding.gradients, 1)), PRE_UNSHARD_STREAM) \
        if sharding.flat_units and not sharding.weights else 0
    gathered = program.alloc(n_bytes, GATHER_STREAM)
    if copy:
        program.free(copy)
    return gathered


def _forward(program: _Program, arch: Architecture, sizes: _Sizes,
             sharding: Sharding) -> tuple[int, list[list[int]], list[int]]:
    """Every block's forward: its gathered parameters (under FSDP), what it saves, its working
    tensors, its output. Returns the last hidden state, what each block keeps for backward and
    the gathered units still held."""
    hidden = program.alloc(sizes.residual)
    kept: list[list[int]] = []
    gathered: list[int] = []
    for block in range(arch.n_layers):
        gathered.append(_gather(program, sharding, sharding.gather_bytes))
        if len(gathered) > 2 and not sharding.keep_gathered:
            program.free(gathered.pop(0))
        offloaded = sizes.offloaded and not (sizes.reload_buffers and block == arch.n_layers - 1)
        if sizes.checkpointed:
            # torch.utils.checkpoint keeps the block's input (in host memory: none here)
            kept.append([] if offloaded else [hidden])
            working = [program.alloc(n) for n in sizes.saved + sizes.released]
        else:
            kept.append([program.alloc(sum(sizes.saved))])
            working = []
            if sharding.pinned_by_autograd:
                # freed when the block's backward has run (its linears' nodes free them)
                kept[-1].insert(0, gathered.pop())
        working += [program.alloc(sizes.working), program.alloc(sizes.residual)]
        program.free_all(working)
        out = program.alloc(sizes.residual)
        if not sizes.checkpointed or offloaded:
            program.free(hidden)
        hidden = out
    if not sharding.keep_gathered:
        program.free_all(gathered)
    return hidden, kept, gathered


def _backward_block(program: _Program, model: _Model, sizes: _Sizes, block: int, *,
                    kept: list[int], gathered: list[int], trainable: list[int],
                    grad_hidden: int) -> int:
    """One block's backward (gathered again under FSDP, recomputed under checkpointing); returns
    the gradient of its input."""
    sharding = model.sharding
    prefetched = sharding.prefetch_late and bool(gathered)
    if not (sharding.keep_gathered or prefetched):
        gathered.append(_gather(program, sharding, sharding.gather_bytes))
    # an offloaded input comes back to the GPU first (into a reload buffer, or a fresh tensor);
    # the recomputed block then saves it
    brought_back = [program.alloc(sizes.residual)] \
        if sizes.offloaded and not sizes.reload_buffers else []
    recomputed = brought_back + [program.alloc(n) for n in sizes.saved] \
        if sizes.checkpointed else []
    program.free_all([program.alloc(n) for n in sizes.released])
    unit_grad = program.alloc(sharding.unit_grad_bytes)
    _block_backward(program, model, trainable, recomputed + kept, sizes.transient)
    if sharding.prefetch_late and block > 0:
        gathered.append(_gather(program, sharding, sharding.gather_bytes))
    if sharding.unit_grad_bytes:
        _reduce_unit(program, model, block)
    if sharding.copy_out and sharding.unit_grad_bytes:
        # FSDP2 keeps the reduce-scatter input until the next unit's post-backward
        # (`FSDPCommContext.reduce_scatter_states`)
        if program.reduce_scatter_input is not None:
            program.free(program.reduce_scatter_input)
        program.reduce_scatter_input = unit_grad
    else:
        program.free(unit_grad)
    if len(gathered) > 1 or sharding.keep_gathered:
        program.free(gathered.pop(0))
    grad_in = program.alloc(sizes.residual)
    program.free(grad_hidden)
    return grad_in


def _reduce_unit(program: _Program, model: _Model, block: int) -> None:
    """A block's reduce-scatter: its gradient shard, made on the reduce stream, kept until the
    optimizer step (and added to in place by later micro-batches). FSDP2 makes the
    reduce-scatter's output in the reduce dtype on its reduce-scatter stream, and a sharded
    parameter's `.grad` is a view of it, or of its cast to the parameter's dtype, made there too
    (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py `foreach_reduce`: "The RS output is
    allocated in the RS stream and used in the default stream (for optimizer)"); FSDP1 reduces
    on its post-backward stream (_runtime_utils.py `_reduce_grad`). Freed by `zero_grad`, the
    blocks stay cached on that stream, out of the default stream's reach in the next forward."""
    key = -1 - block
    shard = model.sharding.unit_grad_shard_bytes
    if key in model.grads:
        program.free(program.alloc(shard, REDUCE_STREAM))
    else:
        model.grads[key] = (program.alloc(shard, REDUCE_STREAM), shard)


def _loss(program: _Program, arch: Architecture, *, rows: int, tokens: int, hidden: int,
          compute: int, code: TransformersCode, batch: int, loss_16bit: bool,
          keep: bool, previous: int | None, cast_after_shift: bool = False,
          outputs_fp32: bool = False) -> tuple[int, int | None]:
    """The head, the logits and the cross-entropy, forward then the start of backward, as
    transformers' `ForCausalLMLoss` runs them (16-bit logits, their fp32 copy, the saved fp32
    log-softmax; backward: the fp32 gradients of the log-softmax and of the logits, then their
    16-bit cast); a chunked loss holds one chunk at a time. Before v4.49 an unchunked loss
    takes an fp32 copy of the logits without their last position (`_shifted_loss`). A loss in
    the 16-bit dtype (`loss_16bit`, `vramplan.training.setup.loss_in_16bit`) takes no fp32 copy.
    With `keep` (one chunk), the logits the model returns are not freed: a loop keeps them;
    `previous`, the logits the loop still holds from the micro-batch before, is freed when the
    forward returns. A 16-bit loss's code under autocast (`cast_after_shift`):
    `_shifted_loss_cast_by_autocast`. Returns the gradient of the last hidden state and the
    kept logits."""
    if code.shifts_logits and rows == tokens and cast_after_shift and compute != FP32:
        return _shifted_loss_cast_by_autocast(program, arch, tokens=tokens, hidden=hidden,
                                              compute=compute, batch=batch, keep=keep,
                                              previous=previous, outputs_fp32=outputs_fp32)
    if code.shifts_logits and rows == tokens:
        return _shifted_loss(program, arch, tokens=tokens, hidden=hidden, compute=compute,
                             code=code, batch=batch, loss_16bit=loss_16bit, keep=keep,
                             previous=previous)
    vocab = arch.vocab_size
    loss_bytes = compute if loss_16bit else FP32
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    chunk_grads: list[int] = []
    returned: int | None = None
    for chunk_rows in _chunks(tokens, rows):
        logits = program.alloc(compute * vocab * chunk_rows)
        upcast = program.alloc(FP32 * vocab * chunk_rows) if loss_bytes != compute else logits
        log_probs = program.alloc(loss_bytes * vocab * chunk_rows)
        if upcast != logits:
            program.free(upcast)
        if keep:
            returned = logits
        else:
            program.free(logits)
        chunk_grads.append(log_probs)
    if previous is not None:
        program.free(previous)
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    for log_probs in chunk_grads:
        rows_grad = program.alloc(loss_bytes * vocab * rows)
        logits_grad = program.alloc(loss_bytes * vocab * rows)
        program.free(rows_grad)
        program.free(log_probs)
        if loss_bytes == compute:
            program.free(logits_grad)
        else:
            program.free(_cast(program, logits_grad, compute * vocab * rows, compute))
    program.free(saved_hidden)
    return grad_hidden, returned


def _fused_linear_loss(program: _Program, arch: Architecture, *, rows: int, tokens: int,
                       hidden: int, compute: int, head_grad_bytes: int) -> tuple[int, int]:
    """A fused linear cross-entropy as Liger-Kernel runs it (`vramplan.training.activations
    .head_and_loss`): the hidden states' gradient and a trained head's gradient made first, then
    chunk by chunk the logits and the chunk's hidden gradient (`grad_logits_chunk @ weight`),
    copied into place and freed with the chunk. The gradients are kept for backward. Returns the
    hidden states' gradient and the head's."""
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    head_grad = program.alloc(head_grad_bytes)
    losses = program.alloc(FP32 * tokens)
    # each chunk frees what it made, so the next one of its size finds the same cached blocks: a
    # full chunk and the last, shorter one replay the loop (Unsloth's can run thousands)
    for chunk_rows in _chunk_sizes(tokens, rows):
        logits = program.alloc(compute * arch.vocab_size * chunk_rows)
        program.free(program.alloc(compute * arch.hidden_size * chunk_rows))
        program.free(logits)
    program.free(losses)
    program.free(hidden)
    program.backward_begins()
    return grad_hidden, head_grad


def _vocab_parallel_loss(program: _Program, arch: Architecture, *, tokens: int, hidden: int,
                         compute: int, compiled: bool = False, te_kernel: bool = False) -> int:
    """Megatron-LM's cross-entropy (`vramplan.training.activations.head._vocab_parallel_loss`): the
    16-bit logits and their fp32 copy, made a softmax in place and saved; in backward the
    softmax becomes the gradient in place and is cast to 16 bits. `compiled`: its native fused
    version, whose compiled steps update the fp32 logits through a fresh buffer, in forward and
    in backward (`HeadSpec.native_fused_cross_entropy`). `te_kernel`: Transformer Engine's
    kernel, which writes the gradient over the 16-bit logits and keeps nothing else
    (`HeadSpec.te_cross_entropy`)."""
    every = arch.vocab_size * tokens
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * every)
    if te_kernel:
        program.free(hidden)
        program.backward_begins()
        grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
        program.free(logits)
        program.free(saved_hidden)
        return grad_hidden
    softmax = _cast(program, logits, FP32 * every, compute)
    if compiled:
        program.free(program.alloc(FP32 * every))
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    fresh = program.alloc(FP32 * every) if compiled else None
    program.free(_cast(program, softmax, compute * every, compute))
    if fresh is not None:
        program.free(fresh)
    program.free(saved_hidden)
    return grad_hidden


def _in_place_loss(program: _Program, arch: Architecture, *, tokens: int, hidden: int,
                   compute: int) -> int:
    """Unsloth's `fast_cross_entropy_loss` (`vramplan.training.activations.head._kernel_loss`): the
    16-bit logits, saved, their fp32 copy in the returned outputs, and their gradient written
    over them in backward."""
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * arch.vocab_size * tokens)
    rows = program.alloc(2 * FP32 * tokens)  # the loss and log-sum-exp of each row
    # the returned logits' fp32 copy (accelerate's `convert_outputs_to_fp32`), dropped with the
    # outputs
    program.free(program.alloc(UNSLOTH_RETURNED_LOGITS_COPY * arch.vocab_size * tokens))
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    program.free(logits)
    program.free(rows)
    program.free(saved_hidden)
    return grad_hidden


def _loss_parallel(program: _Program, arch: Architecture, *, tokens: int, hidden: int,
                   compute: int) -> int:
    """The cross-entropy under DTensor's `loss_parallel()`
    (`vramplan.training.activations.head._loss_parallel`), on this GPU's share of the logits: the
    16-bit logits, their fp32 copy, `shifted`, `exp(shifted)`, then the kept log-probabilities
    (the loop deletes `pred`); backward: `zeros_like`, `exp`, their sum, the gradient, then
    its 16-bit cast for the output layer."""
    elements = arch.vocab_size * tokens
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * elements)
    program.free(hidden)
    upcast = program.alloc(FP32 * elements)
    shifted = program.alloc(FP32 * elements)
    program.free(program.alloc(FP32 * elements))  # exp(shifted), summed
    log_probs = program.alloc(FP32 * elements)
    program.free(shifted)
    program.free(upcast)
    program.free(logits)
    program.backward_begins()
    zeros = program.alloc(FP32 * elements)
    exp = program.alloc(FP32 * elements)
    total = program.alloc(FP32 * elements)
    program.free(zeros)
    program.free(exp)
    grad = program.alloc(FP32 * elements)
    program.free(total)
    program.free(log_probs)
    grad_logits = program.alloc(compute * elements)
    program.free(grad)
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    program.free(grad_logits)
    program.free(saved_hidden)
    return grad_hidden


def _compiled_loss(program: _Program, arch: Architecture, *, tokens: int, hidden: int,
                   compute: int) -> int:
    """torchtitan's compiled cross-entropy (`vramplan.training.activations.head._compiled_loss`):
    the 16-bit logits saved (with a log-sum-exp per row, not counted), then one 16-bit
    gradient."""
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * arch.vocab_size * tokens)
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    grad_logits = program.alloc(compute * arch.vocab_size * tokens)
    program.free(logits)
    program.free(grad_logits)
    program.free(saved_hidden)
    return grad_hidden


def _shifted_loss(program: _Program, arch: Architecture, *, tokens: int, hidden: int,
                  compute: int, code: TransformersCode, batch: int, loss_16bit: bool,
                  keep: bool, previous: int | None) -> tuple[int, int | None]:
    """transformers' causal-LM loss before v4.49 (`vramplan.training.activations
    ._shifted_hf_loss`, huggingface/transformers v4.45.2 models/llama/modeling_llama.py,
    v4.46.0 loss/loss_utils.py): the fp32 logits (cast in the model up to v4.45, freeing the
    16-bit head output; in the loss from v4.46, the 16-bit logits alive beside them), the
    contiguous copy of the `tokens - batch` shifted rows and its saved log-softmax; in backward
    the NLL's and the log-softmax's gradients of the shifted rows, `slice_backward`'s
    zero-filled gradient of every row, then its 16-bit cast. A model whose loss never upcast
    (`loss_16bit`: `TransformersCode.loss_16bit`) does it all in the 16-bit dtype. `keep` and
    `previous` as in `_loss`: the logits the model returns are the fp32 ones up to v4.45 and the
    16-bit ones after."""
    every, shifted = arch.vocab_size * tokens, arch.vocab_size * (tokens - batch)
    loss_bytes = compute if loss_16bit else FP32
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * every)
    upcast = program.alloc(FP32 * every) if loss_bytes != compute else logits
    if code.logits_fp32_in_model and upcast != logits:
        program.free(logits)
    returned = upcast if code.logits_fp32_in_model else logits
    copy = program.alloc(loss_bytes * shifted)
    log_probs = program.alloc(loss_bytes * shifted)
    program.free(copy)
    # the loss's fp32 copy, then the logits the model returned, unless a loop keeps them
    for tensor in dict.fromkeys((upcast, returned)):
        if not (keep and tensor == returned):
            program.free(tensor)
    grad_hidden, rows_grad = _shifted_loss_backward_start(
        program, arch, tokens=tokens, hidden=hidden, compute=compute, previous=previous,
        rows_bytes=loss_bytes * shifted, log_probs=log_probs)
    logits_grad = program.alloc(loss_bytes * every)
    program.free(rows_grad)
    program.free(logits_grad if loss_bytes == compute
                 else _cast(program, logits_grad, compute * every, compute))
    program.free(saved_hidden)
    return grad_hidden, returned if keep else None


def _shifted_loss_cast_by_autocast(program: _Program, arch: Architecture, *, tokens: int,
                                   hidden: int, compute: int, batch: int, keep: bool,
                                   previous: int | None,
                                   outputs_fp32: bool) -> tuple[int, int | None]:
    """A 16-bit loss's code under autocast (`vramplan.training.activations
    ._shifted_16bit_loss_under_autocast`): the 16-bit logits, their shifted 16-bit copy,
    `cross_entropy`'s fp32 cast of it and the saved fp32 log-softmax, the cast and the copy
    freed; accelerate's fp32 copy of the returned logits (`outputs_fp32`), which replaces them
    in the outputs. Backward: the NLL's and the log-softmax's fp32 gradients of the shifted
    rows, their 16-bit cast, `slice_backward`'s 16-bit gradient of every row."""
    every, shifted = arch.vocab_size * tokens, arch.vocab_size * (tokens - batch)
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * every)
    copy = program.alloc(compute * shifted)
    cast = program.alloc(FP32 * shifted)
    log_probs = program.alloc(FP32 * shifted)
    program.free(cast)
    program.free(copy)
    returned = logits
    if outputs_fp32:
        returned = program.alloc(FP32 * every)
        program.free(logits)
    if not keep:
        program.free(returned)
    grad_hidden, rows_grad = _shifted_loss_backward_start(
        program, arch, tokens=tokens, hidden=hidden, compute=compute, previous=previous,
        rows_bytes=FP32 * shifted, log_probs=log_probs)
    rows_grad = _cast(program, rows_grad, compute * shifted, compute)
    logits_grad = program.alloc(compute * every)
    program.free(rows_grad)
    program.free(logits_grad)
    program.free(saved_hidden)
    return grad_hidden, returned if keep else None


def _shifted_loss_backward_start(program: _Program, arch: Architecture, *, tokens: int,
                                 hidden: int, compute: int, previous: int | None,
                                 rows_bytes: int, log_probs: int) -> tuple[int, int]:
    """The end of a shifted loss's forward and the start of its backward: the previous logits
    and the last hidden state freed, the hidden state's gradient, the NLL's gradient of the
    shifted rows and the log-softmax's (`rows_bytes` each), the NLL's and the saved
    log-softmax freed. Returns the hidden state's gradient and the shifted rows' gradient."""
    if previous is not None:
        program.free(previous)
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    nll_grad = program.alloc(rows_bytes)
    rows_grad = program.alloc(rows_bytes)
    program.free(nll_grad)
    program.free(log_probs)
    return grad_hidden, rows_grad


def _cast(program: _Program, tensor: int, n_bytes: int, compute: int) -> int:
    """`tensor` cast between the 16-bit compute dtype and fp32 (`n_bytes` after the cast), the
    source freed once the copy exists; in fp32 training there is no cast: `tensor` itself."""
    if compute == FP32:
        return tensor
    cast = program.alloc(n_bytes)
    program.free(tensor)
    return cast


def _chunk_sizes(total: int, size: int) -> list[int]:
    """The distinct sizes of `_chunks(total, size)`, in their order."""
    full, last = divmod(total, size)
    return ([size] if full else []) + ([last] if last else [])


def _chunks(total: int, size: int) -> Iterator[int]:
    done = 0
    while done < total:
        yield min(size, total - done)
        done += size


def _block_backward(program: _Program, model: _Model, trainable: list[int], saved: list[int],
                    transient: int) -> None:
    """One block's backward: autograd runs its nodes in reverse (the MLP first), each frees
    what it saved once it has run and produces its weight's gradient; the MLP's working
    tensors exist while the MLP's nodes run."""
    temporary = program.alloc(transient)
    grads, frees = list(reversed(trainable)), list(reversed(saved))
    for index in range(max(len(grads), len(frees))):
        if index < len(grads):
            _make_grads(program, model, [grads[index]])
        if index < len(frees):
            program.free(frees[index])
        if index == len(frees) // 2:
            program.free(temporary)
    if not frees:
        program.free(temporary)
    saved.clear()


def _trainable_by_block(params: tuple[ParamTensor, ...]) -> dict[int | None, list[int]]:
    grouped: dict[int | None, list[int]] = {}
    for index, tensor in enumerate(params):
        if tensor.trainable:
            grouped.setdefault(tensor.block, []).append(index)
    return grouped


def _make_grads(program: _Program, model: _Model, indices: list[int]) -> None:
    """AccumulateGrad: a new gradient becomes `.grad`; an existing one is added to in place
    (the new gradient is a temporary). Under FSDP a block's gradients are its unit's
    (`_reduce_unit`); elsewhere a sharded gradient is this GPU's partition."""
    if model.sharding.unit_grad_bytes and any(model.params[i].block is not None
                                              for i in indices):
        return
    if model.flat_grads is not None:
        if model.zero3 is not None:
            for block in dict.fromkeys(model.params[i].block for i in indices):
                _zero3_gradients(program, model, model.zero3.head if block is None
                                 else model.zero3.blocks[block])
        return
    divisor = model.sharding.gradients
    if not divisor:
        return
    # FSDP2 reduces the root's gradients as a block's, on its reduce-scatter stream
    # (`_reduce_unit`; `copy_out` is FSDP2's); FSDP1's root, one flat parameter, is left on the
    # default stream (its `_saved_grad_shard` handling not read)
    stream = REDUCE_STREAM if model.sharding.unit_grad_bytes and model.sharding.copy_out else 0
    for index in reversed(indices):
        n_bytes = ceil_div(model.params[index].n_bytes, divisor)
        if index in model.grads:
            program.free(program.alloc(n_bytes, stream))
        else:
            model.grads[index] = (program.alloc(n_bytes, stream), n_bytes)


def _zero3_gradients(program: _Program, model: _Model, tensors: tuple[ParamTensor, ...]) -> None:
    """DeepSpeed ZeRO-3's gradient hooks (deepspeedai/DeepSpeed runtime/zero/stage3.py, the same
    from v0.9.0 to edaa7221: `reduce_independent_p_g_buckets_and_remove_grads`,
    `__add_grad_to_ipg_bucket`): autograd makes each parameter's whole gradient on the default
    stream; the hook reduces the bucket first if this gradient would overflow it, then copies
    the gradient into the bucket (the persistent buffer) and frees it. A gradient larger than
    the bucket is not copied: it stays until the next reduction."""
    bucket = model.bucket
    for tensor in tensors:
        whole = program.alloc(tensor.n_bytes)
        if bucket.elements and bucket.elements + tensor.elements \
                > model.sharding.zero3_bucket_elements:
            _zero3_reduce(program, model)
        bucket.elements += tensor.elements
        bucket.n_bytes += tensor.n_bytes
        if tensor.elements <= model.sharding.zero3_bucket_elements:
            program.free(whole)
        else:
            bucket.outside.append(whole)


def _zero3_reduce(program: _Program, model: _Model) -> None:
    """The bucket reduce-scattered on DeepSpeed's reduce stream (`__reduce_and_partition_ipg_
    grads` -> `__avg_scatter_grads` -> runtime/comm/coalesced_collectives.py
    `reduce_scatter_coalesced`): `torch.cat` of every gradient's partitions for every rank, a
    copy of the bucket made on that stream, whose blocks stay cached for it alone; each rank's
    partition is copied into the flat gradient buffer (`partition_grads`), which frees the
    gradients, and the copy is freed."""
    bucket = model.bucket
    if bucket.n_bytes:
        program.free(program.alloc(bucket.n_bytes, REDUCE_STREAM))
    program.free_all(bucket.outside)
    bucket.elements = bucket.n_bytes = 0
    bucket.outside.clear()


def _optimizer_step(program: _Program, setup: TrainingSetup, model: _Model) -> None:
    program.events.append(mark("optimizer_step"))
    if model.sharding.step_group_elements is not None and model.flat_grads is not None \
            and model.sharding.states:
        _sub_group_step(program, setup, model)
        return
    trainable = [t for t in model.params if t.trainable]
    if model.sharding.step_tensors is StepTensors.PARTITION and trainable:
        # one state of each kind for the partition
        trainable = [ParamTensor(sum(t.elements for t in trainable),
                                 sum(t.n_bytes for t in trainable), True, None)]
    elif model.sharding.step_tensors is StepTensors.SHARDS:
        trainable = [replace(t, rows=0) for t in trainable]  # no matrix to factor
    divisor = model.sharding.states
    if setup.precision is Precision.MIXED and divisor:
        # each 16-bit gradient becomes an fp32 gradient of its master and is freed
        fp32_grads: dict[int, tuple[int, int]] = {}
        for key, (grad, n_bytes) in model.grads.items():
            fp32_grads[key] = (program.alloc(2 * n_bytes), 2 * n_bytes)
            program.free(grad)
        model.grads = fp32_grads
    if not model.states and divisor:
        for tensor in trainable:
            model.states += [program.alloc(ceil_div(n, divisor))
                             for n in _state_tensors(tensor, setup)]
    if divisor:
        _step_temporaries(program, setup, trainable, divisor)
    program.events.append(mark("zero_grad"))
    for grad, _ in model.grads.values():
        program.free(grad)
    model.grads = {}


def _zero_init_buffer(program: _Program, params: tuple[ParamTensor, ...],
                      sharding: Sharding) -> None:
    """DeepSpeed's `initialize_optimizer_states`, run when the ZeRO optimizer is built, before
    the first forward (deepspeedai/DeepSpeed @edaa7221): ZeRO-3 (runtime/zero/stage3.py) makes
    one fp32 `gradient_buffer` of its largest sub-group's partition, ZeRO-1/2
    (runtime/zero/stage_1_and_2.py) one fp32 gradient partition per parameter group, set as the
    fp32 partitions' `.grad`, then `group.grad = None` frees them (on the GPU unless the
    optimizer is offloaded). The states are no longer made there: "Remove optimizer step on
    initialization" (18179807, #5104, DeepSpeed 0.13.2) leaves them to the first step."""
    if sharding.step_group_elements is not None:
        sizes = [FP32 * max(_sub_groups(params, sharding), default=0)]
    else:
        sizes = [FP32 * sum(ceil_div(t.elements, sharding.states) for t in params
                            if t.trainable)]
    program.free_all([program.alloc(n_bytes) for n_bytes in sizes])


def _sub_groups(params: tuple[ParamTensor, ...], sharding: Sharding) -> list[int]:
    """The elements of each ZeRO-3 sub-group of this rank's partition: partitions are added
    until a group holds `step_group_elements` or more (stage3.py `_create_fp16_sub_groups`)."""
    groups, current = [], 0
    size = sharding.step_group_elements or 0
    for tensor in params:
        if tensor.trainable:
            current += ceil_div(tensor.elements, sharding.states)
            if current >= size:
                groups.append(current)
                current = 0
    return [*groups, current] if current else groups


def _sub_group_step(program: _Program, setup: TrainingSetup, model: _Model) -> None:
    """ZeRO-3's step, sub-group by sub-group (stage3.py `step`): the group's gradients are
    flattened and cast to an fp32 gradient (`_prepare_fp32_grad_for_sub_group`), the
    optimizer updates the group's flat master (its states made at the first step), the fp32
    gradient is freed (`_release_sub_group`); the flat 16-bit gradient buffer is kept."""
    first = not model.states
    if model.zero3 is not None:
        # the gradient norm (`get_grad_norm_direct`, v0.9.0 to edaa7221) reads each partition
        # as `g.double().norm(2)`: an fp64 copy of it at a time
        for elements in model.zero3.partitions():
            program.free(program.alloc(8 * elements))
    for elements in _sub_groups(model.params, model.sharding):
        group = ParamTensor(elements, FP32 * elements, True, None)
        flat = program.alloc(weight_itemsize(setup.precision) * elements)
        fp32 = program.alloc(FP32 * elements)
        program.free(flat)
        if first:
            model.states += [program.alloc(n) for n in _state_tensors(group, setup)]
        _step_temporaries(program, setup, [group], 1)
        program.free(fp32)
    program.events.append(mark("zero_grad"))


def _step_temporaries(program: _Program, setup: TrainingSetup,
                      trainable: list[ParamTensor], divisor: int) -> None:
    """torch AdamW `foreach`: `_foreach_sqrt(exp_avg_sqs)` makes one state-sized tensor per
    parameter at once; `for-loop`: a parameter's square root and its quotient, the quotient
    (`denom`) kept until the next parameter's is made; an optimizer per parameter in backward:
    one; `fused` and bitsandbytes: none; Adafactor: `_adafactor_steps`
    (`optimizer_step_temporaries`)."""
    if setup.optimizer not in (Optimizer.ADAMW, Optimizer.ADAFACTOR):
        return
    impl = optimizer_impl(setup)
    s = trainable_state_itemsize(setup)
    sizes = [ceil_div(s * t.elements, divisor) for t in trainable]
    if setup.optimizer is Optimizer.ADAFACTOR:
        _adafactor_steps(program, [ceil_div(t.elements, divisor) for t in trainable], s,
                         one_call_each=impl is OptimizerImpl.IN_BACKWARD)
    elif impl is OptimizerImpl.FOREACH:
        temporaries = [program.alloc(n) for n in sizes]
        program.free_all(temporaries)
    elif impl is OptimizerImpl.FOR_LOOP:
        at_once = for_loop_tensors_at_once(setup)
        denom = None
        for n in sizes:
            made = [program.alloc(n) for _ in range(at_once)]  # the square root, its quotient
            program.free_all(made[:-1])
            if denom is not None:
                program.free(denom)
            denom = made[-1]
        if denom is not None:
            program.free(denom)
    elif impl is not OptimizerImpl.FUSED:
        for n in sizes:
            program.free(program.alloc(n))


def optimizer_step_temporaries(arch: Architecture, setup: TrainingSetup) -> int:
    """Memory the optimizer step allocates and frees, at its largest moment, on one GPU: the
    model's trainable tensors in its order (`parameter_tensors`), stepped as
    `step_temporaries_over` says (`_step_temporaries` makes the same tensors in the step's
    program)."""
    if not step_makes_temporaries(setup):
        return 0  # the model's tensors are not listed for nothing (a MoE model has many)
    sizes = [t.elements for t in parameter_tensors(arch, setup) if t.trainable]
    return step_temporaries_over(sizes, setup, trainable_state_itemsize(setup))


def step_makes_temporaries(setup: TrainingSetup) -> bool:
    """Whether the optimizer step allocates temporaries at all (`step_temporaries_over`): torch's
    AdamW stepped `for-loop`, `foreach` or in backward, and Adafactor; not `fused` AdamW, nor
    bitsandbytes' 8-bit and paged AdamW or SGD, which update in place."""
    return setup.optimizer is Optimizer.ADAFACTOR or (
        setup.optimizer is Optimizer.ADAMW and optimizer_impl(setup) is not OptimizerImpl.FUSED)


def step_temporaries_over(sizes: Sequence[int], setup: TrainingSetup, itemsize: int, *,
                          one_call_each: bool = False) -> int:
    """The step's temporaries, at their largest, when the optimizer steps tensors of `sizes`
    values in that order, each holding `itemsize` bytes a value; `one_call_each`: a `step()`
    for each tensor (an optimizer in backward; DeepSpeed ZeRO-3's sub-groups, stage3.py
    `_optimizer_step`), whose locals go when it returns.

    torch AdamW `foreach` (the default on CUDA) computes `exp_avg_sq_sqrt =
    torch._foreach_sqrt(exp_avg_sqs)` for every tensor of a call at once and divides it in
    place: one state-sized temporary (torch/optim/adam.py `_multi_tensor_adam`, which AdamW runs
    in torch 2.13; adamw.py `_multi_tensor_adamw` before); `for-loop` computes
    `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)` one tensor at a time
    (`_single_tensor_adam`): the square root and the quotient alive together, beside the
    previous tensor's `denom` until the new one is bound (transformers' own AdamW: one tensor,
    `for_loop_tensors_at_once`); an optimizer in backward runs the default `foreach` over its
    one tensor; `fused` and bitsandbytes' kernels update in place. Adafactor:
    `adafactor_step_bytes` of a tensor, beside the previous tensor's update
    (`_adafactor_steps`)."""
    if not sizes or not step_makes_temporaries(setup):
        return 0
    impl = optimizer_impl(setup)
    separate = one_call_each or impl is OptimizerImpl.IN_BACKWARD
    before = [0] * len(sizes) if separate else [0, *sizes[:-1]]
    if setup.optimizer is Optimizer.ADAFACTOR:
        return max(ADAFACTOR_ITEMSIZE * previous + adafactor_step_bytes(n, itemsize)
                   for previous, n in zip(before, sizes, strict=True))
    if impl is OptimizerImpl.FOR_LOOP:
        at_once = for_loop_tensors_at_once(setup)
        return itemsize * max(previous + at_once * n
                              for previous, n in zip(before, sizes, strict=True))
    return itemsize * (max(sizes) if separate else sum(sizes))  # foreach, in backward


def adafactor_fp32_copies(itemsize: int) -> int:
    """The fp32 copies transformers' Adafactor makes of one parameter and its gradient when they
    are 16-bit (`grad.float()`, `p.float()`), alive through the parameter's update."""
    return 2 if itemsize < ADAFACTOR_ITEMSIZE else 0


def adafactor_step_bytes(elements: int, itemsize: int) -> int:
    """transformers' Adafactor's temporaries for one parameter of `elements` values whose
    tensors hold `itemsize` bytes a value (`_adafactor_steps`): the fp32 copies
    (`adafactor_fp32_copies`) and two parameter-sized fp32 updates at once (`(grad**2) + eps`
    beside `grad**2`, then `_approx_sq_grad`'s product beside it, then `-update` beside
    `update` in `p_data_fp32.add_(-update)`)."""
    return (adafactor_fp32_copies(itemsize) + 2) * ADAFACTOR_ITEMSIZE * elements


def _adafactor_steps(program: _Program, elements: list[int], itemsize: int, *,
                     one_call_each: bool = False) -> None:
    """transformers' `Adafactor.step` over parameters of `elements` values, in order: for each,
    the fp32 copies of a 16-bit gradient and parameter (`grad.float()`, `p.float()`),
    `grad**2` and `+ eps`, `_approx_sq_grad`'s product replacing the sum, and `-update` beside
    it. The loop's variables (`grad`, `p_data_fp32`, `update`) hold the previous parameter's
    tensors until they are bound again (`adafactor_step_bytes`); `one_call_each`: a `step()`
    per parameter (an optimizer in backward), whose locals go when it returns."""
    copies = adafactor_fp32_copies(itemsize)
    # what `grad`, `p_data_fp32` (16-bit parameters only) and `update` are bound to
    held: dict[str, int] = {}

    def bind(name: str, tensor: int | None = None) -> None:
        if name in held:
            program.free(held.pop(name))
        if tensor is not None:
            held[name] = tensor

    for n in elements:
        value = ADAFACTOR_ITEMSIZE * n
        for name in ("grad", "p_data_fp32")[:copies]:
            bind(name)  # bound to `p.grad` or `p` first, then to its fp32 copy
            bind(name, program.alloc(value))
        square = program.alloc(value)
        total = program.alloc(value)
        program.free(square)
        bind("update", total)
        bind("update", program.alloc(value))  # `_approx_sq_grad`'s product
        program.free(program.alloc(value))  # `-update`
        if one_call_each:
            for name in list(held):
                bind(name)
    for name in list(held):
        bind(name)


@dataclass(frozen=True, slots=True)
class ReservedMemory:
    """The caching allocator's view of a step's program."""

    replay: ReplayResult

    @property
    def cache_bytes(self) -> int:
        """What the allocator reserves beyond the allocated peak: block and segment rounding,
        and cached blocks the peak's requests could not use."""
        return max(self.replay.peak_reserved_bytes - self.replay.peak_allocated_bytes, 0)


LOSS_PHASE = "loss"
"""The mark the step program puts where a micro-batch's loss begins."""


@lru_cache(maxsize=64)
def reserved_at_first_loss(arch: Architecture, setup: TrainingSetup, shape: StepShape,
                           config: AllocatorConfig = PYTORCH_DEFAULTS) -> int:
    """What the caching allocator holds when the run's first loss begins: the load and the first
    micro-batch's forward replayed, its segments as the driver counts them
    (`torch.cuda.mem_get_info` sees the allocator's `cudaMalloc`s, not its allocations). What
    comes before that mark does not depend on the loss's shape."""
    events = step_program(arch, setup, shape, steps=1)
    first_loss = events.index(mark(LOSS_PHASE))
    return replay(events[:first_loss], config).reserved_bytes


@lru_cache(maxsize=256)
def reserved_memory(arch: Architecture, setup: TrainingSetup, shape: StepShape, *,
                    sharding: Sharding = WHOLE,
                    config: AllocatorConfig = PYTORCH_DEFAULTS) -> ReservedMemory:
    """Replay `setup`'s step program (on one GPU of `sharding`) through the simulated caching
    allocator."""
    return ReservedMemory(replay(step_program(arch, setup, shape, sharding), config))
