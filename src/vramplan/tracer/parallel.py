"""Several GPUs in one process: rank 0 of a data-parallel run under torch.distributed's fake
process group, on fake tensors, so the per-GPU memory of DDP, FSDP1 and FSDP2 is counted by the
same tracker as a single GPU's.

The recipe is torchtitan's memory estimator (scripts/estimate/estimation.py, until torchtitan
9810191b): `init_process_group("fake", rank=0, world_size=N, store=FakeStore())` (collectives
return at once and move no data), the device mesh built outside the fake tensor mode, the
model wrapped and stepped inside it. What each scheme needs:

- FSDP2 (`fully_shard`): every transformer block, then the root (PyTorch's defaults:
  `reshard_after_forward` True for the blocks, False for the root); its parameters become
  DTensor shards, which the tracker follows to their local tensors.
- FSDP1 (`FullyShardedDataParallel`, FULL_SHARD): one unit per transformer block and the root;
  for LoRA, either peft's `fsdp_auto_wrap_policy` (each trainable adapter layer in a unit of its
  own, as the Hugging Face Trainer installs it: blocks then hold frozen weights only) or the
  blocks as units mixing frozen and trainable weights (litgpt's `auto_wrap_policy={Block}`,
  which needs `use_orig_params=True`).
- `amp` (fp32 weights, bf16 autocast) under FSDP: accelerate's mixed-precision policy, bf16
  parameters, gradient reduction and buffers (`FullyShardedDataParallelPlugin
  .set_mixed_precision`: `MixedPrecision(param_dtype=dtype, reduce_dtype=dtype,
  buffer_dtype=dtype)`; FSDP2 `MixedPrecisionPolicy(param_dtype, reduce_dtype)`), so FSDP
  gathers bf16 copies of the fp32 shards.
- DDP: its reducer reads tensor data when it rebuilds its buckets at the start of the second
  iteration and when it checks parameter shapes across ranks, which fake tensors cannot give;
  so the first step runs on the bare model (it creates the optimizer states), the model is
  wrapped with the checks skipped (they compare and broadcast values; they allocate nothing that
  stays), and the reported second step is DDP's first, with the buckets allocated at wrapping
  (their total, the gradients' size, does not change when they are rebuilt), and a communication
  hook that hands back the bucket (the fake group's all-reduce returns no value).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from vramplan.tracer.model import transformer_blocks
from vramplan.tracer.setup import TraceSetup
from vramplan.vocab import FsdpVersion, Precision, Scheme


@dataclass
class ParallelWorld:
    """The fake process group of a traced data-parallel run (or none, on one GPU)."""

    setup: TraceSetup
    mesh: Any = None

    @property
    def scheme(self) -> Scheme:
        return self.setup.sharding

    def shard(self, model: nn.Module) -> nn.Module:
        """Wrap `model` as FSDP does (before the optimizer is made: it takes the shards)."""
        if self.scheme is not Scheme.FSDP:
            return model
        if self.setup.fsdp_version is FsdpVersion.FSDP2:
            return _fully_shard(model, self.mesh, self.setup)
        return _fsdp1(model, self.setup)

    def before_reported_step(self, model: nn.Module) -> nn.Module:
        """DDP wraps the model before the reported step (see the module docstring)."""
        if self.scheme is not Scheme.DDP:
            return model
        return _ddp(model)


@contextlib.contextmanager
def parallel_world(setup: TraceSetup) -> Iterator[ParallelWorld]:
    """A fake process group of `setup.gpus` ranks, this process being rank 0 (none on one GPU).
    Enter it outside the fake tensor mode: the device mesh is built from real tensors."""
    if setup.gpus == 1 or setup.sharding is Scheme.NONE:
        yield ParallelWorld(setup)
        return
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", rank=0, world_size=setup.gpus, store=FakeStore())
    try:
        yield ParallelWorld(setup, init_device_mesh("cpu", (setup.gpus,)))
    finally:
        dist.destroy_process_group()


def _fully_shard(model: nn.Module, mesh: Any, setup: TraceSetup) -> nn.Module:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16) \
        if setup.precision is Precision.AMP else MixedPrecisionPolicy()
    for block in transformer_blocks(model):
        fully_shard(block, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    return model


def _fsdp1(model: nn.Module, setup: TraceSetup) -> nn.Module:
    from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    block_class = type(transformer_blocks(model)[0])
    if setup.uses_lora and setup.peft_wrap:
        from peft.utils.other import fsdp_auto_wrap_policy

        policy: Any = fsdp_auto_wrap_policy(model)  # type: ignore[no-untyped-call]
    else:
        policy = ModuleWrapPolicy({block_class})
    # a unit mixing frozen and trainable weights needs use_orig_params=True
    mixed_units = setup.uses_lora and not setup.peft_wrap
    bf16 = torch.bfloat16
    mixed_precision = MixedPrecision(param_dtype=bf16, reduce_dtype=bf16, buffer_dtype=bf16) \
        if setup.precision is Precision.AMP else None
    return FullyShardedDataParallel(model, auto_wrap_policy=policy,
                                    mixed_precision=mixed_precision,
                                    device_id=torch.device("cpu"),
                                    use_orig_params=mixed_units or not setup.uses_lora)


def _ddp(model: nn.Module) -> nn.Module:
    import torch.nn.parallel.distributed as ddp_module

    with _skipped(ddp_module, "_verify_param_shape_across_processes", "_sync_module_states"):
        wrapped = nn.parallel.DistributedDataParallel(model)

    def hand_back(state: object, bucket: Any) -> torch.futures.Future[torch.Tensor]:
        future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
        future.set_result(bucket.buffer())
        return future

    # DDP checks the hook's annotations as objects, which postponed annotations make strings
    from torch.distributed import GradBucket  # type: ignore[attr-defined]

    hand_back.__annotations__ = {"state": object, "bucket": GradBucket,
                                 "return": torch.futures.Future[torch.Tensor]}
    wrapped.register_comm_hook(None, hand_back)
    return wrapped


@contextlib.contextmanager
def _skipped(module: Any, *names: str) -> Iterator[None]:
    originals = {name: getattr(module, name) for name in names}
    for name in names:
        setattr(module, name, lambda *args, **kwargs: None)
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(module, name, original)
