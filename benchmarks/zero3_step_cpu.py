"""DeepSpeed ZeRO-3's gathered parameters over a training step, measured on the CPU and replayed
by `vramplan.distributed.zero3_coordinator.Zero3Coordinator`.

Two ranks over gloo train a small Llama under ZeRO-3 (bf16, built inside `zero.Init`, the
coordinator's trace recorded by a first step). On rank 0, a hook placed after DeepSpeed's on the
embedding, every linear and the head reads, at each forward and backward use, how many parameter
elements the coordinator holds gathered (`ds_status` other than NOT_AVAILABLE: the fetched, the
prefetched in flight and the kept). The replay walks vramplan's module trace of the same model
(`per_gpu._zero3_trace`) with the same `stage3_*` keys. Printed: both counts at each use of
every block's first linear, of the embedding and of the head. Then the step's memory: every
storage alive before the second step (the partitions, fp32 masters, Adam states, the gradient
bucket) plus the most the step's ops hold at once (the tracer's `StorageTracker`), in
forward, backward and the optimizer step, beside `estimate_per_gpu`'s allocated peak by phase
for the same run (the CPU has no caching allocator: its live storages are what `allocated` counts).

The keys are scaled down with the model so that the coordinator's limits bind as they do on a
billion-parameter model with DeepSpeed's defaults (1e9 live, 1e9 reuse distance, 5e7 prefetch).
Measured on 2026-12-05 (torch 2.13.0+cpu, transformers 5.25.0, DeepSpeed 0.19.8), 16 blocks of
hidden size 1,024 (222 M parameters), 2.8e7 live, 2.8e7 reuse distance, 1.4e6 prefetch: the counts
agree over the loss (29.69 M) and through the backward (29.62 M a block, 34.93 M at the third
block, 22.09, 9.24 and 8.19 M at the end) but at its first block (29.62 against 26.74 M); in
forward's steady state the replay holds one attention linear fewer (27.79 against 28.84 M), and
DeepSpeed reaches that state in the first block where the replay takes five: each module DeepSpeed
enters, containers and norms included, issues a prefetch (one more overshoot), where the trace has
the linears only; a replay over DeepSpeed's module list (the block, its norms, the attention and
MLP modules, the activation) matches at every block but the first. Four blocks at DeepSpeed's
default limits, 4 x 512 tokens (`--layers 4 --live 1e9 --reuse 1e9 --prefetch 5e7 --batch 4
--tokens 512`): measured 2,140.9 / 2,172.1 / 1,858.6 MiB in forward, backward and the step,
estimated 2,171.8 (the loss) / 2,203.1 / 1,889.8 MiB, +1.4 to +1.7 % (+10.2 % in backward before
the coordinator's retention was replayed: it holds the whole model there, gathered once, where the
estimate had added two prefetch buckets). The 16 blocks at 2 x 512 tokens (`--batch 2 --tokens
512`): 3,526.7 / 3,542.3 / 3,917.0 MiB measured, 3,541.9 / 3,557.6 / 3,932.5 estimated, +0.4 %
(each storage rounded up to 512 bytes, as the CUDA allocator's blocks are); with `--checkpointing`
forward and step +0.5 and +0.4 %, but backward's own peak (3,509.3 MiB) is the gradient bucket's
one reduction after backward, the whole model's gradients never having filled the 5e8-element
bucket: `torch.cat` of its partitions (and on gloo a copy of the split), 2 x 423 MiB, which the
estimate leaves out (`zero3_reduce_transient_bytes`: "once the activations are freed"); the step's
peak is above it. Never part of the tests (DeepSpeed is not a dependency).
Run: `python -m venv /tmp/ds && /tmp/ds/bin/pip install torch==2.13.0 transformers==5.25.0
deepspeed==0.19.8 && PYTHONPATH=src /tmp/ds/bin/python benchmarks/zero3_step_cpu.py
[--layers 16] [--live 2.8e7] [--reuse 2.8e7] [--prefetch 1.4e6] [--checkpointing] [--batch 1]
[--tokens 64]`.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

import torch
import torch.multiprocessing as mp

from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.parallelism import CommBuffers
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.distributed.zero3_coordinator import Zero3Coordinator
from vramplan.distributed.zero3_run import _TracedStep, _zero3_trace
from vramplan.model.hf_config import parse_config
from vramplan.tracer.result import Phase
from vramplan.tracer.tracker import StorageTracker
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import (
    Checkpointing,
    Framework,
    Method,
    Metric,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)

CONFIG: dict[str, Any] = {
    "model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
    "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 8000,
    "max_position_embeddings": 512, "tie_word_embeddings": False, "rms_norm_eps": 1e-5}
LINEARS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
"""The order of `Architecture.block_linears()` for a Llama block."""
WORLD = 2
Uses = dict[Hashable, list[int]]
MIB = 2**20


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


def measured_uses(rank: int, args: argparse.Namespace,
                  config: dict[str, Any]) -> tuple[Uses, dict[str, int]]:
    """Rank `rank`'s gathered elements at each use of each traced module in the second step,
    and the bytes alive at the peak of its forward, backward and optimizer step."""
    import gc

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
    ids = torch.randint(0, config["vocab_size"], (args.batch, args.tokens))
    engine.backward(engine(ids, labels=ids).loss)
    engine.step()
    recording[0] = True
    gc.collect()
    tracker = StorageTracker()
    for tensor in gc.get_objects():
        if isinstance(tensor, torch.Tensor):
            tracker.exclude(tensor)  # counted once, as what the step starts from
    before = tracker.excluded_bytes
    tracker.start_recording()
    with tracker:
        tracker.start_phase(Phase.FORWARD)
        loss = engine(ids, labels=ids).loss
        tracker.start_phase(Phase.BACKWARD)
        engine.backward(loss)
        tracker.start_phase(Phase.OPTIMIZER_STEP)
        engine.step()
    peaks = {peak.phase.value: before + peak.peak_bytes for peak in tracker.phase_peaks()}
    torch.distributed.barrier()
    return uses, peaks


def estimated_phases(args: argparse.Namespace, config: dict[str, Any]) -> dict[str, int]:
    """`estimate_per_gpu`'s allocated bytes by phase for the measured run: DeepSpeed's bf16
    (16-bit weights, fp32 masters), a client AdamW stepping in a loop (the CPU's default)."""
    arch = parse_config(config)
    setup = TrainingSetup(precision=Precision.MIXED, optimizer=Optimizer.ADAMW,
                          optimizer_impl=OptimizerImpl.FOR_LOOP, batch=args.batch,
                          seq_len=args.tokens, framework=Framework.DEEPSPEED,
                          checkpointing=Checkpointing.FULL if args.checkpointing
                          else Checkpointing.NONE, metric=Metric.ALLOCATED,
                          gradient_accumulation=False)
    plan = default_parallelism(setup, Scheme.ZERO3, WORLD)
    buffers = CommBuffers(zero3_max_live_parameters=int(args.live),
                          zero3_max_reuse_distance=int(args.reuse),
                          zero3_prefetch_bucket_elements=int(args.prefetch))
    plan = replace(plan, buffers=replace(plan.buffers, **{
        name: getattr(buffers, name) for name in (
            "zero3_max_live_parameters", "zero3_max_reuse_distance",
            "zero3_prefetch_bucket_elements")}))
    estimate = estimate_per_gpu(arch, setup, plan)
    return {phase.phase.value: phase.total_bytes for phase in estimate.phases}


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
    measured, peaks = measured_uses(rank, args, config)
    if rank == 0:
        _print(measured, replayed_uses(args, config), args.layers)
        print("\nmeasured (MiB):", {phase: round(n / MIB, 1) for phase, n in peaks.items()})
        print("estimated (MiB):", {phase: round(n / MIB, 1)
                                   for phase, n in estimated_phases(args, config).items()})
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
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    config = {**CONFIG, "num_hidden_layers": args.layers}
    mp.spawn(_run, args=(args, config), nprocs=WORLD)


if __name__ == "__main__":
    main()
