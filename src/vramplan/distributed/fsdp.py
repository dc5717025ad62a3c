"""PyTorch FSDP (FSDP1's flat units and FSDP2's per-parameter sharding): what each GPU holds of
the gathered units, their gradients and their reduce-scatter buffers, phase by phase."""

from __future__ import annotations

from vramplan.distributed.parallelism import CAST_ITEMSIZE, Parallelism, ShardedStates, UnitBytes
from vramplan.training.states import ModelStates
from vramplan.units import ceil_div
from vramplan.vocab import FsdpVersion, Offload, Scheme


def fsdp_states(states: ModelStates, plan: Parallelism, n: int,
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
    unit_weights, root_gathered, units_gathered = _gathered(
        states, plan, n, unit_weights, root_gathered, prefetched_units=ahead)
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
    # a trained tied embedding's gradients at its backward (`_root_end_bytes`)
    tied_sum = states.tied_gradient_copies * states.head_params * states.gradient_itemsize \
        if whole_root else 0
    root_grad_shard = ceil_div(root_grad, n)
    if plan.params_cast_for_compute and states.gradient_itemsize > CAST_ITEMSIZE:
        # autograd makes the unsharded gradients in the gathered copies' dtype; FSDP casts
        # each reduced shard back to the parameters' (FSDP1 `_cast_grad_to_param_dtype`)
        unit_grad, root_grad, early_root_grad, tied_sum = (
            n_bytes * CAST_ITEMSIZE // states.gradient_itemsize
            for n_bytes in (unit_grad, root_grad, early_root_grad, tied_sum))
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
    root_end = _root_end_bytes(plan, root_at_end=forward - units_gathered, root_grad=root_grad,
                               tied_sum=tied_sum, unit_grad=unit_grad,
                               transient_units=transient_units)
    return ShardedStates(
        parallelism=plan, shard_degree=n,
        weights_bytes=weights, gradients_bytes=grads,
        master_weights_bytes=master, optimizer_states_bytes=optim,
        gradients_at_step_bytes=step_grads, persistent_buffers_bytes=0,
        forward_buffers_bytes=forward, backward_buffers_bytes=backward,
        step_buffers_bytes=0,
        host_bytes_per_rank=host, pinned_host_bytes_per_rank=pinned,
        last_unit_backward_buffers_bytes=first_blocks, root_end_buffers_bytes=root_end,
        unit_gradient_bytes=unit_grad, unit_gradient_shard_bytes=unit_grad_shard,
        root_gradient_bytes=root_grad, root_gradient_shard_bytes=root_grad_shard,
        loss_buffers_bytes=loss, reduce_buffers_bytes=reduce,
        gathered_unit_bytes=unit_weights,
        gathered_root_bytes=0 if runs_as_no_shard(plan, n) else root_weights,
    )


def _root_end_bytes(plan: Parallelism, *, root_at_end: int, root_grad: int, tied_sum: int,
                    unit_grad: int, transient_units: int) -> int:
    """The buffers as the root unit's gradient completes, after the embedding's backward
    (`ShardedStates.root_end_buffers_bytes`).

    FSDP1 `cat`s the flat gradient beside the original parameters' (two root-sized gradients)
    with the root still gathered; FSDP2's post-backward reshards the root first, then copies its
    gradients into the reduce-scatter input (one root-sized copy beside them, nothing gathered).
    Before either, as the embedding's backward ends, the root is gathered beside its gradients:
    the head's and the embedding's, or for a tied embedding the head's, the embedding's and their
    sum (`tied_sum`: `ModelStates.tied_gradient_copies`, three here too under a cast policy,
    whose 16-bit gathered copies autocast does not cast); FSDP2 still holds the first block's
    reduce-scatter input, which the root's post-backward frees
    (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py `post_backward`:
    `comm_ctx.reduce_scatter_state`). Rank 0's trace of Llama-3.2-1B's full fine-tuning (tied)
    peaks there under FSDP1 and FSDP2, on 2 and 8 GPUs, 2 x 512 tokens
    (4.9 to 8.3 % under before 2026-12-07)."""
    at_embedding = root_at_end + (tied_sum or root_grad)
    if plan.fsdp_version is FsdpVersion.FSDP2:
        return max(transient_units * root_grad, at_embedding + (unit_grad if root_grad else 0))
    return max(root_at_end + transient_units * root_grad, at_embedding)


def runs_as_no_shard(plan: Parallelism, n: int) -> bool:
    """FSDP1 runs a group of one GPU as NO_SHARD, FULL_SHARD and SHARD_GRAD_OP alike
    (torch/distributed/fsdp/_init_utils.py `_init_core_state`: "FSDP is switching to use
    `NO_SHARD` instead of ... since the world size is 1", read in torch 2.13's): its flat
    parameters are used in place and nothing is gathered. FSDP2 has no such switch."""
    return plan.fsdp_version is FsdpVersion.FSDP1 and n == 1 \
        and plan.scheme in (Scheme.FSDP, Scheme.FSDP_GRAD_OP)


def _gathered(states: ModelStates, plan: Parallelism, n: int, unit_weights: int,
              root_gathered: int, *, prefetched_units: int) -> tuple[int, int, int]:
    """A gathered unit's bytes, and what stays gathered outside a unit's own forward: the root
    and, in forward, the unit computing and those prefetched. SHARD_GRAD_OP keeps every unit
    gathered between forward and backward; NO_SHARD gathers nothing (`runs_as_no_shard`)."""
    if runs_as_no_shard(plan, n):
        return 0, 0, 0
    if plan.scheme is Scheme.FSDP_GRAD_OP:
        return unit_weights, states.weight_bytes, 0
    return unit_weights, root_gathered, (1 + prefetched_units) * unit_weights


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
