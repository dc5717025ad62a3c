"""What a multi-GPU run does where its setup is silent: the scheme, checkpointing and
parallelism each framework defaults to, and the sharding of the step's allocation program
(`program_sharding`) for a setup."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from vramplan.distributed.fsdp import prefetches_late
from vramplan.distributed.parallelism import (
    FSDP_SCHEMES,
    Parallelism,
    PipelineSchedule,
    ShardedStates,
    Zero3ConfigFile,
)
from vramplan.distributed.sharding import steps_1d_tensors, steps_flat_partition
from vramplan.presets.frameworks.dates import has_change
from vramplan.presets.frameworks.deepspeed import (
    DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE,
    DEEPSPEED_OVERFLOW_CHECK_ON_DEVICE_SINCE,
)
from vramplan.presets.frameworks.defaults import (
    accumulate_without_sync,
    default_fsdp_version,
    embedding_apart,
    framework_defaults,
    runs_transformers_code,
)
from vramplan.training.allocations.load import FSDP1_SYNC_BUCKET_BYTES
from vramplan.training.allocations.program import Sharding, StepTensors
from vramplan.training.setup import TrainingSetup
from vramplan.training.states import ModelStates
from vramplan.units import ceil_div
from vramplan.vocab import Checkpointing, Framework, FsdpVersion, Offload, Precision, Quant, Scheme


def tensor_parallel_share(setup: TrainingSetup, tensor_parallel: int) -> TrainingSetup:
    """`setup` as one tensor-parallel GPU's step program sees it: every activation is split over
    the tensor-parallel GPUs (over heads and the MLP's width, over the sequence for the norms
    and the residual stream under sequence parallelism, over the vocabulary for the logits), as
    the analytic model splits them (`_phase`); the program replays that share as a micro-batch
    split by the degree, or its sequence when the batch does not divide."""
    if tensor_parallel <= 1:
        return setup
    if setup.batch % tensor_parallel == 0:
        return replace(setup, batch=setup.batch // tensor_parallel)
    return replace(setup, seq_len=ceil_div(setup.seq_len, tensor_parallel))


DEFAULT_SCHEME: dict[Framework, Scheme] = {
    framework: framework_defaults(framework).scheme for framework in Framework}
"""The data-parallel scheme a framework sets up on several GPUs when none is named (each with
its source in `vramplan.presets.frameworks`)."""


ZERO3_CONFIG_FILES: dict[Framework, Zero3ConfigFile] = {
    # hiyouga/LLaMA-Factory examples/deepspeed/ds_z3_config.json @1d6e8b21: reduce and
    # prefetch buckets "auto", sub_group_size, max_live and max_reuse 1e9
    Framework.LLAMAFACTORY: Zero3ConfigFile(buckets_from_hidden_size=True),
    # axolotl-ai-cloud/axolotl deepspeed_configs/zero3_bf16.json @1aaebb0d: buckets "auto",
    # sub_group_size 0 (every parameter a sub-group), max_live_parameters and
    # max_reuse_distance 0 (nothing prefetched, nothing kept for reuse)
    Framework.AXOLOTL: Zero3ConfigFile(buckets_from_hidden_size=True, sub_group_elements=0,
                                       max_live_parameters=0, max_reuse_distance=0),
}
"""The ZeRO-3 config file a framework ships, where its users start from one. The others run at
DeepSpeed's defaults (`CommBuffers`): accelerate's DeepSpeedPlugin writes none of these keys
(TRL's examples/accelerate_configs/zero3.yaml, the PEFT docs' configs), nor does a bare
DeepSpeed config."""

MS_SWIFT_ZERO3 = Zero3ConfigFile(buckets_from_hidden_size=True)
"""ms-swift's `--deepspeed zero3`: the file it ships (modelscope/ms-swift
swift/llm/ds_config/zero3.json @7b709960f, swift/config/zero3.json @3602360a): reduce and
prefetch buckets "auto" (filled by the transformers Trainer), sub_group_size,
stage3_max_live_parameters and stage3_max_reuse_distance 1e9, overlap_comm false. ms-swift runs
on transformers' Trainer and is no framework of ours: a case row names it in its notes
(`vramplan.validation.notes.zero3_config_file`)."""


_DDP_FIRST_BUCKET_BYTES = 1 * 1024 * 1024
"""torch/nn/parallel/distributed.py `_DEFAULT_FIRST_BUCKET_BYTES`: the reducer's first bucket is
1 MiB, the others `bucket_cap_mb` (25 MiB) (`dist._DEFAULT_FIRST_BUCKET_BYTES`,
`_compute_bucket_assignment_by_size`)."""


def syncs_module_states(framework: Framework) -> bool:
    """Under FSDP1, the Hugging Face stacks broadcast every unit's parameters from rank 0 as
    they wrap it (`sync_module_states=True`): accelerate forces it with its rank-0 loading
    (accelerate utils/dataclasses.py `FullyShardedDataParallelPlugin`: "sync_module_states
    cannot be False since efficient cpu ram loading enabled"), its `accelerate config` FSDP
    answers write `fsdp_sync_module_states: true`, and Answer.AI's fsdp_qlora train.py passes
    `sync_module_states=args["low_memory"]` (default True). litgpt builds its model on the meta
    device on every rank and loads its checkpoint after wrapping: nothing to broadcast."""
    return runs_transformers_code(framework)


def program_sharding(states: ModelStates, sharded: ShardedStates, *,
                     synced: bool = False, on: date | None = None) -> Sharding:
    """How this GPU holds and moves the states, for the step's program of allocations
    (`vramplan.training.allocations`): what is split over how many GPUs, the units FSDP
    gathers and how FSDP1 wraps them (`synced`: `syncs_module_states`), the buckets DDP and
    ZeRO-3 keep (ZeRO-3 by the code of `on`, None: today's)."""
    plan = sharded.parallelism
    n = max(sharded.shard_degree, 1) * plan.model_parallel
    offloaded = plan.offload is Offload.PARAMS_OPTIMIZER
    optimizer_off = offloaded or plan.offload is Offload.OPTIMIZER
    per_param = states.weight_bytes / states.params if states.params else 0.0
    unit = round(states.block_params * per_param) // plan.tensor_parallel
    if plan.scheme in FSDP_SCHEMES:
        unit = sharded.gathered_unit_bytes
        return Sharding(weights=0 if offloaded else n, gradients=n,
                        states=0 if optimizer_off else n,
                        flat_units=plan.fsdp_version is FsdpVersion.FSDP1,
                        copy_out=plan.fsdp_version is FsdpVersion.FSDP2,
                        gather_bytes=unit, keep_gathered=plan.scheme is Scheme.FSDP_GRAD_OP,
                        prefetch_late=prefetches_late(plan),
                        adapter_units=plan.adapters_wrapped_apart,
                        sync_bucket_bytes=FSDP1_SYNC_BUCKET_BYTES if synced else 0,
                        root_gathered_bytes=sharded.gathered_root_bytes,
                        unit_grad_bytes=sharded.unit_gradient_bytes,
                        unit_grad_shard_bytes=sharded.unit_gradient_shard_bytes)
    if plan.scheme is Scheme.ZERO3:
        if zero3_skips_gather(plan, on) and not offloaded:
            unit = 0
        return Sharding(weights=0 if offloaded else n, gradients=0 if optimizer_off else n,
                        states=0 if optimizer_off else n, gather_bytes=unit,
                        persistent_bytes=(sharded.persistent_buffers_bytes,),
                        step_group_elements=plan.buffers.zero_sub_group_elements,
                        zero_init_buffer=True,
                        zero3_bucket_elements=0 if optimizer_off
                        else plan.buffers.zero_reduce_bucket_elements,
                        whole_at_init=plan.zero3_built_outside_init and offloaded,
                        pinned_by_autograd=plan.zero3_built_outside_init
                        and not zero3_skips_gather(plan, on))
    tp = plan.model_parallel
    if plan.scheme in (Scheme.ZERO1, Scheme.ZERO2):
        distributed_optimizer = plan.main_grad_buffer and plan.scheme is Scheme.ZERO1 \
            and not optimizer_off
        return Sharding(weights=tp, gradients=n if plan.scheme is Scheme.ZERO2 else tp,
                        states=0 if optimizer_off else n,
                        step_tensors=StepTensors.PARTITION if steps_flat_partition(plan)
                        else StepTensors.SHARDS if steps_1d_tensors(plan) else StepTensors.MODEL,
                        persistent_bytes=(sharded.persistent_buffers_bytes,),
                        backward_bucket_bytes=sharded.backward_bucket_bytes,
                        zero_init_buffer=not plan.main_grad_buffer,
                        tensor_parallel=plan.tensor_parallel,
                        param_buffer_ranks=n // tp if distributed_optimizer else 0,
                        bucket_elements=megatron_bucket_elements(plan))
    buckets: tuple[int, ...] = ()
    if plan.scheme is Scheme.DDP and sharded.persistent_buffers_bytes:
        cap = plan.buffers.ddp_bucket_cap_bytes
        rest = sharded.persistent_buffers_bytes - _DDP_FIRST_BUCKET_BYTES
        buckets = (_DDP_FIRST_BUCKET_BYTES, *([cap] * (rest // cap)), rest % cap)
    return Sharding(weights=tp, gradients=tp, states=tp, persistent_bytes=buckets,
                    tensor_parallel=plan.tensor_parallel)


MEGATRON_BUCKET_ELEMENTS = 40_000_000
"""Megatron-LM's default bucket size, max(4e7, 1e6 x data-parallel ranks) elements
(megatron/core/distributed/distributed_data_parallel.py @f4fa7d6b `DistributedDataParallel.
__init__`)."""


def megatron_bucket_elements(plan: Parallelism) -> int | None:
    """The elements of one bucket of Megatron-LM's gradient buffer; None (one bucket) without
    `overlap_grad_reduce`."""
    if not plan.overlap_grad_reduce:
        return None
    return max(MEGATRON_BUCKET_ELEMENTS, 1_000_000 * plan.data_parallel)


def default_scheme(framework: Framework, gpus: int, offload: Offload = Offload.NONE) -> Scheme:
    """The scheme of a run on `gpus` GPUs that names none. An offload needs a sharded scheme:
    the optimizer alone goes to the CPU with DeepSpeed's ZeRO-Offload, on ZeRO-2 (its tutorial's
    setting, deepspeed.ai/tutorials/zero-offload: "ZeRO-Offload ... built on ZeRO-2"); the
    parameters too with the framework's FSDP where that is its scheme (FSDP's CPUOffload holds
    parameters, gradients and the step on the host), else ZeRO-3's parameter offload. Without
    an offload: none on one GPU, else the framework's (`DEFAULT_SCHEME`)."""
    if offload is Offload.OPTIMIZER:
        return Scheme.ZERO2
    if offload is Offload.PARAMS_OPTIMIZER:
        return Scheme.FSDP if DEFAULT_SCHEME[framework] is Scheme.FSDP else Scheme.ZERO3
    return Scheme.NONE if gpus == 1 else DEFAULT_SCHEME[framework]


def default_checkpointing(framework: Framework, scheme: Scheme) -> Checkpointing:
    """Activation checkpointing of a run that names none: litgpt's FSDP strategy checkpoints
    every block (`activation_checkpointing_policy={Block}`, see `DEFAULT_SCHEME`); otherwise
    the framework's default (`vramplan.presets.frameworks`: torchtune's configs, Unsloth and
    LLaMA-Factory checkpoint every layer, torchtitan's per-op selective checkpointing, none
    elsewhere)."""
    if framework is Framework.LITGPT and scheme is Scheme.FSDP:
        return Checkpointing.FULL
    return framework_defaults(framework).checkpointing


def default_parallelism(setup: TrainingSetup, scheme: Scheme, gpus: int,
                        offload: Offload = Offload.NONE, gpus_per_node: int = 8, *,
                        tensor_parallel: int = 1, pipeline_parallel: int = 1,
                        pipeline_schedule: PipelineSchedule = PipelineSchedule.ONE_F_ONE_B,
                        expert_parallel: int = 1, fsdp_version: FsdpVersion | None = None,
                        on: date | None = None) -> Parallelism:
    """The parallelism a framework sets up for `scheme`, with its known defaults.

    - FSDP version (`fsdp_version` when the run names one): litgpt wraps
      `torch.distributed.fsdp.FullyShardedDataParallel` through Lightning Fabric's FSDPStrategy
      (FSDP1, `use_orig_params=True`); the Hugging Face Trainer goes through accelerate, FSDP1
      unless `fsdp_version: 2`; torchtune and torchtitan use `fully_shard` (FSDP2), torchtune
      since its recipes moved to it (`default_fsdp_version`).
    - Gradient accumulation inside `no_sync`: litgpt wraps every accumulating micro-batch in
      `fabric.no_backward_sync(model, enabled=is_accumulating)` (litgpt/finetune/lora.py, full.py),
      which is FSDP's `no_sync()` under FSDPStrategy; the transformers Trainer calls
      accelerate's `no_sync`, which under FSDP2 did nothing before accelerate 1.11 (the code as
      of `on`, None: today's; `vramplan.presets.frameworks.defaults.accumulate_without_sync`).
    - FSDP's mixed precision: accelerate (the transformers Trainer and its wrappers) and
      torchtitan gather an `amp` run's fp32 parameters as 16-bit copies
      (`FrameworkDefaults.fsdp_casts_params`); Lightning Fabric leaves them fp32 for autocast.
    (`vramplan.presets.frameworks` holds each framework's defaults with their sources.)
    """
    defaults = framework_defaults(setup.framework)
    version = fsdp_version or default_fsdp_version(setup.framework, setup.method, on)
    no_sync = setup.gradient_accumulation \
        and accumulate_without_sync(setup.framework, version, on)
    return Parallelism(
        scheme=scheme, gpus=gpus, gpus_per_node=gpus_per_node, offload=offload,
        fsdp_version=version,
        main_grad_buffer=defaults.main_grad_buffer,
        params_cast_for_compute=defaults.fsdp_casts_params and setup.precision is Precision.AMP
        and setup.quant is Quant.NONE and scheme in FSDP_SCHEMES,
        adapters_wrapped_apart=defaults.peft_fsdp_wrap and setup.method.uses_lora,
        embedding_apart=embedding_apart(setup.framework, on),
        accumulate_without_sync=no_sync,
        overflow_check_on_device=has_change(on, DEEPSPEED_OVERFLOW_CHECK_ON_DEVICE_SINCE),
        tensor_parallel=tensor_parallel, pipeline_parallel=pipeline_parallel,
        pipeline_schedule=pipeline_schedule, expert_parallel=expert_parallel,
    )


def zero3_skips_gather(plan: Parallelism, on: date | None) -> bool:
    """DeepSpeed's ZeRO-3 fetches without an all-gather on one rank (by the code of `on`, None:
    today's; `DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE`)."""
    return plan.data_parallel == 1 and has_change(on, DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE)
