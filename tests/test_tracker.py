"""The storage tracker under the tracer: where watching the program changes what it allocates.

Autograd's input buffer sums two gradients of one tensor in place on a GPU, out of place under a
dispatch mode (torch/csrc/autograd/input_buffer.cpp `accumulate`; ATen's `isTensorSubclassLike`
is true while a mode is active). The tracker gives the sum back its place. Sizes are counted by
hand below, in units of one n x n fp32 tensor (S).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from vramplan.tracer.tracker import StorageTracker  # noqa: E402

N = 256
S = N * N * 4
"""One n x n fp32 tensor: a multiple of the allocator's 512-byte block."""


def _twice_used(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """h feeds two matmuls: its gradient is the sum of theirs."""
    h = torch.tanh(x)
    return (h @ w1) + (h @ w2)


def _transposed_first(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """w's first gradient reaches its buffer through `w.t()`: a view (TBackward transposes)."""
    w = x * 1
    return (w @ w2) + (w.t() @ w1)


class _Recorded(torch.autograd.Function):
    """The identity, whose backward notes where each gradient it passes on lives."""

    pointers: ClassVar[list[int]] = []

    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        out = grad * 1.0
        _Recorded.pointers.append(out.data_ptr())
        return out


def _sum_reuses_a_gradient(mode: TorchDispatchMode | None) -> bool:
    """Whether the gradient autograd hands `h`'s hook lives where one of the two summed ones
    did (real CPU tensors: the engine's accumulate is the same code on every device)."""
    _Recorded.pointers = []
    summed: list[int] = []
    x = torch.randn(N, N, requires_grad=True)
    w1, w2 = torch.randn(N, N), torch.randn(N, N)
    h = torch.tanh(x)
    h.register_hook(lambda grad: summed.append(grad.data_ptr()))
    out = (_Recorded.apply(h) @ w1) + (_Recorded.apply(h) @ w2)
    if mode is None:
        out.sum().backward()
    else:
        with mode:
            out.sum().backward()
    return summed[0] in _Recorded.pointers


class _Watching(TorchDispatchMode):  # type: ignore[no-untyped-call]
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return func(*args, **(kwargs or {}))


def test_autograd_sums_in_place_unless_a_dispatch_mode_watches() -> None:
    """What the tracker corrects, checked on this PyTorch: a failure here means the engine's
    rule changed and `StorageTracker._input_buffer_sum` must follow it."""
    assert _sum_reuses_a_gradient(None)
    assert not _sum_reuses_a_gradient(_Watching())


def _traced_peak(program: Callable[..., torch.Tensor]) -> float:
    """The peak of `program`'s forward and backward, in S, its four inputs (x, w1, w2 and the
    output's gradient) counted from the start."""
    with FakeTensorMode():
        tracker = StorageTracker()
        with tracker:
            tracker.start_recording()
            x = torch.randn(N, N).requires_grad_()
            w1, w2, grad = torch.randn(N, N), torch.randn(N, N), torch.randn(N, N)
            program(x, w1, w2).backward(grad)
        return tracker.peak / S


def test_an_input_buffer_sum_takes_its_gradient_s_place() -> None:
    """The inputs: 4. Forward keeps h (tanh saves it) and the output: 6. Backward: the second
    matmul's node makes h's first gradient (7), the first's h's second (8). Their sum, in place
    on a GPU, adds nothing; tanh's backward then makes x's gradient beside the sum once the
    second is freed: 7 + 1. Out of place the sum would be a ninth."""
    assert _traced_peak(_twice_used) == 8


def test_a_view_in_the_buffer_is_summed_out_of_place() -> None:
    """The buffer holds w's gradient through `w.t()`'s view, whose base shares its storage:
    `can_accumulate_inplace` refuses it on a GPU too. The inputs (4) and the output (5): w is
    not kept, as neither matmul's weight wants a gradient. Backward: the transposed gradient (6),
    the other (7), their sum (8)."""
    assert _traced_peak(_transposed_first) == 8
