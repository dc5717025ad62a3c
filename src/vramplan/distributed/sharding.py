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

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache

from vramplan.bounds import (
    EXPERT_PARALLEL,
    GPUS,
    GPUS_PER_NODE,
    PIPELINE_PARALLEL,
    TENSOR_PARALLEL,
)
from vramplan.errors import ConflictingOptions, OutOfRange
from vramplan.training.states import ModelStates
from vramplan.units import BYTES_PER_MIB, ceil_div
from vramplan.vocab import FsdpVersion, Offload, Scheme


class PipelineSchedule(StrEnum):
    """How micro-batches go through pipeline stages."""

    ONE_F_ONE_B = "1f1b"
    """Megatron-LM's 1F1B: up to `pipeline_parallel` micro-batches in flight on the first stage
    (Narayanan et al. 2021, arXiv:2104.04473)."""
    SEQUENTIAL = "sequential"
    """One micro-batch at a time, stage after stage: a model split across GPUs by layers with no
    data parallelism, as transformers' `device_map="auto"` does through accelerate's hooks
    (each module runs on its device and moves its output to the next)."""


SHARDED_PARAMETER_SCHEMES = frozenset({Scheme.ZERO3, Scheme.FSDP, Scheme.FSDP_GRAD_OP,
                                       Scheme.HSDP})
"""Schemes that shard parameters (and so can offload them)."""
_DEEPSPEED = frozenset({Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3})
FSDP_SCHEMES = frozenset({Scheme.FSDP, Scheme.FSDP_GRAD_OP, Scheme.HSDP})
CAST_ITEMSIZE = 2
"""Bytes per parameter FSDP gathers under a 16-bit mixed-precision `param_dtype`."""



@dataclass(frozen=True, slots=True)
class CommBuffers:
    """The framework settings that size communication buffers, at their documented defaults."""

    ddp_gradient_as_bucket_view: bool = False
    """PyTorch DDP default False: the reducer keeps its own flat copy of every gradient, "the
    saved memory size will be equal to the total gradients size" when True
    (https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html)."""
    ddp_bucket_cap_bytes: int = 25 * BYTES_PER_MIB
    """PyTorch DDP `bucket_cap_mb=25` (same page): the granularity of the all-reduce; the buckets
    together cover all gradients, so the cap changes the count of buckets, not their total."""
    zero_reduce_bucket_elements: int = 500_000_000
    """DeepSpeed `reduce_bucket_size` default 5e8 elements (deepspeed/runtime/zero/config.py):
    with `contiguous_gradients` (default True) ZeRO allocates it whole, in the gradient dtype
    (stage_1_and_2.py `ipg_buffer`, stage3.py `__ipg_bucket_flat_buffer`)."""
    zero3_prefetch_bucket_elements: int = 50_000_000
    """DeepSpeed `stage3_prefetch_bucket_size` default 5e7 elements (config.py)."""
    zero3_max_live_parameters: int = 1_000_000_000
    """DeepSpeed `stage3_max_live_parameters` default 1e9 elements (config.py): the coordinator
    prefetches only while fewer are gathered (partitioned_param_coordinator.py
    `fetch_sub_module`: `max_params_to_prefetch`)."""
    zero3_max_reuse_distance: int = 1_000_000_000
    """DeepSpeed `stage3_max_reuse_distance` default 1e9 elements (config.py): a module's
    parameters stay gathered after it ran when the trace uses them again within this many
    elements (partitioned_param_coordinator.py `__params_to_release`)."""
    zero_sub_group_elements: int = 1_000_000_000
    """DeepSpeed `sub_group_size` default 1e9 elements (config.py): ZeRO-3 steps its partition
    one sub-group at a time (stage3.py `_create_fp16_sub_groups`, `step`)."""
    fsdp_prefetch_units: int = 1
    """Wrapped units gathered ahead of the one computing: FSDP1 `BackwardPrefetch.BACKWARD_PRE`
    (default) and `limit_all_gathers=True` keep at most two units gathered; FSDP2 prefetches one."""


@dataclass(frozen=True, slots=True)
class Zero3ConfigFile:
    """The ZeRO-3 settings of the DeepSpeed config file a framework ships, where they differ
    from DeepSpeed's defaults (`CommBuffers`)."""

    buckets_from_hidden_size: bool
    """`reduce_bucket_size` and `stage3_prefetch_bucket_size` are "auto", which the
    transformers Trainer fills with hidden_size² and 0.9 x hidden_size² (transformers
    integrations/deepspeed.py `HfTrainerDeepSpeedConfig.trainer_config_finalize`)."""
    sub_group_elements: int = 1_000_000_000
    max_live_parameters: int = 1_000_000_000
    max_reuse_distance: int = 1_000_000_000
    reduce_bucket_elements: int | None = None
    """`reduce_bucket_size` given as a number (None: DeepSpeed's default, or "auto")."""
    prefetch_bucket_elements: int | None = None
    """`stage3_prefetch_bucket_size` given as a number (None: the default, or "auto")."""

    def buffers(self, hidden_size: int, base: CommBuffers) -> CommBuffers:
        """`base` with this file's settings, for a model of `hidden_size`."""
        buffers = replace(base, zero_sub_group_elements=self.sub_group_elements,
                          zero3_max_live_parameters=self.max_live_parameters,
                          zero3_max_reuse_distance=self.max_reuse_distance)
        if self.buckets_from_hidden_size:
            buffers = replace(buffers, zero_reduce_bucket_elements=hidden_size * hidden_size,
                              zero3_prefetch_bucket_elements=9 * hidden_size * hidden_size // 10)
        if self.reduce_bucket_elements is not None:
            buffers = replace(buffers, zero_reduce_bucket_elements=self.reduce_bucket_elements)
        if self.prefetch_bucket_elements is not None:
            buffers = replace(buffers,
                              zero3_prefetch_bucket_elements=self.prefetch_bucket_elements)
        return buffers


@dataclass(frozen=True, slots=True)
class Parallelism:
    """How the run spreads over GPUs."""

    scheme: Scheme = Scheme.NONE
    gpus: int = 1
    gpus_per_node: int = 8
    """GPUs in one node: the HSDP shard group and the ranks that share one host's memory."""
    offload: Offload = Offload.NONE
    fsdp_version: FsdpVersion = FsdpVersion.FSDP2
    accumulate_without_sync: bool = False
    """Gradient accumulation inside `no_sync()` (litgpt does it through Fabric's
    `no_backward_sync`): FSDP then keeps the full unsharded gradients between micro-batches."""
    embedding_apart: bool = False
    """FSDP2 with the input embedding a unit of its own, resharded after forward, and the final
    norm and head one unit kept gathered until backward (torchtitan torchtitan/distributed/
    fsdp.py `apply_fsdp_to_decoder`; accelerate utils/fsdp_utils.py `fsdp2_prepare_model`):
    the root holds only the head gathered. False: the embeddings are in the root (PyTorch's
    `fully_shard(model)`, torchtune's `shard_model`)."""
    adapters_wrapped_apart: bool = False
    """FSDP1 with LoRA: every trainable adapter layer is a unit of its own (peft's
    `fsdp_auto_wrap_policy`, installed by the transformers Trainer: peft/utils/other.py wraps
    each leaf module whose weight requires a gradient), so the blocks' flat parameters hold frozen
    weights only and get no gradient. False: the blocks are units mixing frozen and trainable
    weights (litgpt's `auto_wrap_policy={Block}`)."""
    params_cast_for_compute: bool = False
    """FSDP gathers the fp32 parameters of an `amp` run as 16-bit copies (its mixed-precision
    `param_dtype`, `vramplan.presets.frameworks.defaults.FrameworkDefaults.fsdp_casts_params`): each
    gathered unit holds 2 bytes per parameter (FSDP1 `FlatParamHandle._use_low_precision_shard`
    casts the local shard, then all-gathers the low-precision copy)."""
    offload_keeps_gradients: bool = False
    """Under optimizer offload, the reduced 16-bit gradient partition stays on the GPU until the
    step copies it to the host: ColossalAI's `LowLevelZeroOptimizer` puts only the fp32 master
    shards on the CPU (colossalai/zero/low_level/low_level_optim.py @d888c378:
    `device = "cpu" if self._cpu_offload`), keeps each reduced slice in its GradientStore on the
    GPU and moves it in `step` (`grad.to(master_param.dtype).to(master_param.device)`). False:
    DeepSpeed's ZeRO-Offload sends it to pinned host memory during backward."""
    deepspeed_zero: bool = True
    """ZeRO-1/2 is DeepSpeed's `DeepSpeedZeroOptimizer` (stage_1_and_2.py): its gradient bucket
    is made whole when backward starts, before the loss's backward
    (`ShardedStates.backward_bucket_bytes`), and with the optimizer offloaded it checks each
    gradient of its partition for overflow as it reduces it (`ShardedStates.head_check_bytes`,
    `embedding_check_bytes`). False: ColossalAI's `LowLevelZeroOptimizer`, which keeps the
    gradients in its bucket store and flattens them only to reduce them
    (colossalai/zero/low_level/low_level_optim.py @d888c378 `_run_reduction`:
    `bucket_store.get_flatten_grad()`)."""
    overflow_check_on_device: bool = True
    """DeepSpeed's ZeRO-1/2 `_has_inf_or_nan` as of the run's code: on the device since
    `DEEPSPEED_OVERFLOW_CHECK_ON_DEVICE_SINCE` (an fp32 copy, its nan and inf masks, their
    union and its fp32 copy: `OVERFLOW_CHECK_BYTES` per value); before, `float(x.float().sum())`,
    the fp32 copy alone."""
    zero3_built_outside_init: bool = False
    """DeepSpeed ZeRO-3 on a model built outside `deepspeed.zero.Init` (its script constructs
    the model itself, e.g. `OPTForCausalLM(config)`, rather than through `from_pretrained` with
    ZeRO-3 enabled): `deepspeed.initialize` moves the whole model to the GPU, tensor by tensor,
    before ZeRO-3 partitions it (`vramplan.training.allocations.program.Sharding.whole_at_init`).
    False: the parameters are partitioned as they are made."""
    main_grad_buffer: bool = False
    """The gradients live in one contiguous buffer allocated when the model is wrapped, reduced
    in place (no bucket copies), and a distributed optimizer (`zero1`) shards only the fp32
    master weights and the optimizer states (Megatron-LM's DistributedDataParallel and
    `--use-distributed-optimizer`; `vramplan.presets.frameworks.defaults.FrameworkDefaults.
    main_grad_buffer`)."""
    overlap_grad_reduce: bool = False
    """Megatron-LM reduces its gradient buffer bucket by bucket during backward
    (`--overlap-grad-reduce`, off by default: megatron/training/arguments.py); without it the
    buffer is one bucket (megatron/core/distributed/distributed_data_parallel.py: "Set
    bucket_size to infinity if overlap_grad_reduce is False")."""
    tensor_parallel: int = 1
    """Megatron-LM tensor parallelism: each matrix split over this many GPUs (Shoeybi et al.
    2019, arXiv:1909.08053)."""
    pipeline_parallel: int = 1
    """Pipeline stages: consecutive layers on different GPUs."""
    pipeline_schedule: PipelineSchedule = PipelineSchedule.ONE_F_ONE_B
    buffers: CommBuffers = field(default_factory=CommBuffers)
    expert_parallel: int = 1
    """Expert parallelism: the routed experts of every MoE layer split over this many GPUs of the
    data-parallel group, each holding n_experts / expert_parallel of them and exchanging tokens
    all-to-all (Lepikhin et al. 2020, GShard, arXiv:2006.16668; Rajbhandari et al. 2022,
    DeepSpeed-MoE, arXiv:2201.05596)."""

    @property
    def ranks_per_node(self) -> int:
        return min(self.gpus, self.gpus_per_node)

    @property
    def model_parallel(self) -> int:
        """GPUs holding one copy of the model: tensor x pipeline."""
        return self.tensor_parallel * self.pipeline_parallel

    @property
    def data_parallel(self) -> int:
        """Copies of the model (the ranks a ZeRO/FSDP scheme shards over)."""
        return self.gpus // self.model_parallel


@dataclass(frozen=True, slots=True)
class UnitBytes:
    """What FSDP gathers, in bytes as stored: one wrapped block and the root unit (embeddings,
    final norm, head). Needed where the blocks and the root keep different dtypes: a quantized
    base has its blocks' linear layers in 4 or 8 bits, while the embeddings stay 16-bit, and the
    head too under transformers (bitsandbytes `llm_int8_skip_modules` keeps `lm_head`; Answer.AI's
    fsdp_qlora `replace_linear(model.model, ...)` skips `lm_head`)."""

    block: int
    root: int


@dataclass(frozen=True, slots=True)
class ShardedStates:
    """What ONE GPU holds under a parallelism, plus the host memory it needs. Bytes are integers."""

    parallelism: Parallelism
    shard_degree: int
    """GPUs that share one copy of the sharded states (1: replicated)."""
    weights_bytes: int
    """Weights resident on the GPU (the shard, or everything)."""
    gradients_bytes: int
    master_weights_bytes: int
    optimizer_states_bytes: int
    gradients_at_step_bytes: int
    """Gradients during the optimizer step: sharded even when accumulation kept them whole."""
    persistent_buffers_bytes: int
    """Communication buffers allocated once and kept (DDP's gradient buckets, ZeRO-3's
    contiguous gradient bucket)."""
    forward_buffers_bytes: int
    """Transient during forward: gathered parameters (ZeRO-3, FSDP)."""
    backward_buffers_bytes: int
    """Transient during backward: gathered parameters, unsharded gradients of a unit,
    communication buckets."""
    step_buffers_bytes: int
    """Transient during the optimizer step (DeepSpeed's fp32 copy of the gradient partition)."""
    host_bytes_per_rank: int
    """Host memory of one rank for the offloaded states."""
    pinned_host_bytes_per_rank: int
    """Of which page-locked (pinned): counted inside `host_bytes_per_rank`, not on top."""
    last_unit_backward_buffers_bytes: int | None = None
    """Transient while the last unit to run backward (the first block) does: as
    `backward_buffers_bytes`, less the prefetched unit (FSDP). None: the same."""
    unit_gradient_bytes: int = 0
    """One wrapped block's unsharded gradient (FSDP), 0 otherwise."""
    unit_gradient_shard_bytes: int = 0
    """This GPU's shard of one wrapped block's gradient, in the sharded parameters' dtype (FSDP),
    0 otherwise: the reduce-scatter's output, or its cast back to the parameters' dtype."""
    loss_buffers_bytes: int | None = None
    """Transient while the loss runs and backward starts: FSDP has resharded every block after
    its forward and keeps only the root gathered. None: as in forward."""
    head_check_bytes: int = 0
    """DeepSpeed ZeRO-2 with the optimizer offloaded: what the overflow check of an untied head's
    gradient holds when the head, first in backward, is reduced as backward enters the blocks
    (`OVERFLOW_CHECK_BYTES` per value; with the gradient itself when it is larger than the
    bucket, which keeps it apart). 0: none."""
    embedding_check_bytes: int = 0
    """The same for the embeddings' gradient, last in backward, checked by the epilogue."""
    backward_bucket_bytes: int = 0
    """ZeRO-1/2's gradient bucket, made by the ZeRO optimizer's `backward()` before it runs the
    loss's backward and freed by the epilogue at the end of backward (stage_1_and_2.py
    `backward`: `self.ipg_buffer`, under the default `contiguous_gradients`; `_release_ipg_buffers`
    in `independent_gradient_partition_epilogue`): from the start of backward on, where the rest
    of `backward_buffers_bytes` comes with the blocks' backward. 0: none."""
    reduce_buffers_bytes: int | None = None
    """Transient when a block's backward has finished and its gradients are reduced (its saved
    activations already freed): FSDP's unit-sized gradients. None: no such moment."""
    root_gradient_bytes: int = 0
    """The root unit's unsharded gradient (FSDP; 0 when nothing in it trains)."""
    gathered_unit_bytes: int = 0
    """One wrapped block, gathered (FSDP), 0 otherwise."""
    gathered_root_bytes: int = 0
    """The root unit, gathered (FSDP), 0 otherwise."""
    gradients_from_start: bool = False
    """The gradient partition is one buffer allocated with the optimizer and never freed, so it
    is held in every phase (DeepSpeed ZeRO-3: stage3.py `_setup_for_real_optimizer`,
    `grad_partitions_flat_buffer = torch.zeros(...)`)."""
    step_group_params: int | None = None
    """Parameters one optimizer call updates at a time, when the step goes group by group
    (DeepSpeed ZeRO-3's largest sub-group); None: all of this GPU's at once."""
    step_prepare_bytes: int = 0
    """Transient while the step prepares a group's fp32 gradient: the flattened 16-bit copy
    beside it (stage3.py `_prepare_fp32_grad_for_sub_group`: `flatten(...).to(fp32)`), counted
    where it exceeds the optimizer's own temporaries."""
    module_buffers_bytes: int = 0
    """The model's own device buffers (`ModelStates.buffer_bytes`), whole on every GPU."""
    dummy_wgrad_bytes: int = 0
    """Megatron-LM's cached dummy weight gradients on this GPU, from the first backward on: one
    per distinct weight shape of the stage, as a tensor-parallel rank holds it
    (`vramplan.training.dummy_wgrads`)."""

    @property
    def model_states_bytes(self) -> int:
        """Weights (and the model's buffers), gradients, master weights and optimizer states
        held on this GPU."""
        return (self.weights_bytes + self.module_buffers_bytes + self.gradients_bytes
                + self.master_weights_bytes + self.optimizer_states_bytes)

    @property
    def buffers_peak_bytes(self) -> int:
        return max(self.forward_buffers_bytes, self.backward_buffers_bytes,
                   self.step_buffers_bytes)

    @property
    def peak_bytes(self) -> int:
        """Model states, kept buffers and the largest phase's buffers (no activations)."""
        return self.model_states_bytes + self.persistent_buffers_bytes + self.buffers_peak_bytes

    @property
    def host_bytes_per_node(self) -> int:
        return self.host_bytes_per_rank * self.parallelism.ranks_per_node

    @property
    def pinned_host_bytes_per_node(self) -> int:
        return self.pinned_host_bytes_per_rank * self.parallelism.ranks_per_node


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
    if plan.offload is Offload.OPTIMIZER and plan.scheme not in _DEEPSPEED:
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
    return plan.scheme in _DEEPSPEED and not plan.main_grad_buffer


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
    elif plan.scheme in _DEEPSPEED:
        sharded = _deepspeed(states, plan, n)
    elif plan.scheme in FSDP_SCHEMES:
        sharded = _fsdp(states, plan, n, units)
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


def zero3_sub_group_params(states: ModelStates, buffers: CommBuffers, n: int) -> int:
    """The largest ZeRO-3 sub-group of this rank's partition, in parameters. DeepSpeed adds
    parameter partitions to a sub-group until it holds `sub_group_size` elements or more
    (deepspeed/runtime/zero/stage3.py @38327e07 `_create_fp16_sub_groups`): at most the
    sub-group size plus one parameter's partition, at most the whole partition."""
    partition = ceil_div(states.trainable_params, n)
    largest = ceil_div(states.largest_trainable_params, n)
    return min(partition, buffers.zero_sub_group_elements + largest)


def zero3_reduce_transient_bytes(states: ModelStates, buffers: CommBuffers) -> int:
    """ZeRO-3 reduce-scatters a full bucket through `torch.cat` of its padded partitions, a
    copy of the bucket beside the kept one (deepspeed/runtime/comm/coalesced_collectives.py
    @38327e07 `reduce_scatter_coalesced`, called by stage3.py `__avg_scatter_grads` under the
    default `reduce_scatter=True`). The bucket fills, and is reduced while the blocks run
    backward, only when the trainable parameters outnumber it; otherwise its one reduction
    comes after backward (`independent_gradient_partition_epilogue`), once the activations
    are freed. Without gradients to partition (an optimizer stepping in backward), none."""
    if not states.gradient_bytes or states.trainable_params <= buffers.zero_reduce_bucket_elements:
        return 0
    return buffers.zero_reduce_bucket_elements * states.gradient_itemsize


@dataclass(frozen=True, slots=True)
class TracedModule:
    """One use of a module in a ZeRO-3 step's module trace: its parameters, by their storage
    elements (DeepSpeed's `ds_numel`)."""

    key: Hashable
    """The module (the same key at each of its uses)."""
    elements: int


@dataclass(frozen=True, slots=True)
class GatheredPeaks:
    """The most parameter elements ZeRO-3 holds gathered in each part of a step."""

    forward: int
    loss: int
    """From the head's forward to its backward, with what the coordinator kept for reuse."""
    backward: int
    """While the blocks run backward (the uses after the head's and before `first_block`)."""
    first_block: int
    """While the first block runs backward, and after it."""
    prefetch: int = 0
    """The most elements one prefetch has in flight."""


@lru_cache(maxsize=64)
def zero3_gathered_peaks(trace: tuple[TracedModule, ...], forward_uses: int, first_block: int,
                         buffers: CommBuffers, *, retains_prefetched: bool = True,
                         buffered: bool = True) -> GatheredPeaks:
    """Replays DeepSpeed's parameter coordinator over a step's module trace (`forward_uses`
    uses of forward, the last the head's; then backward, the head's first, whose uses from
    `first_block` on are the first block's and the embedding's): `Zero3Coordinator`. Each use
    counts what is gathered once its fetch and prefetch are issued, plus (`buffered`: the
    all-gather's, not one rank's copies) the buffer of the prefetch in flight;
    `retains_prefetched`: DeepSpeed's code since
    `vramplan.presets.frameworks.deepspeed.DEEPSPEED_RETAINS_PREFETCHED_SINCE`. Parameters under the
    persistence threshold are kept whole and are not traced."""
    coordinator = Zero3Coordinator(trace, buffers, retains_prefetched)
    uses = [coordinator.use(step) for step in range(len(trace))]
    at_use = [gathered + (in_flight if buffered else 0) for gathered, in_flight in uses]
    # the loss runs between the head's forward (the last forward use) and its backward
    head = forward_uses
    return GatheredPeaks(forward=max(at_use[:forward_uses], default=0),
                         loss=max(at_use[head - 1:head + 1], default=0),
                         backward=max(at_use[head + 1:first_block], default=0),
                         first_block=max(at_use[first_block:], default=0),
                         prefetch=max((in_flight for _, in_flight in uses), default=0))


class Zero3Coordinator:
    """DeepSpeed's `PartitionedParameterCoordinator` once its trace is complete
    (deepspeed/runtime/zero/partitioned_param_coordinator.py, the same rules at v0.14.2 and
    v0.19.8), by module uses:
    - `fetch_sub_module` gathers the module's parameters, pops its use off the parameter queue
      unless a prefetch already scanned it, then prefetches: it walks the queue until it has
      issued `stage3_prefetch_bucket_size` elements (a parameter may overshoot), at most
      `stage3_max_live_parameters` less what is gathered; parameters already gathered cost
      nothing, and every use it walks past marks its parameter as fetched for that use;
    - `release_sub_module` releases the module's parameters after the use unless a prefetch
      marked them for a later use (since `DEEPSPEED_RETAINS_PREFETCHED_SINCE`), or the trace
      uses them again before `stage3_max_reuse_distance` elements of later uses have gone by
      (`__params_to_release`).
    So a coordinator whose prefetches walk past gathered parameters keeps them: it holds about
    `stage3_max_live_parameters` elements once the trace has filled it. Checked against
    DeepSpeed 0.19.8 on the CPU (benchmarks/zero3_step_cpu.py, a 16-block model): the same
    gathered elements over the loss and at every block of backward but the last, and in
    forward's steady state one attention linear fewer (27.79 against 28.84 M); DeepSpeed
    reaches that state in the first block, the replay in the fifth. Both because every module
    DeepSpeed enters, containers and norms included, issues a prefetch, one more overshoot:
    the same replay over DeepSpeed's module list matches it at every block but the first
    (not written: the trace has the linears only)."""

    def __init__(self, trace: tuple[TracedModule, ...], buffers: CommBuffers,
                 retains_prefetched: bool = True) -> None:
        self.trace = trace
        self.buffers = buffers
        self.retains_prefetched = retains_prefetched
        self.queue = deque(range(len(trace)))
        self.marked: dict[Hashable, int] = {}
        self.gathered: dict[Hashable, int] = {}

    def use(self, step: int) -> tuple[int, int]:
        """The module used at `step` fetched and its prefetch issued, then released if due.
        Returns the elements gathered at that moment (DeepSpeed's `__n_available_params`, the
        prefetched ones included) and the prefetch's all-gather buffer then in flight (a flat
        buffer beside the per-parameter copies its `wait()` makes: partition_parameters.py
        `AllGatherCoalescedHandle`; none for a prefetch of one module)."""
        use = self.trace[step]
        self.gathered[use.key] = use.elements
        if self.marked.get(use.key, -1) < step:
            self.marked[use.key] = self.queue.popleft()  # this use's own entry
        in_flight = self._prefetch()
        gathered = sum(self.gathered.values())
        if self._released(step):
            del self.gathered[use.key]
        return gathered, in_flight

    def _prefetch(self) -> int:
        budget = min(self.buffers.zero3_max_live_parameters - sum(self.gathered.values()),
                     self.buffers.zero3_prefetch_bucket_elements)
        issued, modules = 0, 0
        while self.queue and issued < budget:
            later = self.queue.popleft()
            key = self.trace[later].key
            self.marked[key] = max(self.marked.get(key, -1), later)
            if key not in self.gathered:
                self.gathered[key] = self.trace[later].elements
                issued += self.trace[later].elements
                modules += 1
        # one parameter is gathered straight into its own buffer (partition_parameters.py
        # v0.14.2 `all_gather_coalesced`, `len(params) == 1`); several into a flat buffer
        # that their copies sit beside until each is waited on
        return issued if modules > 1 else 0

    def _released(self, step: int) -> bool:
        key = self.trace[step].key
        if self.retains_prefetched and self.marked.get(key, -1) > step + 1:
            return False
        traversed = 0
        for later in self.trace[step + 1:]:
            if traversed >= self.buffers.zero3_max_reuse_distance:
                return True
            if later.key == key:
                return False
            traversed += later.elements
        return True


def _fsdp(states: ModelStates, plan: Parallelism, n: int,
          units: UnitBytes | None = None) -> ShardedStates:
    """PyTorch FSDP (FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD), FSDP1 or FSDP2.

    Zhao et al. 2023, "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel",
    arXiv:2304.11277, section 3: each wrapped unit is all-gathered before its forward and its
    backward and freed after; gradients are reduce-scattered into shards.
    """
    bytes_per_param = states.weight_bytes / states.params if states.params else 0.0
    unit_weights = round(states.block_params * bytes_per_param) if units is None else units.block
    root_weights = round(states.root_params * bytes_per_param) if units is None else units.root
    # Weights: the blocks' shards plus the root unit's shard.
    weights = ceil_div(max(states.weight_bytes - root_weights, 0), n) + ceil_div(root_weights, n)
    # The root unit stays gathered from forward to backward: FSDP1 does not reshard the root
    # after forward, FSDP2's `reshard_after_forward` is False for the root module (PyTorch
    # `fully_shard` docs). A gathered unit is a new full-size tensor beside the kept shard
    # (pytorch/pytorch torch/distributed/fsdp/_flat_param.py @01caf79e `FlatParamHandle.unshard`:
    # `_alloc_padded_unsharded_flat_param` allocates `_padded_unsharded_size`, the shard stays
    # in `_local_shard`).
    root_gathered = root_weights
    if plan.embedding_apart and plan.fsdp_version is FsdpVersion.FSDP2:
        embedding = round(states.embedding_params * bytes_per_param) if units is None \
            else root_weights * states.embedding_params // max(states.root_params, 1)
        root_gathered = max(root_weights - embedding, 0)
    late = prefetches_late(plan)
    ahead = 0 if late else plan.buffers.fsdp_prefetch_units
    units_gathered = (1 + ahead) * unit_weights
    if plan.scheme is Scheme.FSDP_GRAD_OP:
        # SHARD_GRAD_OP keeps every unit gathered between forward and backward.
        root_gathered = states.weight_bytes
        units_gathered = 0
    if plan.params_cast_for_compute and states.weight_itemsize > CAST_ITEMSIZE:
        # gathered as 16-bit copies of the stored fp32 parameters
        unit_weights, root_weights, root_gathered, units_gathered = (
            n_bytes * CAST_ITEMSIZE // states.weight_itemsize
            for n_bytes in (unit_weights, root_weights, root_gathered, units_gathered))
    grad_bytes = _fsdp_gradient_bytes(states, plan)
    step_grads = ceil_div(grad_bytes, n)
    whole_grads = _no_sync_gradient_bytes(states, plan, grad_bytes)
    grads = whole_grads if plan.accumulate_without_sync else step_grads
    unit_grad = _unit_gradient_bytes(states, plan, grad_bytes)
    unit_grad_shard = ceil_div(unit_grad, n)
    transient_units = _gradient_transient_units(plan)
    gradient_transient = transient_units * unit_grad
    root_trains = states.root_trains if states.root_trains is not None \
        else states.frozen_params == 0
    # The whole root gets a gradient: FSDP1's flat parameter when anything in it trains, FSDP2
    # when everything does (else only its adapters: negligible).
    whole_root = root_trains and ((plan.fsdp_version is FsdpVersion.FSDP1
                                   and not plan.adapters_wrapped_apart)
                                  or states.frozen_params == 0)
    root_grad = states.root_params * states.gradient_itemsize if whole_root else 0
    # The head's gradient is made first and waits for the embedding's, made last, before the
    # root's gradient is formed (FSDP1: the flat `cat`) or reduced (FSDP2: the root's
    # post-backward); FSDP2 under no_sync adds it in place at once.
    early_root_grad = (states.head_params * states.gradient_itemsize if whole_root
                       and not (plan.fsdp_version is FsdpVersion.FSDP2
                                and plan.accumulate_without_sync) else 0)
    if plan.params_cast_for_compute and states.gradient_itemsize > CAST_ITEMSIZE:
        # autograd makes the unsharded gradients in the gathered copies' dtype; FSDP casts
        # each reduced shard back to the parameters' (FSDP1 `_cast_grad_to_param_dtype`)
        unit_grad, root_grad, early_root_grad = (
            n_bytes * CAST_ITEMSIZE // states.gradient_itemsize
            for n_bytes in (unit_grad, root_grad, early_root_grad))
        gradient_transient = transient_units * unit_grad
    master = ceil_div(states.master_weight_bytes, n)
    optim = ceil_div(states.optimizer_state_bytes, n)
    host = pinned = 0
    if plan.offload is Offload.PARAMS_OPTIMIZER:
        # FSDP CPUOffload(offload_params=True): parameter and gradient shards on the host (pinned),
        # the optimizer step on the CPU (PyTorch FSDP docs, `CPUOffload`). FSDP1 copies each
        # reduced gradient shard to the host but keeps it as `_saved_grad_shard` until backward
        # ends (torch/distributed/fsdp/_runtime_utils.py @01caf79e `_offload_grad`;
        # _flat_param.py `prepare_gradient_for_optim` deletes it): the shards stay on the GPU
        # through backward, none at the step. FSDP2 moves each reduced shard to the host and
        # drops it (_fully_shard/_fsdp_collectives.py `foreach_reduce`).
        host = weights + step_grads + master + optim
        pinned = weights + step_grads
        kept = step_grads if plan.fsdp_version is FsdpVersion.FSDP1 else 0
        grads = whole_grads if plan.accumulate_without_sync else kept
        weights = master = optim = step_grads = 0
    # In forward, the block computing and the next one (prefetched); at the loss, every block
    # has been resharded after its forward (FULL_SHARD; FSDP2 `reshard_after_forward=True` for
    # non-root modules) and only the root stays gathered. When a block's backward starts, it is
    # gathered again with the one before it prefetched (FSDP2 `_backward_prefetch`, FSDP1
    # BACKWARD_PRE); its gradients become unit-sized tensors only once its nodes have run and
    # its saved tensors are freed, when they are reduced (`reduce`): FSDP1 `cat`s them into the
    # flat gradient (split_with_sizes_backward), FSDP2 copies them into the reduce-scatter
    # input (`foreach_reduce`), the previous block gathered (prefetched). FSDP2 reshards the
    # block before it copies (`post_backward`: `reshard()` then `foreach_reduce`); FSDP1's
    # post-backward hook runs on the flat gradient, after the `cat`, with the block still
    # gathered (`_post_backward_hook`: `_post_backward_reshard` comes after the gradient exists).
    # With the adapters as units of their own (`prefetches_late`), the block before is gathered
    # only at the end of a block's backward: in `reduce`, not in `backward`.
    forward = root_gathered + units_gathered
    loss = root_gathered
    backward = forward + early_root_grad
    grad_op = plan.scheme is Scheme.FSDP_GRAD_OP
    prefetched = 0 if grad_op else plan.buffers.fsdp_prefetch_units * unit_weights
    current = unit_weights if plan.fsdp_version is FsdpVersion.FSDP1 and not grad_op else 0
    reduce = root_gathered + current + prefetched + gradient_transient + early_root_grad
    # The first block runs backward with no unit left to prefetch; then the embedding's
    # gradient completes the root's, which is formed or reduced like a block's.
    first_blocks = _first_blocks_backward(states, plan, backward,
                                          prefetched=0 if late else prefetched,
                                          unit_grad=unit_grad, unit_grad_shard=unit_grad_shard)
    root_end = forward - units_gathered + transient_units * root_grad
    return ShardedStates(
        parallelism=plan, shard_degree=n,
        weights_bytes=weights, gradients_bytes=grads,
        master_weights_bytes=master, optimizer_states_bytes=optim,
        gradients_at_step_bytes=step_grads, persistent_buffers_bytes=0,
        forward_buffers_bytes=forward, backward_buffers_bytes=backward,
        step_buffers_bytes=0,
        host_bytes_per_rank=host, pinned_host_bytes_per_rank=pinned,
        last_unit_backward_buffers_bytes=max(first_blocks, root_end),
        unit_gradient_bytes=unit_grad, unit_gradient_shard_bytes=unit_grad_shard,
        root_gradient_bytes=root_grad, loss_buffers_bytes=loss, reduce_buffers_bytes=reduce,
        gathered_unit_bytes=unit_weights, gathered_root_bytes=root_weights,
    )


def _no_sync_gradient_bytes(states: ModelStates, plan: Parallelism, grad_bytes: int) -> int:
    """The unsharded gradients FSDP keeps from one `no_sync` micro-batch to the next. FSDP1
    keeps each in `.grad` as autograd made it, in the gathered copies' dtype where it gathers
    16-bit copies of fp32 parameters: the post-backward hook returns before any cast when not
    syncing (torch/distributed/fsdp/_runtime_utils.py `_post_backward_hook`) and the next
    backward accumulates into it (_flat_param.py `prepare_gradient_for_backward` keeps an
    unsharded `.grad`). FSDP2 moves them to its reduce dtype (_fsdp_param.py
    `to_accumulated_grad_if_needed`), counted in the parameters' dtype (torchtitan reduces in
    fp32)."""
    if plan.fsdp_version is FsdpVersion.FSDP1 and plan.params_cast_for_compute \
            and states.gradient_itemsize > CAST_ITEMSIZE:
        return grad_bytes * CAST_ITEMSIZE // states.gradient_itemsize
    return grad_bytes


def _first_blocks_backward(states: ModelStates, plan: Parallelism, backward: int, *,
                           prefetched: int, unit_grad: int, unit_grad_shard: int) -> int:
    """FSDP's buffers when the last blocks to run backward do, counted beside every other
    block's gradient shard (`_END_OF_BACKWARD` phases): the first block, with no unit left to
    prefetch, or the second, with the first prefetched and its own shard not made yet (from
    three blocks on; the larger of the two). FSDP2 keeps the block before's reduce-scatter input
    until a block's post-backward (`FSDPCommContext.reduce_scatter_states`, freed in
    `post_backward`; torch 2.7.1 to 2.13): one unit-sized gradient more, when it reduces."""
    held = unit_grad if plan.fsdp_version is FsdpVersion.FSDP2 \
        and not plan.accumulate_without_sync else 0
    blocks = round((states.params - states.root_params) / states.block_params) \
        if states.block_params else 0
    second = backward + held - unit_grad_shard if blocks >= 3 else 0
    return max(backward - prefetched + held, second)


def prefetches_late(plan: Parallelism) -> bool:
    """FSDP1 with each LoRA adapter a unit of its own (`adapters_wrapped_apart`) gathers the block
    before a block only when that block's backward ends, not when it starts.

    FSDP1's BACKWARD_PRE prefetch unshards, from a unit's pre-backward hook, the unit whose
    forward ended just before this one's (pytorch/pytorch torch/distributed/fsdp/
    _runtime_utils.py @01caf79e `_prefetch_handle` -> `_get_handle_to_prefetch`;
    _exec_order_utils.py `get_handle_to_backward_prefetch`: `handles_post_forward_order
    [current_index - 1]`). A block's forward ends after those of its own adapters, which run
    inside it: the block's hook prefetches its last adapter (a few MB), and the block before it
    is prefetched only by the hook of the block's first adapter (the query projection's
    `lora_A`), whose gradient comes last in the block's backward, when the block's saved and
    recomputed tensors are nearly all freed. With checkpointing the adapters' flags are set by
    the recomputed forward (`_register_pre_backward_hooks`), with the same order. Traced with
    PyTorch's FullyShardedDataParallel on a fake process group (peft's wrap policy, reentrant and
    non-reentrant checkpointing inside the units, and none): the unshard of block i - 1 comes
    after the unshard of block i's `q_proj.lora_A`, before block i is resharded.
    SHARD_GRAD_OP keeps every unit gathered: nothing to prefetch."""
    return plan.fsdp_version is FsdpVersion.FSDP1 and plan.adapters_wrapped_apart \
        and plan.scheme in (Scheme.FSDP, Scheme.HSDP)


def _unit_gradient_bytes(states: ModelStates, plan: Parallelism, grad_bytes: int) -> int:
    """The unsharded gradient of one wrapped block (FSDP1: of its whole flat parameter)."""
    flat = plan.fsdp_version is FsdpVersion.FSDP1 and grad_bytes != states.gradient_bytes \
        and not plan.adapters_wrapped_apart
    params = (states.flat_gradient_params if states.flat_gradient_params is not None
              else states.params) if flat else states.params
    return _share(grad_bytes, states.block_params, params)


def _gradient_transient_units(plan: Parallelism) -> int:
    """Unit-sized gradients alive beside the kept ones when a unit finishes its backward.

    FSDP1 computes the gradient of each original parameter (a `torch.split` view of the flat
    parameter: pytorch/pytorch torch/distributed/fsdp/_flat_param.py @01caf79e,
    `_get_unflat_views_aligned`), then autograd's `split_with_sizes_backward` concatenates them
    into the flat gradient (torch/csrc/autograd/FunctionsManual.cpp, `at::cat`): two units at
    that moment. The flat one
    is then reduce-scattered into a shard (`_reduce_grad`), or under `no_sync` added in place to
    the kept one (AccumulateGrad). FSDP2 keeps per-parameter gradients and copies them into one
    reduce-scatter input (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
    `foreach_reduce`): two units as well when it reduces, one (added in place) under no_sync.
    The first micro-batch under no_sync keeps the flat gradient itself:
    `vramplan.distributed.per_gpu` counts it among the kept gradients."""
    if plan.fsdp_version is FsdpVersion.FSDP2 and plan.accumulate_without_sync:
        return 1
    return 2


def _fsdp_gradient_bytes(states: ModelStates, plan: Parallelism) -> int:
    """Gradient bytes of one replica as FSDP allocates them.

    FSDP1 keeps one flat parameter per unit: "For use_orig_params=True, FSDP supports mixing
    frozen and non-frozen parameters, but it's recommended to avoid doing so to prevent higher
    than expected gradient memory usage" (PyTorch FSDP docs): a unit with any trainable
    parameter gets a gradient for all its parameters. FSDP2 does not ("mixing frozen and
    non-frozen parameters ... without using extra memory", PyTorch FSDP2 tutorial).
    """
    if plan.fsdp_version is FsdpVersion.FSDP1 and states.trainable_params \
            and states.frozen_params and not plan.adapters_wrapped_apart:
        # `requires_grad` of a flat parameter is the OR over its original parameters
        # (pytorch/pytorch torch/distributed/fsdp/_flat_param.py @01caf79e): a unit
        # without any trainable parameter (the root under LoRA on the blocks) gets no gradient
        params = states.params if states.flat_gradient_params is None \
            else states.flat_gradient_params
        return params * states.gradient_itemsize
    return states.gradient_bytes


def _share(total_bytes: int, part_params: int, all_params: int) -> int:
    """The bytes of `part_params` parameters out of `all_params` holding `total_bytes`."""
    return total_bytes * part_params // all_params if all_params else 0
