"""The tiled MLP, run in a trace (`TraceSetup.tiled_mlp`): each block's MLP computed tile by tile,
as Unsloth's `unsloth_tiled_mlp` and DeepSpeed's `TiledMLP` run it, so that the analytic model's
`TrainingSetup.tiled_mlp` can be checked against the tensors a real step makes.

The scheme, as both stacks write it (unsloth-zoo unsloth_zoo/tiled_mlp.py `TiledMLP` @7209a767;
DeepSpeed deepspeed/runtime/sequence_parallel/ulysses_sp.py `TiledMLP`): forward runs the MLP on
each tile of the flattened tokens under `no_grad`, writes the tile's output into one output
tensor and saves only the input; backward makes the input's gradient whole
(`torch.zeros_like`), then for each tile runs the MLP again with its gradient and backpropagates
the matching slice of the incoming gradient, the tile's input gradient accumulating into its
slice of the whole one (`x_split.grad = x_grad_slice`) and the weights' gradients into the
parameters. The tiles are `vramplan.training.specs.mlp_tile_tokens`'s, so both sides cut the
same tiles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn


class _TiledMLP(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, mlp_forward: Callable[[torch.Tensor], torch.Tensor],
                x: torch.Tensor, tile: int) -> torch.Tensor:
        ctx.mlp_forward, ctx.tile = mlp_forward, tile
        ctx.save_for_backward(x)
        flat = x.reshape(-1, x.shape[-1])
        output: torch.Tensor | None = None
        with torch.no_grad():
            for start in range(0, flat.shape[0], tile):
                piece = mlp_forward(flat[start:start + tile].unsqueeze(0)).squeeze(0)
                if output is None:
                    output = torch.empty(flat.shape[0], piece.shape[-1], dtype=piece.dtype,
                                         device=piece.device)
                output[start:start + tile].copy_(piece)
                del piece
        assert output is not None
        return output.view(*x.shape[:-1], output.shape[-1])

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[None, torch.Tensor, None]:
        (x,) = ctx.saved_tensors
        flat = x.reshape(-1, x.shape[-1])
        grads = grad_output.reshape(-1, grad_output.shape[-1])
        x_grad = torch.zeros_like(flat)
        for start in range(0, flat.shape[0], ctx.tile):
            piece = flat[start:start + ctx.tile].detach().unsqueeze(0).requires_grad_(True)
            piece.grad = x_grad[start:start + ctx.tile].unsqueeze(0)
            with torch.enable_grad():
                out = ctx.mlp_forward(piece)
            torch.autograd.backward(out, grads[start:start + ctx.tile].unsqueeze(0))
            del out, piece
        return None, x_grad.view_as(x), None


def tile_mlps(blocks: nn.ModuleList, tile: int) -> None:
    """Each block's `mlp` runs tiled, `tile` tokens at a time."""
    for block in blocks:
        mlp: Any = block.mlp
        untiled = mlp.forward

        def tiled(x: torch.Tensor, *, _untiled: Callable[..., Any] = untiled) -> torch.Tensor:
            result: torch.Tensor = _TiledMLP.apply(_untiled, x, tile)  # type: ignore[no-untyped-call]
            return result

        mlp.forward = tiled
