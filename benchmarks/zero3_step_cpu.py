"""DeepSpeed ZeRO-3's gathered parameters over a training step, measured on the CPU and replayed
by `vramplan.distributed.sharding.Zero3Coordinator`.

Two ranks over gloo train a small Llama under ZeRO-3 (bf16, built inside `zero.Init`, the
coordinator's trace recorded by a first step). On rank 0, a hook placed after DeepSpeed's on the
embedding, every linear and the head reads, at each forward and backward use, how many parameter
elements the coordinator holds gathered (`ds_status` other than NOT_AVAILABLE: the fetched, the
prefetched in flight and the kept). The replay walks vramplan's module trace of the same model
(`per_gpu._zero3_trace`) with the same `stage3_*` keys. Printed: both counts at each use of
every block's first linear, of the embedding and of the head, and the peaks of the step's parts.

The keys are scaled down with the model so that the coordinator's limits bind as they do on a
billion-parameter model with DeepSpeed's defaults (1e9 live, 1e9 reuse distance, 5e7 prefetch).
Measured on 2026-12-05 (torch 2.13.0+cpu, transformers 5.25.0, DeepSpeed 0.19.8), 16 blocks of
hidden size 1,024 (222 M parameters), 2.8e7 live, 2.8e7 reuse distance, 1.4e6 prefetch: the
counts agree at every use from the second block of forward on, through the loss (29.69 M) and
the backward (29.62 M a block, 34.93 M at the third block, 22.09, 9.24 and 8.19 M at the
end); in the first blocks of forward DeepSpeed fills faster (each module it enters, containers
included, issues a prefetch; the trace has linears only). Never part of the tests (DeepSpeed is
not a dependency).
Run: `python -m venv /tmp/ds && /tmp/ds/bin/pip install torch==2.13.0 transformers==5.25.0
deepspeed==0.19.8 && PYTHONPATH=src /tmp/ds/bin/python benchmarks/zero3_step_cpu.py
[--layers 16] [--live 2.8e7] [--reuse 2.8e7] [--prefetch 1.4e6] [--checkpointing]`.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from collections.abc import Hashable
from typing import Any

import torch
import torch.multiprocessing as mp

from vramplan.distributed.per_gpu import _TracedStep, _zero3_trace
from vramplan.distributed.sharding import CommBuffers, Zero3Coordinator
from vramplan.model.hf_config import parse_config
from vramplan.vocab import Checkpointing, Method, Precision, Quant

CONFIG: dict[str, Any] = {
    "model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
    "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 8000,
    "max_position_embeddings": 512, "tie_word_embeddings": False, "rms_norm_eps": 1e-5}
LINEARS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
"""The order of `Architecture.block_linears()` for a Llama block."""
WORLD = 2
Uses = dict[Hashable, list[int]]


def trace_key(name: str) -> Hashable | None:
    """vramplan's trace key of a module of transformers' Llama, None for the untraced ones."""
    if name == "model.embed_tokens":
        return "embedding"
    if name == "lm_head":
        return "head"
    for index, linear in enumerate(LINEARS):
        prefix, _, suffix = name.partition(f".{linear}")
        if prefix.startswith("model.layers.") and not suffix and name.endswith(linear):
            return (int(prefix.removeprefix("model.layers.")), index)
    return None


def measured_uses(rank: int, args: argparse.Namespace, config: dict[str, Any]) -> Uses:
    """Rank `rank`'s gathered elements at each use of each traced module, second step."""
    import deepspeed
    from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
    from transformers import LlamaConfig, LlamaForCausalLM

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29561", RANK=str(rank),
                      WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank))
    deepspeed.init_distributed(dist_backend="gloo")
    ds_config = {"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
                 "zero_allow_untested_optimizer": True, "zero_force_ds_cpu_optimizer": False,
                 "zero_optimization": {
                     "stage": 3, "stage3_max_live_parameters": int(args.live),
                     "stage3_max_reuse_distance": int(args.reuse),
                     "stage3_prefetch_bucket_size": int(args.prefetch)}}
    llama = LlamaConfig(**{k: v for k, v in config.items() if k != "model_type"})
    llama._attn_implementation = "sdpa"
    with deepspeed.zero.Init(config_dict_or_path=ds_config):
        model = LlamaForCausalLM(llama)
    if args.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    engine, *_ = deepspeed.initialize(model=model, config=ds_config,
                                      optimizer=torch.optim.AdamW(model.parameters()))
    traced = [p for p in model.parameters() if not p.ds_persist]
    uses: Uses = defaultdict(list)
    recording = [False]

    def record(key: Hashable) -> None:
        if recording[0]:
            uses[key].append(sum(p.ds_numel for p in traced
                                 if p.ds_status != ZeroParamStatus.NOT_AVAILABLE))

    for name, module in model.named_modules():
        key = trace_key(name)
        if key is not None:
            module.register_forward_pre_hook(lambda *_, key=key: record(key))
            module.register_full_backward_pre_hook(lambda *_, key=key: record(key))
    ids = torch.randint(0, config["vocab_size"], (1, 64))
    for step in range(2):
        recording[0] = step == 1
        engine.backward(engine(ids, labels=ids).loss)
        engine.step()
    torch.distributed.barrier()
    return uses


def replayed_uses(args: argparse.Namespace, config: dict[str, Any]) -> Uses:
    arch = parse_config(config)
    checkpointing = Checkpointing.FULL if args.checkpointing else Checkpointing.NONE
    step = _TracedStep(Method.FULL, Quant.NONE, Precision.MIXED, checkpointing, arch.n_layers,
                       True)
    trace, _, _ = _zero3_trace(arch, step, 1)
    buffers = CommBuffers(zero3_max_live_parameters=int(args.live),
                          zero3_max_reuse_distance=int(args.reuse),
                          zero3_prefetch_bucket_elements=int(args.prefetch))
    coordinator = Zero3Coordinator(trace, buffers)
    uses: Uses = defaultdict(list)
    for index, use in enumerate(trace):
        uses[use.key].append(coordinator.use(index)[0])
    return uses


def _run(rank: int, args: argparse.Namespace, config: dict[str, Any]) -> None:
    measured = measured_uses(rank, args, config)
    if rank == 0:
        _print(measured, replayed_uses(args, config), args.layers)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def _print(measured: Uses, replayed: Uses, layers: int) -> None:
    keys = ["embedding", *((layer, 0) for layer in range(layers)), "head"]
    print("module        use  DeepSpeed (M)  replay (M)")
    for key in keys:
        for use, (ds, ours) in enumerate(zip(measured[key], replayed[key], strict=False)):
            print(f"{key!s:12} {use:4}  {ds / 1e6:12.2f}  {ours / 1e6:10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--live", type=float, default=2.8e7)
    parser.add_argument("--reuse", type=float, default=2.8e7)
    parser.add_argument("--prefetch", type=float, default=1.4e6)
    parser.add_argument("--checkpointing", action="store_true")
    args = parser.parse_args()
    config = {**CONFIG, "num_hidden_layers": args.layers}
    mp.spawn(_run, args=(args, config), nprocs=WORLD)


if __name__ == "__main__":
    main()
