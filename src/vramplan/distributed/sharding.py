"""Across GPUs: what each GPU holds under DDP, ZeRO, FSDP and HSDP, with offload to host memory.

Input: the model states of ONE replica (what a single GPU would hold), by component, in bytes, plus
the few sizes that decide the transient buffers (the largest layer, one wrapped block, the
parameters outside the blocks). Output: the bytes per GPU of each component, the transient buffers
of each phase, and the host memory that offload needs. Pure: no I/O, no torch.

Notation in the comments: P = trainable parameters, N = GPUs that share one copy of the states
(the sharding degree). The stages follow Rajbhandari et al. 2020, "ZeRO: Memory Optimizations
Toward Training Trillion Parameter Models", arXiv:1910.02054, section 5 (P_os, P_os+g, P_os+g+p).
"""

from __future__ import annotations

from dataclasses import replace

from vramplan.bounds import EXPERT_PARALLEL, GPUS, GPUS_PER_NODE, PIPELINE_PARALLEL, TENSOR_PARALLEL
from vramplan.distributed.fsdp import fsdp_states
from vramplan.distributed.parallelism import (
    CAST_ITEMSIZE,
    DEEPSPEED_SCHEMES,
    FSDP_SCHEMES,
    SHARDED_PARAMETER_SCHEMES,
    Parallelism,
    ShardedStates,
    UnitBytes,
)
from vramplan.distributed.zero3_coordinator import (
    zero3_reduce_transient_bytes,
    zero3_sub_group_params,
)
from vramplan.errors import ConflictingOptions, OutOfRange
from vramplan.training.states import ModelStates
from vramplan.units import ceil_div
from vramplan.vocab import FsdpVersion, Offload, Scheme


def check_parallelism(plan: Parallelism) -> Parallelism:
    """`plan` if its fields go together; otherwise an error naming the clash."""
    GPUS.check_int(plan.gpus)
    GPUS_PER_NODE.check_int(plan.gpus_per_node)
    TENSOR_PARALLEL.check_int(plan.tensor_parallel)
    PIPELINE_PARALLEL.check_int(plan.pipeline_parallel)
    EXPERT_PARALLEL.check_int(plan.expert_parallel)
    if plan.gpus % plan.model_parallel:
        raise ConflictingOptions("gpus", "tensor_parallel", str(plan.gpus), "gpus_multiple",
                                 model_parallel=plan.model_parallel)
    if plan.data_parallel % plan.expert_parallel:
        raise ConflictingOptions("expert_parallel", "gpus", str(plan.expert_parallel),
                                 "experts_split", data_parallel=plan.data_parallel)
    if plan.scheme is Scheme.NONE and plan.data_parallel > 1:
        raise ConflictingOptions("sharding", "gpus", plan.scheme.value, "one_copy",
                                 gpus=plan.gpus, copies=plan.data_parallel)
    if plan.scheme is Scheme.HSDP and plan.model_parallel > 1:
        raise ConflictingOptions("sharding", "tensor_parallel", plan.scheme.value,
                                 "hsdp_model_parallel")
    if plan.scheme is Scheme.HSDP and plan.gpus > plan.gpus_per_node \
            and plan.gpus % plan.gpus_per_node:
        raise ConflictingOptions("gpus", "gpus_per_node", str(plan.gpus), "hsdp_nodes",
                                 per_node=plan.gpus_per_node)
    if plan.offload is Offload.PARAMS_OPTIMIZER and plan.scheme not in SHARDED_PARAMETER_SCHEMES:
        raise ConflictingOptions("offload", "sharding", plan.offload.value, "offload_params",
                                 scheme=plan.scheme.value)
    if plan.offload is Offload.OPTIMIZER and plan.scheme not in DEEPSPEED_SCHEMES:
        # FSDP's CPUOffload moves parameters, gradients and the step together; optimizer-only
        # offload is DeepSpeed's ZeRO-Offload (stages 1 to 3).
        raise ConflictingOptions("offload", "sharding", plan.offload.value, "offload_optimizer",
                                 scheme=plan.scheme.value)
    return plan


def shard_degree(plan: Parallelism) -> int:
    """GPUs over which one copy of the sharded states is split."""
    if plan.scheme in (Scheme.NONE, Scheme.DDP):
        return 1
    if plan.scheme is Scheme.HSDP:
        return plan.ranks_per_node
    return plan.data_parallel


def steps_1d_tensors(plan: Parallelism) -> bool:
    """A ZeRO optimizer hands the client optimizer 1-D fp32 tensors: DeepSpeed this rank's
    partition as one (`steps_flat_partition`), ColossalAI a 1-D shard of each parameter
    (colossalai/zero/low_level/low_level_optim.py `_create_master_param_current_rank`:
    `param.data.view(-1)` split over the ranks); not Megatron-LM's distributed optimizer
    (`Parallelism.main_grad_buffer`), whose parameters keep their shape."""
    return plan.scheme in DEEPSPEED_SCHEMES and not plan.main_grad_buffer


def steps_flat_partition(plan: Parallelism) -> bool:
    """DeepSpeed's ZeRO steps this rank's fp32 partition as one flat tensor (stage_1_and_2.py
    `single_partition_of_fp32_groups`; ZeRO-3 one sub-group per `step()`, stage3.py
    `fp32_partitioned_groups_flat`, `_optimizer_step`)."""
    return steps_1d_tensors(plan) and plan.deepspeed_zero


def split_optimizer_state_bytes(states: ModelStates, plan: Parallelism) -> int:
    """The whole model's optimizer states that `plan` splits over its GPUs: as the optimizer
    keeps them on 1-D tensors where it steps such (`steps_1d_tensors`,
    `ModelStates.flat_optimizer_state_bytes`), on the model's tensors elsewhere."""
    if steps_1d_tensors(plan):
        return states.flattened_optimizer_state_bytes
    return states.optimizer_state_bytes


def shard_model_states(states: ModelStates, plan: Parallelism,
                       units: UnitBytes | None = None) -> ShardedStates:
    """What each GPU holds for `states` under `plan`; `units`: FSDP's units in bytes when known
    (None: the model's average bytes per parameter)."""
    check_parallelism(plan)
    _check_states(states)
    n = shard_degree(plan)
    if plan.scheme is Scheme.ZERO1 and plan.main_grad_buffer:
        sharded = _distributed_optimizer(states, plan, n)
    elif plan.scheme in DEEPSPEED_SCHEMES:
        sharded = _deepspeed(states, plan, n)
    elif plan.scheme in FSDP_SCHEMES:
        sharded = fsdp_states(states, plan, n, units)
    else:
        sharded = _replicated(states, plan)
    return replace(sharded, module_buffers_bytes=_module_buffers(states, plan))


def _module_buffers(states: ModelStates, plan: Parallelism) -> int:
    """The model's buffers on each GPU. Under FSDP1 with accelerate's mixed-precision policy
    (`params_cast_for_compute`), the floating-point ones are cast to its 16-bit dtype too:
    `FullyShardedDataParallelPlugin.set_mixed_precision` builds `MixedPrecision(param_dtype=dtype,
    reduce_dtype=dtype, buffer_dtype=dtype)` (accelerate/utils/dataclasses.py, `buffer_autocast`
    False), and FSDP1 replaces each floating buffer by its cast in the first forward
    (torch/distributed/fsdp/_runtime_utils.py `_cast_buffers_to_dtype_and_device`)."""
    if not (plan.params_cast_for_compute and plan.scheme in FSDP_SCHEMES
            and plan.fsdp_version is FsdpVersion.FSDP1):
        return states.buffer_bytes
    floating = states.float_buffer_bytes
    return states.buffer_bytes - floating + floating * CAST_ITEMSIZE // states.weight_itemsize


def _check_states(states: ModelStates) -> None:
    for name in ("trainable_params", "frozen_params", "trainable_weight_bytes",
                 "frozen_weight_bytes", "gradient_bytes", "master_weight_bytes",
                 "optimizer_state_bytes", "largest_layer_params", "block_params", "root_params"):
        if getattr(states, name) < 0:
            raise OutOfRange(name, str(getattr(states, name)))
    if states.weight_itemsize <= 0 or states.gradient_itemsize <= 0:
        raise OutOfRange("weight_itemsize", str(states.weight_itemsize))


def _replicated(states: ModelStates, plan: Parallelism) -> ShardedStates:
    """No sharding. DDP adds its reducer's flat gradient buckets, allocated when the model is
    wrapped, unless `gradient_as_bucket_view` (PyTorch DDP docs, see `CommBuffers`); a gradient
    buffer (`Parallelism.main_grad_buffer`) is its own bucket, held from start-up."""
    buckets = 0
    if plan.scheme is Scheme.DDP and not plan.buffers.ddp_gradient_as_bucket_view \
            and not plan.main_grad_buffer:
        buckets = states.gradient_bytes
    return ShardedStates(
        parallelism=plan, shard_degree=1,
        weights_bytes=states.weight_bytes, gradients_bytes=states.gradient_bytes,
        master_weights_bytes=states.master_weight_bytes,
        optimizer_states_bytes=states.optimizer_state_bytes,
        gradients_at_step_bytes=states.gradient_bytes, persistent_buffers_bytes=buckets,
        forward_buffers_bytes=0, backward_buffers_bytes=0, step_buffers_bytes=0,
        host_bytes_per_rank=0, pinned_host_bytes_per_rank=0,
        gradients_from_start=plan.main_grad_buffer and states.gradient_bytes > 0,
    )


def _distributed_optimizer(states: ModelStates, plan: Parallelism, n: int) -> ShardedStates:
    """Megatron-LM's distributed optimizer: every GPU keeps the 16-bit parameters and the whole
    gradient buffer (reduce-scattered in place, each rank stepping on its range of it) and
    `1/n` of the fp32 master weights and optimizer states: 6 + 12/n bytes per parameter for
    bf16 parameters with fp32 gradients and Adam (NVIDIA/Megatron-LM @d98e8a64
    docs/user-guide/features/dist_optimizer.md; megatron/core/optimizer/distrib_optimizer.py:
    the parameters are views of the buffer's `param_data`, the fp32 gradient's range is the
    master's `.grad`, no copy). `--optimizer-cpu-offload` moves the masters and states to the
    host."""
    master = ceil_div(states.master_weight_bytes, n)
    optim = ceil_div(states.optimizer_state_bytes, n)
    host = 0
    if plan.offload is Offload.OPTIMIZER:
        host, master, optim = master + optim, 0, 0
    return ShardedStates(
        parallelism=plan, shard_degree=n,
        weights_bytes=states.weight_bytes, gradients_bytes=states.gradient_bytes,
        master_weights_bytes=master, optimizer_states_bytes=optim,
        gradients_at_step_bytes=states.gradient_bytes, persistent_buffers_bytes=0,
        forward_buffers_bytes=0, backward_buffers_bytes=0, step_buffers_bytes=0,
        host_bytes_per_rank=host, pinned_host_bytes_per_rank=0,
        gradients_from_start=states.gradient_bytes > 0,
    )


def _deepspeed(states: ModelStates, plan: Parallelism, n: int) -> ShardedStates:
    """ZeRO stages 1-3 (Rajbhandari et al. 2020, section 5; DeepSpeed docs "Memory Requirements",
    docs/code-docs/source/memory.rst), with the buffers of DeepSpeed's implementation."""
    stage = {Scheme.ZERO1: 1, Scheme.ZERO2: 2, Scheme.ZERO3: 3}[plan.scheme]
    bufs = plan.buffers
    # ipg bucket: `reduce_bucket_size` elements in the gradient dtype (see CommBuffers).
    ipg = bufs.zero_reduce_bucket_elements * states.gradient_itemsize
    if not states.gradient_bytes:
        ipg = 0
    # The step upcasts this rank's gradient partition to the master dtype (fp32) before the
    # optimizer runs: stage_1_and_2.py `single_grad_partition`, stage3.py `fp32 ... .grad`
    # (memory.rst: "all of them are converted into fp32 before doing the weight updates").
    # ZeRO-3 does it one sub-group at a time and frees each group's fp32 gradient after its
    # update (stage3.py `step`: `_prepare_sub_group`, `_optimizer_step`, `_release_sub_group`).
    step_params = ceil_div(states.trainable_params, n)
    if stage == 3:
        step_params = zero3_sub_group_params(states, bufs, n)
    fp32_grad_partition = step_params * (states.master_itemsize or 0)
    weights = states.weight_bytes if stage < 3 else ceil_div(states.weight_bytes, n)
    grads = states.gradient_bytes if stage == 1 else ceil_div(states.gradient_bytes, n)
    master = ceil_div(states.master_weight_bytes, n)
    optim = ceil_div(split_optimizer_state_bytes(states, plan), n)
    gathered = 0
    if stage == 3:
        # The module being computed plus the prefetch bucket, bounded by max_live_parameters and
        # by the model (DeepSpeed memory.rst: "largest_layer_memory" = the gathered largest layer).
        # With the architecture known, vramplan.distributed.per_gpu replaces this by the modules
        # DeepSpeed's coordinator keeps for reuse (`zero3_gathered_peaks`).
        live = min(states.largest_layer_params + bufs.zero3_prefetch_bucket_elements,
                   bufs.zero3_max_live_parameters, states.params)
        gathered = live * states.weight_itemsize
    # stage 3 allocates its bucket at start-up; stages 1-2 when backward starts, freeing it at
    # its end (`backward_bucket_bytes`)
    kept_ipg = ipg if stage == 3 else 0
    head_check, embedding_check = _offload_checks(states, plan) if stage == 2 else (0, 0)
    reduce = zero3_reduce_transient_bytes(states, bufs) if stage == 3 else 0
    host = pinned = 0
    step = fp32_grad_partition
    prepare = step_params * states.gradient_itemsize if stage == 3 and step else 0
    if plan.offload in (Offload.OPTIMIZER, Offload.PARAMS_OPTIMIZER):
        # ZeRO-Offload: master weights, optimizer states and the fp32 gradient partition live on
        # the host; the GPU keeps only the bucket it reduces through (memory.rst, "General RAM":
        # 16 bytes/param = fp32 params, grads, momentum, variance).
        fp32_grads = ceil_div(states.trainable_params, n) * 4
        host = master + optim + fp32_grads
        pinned = fp32_grads  # memory.rst "Pinned Memory": the 4-byte fp32 gradients
        master = optim = step = prepare = 0
        if not plan.offload_keeps_gradients:
            grads = 0
        if plan.offload is Offload.PARAMS_OPTIMIZER:
            # + the 16-bit parameter partition (memory.rst: 18 = 16 + 2 bytes/param, 6 pinned)
            host += weights
            pinned += weights
            weights = 0
    return ShardedStates(
        parallelism=plan, shard_degree=n,
        weights_bytes=weights, gradients_bytes=grads,
        master_weights_bytes=master, optimizer_states_bytes=optim,
        gradients_at_step_bytes=grads,
        persistent_buffers_bytes=kept_ipg,
        forward_buffers_bytes=gathered,
        backward_buffers_bytes=gathered + ipg - kept_ipg + reduce,
        step_buffers_bytes=step,
        host_bytes_per_rank=host, pinned_host_bytes_per_rank=pinned,
        gradients_from_start=stage == 3 and grads > 0,
        step_group_params=step_params if stage == 3 and step else None,
        step_prepare_bytes=prepare,
        backward_bucket_bytes=ipg - kept_ipg if plan.deepspeed_zero else 0,
        head_check_bytes=head_check, embedding_check_bytes=embedding_check,
    )


OVERFLOW_CHECK_BYTES = 11
"""Bytes per value at the peak of DeepSpeed's ZeRO-1/2 overflow check on the device
(stage_1_and_2.py `_has_inf_or_nan`, 1c9e5ef2d to edaa7221: `float_x = x.float()` 4,
`isnan` 1, `isinf` 1, their `logical_or` 1, and `.float()` of it 4, alive together before
`.max()`)."""

OVERFLOW_CHECK_HOST_SUM_BYTES = 4
"""The same check before 1c9e5ef2d: `float(x.float().sum())`, the fp32 copy alone."""


def _offload_checks(states: ModelStates, plan: Parallelism) -> tuple[int, int]:
    """DeepSpeed ZeRO-2 with the optimizer on the host reduces each gradient of this rank's
    partition as the bucket fills and checks it whole for overflow on the device
    (stage_1_and_2.py v0.14.2 and edaa7221, `copy_grads_in_partition`:
    `update_overflow_tracker_for_param_grad`, renamed `update_offload_overflow_tracker_for_
    param_grad` in e440506b): the largest of these are the embeddings' and an untied head's,
    which the rank holding them checks when backward ends and when it enters the blocks. A
    gradient larger than the bucket is not copied into it (`extra_large_param_to_reduce`) and
    is alive beside its check. Full fine-tuning only: an adapter's check is small. Returns the
    head's and the embeddings' (`ShardedStates.head_check_bytes`, `embedding_check_bytes`)."""
    if not (plan.deepspeed_zero and plan.offload is Offload.OPTIMIZER and states.gradient_bytes
            and states.frozen_params == 0):
        return 0, 0
    per_value = OVERFLOW_CHECK_BYTES if plan.overflow_check_on_device \
        else OVERFLOW_CHECK_HOST_SUM_BYTES

    def checked(values: int) -> int:
        apart = values > plan.buffers.zero_reduce_bucket_elements
        return per_value * values + (states.gradient_itemsize * values if apart else 0)

    embedding = states.embedding_params or states.head_params
    head = states.head_params if states.embedding_params else 0
    return checked(head), checked(embedding)
