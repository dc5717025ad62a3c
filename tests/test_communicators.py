"""NCCL's communicators: the groups each data-parallel layout opens on a GPU, and the device
memory they hold outside PyTorch's allocator (NVIDIA/nccl issue #964: 544 MB for a group of 2
ranks, 688 MB for more, on A100s over NVLink)."""

from __future__ import annotations

import pytest

from vramplan.distributed.communicators import communicator_bytes, communicator_sizes
from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu, overhead_parts
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.setup import TrainingSetup
from vramplan.units import BYTES_PER_MIB
from vramplan.vocab import Method, Metric, Scheme


@pytest.mark.parametrize(("plan", "sizes"), [
    (Parallelism(Scheme.NONE, gpus=1), ()),
    (Parallelism(Scheme.DDP, gpus=8), (8,)),
    (Parallelism(Scheme.FSDP, gpus=2), (2,)),
    # DeepSpeed's clone of the world group beside the world group
    (Parallelism(Scheme.ZERO3, gpus=8), (8, 8)),
    (Parallelism(Scheme.ZERO2, gpus=2), (2, 2)),
    # HSDP over 2 nodes of 8: shard group of 8, replicate group of 2
    (Parallelism(Scheme.HSDP, gpus=16, gpus_per_node=8), (16, 8, 2)),
    # Megatron-LM: tensor 4 x pipeline 2 x data 2 (the pipeline and data groups have 2 ranks)
    (Parallelism(Scheme.DDP, gpus=16, tensor_parallel=4, pipeline_parallel=2), (16, 4, 2, 2)),
])
def test_each_layout_opens_its_groups(plan: Parallelism, sizes: tuple[int, ...]) -> None:
    assert communicator_sizes(plan) == sizes


def test_a_pair_holds_less_than_a_larger_group() -> None:
    assert communicator_bytes(Parallelism(Scheme.ZERO3, gpus=2)) == 2 * 544 * BYTES_PER_MIB
    assert communicator_bytes(Parallelism(Scheme.ZERO3, gpus=8)) == 2 * 688 * BYTES_PER_MIB
    assert communicator_bytes(Parallelism(Scheme.NONE, gpus=1)) == 0


@pytest.mark.parametrize("metric", list(Metric))
def test_only_the_device_metric_counts_the_communicators(metric: Metric) -> None:
    arch = architecture_of(find_model("qwen2.5-0.5b"))
    setup = TrainingSetup(method=Method.FULL, batch=1, seq_len=256, metric=metric)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.DDP, 4))
    nccl = 688 * BYTES_PER_MIB
    assert estimate.communicator_bytes == nccl
    assert estimate.device_bytes - estimate.reserved_bytes - estimate.managed_bytes == \
        nccl + 500 * BYTES_PER_MIB  # the communicator and the CUDA context
    parts = dict(overhead_parts(estimate))
    assert parts.get("fit.nccl", 0) == (nccl if metric is Metric.DEVICE else 0)
    assert sum(parts.values()) == estimate.total_bytes - estimate.allocated_bytes
