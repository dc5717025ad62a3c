"""The NCCL communicators a data-parallel run opens on each GPU, and the device memory they hold
outside PyTorch's allocator (`vramplan.presets.cuda.NCCL_COMMUNICATOR_BYTES`): nvidia-smi
counts it, the `device` metric includes it.

PyTorch creates a process group's NCCL communicator on a device at the group's first collective
(torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp `getNCCLComm`), one per group that runs
collectives:
- the world group, which every training loop uses (DDP's and FSDP's collectives, accelerate's
  barriers and the loss it gathers for logging);
- DeepSpeed's ZeRO runs its collectives in a clone of the world group (deepspeed/utils/groups.py
  `_clone_world_group`, the data-parallel group when no model-parallel unit is given);
- HSDP shards within a node and replicates across nodes, two groups besides the world
  (torch/distributed/fsdp/_init_utils.py `_init_intra_and_inter_node_groups`);
- tensor and pipeline parallelism open their own groups (Megatron-LM
  megatron/core/parallel_state.py `initialize_model_parallel`), and the data-parallel group
  beside them.
"""

from __future__ import annotations

from vramplan.distributed.parallelism import Parallelism
from vramplan.presets.cuda import NCCL_COMMUNICATOR_BYTES, NCCL_PAIR_COMMUNICATOR_BYTES
from vramplan.vocab import Scheme

_ZERO = frozenset({Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3})


def communicator_sizes(plan: Parallelism) -> tuple[int, ...]:
    """The ranks of each communicator one GPU of `plan` holds (none on one GPU)."""
    if plan.gpus <= 1:
        return ()
    sizes = [plan.gpus]  # the world group
    if plan.scheme in _ZERO:
        sizes.append(plan.data_parallel)
    if plan.scheme is Scheme.HSDP:
        nodes = -(-plan.gpus // plan.ranks_per_node)
        sizes += [plan.ranks_per_node, nodes]
    if plan.tensor_parallel > 1 or plan.pipeline_parallel > 1:
        sizes += [plan.tensor_parallel, plan.pipeline_parallel, plan.data_parallel]
    return tuple(size for size in sizes if size > 1)


def communicator_bytes(plan: Parallelism) -> int:
    """What the communicators of `plan` hold on one GPU."""
    return sum(NCCL_PAIR_COMMUNICATOR_BYTES if size == 2 else NCCL_COMMUNICATOR_BYTES
               for size in communicator_sizes(plan))
