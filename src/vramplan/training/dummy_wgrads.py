"""Megatron-LM's cached dummy weight gradients.

With gradient-accumulation fusion (`TrainingSetup.gradient_accumulation_fusion`) a linear's
weight-gradient GEMM accumulates into the parameter's `main_grad` (Megatron's gradient buffer)
and its autograd function returns a dummy gradient in the weight's 16-bit dtype, so that
Megatron's backward hooks still run on the main thread; the hook drops it (`param.grad = None`).
Transformer Engine takes that dummy from a module-level cache, one tensor per (shape, dtype),
made at the first backward and never freed (transformer_engine/pytorch/module/base.py
`get_dummy_wgrad`, `_dummy_wgrads`): its `_Linear` and `_LayerNormLinear` since
`TE_DUMMY_WGRAD_CACHE_SINCE`, its `GroupedLinear` (routed experts) since
`TE_GROUPED_DUMMY_WGRAD_CACHE_SINCE`, Megatron's own output layer since
`MEGATRON_HEAD_DUMMY_WGRAD_CACHE_SINCE`. Before those, each backward made a fresh `torch.empty`
that the hook freed at once (not modelled: a transient of one weight). `_LayerNormMLP` still
makes a fresh one (TE @d0067d0d layernorm_mlp.py), but Megatron's layer specs build the MLP from
`TELayerNormColumnParallelLinear` and `TERowParallelLinear`.

Weights' shapes as one tensor-parallel rank holds them (Megatron-LM @f4fa7d6b
megatron/core/models/gpt/gpt_layer_specs.py `get_gpt_layer_with_transformer_engine_spec`):
`linear_qkv` [(q + 2 kv) / tp, H] and `linear_fc1` [(2 if gated) x ffn / tp, H] column-parallel,
`linear_proj` [H, q / tp] and `linear_fc2` [H, ffn / tp] row-parallel; multi-head latent
attention's `linear_q_down_proj` and `linear_kv_down_proj` are `TELinear`s kept whole on every
rank, its up projections column-parallel; the router's weight (`TopKRouter`) takes an ordinary
gradient; the head's `output_layer` [V / tp, H] is a `ColumnParallelLinear` (with tied
embeddings, the embedding's weight passed to it: the same shape).
"""

from __future__ import annotations

from collections.abc import Iterator

from vramplan.model.architecture import Architecture, LinearSpec
from vramplan.presets.frameworks.dates import has_change
from vramplan.presets.frameworks.megatron import (
    MEGATRON_HEAD_DUMMY_WGRAD_CACHE_SINCE,
    TE_DUMMY_WGRAD_CACHE_SINCE,
    TE_GROUPED_DUMMY_WGRAD_CACHE_SINCE,
)
from vramplan.training.setup import TrainingSetup, compute_itemsize
from vramplan.units import ceil_div
from vramplan.vocab import Framework, Method

Shape = tuple[int, int]
"""A weight's (rows, columns): (out_features, in_features) on one tensor-parallel rank."""

_FUSED_QKV = ("q", "k", "v")
"""Megatron's `linear_qkv`: one weight for the queries, keys and values."""
_FUSED_FC1 = ("gate", "up")
"""Megatron's `linear_fc1`: gate and up in one weight under a gated MLP."""
_ROW_PARALLEL = frozenset({"o", "down"})
"""`linear_proj` and `linear_fc2`: split over their input features."""
_WHOLE = frozenset({"q_a", "kv_a"})
"""Multi-head latent attention's down projections, `TELinear`s not split over ranks."""


def dummy_wgrad_tensors(arch: Architecture, setup: TrainingSetup, tensor_parallel: int = 1, *,
                        head: bool = True) -> tuple[int, ...]:
    """Bytes of each cached dummy weight gradient one GPU holds from its first backward on, in
    the order backward makes them (the head's first); `head`: the GPU holds the output layer
    (the last pipeline stage). Only where Megatron-LM trains the weights (full fine-tuning: a
    LoRA run's base weights make no weight gradient, its adapters' dummies are of rank-sized
    shapes and are left out)."""
    itemsize = compute_itemsize(setup.precision)
    return tuple(rows * columns * itemsize
                 for rows, columns in dummy_wgrad_shapes(arch, setup, tensor_parallel, head=head))


def dummy_wgrad_bytes(arch: Architecture, setup: TrainingSetup, tensor_parallel: int = 1, *,
                      head: bool = True) -> int:
    """The cached dummy weight gradients of one GPU, in bytes (`dummy_wgrad_tensors`)."""
    return sum(dummy_wgrad_tensors(arch, setup, tensor_parallel, head=head))


def dummy_wgrad_shapes(arch: Architecture, setup: TrainingSetup, tensor_parallel: int = 1, *,
                       head: bool = True) -> tuple[Shape, ...]:
    """The distinct shapes of the cached dummy weight gradients, as the run's code of
    `setup.code_date` (None: today's) makes them: the cache's key is the shape (and the dtype,
    the same 16-bit one for every weight)."""
    if (setup.framework is not Framework.MEGATRON or setup.method is not Method.FULL
            or not setup.gradient_accumulation_fusion):
        return ()
    on = setup.code_date
    shapes: list[Shape] = []
    if head and has_change(on, MEGATRON_HEAD_DUMMY_WGRAD_CACHE_SINCE):
        shapes.append((ceil_div(arch.vocab_size, tensor_parallel), arch.hidden_size))
    if has_change(on, TE_DUMMY_WGRAD_CACHE_SINCE):
        grouped = has_change(on, TE_GROUPED_DUMMY_WGRAD_CACHE_SINCE)
        for kind in reversed(arch.block_kinds()):
            shapes += reversed(list(_weight_shapes(kind.linears, tensor_parallel, grouped)))
    return tuple(dict.fromkeys(shapes))


def _weight_shapes(linears: tuple[LinearSpec, ...], tp: int, grouped: bool) -> Iterator[Shape]:
    """One block's weights as Megatron builds them: its own linears, then its routed experts'
    (one weight per expert, all of one shape) once `grouped`."""
    for routed in (False, True):
        if not routed or grouped:
            yield from _fused_shapes([lin for lin in linears
                                      if lin.routed is routed and lin.role != "router"], tp)


def _fused_shapes(group: list[LinearSpec], tp: int) -> Iterator[Shape]:
    """The group's weights in forward order, queries, keys and values as one, gate and up as
    one."""
    roles = {lin.role for lin in group}
    fused = [names for names in (_FUSED_QKV, _FUSED_FC1) if roles.issuperset(names)]
    for lin in group:
        names = next((names for names in fused if lin.role in names), None)
        if names is not None:
            if lin.role == names[0]:
                parts = [part for part in group if part.role in names]
                yield ceil_div(sum(part.out_features * _width(part) for part in parts), tp), \
                    lin.in_features
        elif lin.role in _WHOLE:
            yield lin.out_features, lin.in_features
        elif lin.role in _ROW_PARALLEL:
            yield lin.out_features, ceil_div(lin.in_features * _width(lin), tp)
        else:
            yield ceil_div(lin.out_features * _width(lin), tp), lin.in_features


def _width(linear: LinearSpec) -> int:
    """Shared experts are one MLP `count` times as wide (Megatron's `SharedExpertMLP`); each
    routed expert is a weight of its own."""
    return 1 if linear.routed else linear.count
