"""One training setup on N GPUs: the per-GPU peak, phase by phase.

Starts from the single-GPU estimate (`vramplan.training.estimate`), shards its model
states (`vramplan.distributed.sharding`) and keeps its activations: data parallelism splits the
global batch, not a micro-batch, so each GPU holds the activations and temporaries of its own
micro-batch whatever the scheme. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from fractions import Fraction
from functools import lru_cache

from vramplan.distributed.communicators import communicator_bytes
from vramplan.distributed.sharding import (
    FSDP_SCHEMES,
    SHARDED_PARAMETER_SCHEMES,
    CommBuffers,
    GatheredPeaks,
    Parallelism,
    PipelineSchedule,
    ShardedStates,
    TracedModule,
    UnitBytes,
    Zero3ConfigFile,
    prefetches_late,
    shard_model_states,
    split_optimizer_state_bytes,
    steps_1d_tensors,
    steps_flat_partition,
    zero3_gathered_peaks,
    zero3_reduce_transient_bytes,
)
from vramplan.errors import ConflictingOptions
from vramplan.model.architecture import Architecture, LinearSpec
from vramplan.model.weight_storage import bnb_4bit_bytes, bnb_int8_bytes
from vramplan.parts import PartKind
from vramplan.presets.frameworks import (
    DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE,
    DEEPSPEED_OFFLOAD_STEP_ON_GPU,
    DEEPSPEED_OVERFLOW_CHECK_ON_DEVICE_SINCE,
    DEEPSPEED_RETAINS_PREFETCHED_SINCE,
    accumulate_without_sync,
    default_fsdp_version,
    during,
    embedding_apart,
    framework_defaults,
    has_change,
    runs_transformers_code,
    transformers_code,
)
from vramplan.training.alignment import estimate_step, value_model_states
from vramplan.training.allocations.load import FSDP1_SYNC_BUCKET_BYTES
from vramplan.training.allocations.optimizer import step_temporaries_over
from vramplan.training.allocations.program import Sharding, StepTensors
from vramplan.training.allocations.step import reserved_memory
from vramplan.training.allocations.tensors import stored_unit_bytes
from vramplan.training.dummy_wgrads import dummy_wgrad_bytes
from vramplan.training.estimate import dummy_wgrads_held, largest_gradient_bytes
from vramplan.training.result import (
    Part,
    PeakOverPhases,
    Phase,
    PhaseMemory,
    TrainingEstimate,
    step_shape,
)
from vramplan.training.setup import (
    TrainingSetup,
    allocator_config,
    checkpoints_reentrant,
    compute_itemsize,
    gradient_itemsize,
    gradients_kept,
    optimizer_states_exist,
    residual_itemsize,
    trainable_state_itemsize,
    weight_itemsize,
)
from vramplan.training.specs import checkpoints_cut_the_graph
from vramplan.training.states import (
    ModelStates,
    head_is_separate,
    lora_in_blocks,
    stores_torchao_nf4,
    total_params,
)
from vramplan.units import ceil_div
from vramplan.vocab import (
    Checkpointing,
    ComputeDtype,
    Framework,
    FsdpVersion,
    Generation,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)

ACTIVATION_OFFLOAD_BLOCKS_ON_GPU = 2
"""With activation offloading, the saved tensors of the block in use and of the one being copied
(torch.autograd.graph.save_on_cpu copies each saved tensor to the host at save time and back at
unpack time; offloading schemes double-buffer one block ahead)."""


@dataclass(frozen=True, slots=True)
class PerGpuEstimate(PeakOverPhases):
    """A training setup on `parallelism.gpus` GPUs: what ONE GPU holds at each phase."""

    single: TrainingEstimate
    """The one-GPU estimate this starts from."""
    stage: Stage
    """The pipeline stage this GPU holds (the most loaded one)."""
    sharded: ShardedStates
    phases: tuple[PhaseMemory, ...]
    host_activation_bytes_per_rank: int
    """Activations offloaded to host memory by one rank (0 without activation offload)."""

    @property
    def parallelism(self) -> Parallelism:
        return self.sharded.parallelism

    @property
    def metric(self) -> Metric:
        return self.single.setup.metric

    @property
    def allocator_cache_bytes(self) -> int:
        single = self.single
        setup = tensor_parallel_share(single.setup, self.parallelism.tensor_parallel)
        shape = step_shape(single.arch, setup)
        sharding = program_sharding(single.states, self.sharded,
                                    synced=syncs_module_states(setup.framework),
                                    on=setup.code_date)
        return reserved_memory(single.arch, setup, shape, sharding=sharding,
                               config=allocator_config(setup)).cache_bytes

    @property
    def communicator_bytes(self) -> int:
        return communicator_bytes(self.parallelism)

    @property
    def managed_bytes(self) -> int:
        """Paged optimizer states in unified memory, split like the other states."""
        return ceil_div(self.single.states.managed_optimizer_bytes, self.sharded.shard_degree)

    @property
    def host_bytes_per_node(self) -> int:
        """Host memory one node needs for everything offloaded by its ranks."""
        ranks = self.parallelism.ranks_per_node
        return self.sharded.host_bytes_per_node + self.host_activation_bytes_per_rank * ranks


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
      of `on`, None: today's; `vramplan.presets.frameworks.accumulate_without_sync`).
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


def _autograd_setup(setup: TrainingSetup, parallelism: Parallelism) -> TrainingSetup:
    """`setup` as autograd sees it under `parallelism`. FSDP1 runs forward on views of each
    unit's flat parameter, and a flat parameter requires a gradient when any of its parameters
    does (pytorch/pytorch torch/distributed/fsdp/_flat_param.py @01caf79e:
    `_use_unsharded_views` sets `Tensor` views "tracked by autograd" in forward;
    `_validate_tensors_to_flatten` ORs `requires_grad`): a block holding a LoRA adapter
    computes every weight's gradient and saves what full fine-tuning saves; not under peft's
    wrap policy, whose blocks hold frozen weights only. FSDP and ZeRO-3 shard a 4-bit base
    stored in the weights' dtype (`bnb_4bit_quant_storage`; AnswerDotAI/fsdp_qlora train.py: "The
    Linear4Bit quant_storage dtype should always match the FSDP param_dtype"), and peft then
    gives the adapters that dtype (`vramplan.training.setup.adapters_in_fp32`). Under ZeRO-3
    every linear keeps its input (`TrainingSetup.linears_keep_input`: DeepSpeed's
    memory-efficient linear, on by default), unless the model was built outside `zero.Init`,
    which leaves torch's linear in place (`_PinnedByAutograd`). torchtitan with tensor
    parallelism computes its loss under `loss_parallel()` (torchtitan/distributed/parallel_dims.py
    `loss_parallel_enabled`: TP on and `disable_loss_parallel` off, its default;
    `TrainingSetup.loss_parallel`), and its blocks keep what its per-op checkpointing saves
    under tensor parallelism (`TrainingSetup.tensor_parallel`). A multi-GPU step runs the
    framework's distributed recipe (`TrainingSetup.distributed`). A ZeRO optimizer steps on
    fp32 copies of its partition of 16-bit weights, so `bf16-true` there is `mixed`
    (`_zero_keeps_fp32_masters`), the engine casts peft's fp32 adapters to 16 bits first
    (`TrainingSetup.adapters_fp32`) and runs the model without autocast, which accelerate does
    not turn on under DeepSpeed (`TrainingSetup.no_autocast`); accelerate's FSDP gathers them as
    16-bit copies for the forward (`TrainingSetup.adapters_gathered_16bit`)."""
    if parallelism.gpus > 1:
        setup = replace(setup, distributed=True)
    if parallelism.scheme in _ZERO_SCHEMES:
        setup = replace(setup, adapters_fp32=False, no_autocast=True)
    if _zero_keeps_fp32_masters(setup, parallelism):
        setup = replace(setup, precision=Precision.MIXED)
    if parallelism.tensor_parallel > 1 and setup.framework is Framework.TORCHTITAN:
        setup = replace(setup, loss_parallel=True, tensor_parallel=parallelism.tensor_parallel)
    if parallelism.tensor_parallel > 1 and setup.framework is Framework.MEGATRON:
        setup = replace(setup, experts_gathered=parallelism.tensor_parallel)
    if parallelism.scheme is Scheme.ZERO3 and not parallelism.zero3_built_outside_init:
        setup = replace(setup, linears_keep_input=True)
    if parallelism.params_cast_for_compute:
        setup = replace(setup, params_cast_for_compute=True)
    if parallelism.scheme in FSDP_SCHEMES and framework_defaults(setup.framework).fsdp_casts_params:
        setup = replace(setup, adapters_gathered_16bit=True)
    if setup.method is Method.QLORA and parallelism.scheme in SHARDED_PARAMETER_SCHEMES:
        setup = replace(setup, float_quant_storage=True)
    fsdp1 = parallelism.scheme in FSDP_SCHEMES \
        and parallelism.fsdp_version is FsdpVersion.FSDP1
    if fsdp1 and setup.method is Method.LORA and lora_in_blocks(setup) \
            and not parallelism.adapters_wrapped_apart:
        # one flat parameter holds a block's frozen weights and its adapters, and FSDP1 flattens
        # only tensors of one dtype (torch/distributed/fsdp/_flat_param.py
        # `_validate_tensors_to_flatten`: "Must flatten tensors with uniform dtype"): adapters
        # that ran so were in the weights' dtype, whatever peft made them
        adapters_fp32 = False if setup.adapters_fp32 is None else setup.adapters_fp32
        return replace(setup, frozen_weights_need_grad=True, adapters_fp32=adapters_fp32)
    return setup


def _zero_keeps_fp32_masters(setup: TrainingSetup, parallelism: Parallelism) -> bool:
    """A ZeRO optimizer of a 16-bit model keeps an fp32 copy of its partition of the trainable
    weights, with fp32 states and gradients, whatever the run calls its precision: DeepSpeed's
    (deepspeed/runtime/zero/stage_1_and_2.py `single_partition_of_fp32_groups`, stage3.py
    `_create_fp32_partitions`; "DeepSpeed optimizer always creates fp32 master
    params/gradients/optimizer states", PR #7700, 2025-12-04, which adds the opt-in
    `bf16_master_weights_and_grads` and `bf16_optimizer_states`, off by default), Megatron-LM's
    distributed optimizer (megatron/core/optimizer/distrib_optimizer.py `shard_main_param =
    shard_model_param.clone().float()`) and ColossalAI's low-level ZeRO. Not an optimizer that
    steps inside backward (LOMO gives `deepspeed.initialize` no optimizer), nor a run without
    one."""
    return (parallelism.scheme in _ZERO_SCHEMES and setup.precision is Precision.BF16_TRUE
            and setup.optimizer is not Optimizer.NONE
            and setup.optimizer_impl is not OptimizerImpl.IN_BACKWARD)


@dataclass(frozen=True, slots=True)
class Stage:
    """The part of the model one GPU holds under pipeline and tensor parallelism (Megatron-LM),
    or in a model split across GPUs by layers (`PipelineSchedule.SEQUENTIAL`: one micro-batch at
    a time, so the first stage holds the activations of its own layers only).

    Without pipeline parallelism there is one stage, the whole model. With it, blocks are split
    evenly; the first stage adds the embedding, the last the final norm and the head (and a copy
    of a tied embedding, which Megatron keeps on the last stage for the output layer). Under the
    1F1B schedule the first stage holds the activations of `pipeline_parallel` micro-batches of
    L/p layers, as much as all L layers of one micro-batch; the last stage holds one micro-batch
    of its own layers and the loss (Korthikanti et al. 2022, arXiv:2205.05198, section 4.2.3).
    Tensor parallelism splits every matrix, and with sequence parallelism every activation, over
    `tensor_parallel` GPUs (same paper, section 4.2.2, equation 5)."""

    name: str
    """`all`, `first` or `last`."""
    params: int
    """Parameters of the stage, before the tensor-parallel split."""
    block_params: int
    """Parameters of the stage's blocks."""
    activation_layers: int
    """Layers' worth of one micro-batch's saved activations held at once."""
    has_loss: bool
    tensor_parallel: int


def pipeline_stages(arch: Architecture, setup: TrainingSetup,
                    parallelism: Parallelism) -> tuple[Stage, ...]:
    """The stages worth estimating: the whole model, or the first and the last stage."""
    stored = total_params(arch, setup)
    tp, pp = parallelism.tensor_parallel, parallelism.pipeline_parallel
    if pp == 1:
        return (Stage("all", stored, arch.params_blocks, arch.n_layers, True, tp),)
    per_stage = ceil_div(arch.n_layers, pp)
    blocks = per_stage * arch.params_per_block
    head = stored - arch.params_blocks - arch.params_embedding
    if arch.tied_embeddings:
        head += arch.params_token_embedding
    # 1F1B keeps pp micro-batches of L/p layers on the first stage; one at a time keeps one.
    first_layers = (arch.n_layers if parallelism.pipeline_schedule is PipelineSchedule.ONE_F_ONE_B
                    else per_stage)
    return (Stage("first", arch.params_embedding + blocks, blocks, first_layers, False, tp),
            Stage("last", blocks + head, blocks, per_stage, True, tp))


def estimate_per_gpu(arch: Architecture, setup: TrainingSetup, parallelism: Parallelism, *,
                     zero3_config: Zero3ConfigFile | None = None) -> PerGpuEstimate:
    """The per-GPU peak of `setup` on `arch` spread over GPUs as `parallelism` says (for
    pipeline parallelism, on the most loaded stage). A ZeRO-3 run reads `zero3_config` when
    given, else the file its framework ships (`ZERO3_CONFIG_FILES`), else DeepSpeed's
    defaults."""
    single = estimate_step(arch, _autograd_setup(setup, parallelism))
    plan = parallelism
    config_file = zero3_config or ZERO3_CONFIG_FILES.get(setup.framework)
    if plan.scheme is Scheme.ZERO3 and config_file is not None:
        plan = replace(plan, buffers=config_file.buffers(arch.hidden_size, plan.buffers))
    states = single.states
    if plan.scheme is Scheme.ZERO3 and setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        # An optimizer stepping inside backward (LOMO's hooks, OpenLMLab/LOMO lomo/src/
        # lomo_trainer.py) is not DeepSpeed's: `deepspeed.initialize` gets no optimizer, and
        # ZeRO-3 without one is `DeepSpeedZeRoOffload`, which partitions the parameters and
        # nothing else (deepspeed/runtime/engine.py @edaa7221 `_configure_zero_optimizer`): no
        # gradient partition, no reduce bucket. Each gradient is stepped on as it is made.
        states = replace(states, gradient_bytes=0)
    estimates = [_stage_estimate(arch, single, states, stage, plan)
                 for stage in pipeline_stages(arch, setup, parallelism)]
    if len(estimates) == 1:
        return estimates[0]  # its peak in the metric (an allocator replay) waits to be asked
    return max(estimates, key=lambda estimate: estimate.total_bytes)


def fsdp_unit_bytes(arch: Architecture, setup: TrainingSetup, stage: Stage) -> UnitBytes | None:
    """FSDP's units as the framework stores them (`vramplan.training.allocations.
    parameter_tensors`): the largest block and the root (what is outside the blocks), for the
    whole model on one stage; None elsewhere (the stage's average bytes per parameter)."""
    if stage.name != "all" or stage.tensor_parallel != 1:
        return None
    block, root = stored_unit_bytes(arch, setup)
    return UnitBytes(block=block, root=root)


def _stage_estimate(arch: Architecture, single: TrainingEstimate, states: ModelStates,
                    stage: Stage, parallelism: Parallelism) -> PerGpuEstimate:
    sharded = expert_parallel_states(
        shard_model_states(stage_states(states, stage), parallelism,
                           fsdp_unit_bytes(arch, single.setup, stage)),
        routed_expert_share(arch), parallelism)
    if parallelism.scheme is Scheme.ZERO3 and stage.name == "all":
        sharded = _zero3_as_run(arch, single.setup, stage_states(states, stage), sharded)
    if _deepspeed_zero_offload(parallelism):
        sharded = _zero_offload_as_run(single.setup, stage_states(states, stage), sharded)
    sharded = _quant_states_whole(arch, single.setup, sharded, stage)
    sharded = replace(sharded, dummy_wgrad_bytes=dummy_wgrad_bytes(
        arch, single.setup, stage.tensor_parallel, head=stage.has_loss))
    acts = _stage_activations(arch, single, stage)
    gpu_acts, host_acts = _activation_split(arch, single, stage, acts,
                                            parallelism.offload is Offload.ACTIVATIONS)
    value = _value_model_bytes(arch, single, stage, parallelism)
    gathered = _gathered_for_generation(arch, single, stage, parallelism)
    phases = tuple(_with_gathered(_phase(phase, single, sharded, stage, gpu_acts,
                                         value_model_bytes=value), gathered)
                   for phase in single.phases
                   if phase.phase is not Phase.EMBEDDING_BACKWARD
                   or _embedding_backward_as_on_one_gpu(stage, parallelism))
    if sharded.reduce_buffers_bytes is not None:
        phases += (_unit_reduce(arch, single, sharded, stage, gpu_acts),)
    if single.setup.gradient_accumulation and not single.setup.steady_state:
        phases += (_later_micro_batch(single, sharded),)
    return PerGpuEstimate(single=single, stage=stage, sharded=sharded, phases=phases,
                          host_activation_bytes_per_rank=host_acts)


def _zero3_as_run(arch: Architecture, setup: TrainingSetup, states: ModelStates,
                  sharded: ShardedStates) -> ShardedStates:
    """ZeRO-3 as DeepSpeed runs `setup`: the parameters its coordinator holds gathered in each
    phase (`vramplan.distributed.sharding.zero3_gathered_peaks` over the step's module trace,
    its prefetches in flight included), the gradient path of backward, and the quantization
    statistics that stay whole."""
    plan = sharded.parallelism
    bufs = plan.buffers
    step = _TracedStep.of(arch, setup)
    ranks = plan.data_parallel
    params_offloaded = plan.offload is Offload.PARAMS_OPTIMIZER
    skips_gather = zero3_skips_gather(plan, setup.code_date)
    pinned = _PinnedByAutograd.of(arch, step, plan.tensor_parallel) \
        if plan.zero3_built_outside_init and not skips_gather else _PinnedByAutograd()
    # what the coordinator retains for a use its prefetch walked past is storage autograd
    # already keeps when it pins the blocks' weights: counted once, as pinned
    retains = has_change(setup.code_date, DEEPSPEED_RETAINS_PREFETCHED_SINCE) \
        and not pinned.blocks
    # one rank's fetch copies each partition to the GPU: no all-gather buffer
    peaks = _zero3_peaks(arch, step, plan.tensor_parallel, bufs, retains_prefetched=retains,
                         buffered=not skips_gather)
    itemsize = states.weight_itemsize

    def held(elements: int, pinned: int = 0, fetching: bool = True) -> int:
        # `elements`: what the coordinator holds gathered, its prefetch's all-gather buffer in
        # flight included (`zero3_gathered_peaks`); `pinned`: gathered storage autograd keeps
        # after the coordinator released it (`free_param`), which it no longer counts
        if skips_gather:
            # one rank gathers nothing (partition_parameters.py `_no_gather_coalesced`,
            # `NoGatherHandle`: `param.data = param.ds_tensor.data.to(device)`): the partition
            # is the parameter, and only an offloaded one is copied to the GPU
            return elements * itemsize if params_offloaded else pinned * itemsize
        # an offloaded partition is copied to the GPU as the all-gather's input until the
        # `wait()` (`all_gather_coalesced`: `param.ds_tensor.to(device)`; on one rank before
        # `DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE`, the whole parameter). The head's fetch is
        # over when its logits are made: the loss phase holds no copy
        copies = ceil_div(elements, ranks) if params_offloaded and fetching else 0
        return (elements + pinned + copies) * itemsize

    gradient_path = (zero3_reduce_transient_bytes(states, bufs)
                     + _largest_block_gradient(arch, setup, states) // plan.tensor_parallel)
    # the blocks' weights a forward has pinned are the ones its coordinator gathered there:
    # at the end of forward they are all pinned, and the coordinator prefetches beside them
    # (the prefetched parameters and their all-gather buffer); the head stays gathered from
    # its forward to its backward (its reuse is immediate)
    return replace(sharded,
                   forward_buffers_bytes=max(held(peaks.forward),
                                             held(2 * peaks.prefetch, pinned.blocks)),
                   loss_buffers_bytes=held(max(peaks.loss, pinned.head), pinned.blocks,
                                           fetching=False),
                   backward_buffers_bytes=held(peaks.backward, pinned.blocks) + gradient_path,
                   last_unit_backward_buffers_bytes=held(peaks.first_block, pinned.block)
                   + gradient_path)


@dataclass(frozen=True, slots=True)
class _PinnedByAutograd:
    """The gathered linear weights autograd keeps from a ZeRO-3 model's forward to its
    backward, in elements: all of them, with `torch.nn.functional.linear` as torch has it.

    DeepSpeed saves only the parameter for backward, whose data it gathers again there
    (deepspeed/runtime/zero/linear.py `LinearFunctionForZeroStage3`), by replacing
    `torch.nn.functional.linear` when a model is built inside `zero.Init` (partition_parameters.py
    v0.14.2 `patch_init_and_builtins`: "This will persist unless manually reset"). A model built
    outside it (`Parallelism.zero3_built_outside_init`) is partitioned by `Init(module=...)`,
    which does not patch: each linear's matmul saves a view of its gathered weight
    (`weight.t()`), and when the coordinator releases the parameter (`free_param`:
    `param.data = torch.empty(0)`) the view keeps the gathered storage until the block's
    backward has used it. Blocks whose forward runs without a graph (full checkpointing) save
    nothing there, and their recomputation holds only the block being run, which the
    coordinator holds anyway. With one rank gathering nothing (`zero3_skips_gather`) the
    weight is the partition itself, kept anyway."""

    block: int = 0
    """One block's linears, when the blocks' forward keeps a graph: while the first block runs
    backward."""
    blocks_with_graph: int = 0
    head: int = 0
    """The head's weight (the embedding's when tied), from its forward to its backward."""

    @property
    def blocks(self) -> int:
        """Every block's linears that keep a graph: after the forward, until the blocks'
        backward."""
        return self.block * self.blocks_with_graph

    @staticmethod
    def of(arch: Architecture, step: _TracedStep, tensor_parallel: int) -> _PinnedByAutograd:
        if step.checkpointing is Checkpointing.FULL or not step.blocks_with_graph:
            block = blocks = 0
        else:
            block = sum(linear.in_features * linear.out_features * linear.count
                        for linear in arch.block_linears()) // tensor_parallel
            blocks = step.blocks_with_graph
        head = arch.head_linear()
        return _PinnedByAutograd(block=block, blocks_with_graph=blocks,
                                 head=head.in_features * head.out_features // tensor_parallel)


def _deepspeed_zero_offload(plan: Parallelism) -> bool:
    """DeepSpeed's ZeRO-1/2 with the optimizer on the host (ZeRO-Offload); not ColossalAI's
    (`Parallelism.offload_keeps_gradients`) nor Megatron-LM's distributed optimizer
    (`Parallelism.main_grad_buffer`)."""
    return plan.scheme in (Scheme.ZERO1, Scheme.ZERO2) \
        and plan.offload in (Offload.OPTIMIZER, Offload.PARAMS_OPTIMIZER) \
        and not plan.offload_keeps_gradients and not plan.main_grad_buffer


def _zero_offload_as_run(setup: TrainingSetup, states: ModelStates,
                         sharded: ShardedStates) -> ShardedStates:
    """ZeRO-1/2 with the optimizer on the host as DeepSpeed runs it (stage_1_and_2.py, read at
    v0.14.2 and at the mirror's head): every gradient goes to the host through
    `temp_grad_buffer_for_gpu_offload`, a 16-bit GPU buffer of the largest parameter made with
    the optimizer (ZeRO-Offload's release, #391, 2020-09-09), held for the run; and while
    `DEEPSPEED_OFFLOAD_STEP_ON_GPU` the step brings this rank's updated fp32 partition to the
    GPU to cast it into the 16-bit one."""
    if not states.gradient_bytes:
        return sharded
    buffer = states.largest_trainable_params * states.gradient_itemsize
    step = ceil_div(states.trainable_params, sharded.shard_degree) * ComputeDtype.FP32.bytes \
        if during(setup.code_date, DEEPSPEED_OFFLOAD_STEP_ON_GPU) else 0
    return replace(sharded, persistent_buffers_bytes=sharded.persistent_buffers_bytes + buffer,
                   step_buffers_bytes=sharded.step_buffers_bytes + step)


def zero3_skips_gather(plan: Parallelism, on: date | None) -> bool:
    """DeepSpeed's ZeRO-3 fetches without an all-gather on one rank (by the code of `on`, None:
    today's; `DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE`)."""
    return plan.data_parallel == 1 and has_change(on, DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE)


@dataclass(frozen=True, slots=True)
class _TracedStep:
    """What decides a ZeRO-3 step's module trace (not its batch nor its length)."""

    method: Method
    quant: Quant
    precision: Precision
    checkpointing: Checkpointing
    blocks_with_graph: int
    head_separate: bool

    @staticmethod
    def of(arch: Architecture, setup: TrainingSetup) -> _TracedStep:
        # under `freeze`, no gradient reaches the blocks before the trained ones; none reaches
        # any block when reentrant checkpoints cut the graph
        with_graph = min(setup.train_layers, arch.n_layers) if setup.method is Method.FREEZE \
            else arch.n_layers
        if checkpoints_cut_the_graph(setup):
            with_graph = 0
        return _TracedStep(setup.method, setup.quant, setup.precision, setup.checkpointing,
                           with_graph, head_is_separate(arch, setup))


@lru_cache(maxsize=64)
def _zero3_peaks(arch: Architecture, step: _TracedStep, tensor_parallel: int,
                 buffers: CommBuffers, *, retains_prefetched: bool,
                 buffered: bool) -> GatheredPeaks:
    trace, forward_uses, first_block = _zero3_trace(arch, step, tensor_parallel)
    return zero3_gathered_peaks(trace, forward_uses, first_block, buffers,
                                retains_prefetched=retains_prefetched, buffered=buffered)


def _zero3_trace(arch: Architecture, step: _TracedStep,
                 tensor_parallel: int) -> tuple[tuple[TracedModule, ...], int, int]:
    """The modules of a step in the order DeepSpeed's hooks fetch them (parameter_offload.py
    @38327e07: a forward pre-hook on every module, a backward pre-hook on its outputs): the
    embedding, every block's linears, the head; then backward from the head, each block's
    linears in reverse, after their recomputation under full activation checkpointing (its
    forward hooks fire again), and the embedding when its output needs a gradient. Norms and
    biases fall under `stage3_param_persistence_threshold` and stay whole. Returns the trace,
    the number of forward uses and where the first block's backward starts."""
    embedding = TracedModule("embedding", ceil_div(arch.params_embedding, tensor_parallel))
    head = TracedModule("head", ceil_div(arch.head_linear().params, tensor_parallel)) \
        if step.head_separate else embedding
    kinds = {moe: tuple(_traced_linear(lin, step, tensor_parallel)
                        for lin in arch.kind_view(moe).block_linears())
             for moe in {arch.layer_is_moe(layer) for layer in range(arch.n_layers)}}
    blocks = [tuple(TracedModule((layer, index), elements) for index, elements
                    in enumerate(kinds[arch.layer_is_moe(layer)]))
              for layer in range(arch.n_layers)]
    forward = (embedding, *(use for block in blocks for use in block), head)
    backward: list[TracedModule] = [head]
    first_block = 0
    for layer in reversed(range(arch.n_layers - step.blocks_with_graph, arch.n_layers)):
        first_block = len(forward) + len(backward)
        if step.checkpointing is Checkpointing.FULL:
            backward += blocks[layer]
        backward += reversed(blocks[layer])
    if step.method is Method.FULL:
        backward.append(embedding)
    return (*forward, *backward), len(forward), first_block


def _traced_linear(linear: LinearSpec, step: _TracedStep, tensor_parallel: int) -> int:
    """A linear's parameter elements as DeepSpeed counts them (`ds_numel`): a bitsandbytes
    weight is its packed storage in the 16-bit `bnb_4bit_quant_storage` that ZeRO-3 needs
    (PEFT docs, accelerate/deepspeed.md), every expert of a MoE layer together (one leaf
    module, transformers `set_z3_leaf_modules`)."""
    weights = linear.in_features * linear.out_features * linear.count
    biases = linear.params - weights
    if step.method is Method.QLORA:
        packed = weights if step.quant is Quant.INT8 else (weights + 1) // 2
        weights = ceil_div(packed, weight_itemsize(step.precision))
    return ceil_div(weights + biases, tensor_parallel)


def _largest_block_gradient(arch: Architecture, setup: TrainingSetup,
                            states: ModelStates) -> int:
    """The whole 16-bit gradient autograd writes for one parameter before ZeRO-3's hook moves it
    into the bucket or reduces it (stage3.py `reduce_independent_p_g_buckets_and_remove_grads`,
    run from the parameter's AccumulateGrad hook): in the blocks, their largest linear when
    their weights train, else the largest adapter."""
    if not states.gradient_bytes:
        return 0
    if setup.method in (Method.FULL, Method.FREEZE):
        largest = max(lin.in_features * lin.out_features for lin in arch.block_linears())
    else:
        largest = states.largest_trainable_params
    return largest * states.gradient_itemsize


def _quant_states_whole(arch: Architecture, setup: TrainingSetup, sharded: ShardedStates,
                        stage: Stage) -> ShardedStates:
    """A sharded QLoRA base with its bitsandbytes statistics whole on every GPU
    (`_unpartitioned_quant_state_bytes`): the shards hold the packed weights, and the statistics,
    counted among the stored bytes, are added back less their shard; parameters offloaded to the
    host (FSDP's `CPUOffload`, ZeRO-3's `offload_param`) leave them on the GPU."""
    scheme = sharded.parallelism.scheme
    if scheme not in (Scheme.ZERO3, *FSDP_SCHEMES) or stage.name != "all":
        return sharded
    kept_whole = _unpartitioned_quant_state_bytes(arch, setup) // stage.tensor_parallel
    if not kept_whole:
        return sharded
    on_gpu = ceil_div(kept_whole, sharded.shard_degree) if sharded.weights_bytes else 0
    return replace(sharded, weights_bytes=sharded.weights_bytes + kept_whole - on_gpu)


def _unpartitioned_quant_state_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """What bitsandbytes keeps beside a quantized weight's storage (absmax, the nested
    quantization's constants; LLM.int8's row scales): attributes of the parameter
    (bitsandbytes nn/modules.py `Params4bit.quant_state`, `Int8Params.SCB`), not parameters,
    so ZeRO-3, which partitions `param.data` (partition_parameters.py @38327e07
    `_partition_param`), and FSDP, which flattens the modules' parameters
    (torch/distributed/fsdp/_flat_param.py; bitsandbytes keeps a copy on the module,
    `Linear4bit.quant_state`, `fix_4bit_weight_quant_state_from_module`), leave them whole on
    every GPU, and parameter offload leaves them there. torchtune's base is torchao's
    `NF4Tensor`, whose scalers and their factors are inner tensors that FSDP2 splits and gathers
    with the codes (pytorch/ao torchao/dtypes/nf4tensor.py @e1aee635,
    `_INNER_TENSOR_NAMES_FOR_SHARDING`, `nf4_split`, `fsdp_pre_all_gather`): none is kept whole."""
    if setup.method is not Method.QLORA or stores_torchao_nf4(setup):
        return 0
    total = 0
    for linear, layers in arch.model_linears():
        elements = linear.in_features * linear.out_features
        if setup.quant is Quant.INT8:
            stats = bnb_int8_bytes(linear.in_features, linear.out_features) - elements
        else:
            double = setup.quant in (Quant.NF4_DQ, Quant.FP4_DQ)
            stats = bnb_4bit_bytes(elements, double) - (elements + 1) // 2
        total += stats * linear.count * layers
    return total


def _embedding_backward_as_on_one_gpu(stage: Stage, parallelism: Parallelism) -> bool:
    """The embedding's backward as one GPU runs it (vramplan.training.estimate
    `_embedding_backward`): under DDP, whose gradients are whole tensors on every GPU, on a
    stage holding the whole model. FSDP counts the root unit's gradient completing at the
    embedding in its own buffers (vramplan.distributed.sharding, `root_end`); DeepSpeed's ZeRO
    moves each gradient into its buckets from a hook."""
    return parallelism.scheme in (Scheme.NONE, Scheme.DDP) and stage.name == "all" \
        and stage.tensor_parallel == 1


def routed_expert_share(arch: Architecture) -> Fraction:
    """The routed experts' share of the model's parameters (0 for a dense model)."""
    routed = sum(lin.params * layers for lin, layers in arch.model_linears() if lin.routed)
    return Fraction(routed, arch.params_total)


_SHARDED_COMPONENTS: dict[Scheme, frozenset[str]] = {
    Scheme.ZERO1: frozenset({"optimizer_states_bytes", "master_weights_bytes"}),
    Scheme.ZERO2: frozenset({"optimizer_states_bytes", "master_weights_bytes",
                             "gradients_bytes", "gradients_at_step_bytes"}),
}
"""The model states a scheme shards over the data-parallel group (ZeRO stages 1 and 2, Rajbhandari
et al. 2020, section 5); ZeRO-3 and every FSDP shard all four."""
_STATE_COMPONENTS = ("weights_bytes", "gradients_bytes", "master_weights_bytes",
                     "optimizer_states_bytes", "gradients_at_step_bytes")


def expert_parallel_states(sharded: ShardedStates, expert_share: Fraction,
                           parallelism: Parallelism) -> ShardedStates:
    """Under expert parallelism each GPU holds 1 / expert_parallel of the routed experts. A state
    the scheme shards over the data-parallel group is already split over every rank there
    (DeepSpeed-MoE shards expert states over the expert-data-parallel group, data_parallel /
    expert_parallel ranks, so each still holds 1 / data_parallel of them); a replicated state
    keeps only its own experts."""
    ep = parallelism.expert_parallel
    if ep == 1:
        return sharded
    if not expert_share:
        raise ConflictingOptions("expert_parallel", "model", str(ep), "no_experts")
    if parallelism.scheme in SHARDED_PARAMETER_SCHEMES:
        return sharded
    sharded_here = _SHARDED_COMPONENTS.get(parallelism.scheme, frozenset())
    kept = 1 - expert_share * (ep - 1) / ep
    # DDP's gradient buckets hold the gradients of what the rank holds
    components = (*_STATE_COMPONENTS, *(("persistent_buffers_bytes",)
                                       if parallelism.scheme is Scheme.DDP else ()))
    changes = {name: _ceil(getattr(sharded, name) * kept) for name in components
               if name not in sharded_here}
    return replace(sharded, **changes)  # type: ignore[arg-type]


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


def stage_states(states: ModelStates, stage: Stage) -> ModelStates:
    """The model states of one stage, split over the tensor-parallel GPUs (norms, which Megatron
    replicates, are counted as split: they are a few thousand parameters per layer)."""
    whole = states.params
    tp = stage.tensor_parallel
    if stage.name == "all" and tp == 1:
        return states

    def share(n: int) -> int:
        return ceil_div(n * stage.params, whole * tp) if whole else 0

    return ModelStates(
        trainable_params=share(states.trainable_params),
        frozen_params=share(states.frozen_params),
        trainable_weight_bytes=share(states.trainable_weight_bytes),
        frozen_weight_bytes=share(states.frozen_weight_bytes),
        gradient_bytes=share(states.gradient_bytes),
        master_weight_bytes=share(states.master_weight_bytes),
        optimizer_state_bytes=share(states.optimizer_state_bytes),
        managed_optimizer_bytes=share(states.managed_optimizer_bytes),
        flat_optimizer_state_bytes=(None if states.flat_optimizer_state_bytes is None
                                    else share(states.flat_optimizer_state_bytes)),
        weight_itemsize=states.weight_itemsize, gradient_itemsize=states.gradient_itemsize,
        largest_layer_params=ceil_div(states.largest_layer_params, tp),
        block_params=ceil_div(states.block_params, tp),
        root_params=ceil_div(stage.params - stage.block_params, tp),
        root_trains=states.root_trains,
        head_params=ceil_div(states.head_params, tp) if stage.has_loss else 0,
        flat_gradient_params=(None if states.flat_gradient_params is None
                              else share(states.flat_gradient_params)),
        largest_trainable_params=ceil_div(states.largest_trainable_params, tp),
        embedding_params=(ceil_div(states.embedding_params, tp)
                          if stage.name in ("all", "first") else 0),
        # one buffer per layer (GPT-Neo's masks), on the stage that holds the layer
        buffer_bytes=_stage_share(states.buffer_bytes, stage.block_params,
                                  states.params - states.root_params),
    )


def _stage_share(n_bytes: int, stage_blocks: int, all_blocks: int) -> int:
    """What of `n_bytes` spread evenly over the blocks a stage holds."""
    return n_bytes * stage_blocks // all_blocks if all_blocks else n_bytes


def _stage_activations(arch: Architecture, single: TrainingEstimate, stage: Stage) -> int:
    """Saved activations of the stage (see `Stage`). Under `loss_parallel` the output layer
    takes its input all-gathered over the sequence (torchtitan's `ColwiseParallel(
    input_layouts=Shard(1))`) and saves it whole on every tensor-parallel GPU."""
    blocks = single.activations_bytes - single.loss.saved_bytes
    held = blocks * stage.activation_layers // arch.n_layers
    gathered_head_input = 0
    if stage.has_loss:
        held += single.loss.saved_bytes
        if single.setup.loss_parallel and stage.tensor_parallel > 1:
            head_input = compute_itemsize(single.setup.precision) * arch.hidden_size \
                * single.setup.batch * single.setup.seq_len
            gathered_head_input = head_input - ceil_div(head_input, stage.tensor_parallel)
    return ceil_div(held, stage.tensor_parallel) + gathered_head_input


def _activation_split(arch: Architecture, single: TrainingEstimate, stage: Stage, total: int,
                      offload: bool) -> tuple[int, int]:
    """Saved activations kept on the GPU and sent to the host."""
    if not offload:
        return total, 0
    loss = ceil_div(single.loss.saved_bytes, stage.tensor_parallel) if stage.has_loss else 0
    blocks = total - loss
    on_gpu = loss + min(blocks, blocks * ACTIVATION_OFFLOAD_BLOCKS_ON_GPU // arch.n_layers)
    return on_gpu, total - on_gpu


_STATE_PARTS = frozenset({PartKind.TRAINABLE_WEIGHTS, PartKind.FROZEN_WEIGHTS, PartKind.GRADIENTS,
                          PartKind.MASTER_WEIGHTS, PartKind.OPTIMIZER_STATES})


def _value_model_bytes(arch: Architecture, single: TrainingEstimate, stage: Stage,
                       parallelism: Parallelism) -> int:
    """PPO's value model on this GPU: a fully trained model's states, sharded by the same
    scheme as the policy (0 for the other methods)."""
    alignment = single.setup.alignment
    if alignment is None or alignment.method is not Method.PPO:
        return 0
    states = stage_states(value_model_states(arch, single.setup), stage)
    return shard_model_states(states, parallelism).model_states_bytes


def _gathered_for_generation(arch: Architecture, single: TrainingEstimate, stage: Stage,
                             parallelism: Parallelism) -> int | None:
    """What ZeRO-3 holds gathered while TRL generates with the model itself: every parameter of
    the trained model, the policy's and for PPO the value model's (TRL `PPOTrainer` and
    `GRPOTrainer` generate inside `unwrap_model_for_generation`, whose
    `deepspeed.zero.GatheredParameters(model.parameters())` gathers them all; huggingface/trl
    trl/models/utils.py, `ds3_gather_for_generation` True by default since d4222a1e0,
    2025-01-21, and unconditional before). None: not a ZeRO-3 run generating with the model."""
    alignment = single.setup.alignment
    if (alignment is None or not alignment.method.generates
            or alignment.generation is not Generation.MODEL
            or parallelism.scheme is not Scheme.ZERO3):
        return None
    gathered = stage_states(single.states, stage).weight_bytes
    if alignment.method is Method.PPO:
        gathered += stage_states(value_model_states(arch, single.setup), stage).weight_bytes
    return gathered


def _with_gathered(phase: PhaseMemory, gathered: int | None) -> PhaseMemory:
    """The generation phase with ZeRO-3's buffers holding the whole gathered model
    (`_gathered_for_generation`); any other phase as it is."""
    if phase.phase is not Phase.GENERATION or gathered is None:
        return phase
    return PhaseMemory(phase.phase, tuple(Part(PartKind.SHARDING_BUFFERS, gathered)
                                          if p.kind is PartKind.SHARDING_BUFFERS else p
                                          for p in phase.parts))


def _phase(phase: PhaseMemory, single: TrainingEstimate, sharded: ShardedStates, stage: Stage,
           gpu_activations: int, *, value_model_bytes: int = 0) -> PhaseMemory:
    """`phase` with its model states replaced by this GPU's share and the buffers added."""
    one_gradient = ceil_div(largest_gradient_bytes(single.states, single.setup),
                            sharded.shard_degree)
    parts = [*_sharded_parts(phase.phase, single.setup, sharded, one_gradient),
             *_tied_head_gradient(phase.phase, single, sharded),
             *_checkpoints_held_by_fsdp1(phase.phase, single, sharded)]
    if phase.phase in _END_OF_BACKWARD and not gradients_kept(single.setup) \
            and not sharded.parallelism.accumulate_without_sync \
            and not sharded.gradients_from_start \
            and single.setup.optimizer_impl is not OptimizerImpl.IN_BACKWARD:
        # made by this backward before the first block's: the single-GPU count, split as this
        # GPU splits its gradients
        made = sum(p.memory_bytes for p in phase.parts if p.kind is PartKind.GRADIENTS)
        parts = [Part(PartKind.GRADIENTS, _scaled(made, sharded.gradients_bytes,
                                                  single.states.gradient_bytes))
                 if p.kind is PartKind.GRADIENTS else p for p in parts]
    for part in phase.parts:
        if part.kind in _STATE_PARTS:
            continue
        n_bytes = part.memory_bytes
        if part.kind is PartKind.ACTIVATIONS:
            # this GPU's activations, less what the phase no longer holds on one GPU (the
            # head's saved inputs once backward passes it)
            n_bytes = max(gpu_activations - (single.activations_bytes - n_bytes), 0)
        elif part.kind is PartKind.STEP_TEMPORARIES:
            flat = _deepspeed_step_temporaries(single, sharded)
            n_bytes = _scaled(part.memory_bytes, sharded.optimizer_states_bytes,
                              split_optimizer_state_bytes(single.states, sharded.parallelism)) \
                if flat is None else flat
            # the group's flattened 16-bit gradient, beside its fp32 copy, before the update
            n_bytes = max(n_bytes, sharded.step_prepare_bytes)
        elif part.kind is PartKind.LOGITS_LOSS and not stage.has_loss:
            n_bytes = 0  # the head and the loss live on the last pipeline stage
        elif part.kind in (PartKind.REFERENCE_WEIGHTS, PartKind.REWARD_WEIGHTS):
            # prepared like the policy (TRL `prepare_deepspeed` / `prepare_fsdp`): split as
            # this GPU splits the policy's weights
            n_bytes = _scaled(n_bytes, sharded.weights_bytes, single.states.weight_bytes)
        elif part.kind is PartKind.VALUE_MODEL:
            n_bytes = value_model_bytes  # trained with the policy, under the same sharding
        elif part.kind is PartKind.GENERATION_ENGINE:
            pass  # the engine's share of this GPU
        elif part.kind is PartKind.AUTOCAST_COPIES:
            # one 16-bit copy of each of the stage's weights, split like the weights
            whole = single.states.trainable_params + single.states.frozen_params
            n_bytes = ceil_div(n_bytes * stage.params, whole * stage.tensor_parallel)
        else:
            # logits are split over the vocabulary (Megatron's vocab-parallel cross-entropy),
            # temporaries over the tensor-parallel GPUs
            n_bytes = ceil_div(n_bytes, stage.tensor_parallel)
        parts.append(Part(part.kind, n_bytes))
    return PhaseMemory(phase.phase, tuple(parts))


_ZERO_SCHEMES = frozenset({Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3})


def _tied_head_gradient(phase: Phase, single: TrainingEstimate,
                        sharded: ShardedStates) -> tuple[Part, ...]:
    """A tied embedding's gradient from the head, whole, under DeepSpeed ZeRO: autograd sums a
    parameter's gradients in its input buffer and runs its `AccumulateGrad` once the last use's
    backward, the embedding's, has added its own, and ZeRO reduces and partitions a gradient from
    a hook on `AccumulateGrad` (deepspeed/runtime/zero/stage3.py `create_reduce_and_remove_grad_
    hooks`, stage_1_and_2.py `_create_param_mapping`/`create_reduce_and_remove_grad_hooks`): the
    head's vocabulary x hidden gradient lives unreduced from the head's backward through the
    blocks'. Only when the head trains (full fine-tuning); not into Megatron-LM's gradient
    buffer (`main_grad_buffer`), where the head's weight gradient is accumulated in place."""
    arch, setup, plan = single.arch, single.setup, sharded.parallelism
    if (phase not in (Phase.BACKWARD_BLOCKS, Phase.BACKWARD_END)
            or plan.scheme not in _ZERO_SCHEMES or plan.main_grad_buffer
            or not arch.tied_embeddings or setup.method is not Method.FULL
            or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD):
        return ()
    return (Part(PartKind.GRADIENTS, arch.params_token_embedding * gradient_itemsize(setup)),)


def _checkpoints_held_by_fsdp1(phase: Phase, single: TrainingEstimate,
                               sharded: ShardedStates) -> tuple[Part, ...]:
    """Every block's checkpointed input and its gradient, held until the end of backward: under
    FSDP1, with blocks whose units hold frozen weights only (peft's wrap policy puts each
    adapter in its own unit) and transformers' reentrant checkpointing called around each unit
    from the model's forward (`_gradient_checkpointing_func(decoder_layer.__call__, ...)`).
    The reentrant backward reruns the unit on detached leaf copies of its input, which share
    its storage and collect its gradient in `.grad`; FSDP1 hooks a unit without trainable
    parameters through `_register_post_backward_reshard_only_hook` (torch/distributed/fsdp/
    _runtime_utils.py, torch >= 2.1), whose `register_multi_grad_hook` on those leaves
    (torch/autograd/graph.py) keeps their AccumulateGrad nodes, which hold the tensors: a
    cycle that FSDP breaks only in `_finalize_params`, at the end of backward. At the first
    block's backward, every block's gradient but its own being made, and every input but the
    first block's (the embeddings' output, counted with the step). Only while transformers
    called the checkpoint around the layer (`TransformersCode.checkpoints_around_layers`,
    before v4.52.0): its `GradientCheckpointingLayer` checkpoints inside the unit, on the
    unit's own input (traced with transformers 5 under FSDP1: no tensor held). Found and traced
    with transformers 4.48.1 and peft 0.13.2 under FSDP1 on a fake process group (fms-acceleration's
    Mistral-7B LoRA rows: 15.26 GB traced against 15.14 measured); not with non-reentrant
    checkpointing, nor with the checkpoint wrapper inside the units
    (`TrainingSetup.checkpoint_in_units`)."""
    setup, plan = single.setup, sharded.parallelism
    if (phase not in (*_END_OF_BACKWARD, Phase.UNIT_REDUCE)
            or plan.scheme not in FSDP_SCHEMES or plan.fsdp_version is not FsdpVersion.FSDP1
            or not plan.adapters_wrapped_apart or setup.checkpoint_in_units
            or not checkpoints_reentrant(setup) or not runs_transformers_code(setup.framework)
            or not transformers_code(setup.code_date).checkpoints_around_layers):
        return ()
    layers = single.arch.n_layers
    per_layer = setup.batch * setup.seq_len * single.arch.hidden_size * residual_itemsize(setup)
    return (Part(PartKind.ACTIVATIONS, (2 * layers - 1) * per_layer),)


_END_OF_BACKWARD = (Phase.BACKWARD_END, Phase.EMBEDDING_BACKWARD)
"""The first block's backward and the embedding's, last: the gradients of the rest are made."""


def _sharded_parts(phase: Phase, setup: TrainingSetup, sharded: ShardedStates,
                   one_gradient: int = 0) -> tuple[Part, ...]:
    """This GPU's model states and sharding buffers at `phase`."""
    # Gathered parameters of the forward (and of the loss) until backward runs through the
    # blocks; the first block, last in backward, has no unit left to prefetch; the step has its
    # own buffers.
    last_unit = sharded.last_unit_backward_buffers_bytes
    loss = sharded.forward_buffers_bytes if sharded.loss_buffers_bytes is None \
        else sharded.loss_buffers_bytes
    buffers = {
        Phase.LOSS_FORWARD: loss,
        Phase.BACKWARD_START: loss + sharded.backward_bucket_bytes,
        Phase.UNIT_REDUCE: sharded.reduce_buffers_bytes or 0,
        # an offloaded ZeRO-2 checks the head's gradient as backward enters the blocks and the
        # embeddings' at its end (their working tensors are counted there too: an upper bound)
        Phase.BACKWARD_BLOCKS: sharded.backward_buffers_bytes + sharded.head_check_bytes,
        Phase.BACKWARD_END: (sharded.backward_buffers_bytes if last_unit is None else last_unit)
        + sharded.embedding_check_bytes,
        Phase.EMBEDDING_BACKWARD: sharded.backward_buffers_bytes if last_unit is None
        else last_unit,
        # no activations are counted there: the larger of a block's backward and its reduce
        Phase.LATER_MICRO_BATCH: max(sharded.backward_buffers_bytes,
                                     sharded.reduce_buffers_bytes or 0),
        Phase.OPTIMIZER_STEP: sharded.step_buffers_bytes,
    }.get(phase, sharded.forward_buffers_bytes)
    dummies = sharded.dummy_wgrad_bytes if dummy_wgrads_held(phase, setup) else 0
    return (
        Part(PartKind.WEIGHTS_PER_GPU, sharded.weights_bytes),
        Part(PartKind.FROZEN_WEIGHTS, sharded.module_buffers_bytes + dummies),
        # ZeRO-3's flat gradient partition exists from start-up (see ShardedStates)
        Part(PartKind.GRADIENTS, sharded.gradients_bytes if sharded.gradients_from_start
             else _gradients(phase, setup, sharded, one_gradient)),
        Part(PartKind.MASTER_WEIGHTS, sharded.master_weights_bytes),
        Part(PartKind.OPTIMIZER_STATES,
             sharded.optimizer_states_bytes if _after_a_step(phase, setup) else 0),
        Part(PartKind.COMM_BUFFERS, sharded.persistent_buffers_bytes),
        Part(PartKind.SHARDING_BUFFERS, buffers),
    )


def _unit_reduce(arch: Architecture, single: TrainingEstimate, sharded: ShardedStates,
                 stage: Stage, gpu_activations: int) -> PhaseMemory:
    """A block's gradients reduced after its backward (FSDP): the activations of the blocks
    still to run backward, the logits a loop keeps, and the unit-sized gradients."""
    blocks = single.activations_bytes - single.loss.saved_bytes
    per_block = ceil_div(blocks, arch.n_layers * stage.tensor_parallel)
    logits = next((p.memory_bytes for p in single.phases[0].parts
                   if p.kind is PartKind.LOGITS_LOSS), 0) if stage.has_loss else 0
    kept = single.loss.logits_alive_bytes if stage.has_loss else 0
    return PhaseMemory(Phase.UNIT_REDUCE, (
        *_sharded_parts(Phase.UNIT_REDUCE, single.setup, sharded),
        Part(PartKind.ACTIVATIONS, max(gpu_activations - per_block, 0)),
        Part(PartKind.LOGITS_LOSS, min(kept, logits))))


def _gradients(phase: Phase, setup: TrainingSetup, sharded: ShardedStates,
               one_gradient: int = 0) -> int:
    """The gradients this GPU keeps at `phase` (a unit's transient ones are buffers)."""
    between_steps = phase in (Phase.GENERATION, Phase.LOG_PROBS)
    if between_steps or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        # between steps, freed by the last one (`zero_grad(set_to_none=True)`); stepping inside
        # backward, each gradient is stepped on and freed as soon as it is made (see
        # vramplan.training.estimate.largest_gradient_bytes)
        in_step = phase in (*_END_OF_BACKWARD, Phase.OPTIMIZER_STEP) and not between_steps
        return one_gradient if in_step else 0
    if phase is Phase.OPTIMIZER_STEP:
        on_host = sharded.parallelism.offload in (Offload.OPTIMIZER, Offload.PARAMS_OPTIMIZER)
        if setup.precision is Precision.MIXED and sharded.step_buffers_bytes == 0 \
                and not on_host:
            # a master-weight optimizer steps on fp32 gradients of its masters (as on one GPU,
            # vramplan.training.estimate); DeepSpeed counts its fp32 partition as a step buffer;
            # an offloaded optimizer's fp32 gradients are on the host
            return sharded.gradients_at_step_bytes * 4 // gradient_itemsize(setup)
        return sharded.gradients_at_step_bytes
    if gradients_kept(setup) or phase is Phase.LATER_MICRO_BATCH:
        return sharded.gradients_bytes
    if phase in _END_OF_BACKWARD:
        # made by this backward: every unit's but the first block's and the root's, still being
        # formed among the buffers (kept whole under no_sync, as shards otherwise)
        whole = sharded.parallelism.accumulate_without_sync
        forming = sharded.unit_gradient_bytes + sharded.root_gradient_bytes if whole else 0
        return max(sharded.gradients_bytes - forming, 0)
    return 0


def _after_a_step(phase: Phase, setup: TrainingSetup) -> bool:
    """Optimizer states exist at `phase` (they are created by the first step)."""
    later = phase in (Phase.OPTIMIZER_STEP, Phase.LATER_MICRO_BATCH)
    return later or optimizer_states_exist(setup)


def _later_micro_batch(single: TrainingEstimate, sharded: ShardedStates) -> PhaseMemory:
    """The largest batch came first: a later micro-batch of gradient accumulation starts with
    the gradients kept from the earlier ones and runs a backward with its buffers; its
    activations depend on its (unknown, shorter) length and are not counted."""
    return PhaseMemory(Phase.LATER_MICRO_BATCH,
                       _sharded_parts(Phase.LATER_MICRO_BATCH, single.setup, sharded))


def _deepspeed_step_temporaries(single: TrainingEstimate, sharded: ShardedStates) -> int | None:
    """The step's temporaries under DeepSpeed's ZeRO with the optimizer on the GPU, which hands
    it this rank's fp32 partition as one flat tensor (stage_1_and_2.py
    `single_partition_of_fp32_groups`), ZeRO-3 one sub-group per call (stage3.py
    `_optimizer_step`, `fp32_partitioned_groups_flat`): `step_temporaries_over` of that tensor;
    None under another scheme (or ColossalAI's, Megatron-LM's distributed optimizer), whose
    optimizer steps on this GPU's share of each tensor."""
    if not steps_flat_partition(sharded.parallelism) or not sharded.master_weights_bytes:
        return None
    states = single.states
    itemsize = states.master_itemsize or trainable_state_itemsize(single.setup)
    if sharded.step_group_params is not None:
        return step_temporaries_over([sharded.step_group_params], single.setup, itemsize,
                                     one_call_each=True)
    partition = ceil_div(states.trainable_params, sharded.shard_degree)
    return step_temporaries_over([partition], single.setup, itemsize)


def _scaled(n_bytes: int, part: int, whole: int) -> int:
    """The optimizer step's temporaries follow the states this GPU updates."""
    return n_bytes * part // whole if whole else n_bytes


def overhead_parts(estimate: PerGpuEstimate) -> tuple[tuple[str, int], ...]:
    """What the peak in the setup's metric holds beyond the allocated tensors, as the fit report
    lists it (catalogue key, bytes): the allocator's cache and the CUDA context, then NCCL's
    communicators, which only the `device` metric counts."""
    nccl = estimate.communicator_bytes if estimate.metric is Metric.DEVICE else 0
    rest = estimate.total_bytes - estimate.allocated_bytes - nccl
    return tuple((key, n) for key, n in (("fit.allocator", rest), ("fit.nccl", nccl)) if n)
