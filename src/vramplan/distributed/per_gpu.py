"""One training setup on N GPUs: the per-GPU peak, phase by phase.

Starts from the single-GPU estimate (`vramplan.training.estimate`), shards its model
states (`vramplan.distributed.sharding`) and keeps its activations: data parallelism splits the
global batch, not a micro-batch, so each GPU holds the activations and temporaries of its own
micro-batch whatever the scheme. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vramplan.distributed.communicators import communicator_bytes
from vramplan.distributed.defaults import (
    ZERO3_CONFIG_FILES,
    program_sharding,
    syncs_module_states,
    tensor_parallel_share,
)
from vramplan.distributed.parallelism import (
    FSDP_SCHEMES,
    SHARDED_PARAMETER_SCHEMES,
    Parallelism,
    ShardedStates,
    UnitBytes,
    Zero3ConfigFile,
)
from vramplan.distributed.sharding import (
    shard_model_states,
    split_optimizer_state_bytes,
    steps_flat_partition,
)
from vramplan.distributed.stages import (
    STATE_PARTS,
    Stage,
    activation_split,
    expert_parallel_states,
    pipeline_stages,
    routed_expert_share,
    stage_activations,
    stage_states,
)
from vramplan.distributed.zero3_run import (
    deepspeed_zero_offload,
    embedding_backward_as_on_one_gpu,
    quant_states_whole,
    zero3_as_run,
    zero_offload_as_run,
)
from vramplan.model.architecture import Architecture
from vramplan.parts import PartKind
from vramplan.presets.frameworks.defaults import framework_defaults, runs_transformers_code
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.training.alignment import estimate_step, value_model_states
from vramplan.training.allocations.optimizer import step_temporaries_over
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
    gradient_itemsize,
    gradients_kept,
    optimizer_states_exist,
    residual_itemsize,
    trainable_state_itemsize,
)
from vramplan.training.states import ModelStates, lora_in_blocks
from vramplan.units import ceil_div
from vramplan.vocab import (
    Framework,
    FsdpVersion,
    Generation,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Scheme,
)


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
    """FSDP's units as the framework stores them (`vramplan.training.allocations.tensors.
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
        sharded = zero3_as_run(arch, single.setup, stage_states(states, stage), sharded)
    if deepspeed_zero_offload(parallelism):
        sharded = zero_offload_as_run(single.setup, stage_states(states, stage), sharded)
    sharded = quant_states_whole(arch, single.setup, sharded, stage)
    sharded = replace(sharded, dummy_wgrad_bytes=dummy_wgrad_bytes(
        arch, single.setup, stage.tensor_parallel, head=stage.has_loss))
    acts = stage_activations(arch, single, stage)
    gpu_acts, host_acts = activation_split(arch, single, stage, acts,
                                           parallelism.offload is Offload.ACTIVATIONS)
    value = _value_model_bytes(arch, single, stage, parallelism)
    gathered = _gathered_for_generation(arch, single, stage, parallelism)
    phases = tuple(_with_gathered(_phase(phase, single, sharded, stage, gpu_acts,
                                         value_model_bytes=value), gathered)
                   for phase in single.phases
                   if phase.phase is not Phase.EMBEDDING_BACKWARD
                   or embedding_backward_as_on_one_gpu(stage, parallelism))
    if sharded.reduce_buffers_bytes is not None:
        phases += (_unit_reduce(arch, single, sharded, stage, gpu_acts),)
    if single.setup.gradient_accumulation and not single.setup.steady_state:
        phases += (_later_micro_batch(single, sharded),)
    return PerGpuEstimate(single=single, stage=stage, sharded=sharded, phases=phases,
                          host_activation_bytes_per_rank=host_acts)


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
    made_in_backward = _gradients_made_in_backward(single, sharded)
    if phase.phase in _END_OF_BACKWARD and made_in_backward:
        # made by this backward before the first block's: the single-GPU count, split as this
        # GPU splits its gradients
        made = sum(p.memory_bytes for p in phase.parts if p.kind is PartKind.GRADIENTS)
        parts = [Part(PartKind.GRADIENTS, _scaled(made, sharded.gradients_bytes,
                                                  single.states.gradient_bytes))
                 if p.kind is PartKind.GRADIENTS else p for p in parts]
    for part in phase.parts:
        if part.kind in STATE_PARTS:
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
    first_block = PhaseMemory(phase.phase, tuple(parts))
    if phase.phase is not Phase.BACKWARD_END or sharded.root_end_buffers_bytes is None:
        return first_block
    root_end = _root_end(first_block, sharded, made_in_backward=made_in_backward)
    return max(first_block, root_end, key=lambda p: p.total_bytes)


def _gradients_made_in_backward(single: TrainingEstimate, sharded: ShardedStates) -> bool:
    """This GPU's gradients are made by this backward, unit after unit (not kept from an
    earlier micro-batch or from the start, not stepped on in backward)."""
    return (not gradients_kept(single.setup)
            and not sharded.parallelism.accumulate_without_sync
            and not sharded.gradients_from_start
            and single.setup.optimizer_impl is not OptimizerImpl.IN_BACKWARD)


def _root_end(first_block: PhaseMemory, sharded: ShardedStates, *,
              made_in_backward: bool) -> PhaseMemory:
    """Backward's end as the root unit's gradient completes after the embedding's backward
    (`ShardedStates.root_end_buffers_bytes`): the first block's backward temporaries and saved
    tensors are freed by then. Counted with them (the larger of the two moments' buffers beside
    the first block's temporaries, before 2026-12-06's tenth session), FSDP1 and FSDP2 full
    fine-tuning under full checkpointing on 8 GPUs was 2.6 to 11.6 % over rank 0's trace
    (Llama-3.1-8B, Qwen2.5-7B, Phi-2, 2 x 512 tokens). Its gradients: every block's shard,
    not yet the root's (they were the first block's moment's, less that block's shard and with
    the root's, until 2026-12-07: Llama-3.2-1B on 2 GPUs 192 MiB over the trace's 928)."""
    root_end = sharded.root_end_buffers_bytes or 0
    parts = [Part(p.kind, root_end + sharded.embedding_check_bytes)
             if p.kind is PartKind.SHARDING_BUFFERS else p
             for p in first_block.parts
             if p.kind not in (PartKind.BACKWARD_TEMPORARIES, PartKind.ACTIVATIONS)]
    if made_in_backward:
        # every block's gradient shard is made by then, the root's not yet
        blocks = max(sharded.gradients_bytes - sharded.root_gradient_shard_bytes, 0)
        parts = [Part(p.kind, blocks) if p.kind is PartKind.GRADIENTS else p for p in parts]
    return PhaseMemory(first_block.phase, tuple(parts))


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
