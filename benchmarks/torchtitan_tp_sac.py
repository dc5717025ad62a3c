"""What torchtitan's per-op selective checkpointing keeps of a Llama block under its tensor
parallelism, eager and compiled, on the CPU (`vramplan.training.activations
.per_op_selective_saved`).

Rank 0 of a fake process group of 2 ranks (collectives return at once and move no data), a small
Llama block parallelized with torchtitan's plan (torchtitan/models/llama3/infra/parallelize.py
`apply_tp` at 028a455c1: sequence-parallel norms, attention's and the MLP's inputs all-gathered,
wq/wk/wv/w1/w3 column-parallel, wo and w2 row-parallel to `Shard(1)`) and checkpointed under its
policy (`_op_sac_save_list` and `_apply_op_sac`'s "every second mm" at 028a455c1; the CPU's
flash kernel stands in for CUDA's). Eager: each op the policy sees in forward, whether it keeps
its output, and its inputs' local shapes. Compiled: what AOTAutograd's min-cut partitioner hands
from the forward graph to the backward graph (the gathered weights among them). Never part of
the tests (it sets up a process group).
Run: `PYTHONPATH=src .venv/bin/python benchmarks/torchtitan_tp_sac.py`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)
from torch.nn.functional import scaled_dot_product_attention, silu
from torch.testing._internal.distributed.fake_pg import FakeStore
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
)

TP = 2
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, BATCH, SEQ = 64, 4, 2, 16, 160, 1, 32

SAVE_LIST = {
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default,  # the CPU's stand-in
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    torch.ops.aten.max.default,
}
"""torchtitan's `_op_sac_save_list` at 028a455c1 (flex attention left out: not run here)."""


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wq = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, -1, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(b, s, -1, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(b, s, -1, HEAD_DIM).transpose(1, 2)
        repeats = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(repeats, 1), v.repeat_interleave(repeats, 1)
        out = scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Linear(HIDDEN, FFN, bias=False)
        self.w2 = nn.Linear(FFN, HIDDEN, bias=False)
        self.w3 = nn.Linear(HIDDEN, FFN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    """torchtitan/models/llama3/model.py `TransformerBlock.forward`, without RoPE."""

    def __init__(self) -> None:
        super().__init__()
        self.attention_norm, self.attention = nn.RMSNorm(HIDDEN), Attention()
        self.ffn_norm, self.feed_forward = nn.RMSNorm(HIDDEN), FeedForward()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


def tensor_parallel_block() -> nn.Module:
    mesh = init_device_mesh("cpu", (TP,))
    gathered = PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),))
    return parallelize_module(Block(), mesh, {
        "attention_norm": SequenceParallel(), "attention": gathered,
        "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(),
        "attention.wv": ColwiseParallel(),
        "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
        "ffn_norm": SequenceParallel(), "feed_forward": gathered,
        "feed_forward.w1": ColwiseParallel(), "feed_forward.w3": ColwiseParallel(),
        "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
    })


def _local_shape(arg: Any) -> tuple[int, ...]:
    return tuple((arg._local_tensor if isinstance(arg, DTensor) else arg).shape)


def policy_context(log: list[str]) -> Callable[[], Any]:
    """torchtitan's `_get_custom_policy`, logging what it decides in forward."""
    def context() -> Any:
        meta: dict[str, int] = defaultdict(int)

        def policy(ctx: Any, func: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
            key = f"{'recompute' if ctx.is_recompute else 'forward'}_mm_count"
            if func == torch.ops.aten.mm.default:
                meta[key] += 1
            save = func in SAVE_LIST and not (
                func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
            if not ctx.is_recompute:
                inputs = [_local_shape(a) for a in args if isinstance(a, torch.Tensor)]
                log.append(f"{'KEEP' if save else '    '} {func} inputs {inputs}")
            return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE
        return create_selective_checkpoint_contexts(policy)
    return context


_compiled_context = policy_context([])
"""A module-level context function: dynamo traces no nested one (torch 2.13)."""


def _print_saved(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
    outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    print("compiled: the forward graph's outputs (the block's output, then what backward reads)")
    for node in outputs:
        value = getattr(node, "meta", {}).get("val")
        if isinstance(value, torch.Tensor):
            print(f"  {node.name} {tuple(value.shape)}")
    return make_boxed_func(gm.forward)


def main() -> None:
    dist.init_process_group("fake", rank=0, world_size=TP, store=FakeStore())
    block = tensor_parallel_block()
    log: list[str] = []
    context = policy_context(log)
    x = torch.randn(BATCH, SEQ // TP, HIDDEN, requires_grad=True)  # this rank's sequence share
    checkpoint(block, x, use_reentrant=False, context_fn=context).sum().backward()
    print("eager: the ops the policy sees in forward (KEEP: output kept for the replay)")
    print("\n".join(f"  {line}" for line in log))
    backend = aot_autograd(fw_compiler=_print_saved,
                           bw_compiler=lambda gm, _: make_boxed_func(gm.forward),
                           partition_fn=min_cut_rematerialization_partition)
    compiled = torch.compile(
        lambda t: checkpoint(block, t, use_reentrant=False, context_fn=_compiled_context),
        backend=backend, fullgraph=True)
    compiled(x).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
