"""One micro-batch: the forward block by block (with FSDP's all-gathers), the logits and the
loss, then the backward block by block with its gradients (and their reduction under ZeRO or
FSDP)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from vramplan.allocator import mark
from vramplan.model.architecture import Architecture
from vramplan.training.activations.backward import (
    block_backward_transient,
    released_before_block_peak,
)
from vramplan.training.activations.block import block_saved
from vramplan.training.activations.checkpointing import kept_for_backward
from vramplan.training.allocations.loss import (
    compiled_loss,
    fused_linear_loss,
    in_place_loss,
    logits_and_loss,
    loss_parallel,
    vocab_parallel_loss,
)
from vramplan.training.allocations.program import (
    GATHER_STREAM,
    LOSS_PHASE,
    PRE_UNSHARD_STREAM,
    REDUCE_STREAM,
    PersistentState,
    Sharding,
    StepProgram,
    StepShape,
    packed_requests,
)
from vramplan.training.allocations.tensors import TOKEN_ID_BYTES, ParamTensor
from vramplan.training.setup import (
    TrainingSetup,
    accelerate_copies_outputs,
    autocast_casts_shifted_logits,
    checkpoint_reload_buffers,
    compute_itemsize,
    first_pass_keeps_inputs,
    loop_keeps_logits,
    loss_compiled,
    loss_in_16bit,
    model_loss_code,
    native_fused_cross_entropy,
    offloads_checkpoints,
)
from vramplan.units import ceil_div
from vramplan.vocab import Checkpointing, Framework


def micro_batch(program: StepProgram, arch: Architecture, setup: TrainingSetup, shape: StepShape,
                model: PersistentState) -> None:
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
        grad_hidden, head_grad = fused_linear_loss(
            program, arch, rows=shape.loss_rows, tokens=tokens, hidden=hidden,
            compute=compute_itemsize(setup.precision), head_grad_bytes=shape.head_grad_bytes)
    elif setup.framework is Framework.MEGATRON and shape.loss_rows == tokens:
        grad_hidden = vocab_parallel_loss(program, arch, tokens=tokens, hidden=hidden,
                                          compute=compute_itemsize(setup.precision),
                                          compiled=native_fused_cross_entropy(setup),
                                          te_kernel=setup.te_cross_entropy)
    elif setup.framework is Framework.UNSLOTH and shape.loss_rows == tokens:
        grad_hidden = in_place_loss(program, arch, tokens=tokens, hidden=hidden,
                                    compute=compute_itemsize(setup.precision))
    elif setup.framework is Framework.TORCHTITAN and loss_compiled(setup):
        grad_hidden = compiled_loss(program, arch, tokens=tokens, hidden=hidden,
                                    compute=compute_itemsize(setup.precision))
    elif setup.loss_parallel and shape.loss_rows == tokens:
        grad_hidden = loss_parallel(program, arch, tokens=tokens, hidden=hidden,
                                    compute=compute_itemsize(setup.precision))
    else:
        # a loop that keeps the model's outputs holds the logits they return through backward
        # and the step, and the previous micro-batch's until this forward returns
        # (`vramplan.training.activations.head.HeadSpec.outputs_kept`, `previous_logits`)
        keeps = loop_keeps_logits(setup) and shape.loss_rows == tokens
        grad_hidden, returned = logits_and_loss(
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


def _end_of_backward(program: StepProgram, model: PersistentState, gathered: list[int]) -> None:
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
                      saved=packed_requests(item.bytes_per_token * tokens for item in saved
                                            if item.name not in released),
                      released=packed_requests(item.bytes_per_token * tokens for item in saved
                                               if item.name in released),
                      transient=block_backward_transient(arch, shape.spec, saved) * tokens,
                      checkpointed=checkpointed,
                      offloaded=offloads_checkpoints(setup),
                      reload_buffers=checkpoint_reload_buffers(setup))


def _gather(program: StepProgram, sharding: Sharding, n_bytes: int) -> int:
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


def _forward(program: StepProgram, arch: Architecture, sizes: _Sizes,
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


def _backward_block(program: StepProgram, model: PersistentState, sizes: _Sizes, block: int, *,
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


def _reduce_unit(program: StepProgram, model: PersistentState, block: int) -> None:
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


def _block_backward(program: StepProgram, model: PersistentState, trainable: list[int],
                    saved: list[int], transient: int) -> None:
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


def _make_grads(program: StepProgram, model: PersistentState, indices: list[int]) -> None:
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


def _zero3_gradients(program: StepProgram, model: PersistentState,
                     tensors: tuple[ParamTensor, ...]) -> None:
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


def _zero3_reduce(program: StepProgram, model: PersistentState) -> None:
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
