"""The detailed memory model of one training step: model states, activations, temporaries, and the
peak over the step's phases, with the breakdown at that moment.

Pure: typed inputs (`TrainingSetup`, an `Architecture`) to a typed `TrainingEstimate`; bytes are
integers. Every term names its source in a comment; activations are in
`vramplan.training.activations`.

Phases (the peak is the largest; see docs/memory-model.md):
- `backward_start`: the loss has just been computed and backward begins. Every saved activation is
  alive, plus the logits and the loss's vocabulary-sized tensors; with gradient accumulation the
  gradients of earlier micro-batches are already there.
- `backward_blocks`: backward runs through the last block: its gradients' temporaries beside every
  saved activation (and, under full checkpointing, the one block being recomputed).
- `embedding_backward` (the embedding trains): every gradient, the embedding's being formed.
- `optimizer_step`: activations are gone; the optimizer's temporaries join the states.
"""

from __future__ import annotations

from dataclasses import replace

from vramplan.model.architecture import Architecture, MlpKind, NormKind
from vramplan.parts import Component, PartKind
from vramplan.presets.frameworks.defaults import runs_transformers_code
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.training.activations.attention import (
    masked_local_layer_bytes,
    masked_local_layers_bytes,
)
from vramplan.training.activations.backward import (
    RMSNORM_BACKWARD_FP32_TENSORS,
    block_backward_transient,
    moe_backward_transient,
    recomputed_forward_peak,
    released_before_block_peak,
    scores_backward_extra,
)
from vramplan.training.activations.block import (
    block_saved,
    embedding_saved_bytes,
    first_block_graphless_linears,
    quantized_base_inputs,
)
from vramplan.training.activations.checkpointing import (
    block_input_bytes,
    kept_for_backward,
    largest_submodule_saved,
    submodule_checkpoint_inputs,
)
from vramplan.training.activations.head import LossMemory, head_and_loss
from vramplan.training.activations.mlp import tiled_mlp_backward
from vramplan.training.activations.moe import SHARED_EXPERTS_PREFIX, grouped_experts_combine
from vramplan.training.activations.spec import (
    FP32,
    LITGPT_LM_HEAD_CHUNK,
    BlockSpec,
    Saved,
    total_per_token,
)
from vramplan.training.allocations.optimizer import optimizer_step_temporaries
from vramplan.training.dummy_wgrads import dummy_wgrad_bytes
from vramplan.training.result import Part, Phase, PhaseMemory, TrainingEstimate
from vramplan.training.setup import (
    TrainingSetup,
    autocast_casts_weights,
    check_setup,
    checkpoint_reload_buffers,
    checkpoints_reentrant,
    compute_itemsize,
    first_pass_keeps_inputs,
    gradient_itemsize,
    gradients_kept,
    keeps_last_checkpoint_input,
    lora_rank_of,
    offloads_checkpoints,
    optimizer_states_exist,
    runs_autocast,
    trainable_itemsize,
    weight_itemsize,
)
from vramplan.training.specs import (
    block_spec,
    checkpoints_cut_the_graph,
    dequantized_bytes_per_value,
    embedding_gradients_in_flight,
    embedding_output_needs_grad,
    embedding_trains,
    head_spec,
    tied_gradient_copies,
    tied_in_framework,
)
from vramplan.training.states import (
    ModelStates,
    model_states,
    trainable_tensors,
)
from vramplan.units import ceil_div
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    LoraTarget,
    Method,
    OptimizerImpl,
    Precision,
    Quant,
)

# --- the estimate -----------------------------------------------------------------------------

def estimate_training(arch: Architecture, setup: TrainingSetup) -> TrainingEstimate:
    """The peak memory of one training step of `arch` under `setup`, phase by phase."""
    check_setup(setup)
    states = replace(model_states(arch, setup),
                     tied_gradient_copies=tied_gradient_copies(arch, setup))
    spec = block_spec(arch, setup)
    saved = block_saved(_largest_kind(arch), spec, setup.seq_len)
    tokens = setup.batch * setup.seq_len
    blocks = _blocks_activation_bytes(arch, setup, spec, saved) * tokens
    loss = head_and_loss(arch, spec, head_spec(arch, setup), setup.batch, setup.seq_len,
                         logit_len=setup.logit_len)
    autocast_copies = _autocast_weight_copies(arch, setup, spec)
    cached_copies = _cached_block_copies(arch, setup)
    needs_grad = embedding_output_needs_grad(setup)
    embedding = embedding_saved_bytes(
        arch, spec, needs_grad, leaf=needs_grad and not embedding_trains(setup)) * tokens
    graph = range(arch.n_layers - _blocks_with_graph(arch, setup), arch.n_layers)
    # what waits for the end of backward: the embeddings' output, the eager attention mask
    # (which a checkpoint without a graph drops with the rest of its context), and the buffers
    # Unsloth's offloaded checkpoints come back into (allocated for the run)
    kept_to_the_end = embedding + (_eager_mask_kept_bytes(setup, spec) * tokens if graph else 0) \
        + checkpoint_reload_buffers(setup) * block_input_bytes(arch, spec) * tokens
    activations = blocks + loss.saved_bytes + kept_to_the_end
    persistent = _persistent_parts(states, setup)
    # the blocks' backward: none when no block has a graph (`checkpoints_cut_the_graph`)
    transient = _blocks_backward_bytes(arch, setup, spec, graph)
    # the first block's backward, last: a frozen one where `freeze` lets the gradient through
    # frozen blocks (`_frozen_blocks_with_graph`), of its own kind in a mixed model
    end_transient = _kind_backward_bytes(
        arch, setup, _frozen_spec(spec) if _frozen_blocks_with_graph(arch, setup) else spec,
        moe=arch.layer_is_moe(graph[0])) if graph else 0
    # copies of a MoE layer's expert weights its matmuls save (`_expert_weight_copies`): every
    # MoE layer's with a graph, or only the recomputed one's under full checkpointing
    layer_copies = _expert_weight_copies(arch, setup) if graph else 0
    full = setup.checkpointing is Checkpointing.FULL
    forward_copies = 0 if full else layer_copies * sum(map(arch.layer_is_moe, graph))
    first_copies = layer_copies if arch.layer_is_moe(0) else 0
    acts = (Part(PartKind.ACTIVATIONS, activations),
            Part(PartKind.AUTOCAST_COPIES, autocast_copies))
    # in backward the head's casts are gone; a checkpointed block recomputed under autocast
    # casts its weights again, and its matmuls save them for the block's backward
    recomputed_copies = _recomputed_block_copies(arch, setup) if graph else 0
    copies_in_blocks = Part(PartKind.AUTOCAST_COPIES, recomputed_copies
                            if setup.checkpointing is Checkpointing.FULL else autocast_copies)
    phases = (
        PhaseMemory(Phase.LOSS_FORWARD, (
            *persistent, acts[0],
            Part(PartKind.AUTOCAST_COPIES, autocast_copies + cached_copies),
            Part(PartKind.WEIGHT_COPIES, forward_copies),
            Part(PartKind.LOGITS_LOSS, loss.forward_peak_bytes),
            Part(PartKind.PREVIOUS_GRAPH, _previous_graph_bytes(arch, setup, spec)))),
        PhaseMemory(Phase.BACKWARD_START, (
            *persistent, *acts, Part(PartKind.WEIGHT_COPIES, forward_copies),
            *_loss_or_final_norm_backward(arch, setup, spec, loss))),
        PhaseMemory(Phase.BACKWARD_BLOCKS, (
            # the head's and the final norm's backward have run: their saved inputs are freed
            *persistent, Part(PartKind.ACTIVATIONS, activations - loss.saved_bytes),
            copies_in_blocks,
            Part(PartKind.WEIGHT_COPIES, layer_copies if full else forward_copies),
            Part(PartKind.LOGITS_LOSS, loss.logits_alive_bytes),
            Part(PartKind.GRADIENTS, _gradients_before_blocks(arch, setup) if graph else 0),
            Part(PartKind.BACKWARD_TEMPORARIES, transient))),
        PhaseMemory(Phase.BACKWARD_END, (
            *_persistent_parts(states, setup, with_gradients=gradients_kept(setup)),
            Part(PartKind.GRADIENTS,
                 0 if gradients_kept(setup) else _gradients_made(arch, setup, states)),
            # what the embeddings' output keeps waits for the embedding's backward, last; the
            # first block's call keeps the attention mask until its backward
            Part(PartKind.ACTIVATIONS, kept_to_the_end),
            Part(PartKind.LOGITS_LOSS, loss.logits_alive_bytes),
            # the first block, recomputed last under full checkpointing, with its casts
            Part(PartKind.AUTOCAST_COPIES, copies_in_blocks.memory_bytes
                 if setup.checkpointing is Checkpointing.FULL else 0),
            Part(PartKind.WEIGHT_COPIES, first_copies),
            Part(PartKind.BACKWARD_TEMPORARIES, end_transient))),
        *_embedding_backward(arch, setup, spec, states, loss),
        PhaseMemory(Phase.OPTIMIZER_STEP, (
            *_persistent_parts(states, setup, with_gradients=True, in_step=True),
            Part(PartKind.LOGITS_LOSS, _logits_in_step(setup, loss)),
            Part(PartKind.STEP_TEMPORARIES, optimizer_step_temporaries(arch, setup)))),
    )
    phases += _first_micro_batch(arch, setup, spec, phases)
    dummies = dummy_wgrad_bytes(arch, setup)
    if dummies:
        phases = tuple(PhaseMemory(phase.phase, (*phase.parts,
                                                 Part(PartKind.FROZEN_WEIGHTS, dummies)))
                       if dummy_wgrads_held(phase.phase, setup) else phase for phase in phases)
    return TrainingEstimate(setup=setup, arch=arch, states=states, block_saved=saved,
                            activations_bytes=activations, loss=loss, phases=phases)


_FIRST_MOMENTS = (Phase.LOSS_FORWARD, Phase.BACKWARD_START, Phase.BACKWARD_BLOCKS)


def _first_micro_batch(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                       phases: tuple[PhaseMemory, ...]) -> tuple[PhaseMemory, ...]:
    """Where the run's first micro-batch keeps every checkpointed input on the GPU
    (`first_pass_keeps_inputs`): the largest of its loss's forward, backward's start and
    backward through the last block, each the steady step's moment with every block's input in
    place of the last one's and the reload buffers (not grown yet), and without gradients (the
    first backward makes them) or optimizer states (the first step makes them)."""
    if not first_pass_keeps_inputs(setup):
        return ()
    per_token = block_input_bytes(arch, spec)
    steady = (1 + checkpoint_reload_buffers(setup)) * per_token
    inputs = (per_token * _blocks_with_graph(arch, setup) - steady) * setup.batch * setup.seq_len
    later_only = (PartKind.GRADIENTS, PartKind.OPTIMIZER_STATES)
    moments = (PhaseMemory(Phase.FIRST_MICRO_BATCH,
                           (*(part for part in phase.parts if part.kind not in later_only),
                            Part(PartKind.ACTIVATIONS, inputs)))
               for phase in phases if phase.phase in _FIRST_MOMENTS)
    return (max(moments, key=lambda moment: moment.total_bytes),)


def dummy_wgrads_held(phase: Phase, setup: TrainingSetup) -> bool:
    """The cached dummy weight gradients (`vramplan.training.dummy_wgrads`) exist at `phase`:
    made by the first backward, from the head's on, and kept, so in every phase of a later
    step; not yet in the first step's forward and loss, where a figure of the first step
    (`TrainingSetup.first_step_report`) can peak."""
    return not (setup.first_step_report
                and phase in (Phase.LOSS_FORWARD, Phase.BACKWARD_START))


def _loss_or_final_norm_backward(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                                 loss: LossMemory) -> tuple[Part, ...]:
    """Backward starts with the loss and the head, then the final norm, every block's saved
    tensors still alive: the larger of the loss's vocabulary-sized tensors and the final
    RMSNorm's fp32 backward (`RMSNORM_BACKWARD_FP32_TENSORS`; traced, it is the peak of a step
    whose vocabulary is small)."""
    norm = 0
    tokens = setup.batch * setup.seq_len
    head = head_spec(arch, setup)
    if arch.final_norm and arch.norm is NormKind.RMSNORM and head.norm_input_needs_grad:
        norm = RMSNORM_BACKWARD_FP32_TENSORS * FP32 * arch.hidden_size * tokens
        if head.head_trains or head.head_keeps_input:
            # the head's saved input (the norm's output) went with the head's backward
            norm -= spec.residual_bytes * arch.hidden_size * tokens
    if norm > loss.backward_peak_bytes:
        return (Part(PartKind.BACKWARD_TEMPORARIES, norm),)
    return (Part(PartKind.LOGITS_LOSS, loss.backward_peak_bytes),)


def activation_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The most activation memory any phase holds for `batch` x `seq_len` (saved tensors,
    logits and loss, backward temporaries): the figure that fills the simple mode's A field,
    which adds it to the model states."""
    estimate = estimate_training(arch, setup)
    return max(phase.by_component().get(Component.ACTIVATIONS, 0) for phase in estimate.phases)


def _blocks_activation_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                             saved: tuple[Saved, ...]) -> int:
    """Per token, all blocks together, at the start of backward (dense and MoE blocks of a mixed
    model each with their own tensors)."""
    if setup.checkpointing is Checkpointing.FULL:
        # only block inputs stay (torch.utils.checkpoint saves its inputs); one block is
        # recomputed at a time in backward (counted in the backward_blocks phase). Unsloth's
        # checkpointing keeps them in host memory (`UnslothCode.offloads_checkpoints`), all but
        # the last block's since its smart checkpointing
        if offloads_checkpoints(setup):
            return block_input_bytes(arch, spec) if keeps_last_checkpoint_input(setup) else 0
        kept = submodule_checkpoint_inputs(arch, spec) if setup.checkpoint_submodules \
            else block_input_bytes(arch, spec)
        return kept * _blocks_with_graph(arch, setup)
    layers = range(arch.n_layers - _blocks_with_graph(arch, setup), arch.n_layers)
    frozen = _frozen_blocks_with_graph(arch, setup)
    # a frozen block with a graph saves what its input's gradient needs, with its input's
    # gradient needed from the first block on
    specs = [_frozen_spec(spec)] * frozen + [spec] * (len(layers) - frozen)
    per_kind = {(moe, layer_spec): total_per_token(kept_for_backward(
        arch.kind_view(moe), layer_spec,
        block_saved(arch.kind_view(moe), layer_spec, setup.seq_len), setup.checkpointing))
        for moe, layer_spec in {(arch.layer_is_moe(layer), layer_spec)
                                for layer, layer_spec in zip(layers, specs, strict=True)}}
    first = _first_block_bytes(arch.kind_view(arch.layer_is_moe(layers[0])), setup, specs[0],
                               input_needs_grad=bool(frozen) or embedding_trains(setup))
    masked = masked_local_layers_bytes(arch, spec, setup.seq_len, len(layers))
    return first + masked + sum(per_kind[arch.layer_is_moe(layer), layer_spec] for layer, layer_spec
                                in zip(layers[1:], specs[1:], strict=True))


def _kind_backward_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec, *,
                         moe: bool) -> int:
    """`_block_backward_bytes` of one kind of block: the MoE one, or a mixed model's dense one
    (its MLP as wide as `intermediate_size`, no router)."""
    if moe == arch.is_moe:
        return _block_backward_bytes(arch, setup, spec,
                                     block_saved(_largest_kind(arch), spec, setup.seq_len))
    dense = arch.kind_view(False)
    return _block_backward_bytes(dense, setup, spec, block_saved(dense, spec, setup.seq_len))


def _blocks_backward_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                           graph: range) -> int:
    """What a block's backward holds beyond the saved tensors, every other block's saved ones
    alive: the last block's, the largest kind's; under full checkpointing, where every block
    keeps the same input, the most of any kind of block with a graph (a mixed model's dense
    block recomputes its wider MLP: traced, DeepSeek-V3's and GLM-4-MoE's dense first layer,
    LoRA, 2 x 128 tokens, peaks in its recomputed backward)."""
    if not graph:
        return 0
    kinds = {arch.layer_is_moe(layer) for layer in graph} \
        if setup.checkpointing is Checkpointing.FULL else {arch.is_moe}
    return max(_kind_backward_bytes(arch, setup, spec, moe=moe) for moe in kinds)


def _largest_kind(arch: Architecture) -> Architecture:
    """The architecture seen as its largest kind of block (the MoE one in a mixed model)."""
    return arch.kind_view(arch.is_moe)


def _trained_blocks(arch: Architecture, setup: TrainingSetup) -> int:
    """Blocks with trainable parameters: all, or the last `train_layers` under `freeze`."""
    if setup.method is Method.FREEZE:
        return min(setup.train_layers, arch.n_layers)
    return arch.n_layers


def _blocks_with_graph(arch: Architecture, setup: TrainingSetup) -> int:
    """Blocks whose forward builds an autograd graph: the trained ones, and under `freeze` the
    frozen ones too when the embeddings' output needs a gradient (`_frozen_blocks_with_graph`);
    none when reentrant checkpoints cut the graph (`checkpoints_cut_the_graph`)."""
    if checkpoints_cut_the_graph(setup):
        return 0
    return _trained_blocks(arch, setup) + _frozen_blocks_with_graph(arch, setup)


def _frozen_blocks_with_graph(arch: Architecture, setup: TrainingSetup) -> int:
    """Frozen blocks that still build a graph: under `freeze`, those before the trained ones
    when the embeddings' output needs a gradient (`embedding_output_needs_grad`: transformers'
    full checkpointing calls `enable_input_require_grads()`). Their ops save what the input's
    gradient needs and backward runs through them to the embeddings, after every trained
    block's, so the step's backward ends in a frozen block with every trained gradient made.
    Traced (vramplan.tracer, `freeze` of the last block under full checkpointing, 1 x 64
    tokens): the peak is the first block's recomputed MLP backward, all gradients made; the
    model had stopped backward at the trained block, 3 to 19 % under."""
    if setup.method is not Method.FREEZE or not embedding_output_needs_grad(setup):
        return 0
    return arch.n_layers - _trained_blocks(arch, setup)


def _frozen_spec(spec: BlockSpec) -> BlockSpec:
    """A trained block's spec for a block of the same model whose weights do not train."""
    return replace(spec, weights_train=False)


def _block_backward_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                          saved: tuple[Saved, ...]) -> int:
    """What one block's backward holds beyond what is saved elsewhere: its temporaries (and
    recomputed tensors) for the step's tokens, the dequantized weight, the gradients its own
    weights have made by its peak."""
    tokens = setup.batch * setup.seq_len
    transient = _backward_transient(arch, setup, spec, saved) * tokens
    peak = transient + _shared_expert_gradients(arch, setup, spec, saved)
    experts = _experts_gradient_moment(arch, setup, spec, saved)
    if experts:
        # or the moment its experts make their gradients (the shared experts' counted there):
        # the rest of the transient beside it, in place of the block's own backward peak
        block = block_backward_transient(arch, spec, saved,
                                         recomputed_released=_recomputed_released(setup))
        peak = max(peak, transient - block * tokens + experts)
    return peak \
        + _dequant_in_block_backward(arch, setup, spec) \
        + _gradients_before_scores(arch, setup, spec, saved) \
        + _mlp_gradients_between_tiles(arch, setup, spec, saved) \
        + (_expert_gradient_sums(arch, setup) if spec.weights_train else 0)


def _first_block_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec, *,
                       input_needs_grad: bool) -> int:
    """Per token, what the first block with a graph keeps: its input needs a gradient when the
    embedding trains, or when it is a frozen block that the embeddings' output reaches with one
    (`_frozen_blocks_with_graph`); else it comes from frozen layers without a graph."""
    saved = block_saved(arch, spec, setup.seq_len, input_needs_grad=input_needs_grad)
    return total_per_token(kept_for_backward(arch, spec, saved, setup.checkpointing))


def _backward_transient(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                        saved: tuple[Saved, ...]) -> int:
    """Per token: the last block's gradient temporaries, plus the block being recomputed under
    full checkpointing (its saved tensors exist again while its backward runs), or the
    recomputed forward's largest moment where that holds more (`recomputed_forward_peak`)."""
    full = setup.checkpointing is Checkpointing.FULL
    transient = block_backward_transient(arch, spec, saved,
                                         recomputed_released=_recomputed_released(setup))
    if full:
        # a local layer's recomputed forward makes its float mask and expanded k and v again;
        # checkpointed sub-module by sub-module, one sub-module is recomputed at a time
        if setup.checkpoint_submodules:
            transient += largest_submodule_saved(saved)
        else:
            # the block's backward, or a moment of its recomputed forward
            transient = max(transient + total_per_token(saved)
                            - total_per_token(released_before_block_peak(arch, spec)),
                            recomputed_forward_peak(arch, spec, setup.seq_len,
                                                    reentrant=checkpoints_reentrant(setup)))
        transient += masked_local_layer_bytes(arch, spec, setup.seq_len)
        if offloads_checkpoints(setup) and not checkpoint_reload_buffers(setup) \
                and not any(item.name == "x_in" for item in saved):
            # an offloaded input comes back into a fresh tensor for its block's recomputation
            # (`CheckpointFunctionWithCPUOffload.backward`: `.to(ctx.x_device)`), beside what the
            # block saves unless the block saves its input itself
            transient += block_input_bytes(arch, spec)
    elif setup.checkpointing is Checkpointing.SELECTIVE:
        # what the policy recomputes exists again while the block runs backward: what autograd
        # saved less what the policy kept; not less what it keeps under tensor parallelism
        # beyond that (reduce-scatter outputs, w2's whole output), which autograd does not save
        one_gpu = replace(spec, tensor_parallel=1)
        kept = total_per_token(kept_for_backward(arch, one_gpu, saved, setup.checkpointing))
        transient += max(total_per_token(saved) - kept, 0)
    return transient


def _experts_gradient_moment(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                             saved: tuple[Saved, ...]) -> int:
    """What the moment a MoE layer's trained experts make their weights' gradients holds
    beyond what is saved elsewhere (0 where there is no such moment), which
    `_block_backward_bytes` puts in place of the block's backward peak where it is larger:
    transformers 5's grouped experts (`grouped_experts_combine`) backpropagate every expert at
    once (`_grouped_mm`'s backward makes each 3-D parameter's whole gradient), so when
    gate_up's is made, down's exists too (a fresh step's gradients: both stay as `.grad`;
    accumulated into kept ones, gate_up's new tensor alone), beside gate_up's output gradient
    and the routed copies' input gradient being made, the experts' other saved tensors freed
    (and shared experts added last freed, their gradients made). Traced (vramplan.tracer,
    DeepSeek-V2, -V3 and Qwen3-MoE, full fine-tuning and `freeze`, SGD, 1 x 64 tokens): the
    step peaks there, the model 6 to 10 % under it before; a few tokens, or a sharded run's
    per-GPU weights, let the experts' gradients outweigh the activations."""
    if not spec.weights_train or not grouped_experts_combine(arch, spec) \
            or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return 0
    h, w = arch.hidden_size, arch.expert_intermediate_size
    gated = 2 if arch.mlp is MlpKind.GATED else 1
    experts = {lin.role: lin.params for lin in arch.kind_view(True).block_linears() if lin.routed}
    gate_up = experts.get("gate", 0) + experts["up"]
    kept = gradients_kept(setup)
    made = gate_up if kept else gate_up + experts["down"]
    shared_last = arch.n_shared_experts and not arch.shared_experts_first
    if shared_last and not kept:
        made += _shared_expert_params(arch)
    # what the experts' and the shared experts' backward have freed by then: all but the
    # routed input that gate_up's gradient reads
    released = sum(item.bytes_per_token for item in saved
                   if item.name in _EXPERT_TENSORS_CONSUMED
                   or (shared_last and item.name.startswith(SHARED_EXPERTS_PREFIX)))
    tokens = setup.batch * setup.seq_len
    c, k = spec.compute_bytes, arch.experts_per_token
    return made * gradient_itemsize(setup) + (c * k * (gated * w + h) - released) * tokens


_EXPERT_TENSORS_CONSUMED = frozenset({"experts_gate_up_out", "experts_act_out",
                                      "experts_down_input", "experts_down_out"})
"""What a MoE layer saves for its experts' backward down to gate_up's (`moe_layer`'s names)."""


def _recomputed_released(setup: TrainingSetup) -> bool:
    """A block recomputed by a non-reentrant checkpoint drops each recomputed tensor once its
    backward unpacks it (torch/utils/checkpoint.py `_checkpoint_hook`)."""
    return setup.checkpointing is Checkpointing.FULL and not checkpoints_reentrant(setup)


def _shared_expert_gradients(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                             saved: tuple[Saved, ...]) -> int:
    """When a MoE layer's weighting backward is the block's backward peak
    (`moe_backward_transient` the largest of `block_backward_transient`'s candidates), shared
    experts added after the routed ones have run their backward: their weights' gradients
    exist when they train, as `_gradients_before_scores` counts an attention's. Traced
    (DeepSeek-V2, -V3 and GLM-4-MoE, full fine-tuning, 8 routed copies, 2 x 128 tokens): 2 to
    2.4 % under without them."""
    if not spec.weights_train or not arch.n_shared_experts or arch.shared_experts_first \
            or gradients_kept(setup) or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return 0
    released = _recomputed_released(setup)
    weighting = moe_backward_transient(arch, spec, saved, recomputed_released=released)
    if not weighting or weighting < block_backward_transient(arch, spec, saved,
                                                             recomputed_released=released):
        return 0
    return _shared_expert_params(arch) * trainable_itemsize(setup)


def _shared_expert_params(arch: Architecture) -> int:
    """Parameters of a MoE layer's shared experts (its MLP linears that every token runs)."""
    return sum(lin.params for lin in arch.kind_view(True).block_linears()
               if lin.role in _MLP_ROLES and not lin.routed)


def _gradients_before_scores(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                             saved: tuple[Saved, ...]) -> int:
    """When eager attention's softmax backward is the block's backward peak
    (`scores_backward_extra` the largest of `block_backward_transient`'s candidates), the
    block's MLP and output projection have run their backward: their weights' gradients exist,
    when the block's weights train (full fine-tuning, and the trained blocks of `freeze`; an
    adapter's are too small to count). Not when gradients persist (kept over accumulation, or in
    a framework's gradient buffer: counted there) or are stepped on and freed as they are made.
    Traced: the gap between the model and the trace at a Llama block's eager peak was these
    gradients."""
    extra = scores_backward_extra(saved)
    if not spec.weights_train or not extra or extra < block_backward_transient(arch, spec, saved) \
            or gradients_kept(setup) or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return 0
    after_attention = sum(lin.params_each * lin.count for lin in arch.block_linears()
                          if lin.role not in _ATTENTION_INPUT_ROLES)
    return after_attention * trainable_itemsize(setup)


_MLP_ROLES = frozenset({"gate", "up", "down", "gate_up"})


def _mlp_gradients_between_tiles(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                                 saved: tuple[Saved, ...]) -> int:
    """A tiled MLP of more than one tile backpropagates each tile into its weights' gradients
    (`tiled_mlp_backward`): from the second tile on they sit beside the tile's tensors, where
    an untiled MLP makes them after its intermediates are freed. Counted when the tiled MLP's
    backward is the block's largest and the block's weights train, not when gradients persist
    or are stepped on as they are made (as `_gradients_before_scores`). Traced
    (`vramplan.tracer.tiled_mlp`, tests/test_trace_agreement.py): the peak of a tiled block's
    backward holds them."""
    share = spec.mlp_tile_share
    if share is None or share >= 1 or not spec.weights_train or gradients_kept(setup) \
            or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD \
            or tiled_mlp_backward(arch, spec, share) < block_backward_transient(arch, spec, saved):
        return 0
    mlp = sum(lin.params_each * lin.count for lin in arch.block_linears()
              if lin.role in _MLP_ROLES)
    return mlp * trainable_itemsize(setup)


def _eager_mask_kept_bytes(setup: TrainingSetup, spec: BlockSpec) -> int:
    """Per token: transformers' attention mask for eager attention, kept through backward under
    full checkpointing. The model builds one 4-D float mask per forward, batch x 1 x T x T in the
    model's dtype (masking_utils `eager_mask`: `torch.where(mask, 0.0, min_dtype)`), and passes
    it to every layer; a checkpointed layer's call keeps its arguments for the recomputation
    (`GradientCheckpointingLayer` binds them in the function it checkpoints), so the mask lives
    until the first layer's backward. Without checkpointing nothing saves it (the scores' `+`
    keeps no input) and it is freed with the forward. Traced: BLOOM, GPT-Neo, OPT, GPT-2, Qwen2
    and Llama hold it at their backward peak. SDPA and FlashAttention take no mask (`is_causal`)."""
    if setup.checkpointing is not Checkpointing.FULL or spec.attention is not Attention.EAGER \
            or not runs_transformers_code(setup.framework):
        return 0
    return setup.seq_len * spec.residual_bytes


def _runs_gpt_oss_expert_loop(arch: Architecture, setup: TrainingSetup) -> bool:
    """gpt-oss's experts train through transformers' per-expert loop
    (`TransformersCode.gpt_oss_expert_loop`): transformers' model code of the run's date, the
    Hub's MoE kernel not applied (`TrainingSetup.moe_hub_kernel`); Unsloth patches the experts
    with its own."""
    return arch.family == "gpt_oss" and runs_transformers_code(setup.framework) \
        and setup.framework is not Framework.UNSLOTH and not setup.moe_hub_kernel \
        and transformers_code(setup.code_date).gpt_oss_expert_loop


def _expert_weight_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Bytes one MoE layer's forward saves as copies of its experts' weights, `gate_up_proj`
    (hidden x 2 intermediate) and `down_proj` (intermediate x hidden) each: v4.55's gpt-oss loop
    indexes them with a one-element tensor, a copy of each hit expert's, which each matmul saves
    for its input's gradient (`TransformersCode.gpt_oss_expert_copies`; every expert is hit once
    the layer routes as many tokens, batch x length x experts per token); quantized experts
    are dequantized whole, which `grouped_mm` saves (`TrainingSetup.quantized_experts`). In the
    weights' dtype; under autocast the 16-bit cast the matmul saves."""
    if setup.quantized_experts and arch.is_moe:
        hit = arch.n_experts
    elif _runs_gpt_oss_expert_loop(arch, setup) \
            and transformers_code(setup.code_date).gpt_oss_expert_copies:
        hit = min(arch.n_experts, setup.batch * setup.seq_len * arch.experts_per_token)
    else:
        return 0
    itemsize = compute_itemsize(setup.precision) if runs_autocast(setup) \
        else weight_itemsize(setup.precision)
    return hit * 3 * arch.hidden_size * arch.expert_intermediate_size * itemsize


def _expert_gradient_sums(arch: Architecture, setup: TrainingSetup) -> int:
    """While a MoE layer's backward runs through the per-expert loop with its experts training,
    each expert's weight slice hands back a zero tensor of the whole 3-D parameter with its
    gradient in place, which autograd adds to the parameter's running sum: the whole experts'
    gradient exists from the first expert's backward on, beside one more `gate_up_proj`-sized
    zero tensor (`TransformersCode.gpt_oss_expert_loop`)."""
    if not _runs_gpt_oss_expert_loop(arch, setup) or setup.method not in (Method.FULL,
                                                                           Method.FREEZE):
        return 0
    experts = arch.n_experts * arch.hidden_size * arch.expert_intermediate_size
    # the running gradient of gate_up (2 x) and down (1 x), and one more gate_up-sized zero
    return (2 + 1 + 2) * experts * gradient_itemsize(setup)


def _dequant_in_block_backward(arch: Architecture, setup: TrainingSetup,
                               spec: BlockSpec) -> int:
    """The dequantized weight beside the block's backward peak (`_dequant_bytes`), but for a
    block recomputed under non-reentrant full checkpointing whose quantized linears keep no
    input (bitsandbytes v0.43.2 on, `BlockSpec.base_keeps_input`; not DeepSpeed ZeRO-3's
    linears, `BlockSpec.linears_keep_input`): there the frozen 4-bit down
    projection runs its backward before anything is recomputed (it unpacks no saved tensor) and
    frees its dequantized weight, the block then peaks at the MLP product's backward beside the
    recomputed tensors, and gate's and up's dequantized weights come after, when less is
    saved. Traced (vramplan.tracer, QLoRA on q,v and on every linear, full checkpointing, 2 x
    128 tokens, Llama, Qwen2, Phi, OPT): the peak holds the product's gradient, the product and
    the first gradient of its backward, and no dequantized weight; counting one put bf16 runs
    +3.9 to +4.0 % over."""
    if setup.checkpointing is Checkpointing.FULL and not checkpoints_reentrant(setup) \
            and not (spec.base_keeps_input or spec.linears_keep_input):
        return 0
    return _dequant_bytes(arch, setup)


def _dequant_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """A quantized linear dequantizes its whole weight to 16 bits for each matmul, forward and
    backward (bitsandbytes MatMul4Bit: `F.dequantize_4bit(B, quant_state)`): the largest block
    linear, as a transient."""
    if setup.method is not Method.QLORA:
        return 0
    largest = arch.largest_block_linear()
    return dequantized_bytes_per_value(setup) * largest


def _gradients_made(arch: Architecture, setup: TrainingSetup, states: ModelStates) -> int:
    """Gradients alive when backward reaches the first block (one at a time when the optimizer
    steps inside backward)."""
    if setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return largest_gradient_bytes(states, setup)
    return _gradients_before_first_block(arch, setup)


def _gradients_before_first_block(arch: Architecture, setup: TrainingSetup) -> int:
    """Gradients already made when backward reaches the first block with a graph: all but that
    block's and the embedding's (the embedding's dense gradient comes last). With no block's
    graph (`checkpoints_cut_the_graph`), those of what trains outside the blocks: the head's
    adapter."""
    tensors = trainable_tensors(arch, setup)
    total = sum(g.elements * g.count for g in tensors)
    if not _blocks_with_graph(arch, setup):
        return _trained_outside_blocks(arch, setup, total) * trainable_itemsize(setup)
    if setup.method.uses_lora:
        done = total * (arch.n_layers - 1) // arch.n_layers
    elif setup.method is Method.FREEZE:
        # backward ends in a frozen block when the frozen blocks have a graph, every trained
        # gradient made; else in the first trained block, its own not yet
        layers = _trained_blocks(arch, setup)
        done = total if _frozen_blocks_with_graph(arch, setup) \
            else total * (layers - 1) // layers
    else:
        # a tied embedding is the head: its gradient starts with the head's, early in backward;
        # a learned position table's (GPT-2, GPT-Neo, OPT) comes with the embeddings', last
        embedding = 0 if tied_in_framework(arch, setup) else arch.params_token_embedding
        done = total - arch.params_of_layer(0) - embedding - arch.params_position_embedding
    return done * trainable_itemsize(setup)


def _gradients_before_blocks(arch: Architecture, setup: TrainingSetup) -> int:
    """Gradients made when backward reaches the last block: what trains after the blocks, the
    head (a tied embedding's, which is the head) and the final norm, or the head's adapter; not
    an untied embedding's or a position table's, which come last. None where gradients persist
    (counted there) or are stepped on and freed as they are made. Traced (Llama 4, full
    fine-tuning, full checkpointing, 2 x 128 tokens): the head's and the final norm's
    gradients are alive at the peak inside the last block's recomputation."""
    if gradients_kept(setup) or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        return 0
    total = sum(g.elements * g.count for g in trainable_tensors(arch, setup))
    outside = _trained_outside_blocks(arch, setup, total)
    if not setup.method.uses_lora and embedding_trains(setup):
        outside -= arch.params_position_embedding \
            + (0 if tied_in_framework(arch, setup) else arch.params_token_embedding)
    return max(outside, 0) * trainable_itemsize(setup)


def _trained_outside_blocks(arch: Architecture, setup: TrainingSetup, total: int) -> int:
    """Of the `total` trainable values, those outside the blocks: the LoRA adapter on the head
    (A and B), or what `freeze` trains besides its blocks."""
    if setup.method.uses_lora:
        if LoraTarget.HEAD not in setup.lora_targets:
            return 0
        head = arch.head_linear()
        return lora_rank_of(setup) * (head.in_features + head.out_features)
    trained = _trained_blocks(arch, setup)
    if trained == arch.n_layers:
        return total - arch.params_blocks
    return total - sum(map(arch.params_of_layer, range(arch.n_layers - trained, arch.n_layers)))


def _embedding_backward(arch: Architecture, setup: TrainingSetup, spec: BlockSpec,
                        states: ModelStates, loss: LossMemory) -> tuple[PhaseMemory, ...]:
    """The embedding's backward, last in the step's backward, when its weight trains: every
    other gradient exists, the gradient of the embedding's output arrives, and the embedding's
    weight gradient is formed (`embedding_dense_backward`: a dense vocabulary x hidden tensor).
    None when the embedding is frozen (no graph reaches it)."""
    if not embedding_trains(setup):
        return ()
    kept = gradients_kept(setup)
    embedding = arch.params_token_embedding * weight_itemsize(setup.precision)
    if kept or setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        others = 0  # kept in the persistent gradients, or stepped on and freed already
    else:
        others = _gradient_elements(arch, setup) * weight_itemsize(setup.precision) - embedding
    tokens = setup.batch * setup.seq_len
    return (PhaseMemory(Phase.EMBEDDING_BACKWARD, (
        *_persistent_parts(states, setup, with_gradients=kept),
        Part(PartKind.GRADIENTS, others),
        Part(PartKind.LOGITS_LOSS, loss.logits_alive_bytes),
        Part(PartKind.BACKWARD_TEMPORARIES,
             embedding_gradients_in_flight(arch, setup) * embedding
             + block_input_bytes(arch, spec) * tokens))),)


def _gradient_elements(arch: Architecture, setup: TrainingSetup) -> int:
    return sum(g.elements * g.count for g in trainable_tensors(arch, setup))


def _autocast_weight_copies(arch: Architecture, setup: TrainingSetup, spec: BlockSpec) -> int:
    """Under autocast every fp32 linear weight is cast to 16 bits for its matmul, and the matmul
    saves that copy for its input's gradient until backward. Casts of frozen weights are not
    cached (torch autocast caches only leaves that require grad, autocast_mode.cpp
    `cached_cast`) and are saved only when the matmul's input needs a gradient: not those of
    the first block's linears under LoRA that read a tensor needing none
    (`first_block_graphless_linears`); trainable ones are cached."""
    if not autocast_casts_weights(setup):
        return 0
    if setup.checkpointing is Checkpointing.FULL:
        # a checkpointed block runs its forward without grad (torch.utils.checkpoint): its
        # matmuls save nothing, and no cast of a frozen weight is cached; the casts of
        # trainable weights live in autocast's cache until the forward's autocast region exits
        # (before backward). What stays is the head's cast, saved by the head's matmul outside
        # the blocks, whose input needs a gradient under every method (something before the
        # head trains) (traced: vramplan trace, qwen2.5-0.5b LoRA amp, full checkpointing)
        return 2 * _head_copies(arch, setup)
    if setup.method is Method.QLORA:
        # the blocks' linears are quantized, not fp32 parameters: autocast casts none of them
        return 2 * _head_copies(arch, setup)
    per_block = {lin.role: lin.params_each * lin.count
                 for lin in arch.kind_view(arch.layer_is_moe(0)).block_linears()}
    graph = _blocks_with_graph(arch, setup)
    linears = {kind.moe: sum(lin.params_each * lin.count for lin in kind.linears)
               for kind in arch.block_kinds()}
    block = sum(linears[arch.layer_is_moe(layer)]
                for layer in range(arch.n_layers - graph, arch.n_layers))
    copies = block + _head_copies(arch, setup)
    if setup.method.uses_lora:
        copies -= sum(per_block.get(role, 0) for role in first_block_graphless_linears(arch, spec))
    return 2 * copies


def _cached_block_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Under autocast with full checkpointing, the casts of the trainable block weights that
    autocast's cache holds until the forward's autocast region exits, after the loss
    (aten/src/ATen/autocast_mode.cpp `cached_cast`: leaves that require grad, whatever the grad
    mode, so also inside checkpoint's no-grad forward; the cache is cleared when the outermost
    autocast region exits). Without checkpointing they are the saved copies already counted.
    LoRA's adapters are cached too, a few MB, not counted."""
    if not autocast_casts_weights(setup) or setup.checkpointing is not Checkpointing.FULL:
        return 0
    if setup.method not in (Method.FULL, Method.FREEZE):
        return 0
    linears = {kind.moe: sum(lin.params_each * lin.count for lin in kind.linears)
               for kind in arch.block_kinds()}
    trained = range(arch.n_layers - _trained_blocks(arch, setup), arch.n_layers)
    return 2 * sum(linears[arch.layer_is_moe(layer)] for layer in trained)


def _head_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Values of the head's 16-bit casts: the head is cast once per call; litgpt's chunked
    head calls it once per 128-token chunk, and each chunk's matmul keeps its own copy."""
    chunked = head_spec(arch, setup).chunked and setup.framework is Framework.LITGPT
    head_calls = ceil_div(setup.seq_len, LITGPT_LM_HEAD_CHUNK) if chunked else 1
    return head_calls * arch.hidden_size * arch.vocab_size


def _recomputed_block_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """Under full checkpointing and autocast, the 16-bit casts of the block being recomputed
    for its backward (checkpoint restores the forward's autocast state), each saved by its
    matmul until that matmul's backward has run. At the block's backward peak
    (`block_backward_transient`): in the MLP's, every cast but the MLP's output projection's
    (its backward ran first); in attention's, the query, key and value projections' only. The
    largest kind of block. Traced (tests/test_trace_agreement.py, amp under full
    checkpointing). None under QLoRA, whose blocks' linears are quantized, not fp32 parameters
    (`_autocast_weight_copies`): traced, the recomputed QLoRA block holds its adapters' casts
    alone."""
    if not autocast_casts_weights(setup) or setup.method is Method.QLORA:
        return 0
    compute = compute_itemsize(setup.precision)
    alive = []
    for kind in arch.block_kinds():
        view = arch.kind_view(kind.moe)
        # block_backward_transient's two candidates: the MLP's gradients or attention's
        mlp_peak = 3 * compute * view.expert_intermediate_size >= \
            3 * compute * view.q_dim + FP32 * view.q_dim
        alive.append(sum(lin.params_each * lin.count for lin in kind.linears
                         if (lin.role != "down" if mlp_peak
                             else lin.role in _ATTENTION_INPUT_ROLES)))
    return 2 * max(alive)


_ATTENTION_INPUT_ROLES = frozenset({"q", "k", "v", "q_a", "q_b", "kv_a", "kv_b"})
"""Projections that run before the attention kernel: their casts are still saved when the
kernel's backward runs."""


def _previous_graph_bytes(arch: Architecture, setup: TrainingSetup, spec: BlockSpec) -> int:
    """litgpt's loop rebinds `loss` only after the next forward and loss: until then the previous
    micro-batch's graph is alive, and with it every bitsandbytes matmul's `ctx.tensors` (its
    input), which backward does not free (litgpt/finetune/lora.py `fit`). Steady state: the
    previous micro-batch had the same shape (batches padded to a length cap). A run whose largest
    batch comes first (litgpt's 2023 scripts forced the longest sample into the first batch)
    peaks before any previous graph exists."""
    if setup.framework is not Framework.LITGPT or not setup.steady_state:
        return 0
    tokens = setup.batch * setup.seq_len
    head = spec.residual_bytes * arch.hidden_size if setup.method is Method.QLORA else 0
    return (quantized_base_inputs(arch, spec) * arch.n_layers + head) * tokens


def _logits_in_step(setup: TrainingSetup, loss: LossMemory) -> int:
    """The logits the loop still holds during optimizer.step(): litgpt's loop variable
    `logits`, or the outputs a loop keeps (`HeadSpec.outputs_kept`)."""
    return loss.logits_alive_bytes


def _persistent_parts(states: ModelStates, setup: TrainingSetup,
                      with_gradients: bool | None = None,
                      in_step: bool = False) -> tuple[Part, ...]:
    grads = gradients_kept(setup) if with_gradients is None else with_gradients
    gradient_bytes = states.gradient_bytes if grads else 0
    if with_gradients and setup.precision is Precision.MIXED:
        # a master-weight optimizer steps on fp32 gradients of its masters: each 16-bit
        # gradient becomes an fp32 one (Megatron's `main_grad`, DeepSpeed's fp32 partition)
        gradient_bytes = 4 * states.trainable_params
    if grads and setup.optimizer_impl is OptimizerImpl.IN_BACKWARD:
        gradient_bytes = largest_gradient_bytes(states, setup)
    return (
        Part(PartKind.TRAINABLE_WEIGHTS, states.trainable_weight_bytes),
        Part(PartKind.FROZEN_WEIGHTS, states.frozen_weight_bytes + states.buffer_bytes),
        Part(PartKind.GRADIENTS, gradient_bytes),
        Part(PartKind.MASTER_WEIGHTS, states.master_weight_bytes),
        Part(PartKind.OPTIMIZER_STATES,
             states.optimizer_state_bytes if in_step or optimizer_states_exist(setup) else 0),
    )


def largest_gradient_bytes(states: ModelStates, setup: TrainingSetup) -> int:
    """The optimizer stepping inside backward (torchtune `OptimizerInBackward`,
    torchtune/modules/optim.py: one optimizer per parameter, `register_post_accumulate_grad_hook`
    -> `step()` then `zero_grad()`) frees each gradient as soon as it is made: one parameter's
    gradient at a time, the largest at most."""
    return states.largest_trainable_params * states.gradient_itemsize


def activations_for_simple_mode(arch: Architecture, batch: int, seq_len: int,
                                method: Method = Method.FULL) -> int:
    """The simple mode's A from batch and sequence length: the activation memory at the peak
    (saved tensors, logits and loss, backward temporaries) of one step in mixed precision with
    SDPA, as transformers runs it, in bytes. The web page's Activations panel calls this."""
    setup = TrainingSetup(method=method, precision=Precision.MIXED, batch=batch, seq_len=seq_len,
                          framework=Framework.HF, gradient_accumulation=False,
                          quant=Quant.NF4 if method is Method.QLORA else Quant.NONE)
    return activation_bytes(arch, setup)  # LoRA: transformers' default rank and targets
