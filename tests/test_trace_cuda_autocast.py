"""CPU autocast with CUDA's cast lists (vramplan.tracer.cuda_autocast): what an `amp` trace on the
CPU runs in fp32 is what CUDA autocast runs in fp32."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytest.importorskip("torch")

import torch

from vramplan.tracer.cuda_autocast import CUDA_ONLY, CastPolicy, cuda_cast_lists, registered

pytestmark = pytest.mark.trace

F = torch.nn.functional


def test_the_table_names_every_op_only_cuda_autocast_casts_in_the_installed_torch() -> None:
    # a torch whose lists change fails here, not silently in a trace
    assert set(CUDA_ONLY) == registered("AutocastCUDA") - registered("AutocastCPU")


def test_the_policies_follow_autocast_mode_h_for_the_ops_llm_blocks_run() -> None:
    assert CUDA_ONLY["pow.Tensor_Scalar"] is CastPolicy.FP32
    assert CUDA_ONLY["layer_norm"] is CastPolicy.FP32
    assert CUDA_ONLY["softmax.int"] is CastPolicy.FP32_SET_OPT_DTYPE
    assert CUDA_ONLY["sum"] is CastPolicy.FP32_SET_OPT_DTYPE
    assert CUDA_ONLY["einsum"] is CastPolicy.LOWER_PRECISION
    assert CUDA_ONLY["addcmul"] is CastPolicy.PROMOTE


_X = torch.randn(4, 8, dtype=torch.bfloat16)
_OPS: dict[str, tuple[Callable[[], torch.Tensor], torch.dtype, torch.dtype]] = {
    # name: (op, dtype under CPU autocast, dtype under CUDA's lists)
    "pow": (lambda: torch.pow(_X, 3.0), torch.bfloat16, torch.float32),
    "x ** 3": (lambda: _X ** 3, torch.bfloat16, torch.float32),
    "softmax": (lambda: torch.softmax(_X, -1), torch.bfloat16, torch.float32),
    "softmax with a dtype": (lambda: torch.softmax(_X, -1, dtype=torch.bfloat16),
                             torch.bfloat16, torch.bfloat16),
    "layer_norm": (lambda: F.layer_norm(_X, (8,)), torch.bfloat16, torch.float32),
    "sum": (_X.sum, torch.bfloat16, torch.float32),
    "sum over a dim": (lambda: _X.sum(-1), torch.bfloat16, torch.float32),
    "norm": (_X.norm, torch.bfloat16, torch.float32),
    "exp": (_X.exp, torch.bfloat16, torch.float32),
    "matmul": (lambda: _X.float() @ _X.float().T, torch.bfloat16, torch.bfloat16),
    # CUDA casts einsum's inputs, the CPU the bmm it is made of
    "einsum": (lambda: torch.einsum("ij,kj->ik", _X.float(), _X.float()),
               torch.bfloat16, torch.bfloat16),
    # a composite op only CPU autocast wraps (fp32 cast of its input): decomposed, its
    # log_softmax and nll_loss are cast as CUDA casts them
    "cross_entropy": (lambda: F.cross_entropy(_X, torch.zeros(4, dtype=torch.long)),
                      torch.float32, torch.float32),
}


@pytest.mark.parametrize("name", list(_OPS))
def test_ops_are_cast_as_cuda_casts_them_and_as_the_cpu_does_after(name: str) -> None:
    op, on_cpu, on_cuda = _OPS[name]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert op().dtype is on_cpu
        with cuda_cast_lists():
            assert op().dtype is on_cuda
        assert op().dtype is on_cpu  # the installed kernels are back


def test_a_gelu_new_chain_saves_fp32_tensors_for_backward() -> None:
    """transformers' NewGELUActivation under CUDA's lists: pow's fp32 copy of its input, the
    fp32 tanh output and `1 + tanh`, the 16-bit `0.5 * x` (what
    vramplan.training.activations counts under autocast)."""
    saved: list[torch.dtype] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor.dtype)
        return tensor

    x = torch.randn(4, 16, dtype=torch.bfloat16, requires_grad=True)
    with cuda_cast_lists(), torch.autocast("cpu", dtype=torch.bfloat16), \
            torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        y = 0.5 * x * (1.0 + torch.tanh(0.79788456 * (x + 0.044715 * torch.pow(x, 3.0))))
    assert y.dtype is torch.float32
    assert sorted(saved, key=str) == sorted(
        [torch.float32, torch.float32, torch.float32, torch.bfloat16], key=str)
