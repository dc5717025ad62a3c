"""How a run is spread over GPUs, as the per-GPU model takes it: the parallel sizes and the
sharding scheme (`Parallelism`), the pipeline schedule, DeepSpeed's ZeRO-3 configuration files,
and the sharded model states it produces (`ShardedStates`, `CommBuffers`, `UnitBytes`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from vramplan.units import BYTES_PER_MIB
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
DEEPSPEED_SCHEMES = frozenset({Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3})
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
    root_end_buffers_bytes: int | None = None
    """Transient when the root unit's gradient completes, after the embedding's backward (FSDP:
    the gathered root and its unsharded gradient forming), once the blocks' backward is over:
    no block's backward temporaries or saved tensors are alive then. None: no such moment."""
    unit_gradient_bytes: int = 0
    """One wrapped block's unsharded gradient (FSDP), 0 otherwise."""
    unit_gradient_shard_bytes: int = 0
    """This GPU's shard of one wrapped block's gradient, in the sharded parameters' dtype (FSDP),
    0 otherwise: the reduce-scatter's output, or its cast back to the parameters' dtype."""
    root_gradient_shard_bytes: int = 0
    """The same for the root unit's gradient (FSDP, when the whole root trains), 0 otherwise:
    made last, after the moments `root_end_buffers_bytes` counts."""
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
