"""FSDP1's gradients between `no_sync` micro-batches, in torch itself and in the model.

Run on the CPU under torch.distributed's fake process group (two ranks, as the tracer's
`vramplan.tracer.parallel` runs it): no GPU needed."""

from __future__ import annotations

import pytest

from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.sharding import shard_model_states
from vramplan.training.states import ModelStates
from vramplan.vocab import FsdpVersion, Scheme

torch = pytest.importorskip("torch")


def test_fsdp1_keeps_no_sync_gradients_of_fp32_parameters_whole_in_bf16() -> None:
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", rank=0, world_size=2, store=FakeStore())
    try:
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))
        params = sum(p.numel() for p in model.parameters())
        fsdp = FullyShardedDataParallel(
            model, device_id=torch.device("cpu"),
            mixed_precision=MixedPrecision(param_dtype=torch.bfloat16,
                                           reduce_dtype=torch.bfloat16))
        flat = next(fsdp.parameters())
        assert flat.dtype is torch.float32 and flat.numel() == params // 2
        with fsdp.no_sync():
            fsdp(torch.randn(8, 64)).sum().backward()
        # the whole gradient, in the gathered copies' dtype
        assert flat.grad.dtype is torch.bfloat16 and flat.grad.numel() == params
        kept = flat.grad.numel() * flat.grad.element_size()
        fsdp(torch.randn(8, 64)).sum().backward()
        # synced: this rank's fp32 shard
        assert flat.grad.dtype is torch.float32 and flat.grad.numel() == params // 2
    finally:
        dist.destroy_process_group()
    amp = ModelStates(
        trainable_params=params, frozen_params=0, trainable_weight_bytes=4 * params,
        frozen_weight_bytes=0, gradient_bytes=4 * params, master_weight_bytes=0,
        optimizer_state_bytes=8 * params, weight_itemsize=4, gradient_itemsize=4,
        largest_layer_params=params // 2, block_params=params // 2, root_params=0,
    )
    plan = Parallelism(scheme=Scheme.FSDP, gpus=2, fsdp_version=FsdpVersion.FSDP1,
                       accumulate_without_sync=True, params_cast_for_compute=True)
    assert shard_model_states(amp, plan).gradients_bytes == kept
