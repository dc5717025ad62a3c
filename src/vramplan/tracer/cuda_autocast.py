"""CPU autocast with CUDA's cast lists, so that an `amp` trace on the CPU saves what a GPU saves.

PyTorch keeps one list of ops per autocast device (aten/src/ATen/autocast_mode.h, the
`AT_FORALL_*` lists, and autocast_mode.cpp; the "CUDA Ops that can autocast to float32" table of
docs/source/amp.rst). CUDA's and the CPU's differ: under CUDA autocast `pow`, `softmax` without a
`dtype`, `layer_norm`, `sum`, `exp`, `rsqrt`... run in fp32, where CPU autocast leaves them in
bf16, so a CPU trace of transformers' `gelu_new` (`0.5 * x * (1 + tanh(... x + 0.044715 *
torch.pow(x, 3.0)))`) or of GPT-2's eager softmax under `amp` saves 16-bit tensors that a GPU saves
in fp32. While `cuda_cast_lists()` is active, every op on either list but not on both gets, for
the `AutocastCPU` dispatch key, CUDA's policy: the ops only CUDA lists get a Python kernel that
casts as CUDA's wrapper does (`CastPolicy` in autocast_mode.h) and redispatches below autocast;
the ops only the CPU lists run uncast, as under CUDA autocast. The installed torch names both sets
(`torch._C._dispatch_get_registrations_for_dispatch_key`); tests/test_trace_cuda_autocast.py
checks that `CUDA_ONLY` covers its CUDA-only set. Not emulated: autocast's cache of casts of
leaf weights, which only the lower-precision ops here would use (einsum, mv, addmv...).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any

import torch
from torch.utils._pytree import tree_leaves, tree_map


class CastPolicy(Enum):
    """autocast_mode.h `CastPolicy`."""

    LOWER_PRECISION = "lower_precision_fp"
    """Cast every floating input to the autocast dtype (bf16 here)."""
    FP32 = "fp32"
    """Cast every floating input to fp32."""
    FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"
    """Run in fp32 through the op's `dtype` argument, unless the caller gave one."""
    FP32_APPEND_DTYPE = "fp32_append_dtype"
    """`norm` without a dtype: redispatched to the overload that takes one, with fp32."""
    PROMOTE = "promote"
    """Run in the widest floating dtype among the inputs."""


_LOWER = CastPolicy.LOWER_PRECISION
_FP32 = CastPolicy.FP32
_SET_DTYPE = CastPolicy.FP32_SET_OPT_DTYPE
_APPEND = CastPolicy.FP32_APPEND_DTYPE
_PROMOTE = CastPolicy.PROMOTE

CUDA_ONLY: dict[str, CastPolicy] = {
    # AT_FORALL_LOWER_PRECISION_FP entries CPU autocast does not list
    "_convolution": _LOWER, "convolution": _LOWER, "cudnn_convolution": _LOWER,
    "cudnn_convolution_transpose": _LOWER, "addmv": _LOWER, "addr": _LOWER, "mv": _LOWER,
    "einsum": _LOWER, "chain_matmul": _LOWER, "linalg_multi_dot": _LOWER,
    "_thnn_fused_lstm_cell": _LOWER, "_thnn_fused_gru_cell": _LOWER, "lstm_cell": _LOWER,
    "gru_cell": _LOWER, "rnn_tanh_cell": _LOWER, "rnn_relu_cell": _LOWER,
    "_scaled_dot_product_flash_attention": _LOWER,
    # AT_FORALL_FP32
    "acos": _FP32, "asin": _FP32, "cosh": _FP32, "erfinv": _FP32, "exp": _FP32, "expm1": _FP32,
    "log": _FP32, "log10": _FP32, "log2": _FP32, "log1p": _FP32, "reciprocal": _FP32,
    "rsqrt": _FP32, "sinh": _FP32, "tan": _FP32, "pow.Tensor_Scalar": _FP32,
    "pow.Tensor_Tensor": _FP32, "pow.Scalar": _FP32, "softplus": _FP32, "layer_norm": _FP32,
    "native_layer_norm": _FP32, "group_norm": _FP32, "rms_norm": _FP32,
    "frobenius_norm.dim": _FP32, "nuclear_norm": _FP32, "nuclear_norm.dim": _FP32,
    "cosine_similarity": _FP32, "dist": _FP32, "pdist": _FP32, "renorm": _FP32,
    "logsumexp": _FP32, "upsample_nearest1d": _FP32, "upsample_nearest2d": _FP32,
    "upsample_nearest3d": _FP32, "_upsample_nearest_exact1d": _FP32,
    "_upsample_nearest_exact2d": _FP32, "_upsample_nearest_exact3d": _FP32,
    "upsample_linear1d": _FP32, "upsample_bilinear2d": _FP32, "_upsample_bilinear2d_aa": _FP32,
    "upsample_trilinear3d": _FP32, "upsample_bicubic2d": _FP32, "_upsample_bicubic2d_aa": _FP32,
    # AT_FORALL_FP32_SET_OPT_DTYPE
    "softmax.int": _SET_DTYPE, "log_softmax.int": _SET_DTYPE, "cumprod": _SET_DTYPE,
    "cumsum": _SET_DTYPE, "linalg_vector_norm": _SET_DTYPE, "linalg_matrix_norm": _SET_DTYPE,
    "linalg_matrix_norm.str_ord": _SET_DTYPE, "sum": _SET_DTYPE, "sum.dim_IntList": _SET_DTYPE,
    # AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE
    "norm.Scalar": _APPEND, "norm.ScalarOpt_dim": _APPEND,
    # AT_FORALL_PROMOTE
    "addcdiv": _PROMOTE, "addcmul": _PROMOTE, "atan2": _PROMOTE, "bilinear": _PROMOTE,
    "cross": _PROMOTE, "dot": _PROMOTE, "vdot": _PROMOTE, "index_put": _PROMOTE,
    "tensordot": _PROMOTE, "scatter_add": _PROMOTE,
}
"""The ops CUDA autocast casts and CPU autocast does not, with CUDA's policy."""

_AUTOCAST_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
"""Excluded while a kernel runs the op below autocast, as the C++ wrappers exclude autocast."""

_WITH_DTYPE = {"Scalar": "ScalarOpt_dtype", "ScalarOpt_dim": "ScalarOpt_dim_dtype"}
"""`norm`'s overloads without a dtype, and the ones with, that `FP32_APPEND_DTYPE` redispatches
to (autocast_mode.h `AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE`)."""


def _is_eligible(value: Any) -> bool:
    """autocast_mode.h `is_eligible`: a defined floating tensor, not float64."""
    return isinstance(value, torch.Tensor) and value.is_floating_point() \
        and value.dtype is not torch.float64


def _cast_to(dtype: torch.dtype) -> Callable[[Any], Any]:
    def cast(value: Any) -> Any:
        return value.to(dtype) if _is_eligible(value) and value.dtype is not dtype else value
    return cast


def _widest(args: tuple[Any, ...], kwargs: dict[str, Any], lower: torch.dtype) -> torch.dtype:
    """autocast_mode.h `promote_type`: fp32 if any eligible input is fp32, else the lower one."""
    found = [leaf for leaf in tree_leaves((args, kwargs)) if _is_eligible(leaf)]
    return torch.float32 if any(t.dtype is torch.float32 for t in found) else lower


def _cast_target(policy: CastPolicy, args: tuple[Any, ...], kwargs: dict[str, Any],
                 lower: torch.dtype) -> torch.dtype | None:
    """The dtype every eligible input is cast to under `policy`; None for the policies that
    set an output dtype instead."""
    if policy is CastPolicy.LOWER_PRECISION:
        return lower
    if policy is CastPolicy.FP32:
        return torch.float32
    if policy is CastPolicy.PROMOTE:
        return _widest(args, kwargs, lower)
    return None


def _with_fp32_dtype(op: torch._ops.OpOverload, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The op's arguments with fp32 as its `dtype` unless the caller gave one (autocast_mode.h
    `set_opt_dtype`), where the caller passed it: by position or by name."""
    index = next(i for i, arg in enumerate(op._schema.arguments) if arg.name == "dtype")
    if index < len(args):
        if args[index] is None:
            args = (*args[:index], torch.float32, *args[index + 1:])
        return args, kwargs
    if kwargs.get("dtype") is None:
        kwargs = {**kwargs, "dtype": torch.float32}
    return args, kwargs


def _kernel(op: torch._ops.OpOverload, policy: CastPolicy,
            lower: torch.dtype) -> Callable[..., Any]:
    """The AutocastCPU kernel of `op` under CUDA's `policy`."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            target = _cast_target(policy, args, kwargs, lower)
            if target is not None:
                cast = _cast_to(target)
                return op(*tree_map(cast, args), **tree_map(cast, kwargs))
            if not (args and _is_eligible(args[0])):
                return op(*args, **kwargs)
            if policy is CastPolicy.FP32_SET_OPT_DTYPE:
                args, kwargs = _with_fp32_dtype(op, args, kwargs)
                return op(*args, **kwargs)
            with_dtype = getattr(op.overloadpacket, _WITH_DTYPE[op._overloadname])
            return with_dtype(*args, **kwargs, dtype=torch.float32)

    return kernel


def _uncast_kernel(op: torch._ops.OpOverload) -> Callable[..., Any]:
    """An op only CPU autocast lists, run as CUDA autocast runs it, with no wrapper: a composite
    op is decomposed with autocast still on, so the ops it is made of are cast in their turn (a
    `cross_entropy_loss` on 16-bit logits runs `log_softmax` in fp32, without CPU's fp32 copy of
    its input); another runs uncast."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        decomposed = op.decompose(*args, **kwargs)
        if decomposed is not NotImplemented:
            return decomposed
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            return op(*args, **kwargs)

    return kernel


def _overload(name: str) -> torch._ops.OpOverload:
    packet_name, _, overload = name.partition(".")
    op: torch._ops.OpOverload = getattr(getattr(torch.ops.aten, packet_name),
                                        overload or "default")
    return op


def registered(dispatch_key: str) -> frozenset[str]:
    """The aten ops with a kernel for `dispatch_key` in the installed torch, as `name.overload`
    (no `aten::` prefix)."""
    names = torch._C._dispatch_get_registrations_for_dispatch_key(dispatch_key)
    return frozenset(name.removeprefix("aten::") for name in names if name.startswith("aten::"))


@contextlib.contextmanager
def cuda_cast_lists(lower: torch.dtype = torch.bfloat16) -> Iterator[None]:
    """While active, CPU autocast casts as CUDA autocast does (module docstring); the installed
    kernels are restored on exit."""
    cpu_only = registered("AutocastCPU") - registered("AutocastCUDA")
    library = torch.library.Library("aten", "IMPL")  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
            for name, policy in CUDA_ONLY.items():
                library.impl(name, _kernel(_overload(name), policy, lower),  # type: ignore[no-untyped-call]
                             "AutocastCPU")
            for name in sorted(cpu_only):
                library.impl(name, _uncast_kernel(_overload(name)),  # type: ignore[no-untyped-call]
                             "AutocastCPU")
        yield
    finally:
        library._destroy()  # type: ignore[no-untyped-call]
