"""What each GPU holds of the model and the micro-batch: pipeline stages, the tensor-, pipeline-
and expert-parallel shares of the model states, and of the activations (with activation
offloading)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from vramplan.distributed.parallelism import (
    SHARDED_PARAMETER_SCHEMES,
    Parallelism,
    PipelineSchedule,
    ShardedStates,
)
from vramplan.errors import ConflictingOptions
from vramplan.model.architecture import Architecture
from vramplan.parts import PartKind
from vramplan.training.result import TrainingEstimate
from vramplan.training.setup import TrainingSetup, compute_itemsize
from vramplan.training.states import ModelStates, total_params
from vramplan.units import ceil_div
from vramplan.vocab import Scheme

ACTIVATION_OFFLOAD_BLOCKS_ON_GPU = 2
"""With activation offloading, the saved tensors of the block in use and of the one being copied
(torch.autograd.graph.save_on_cpu copies each saved tensor to the host at save time and back at
unpack time; offloading schemes double-buffer one block ahead)."""


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
        tied_gradient_copies=states.tied_gradient_copies if stage.name == "all" else 0,
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


def stage_activations(arch: Architecture, single: TrainingEstimate, stage: Stage) -> int:
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


def activation_split(arch: Architecture, single: TrainingEstimate, stage: Stage, total: int,
                     offload: bool) -> tuple[int, int]:
    """Saved activations kept on the GPU and sent to the host."""
    if not offload:
        return total, 0
    loss = ceil_div(single.loss.saved_bytes, stage.tensor_parallel) if stage.has_loss else 0
    blocks = total - loss
    on_gpu = loss + min(blocks, blocks * ACTIVATION_OFFLOAD_BLOCKS_ON_GPU // arch.n_layers)
    return on_gpu, total - on_gpu


STATE_PARTS = frozenset({PartKind.TRAINABLE_WEIGHTS, PartKind.FROZEN_WEIGHTS, PartKind.GRADIENTS,
                         PartKind.MASTER_WEIGHTS, PartKind.OPTIMIZER_STATES})
