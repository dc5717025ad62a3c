"""DeepSpeed's dated changes that move memory (the offloaded step, gathers on one rank,
prefetched parameters kept, the overflow check on the device)."""

from __future__ import annotations

from datetime import date

DEEPSPEED_OFFLOAD_STEP_ON_GPU = (date(2024, 4, 14), date(2025, 5, 27))
"""deepspeedai/DeepSpeed 7b5b06602 ("fix pagable h2d memcpy", #5301, in v0.14.1) to 17c8be070
("Fix the GPU memory usage of ZeRO-Offload", #7309, in v0.17.0): ZeRO-1/2 with the optimizer on
the host brings the updated fp32 partition to the GPU before casting it into the 16-bit
partition (stage_1_and_2.py `step`: `copy_(fp32_partition.to(current_device_name()).data)`,
read at v0.14.2); #7309: "the memory usage is about 3x that of params_FP16", since then the
cast goes through a pinned 16-bit host buffer. Before #5301 `copy_(fp32_partition.data)` cast
on the host."""

DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE = date(2023, 4, 7)
"""deepspeedai/DeepSpeed 4d27225f3 (v0.9.0, "zero.Init() should pin params in GPU memory as
requested"): ZeRO-3 on one rank fetches a parameter without an all-gather
(partition_parameters.py `all_gather_coalesced`: `if self.world_size == 1: return
_no_gather_coalesced(params)`; `num_partitions` since v0.9.2; the same at edaa7221)."""

DEEPSPEED_RETAINS_PREFETCHED_SINCE = date(2022, 7, 13)
"""deepspeedai/DeepSpeed 2a1a40964 ("Retain available params until last use", #2016, first
released in v0.6.6 of 2022-07-13): ZeRO-3's coordinator keeps a parameter whose later use its
prefetch walked past until that use (partitioned_param_coordinator.py `__params_to_release`:
`__most_recent_step_id_param_fetched_for[param] > step_id`), so it holds about
`stage3_max_live_parameters` once its prefetches have filled it
(`vramplan.distributed.zero3_coordinator.Zero3Coordinator`). Before it, only the reuse distance kept
a parameter."""

DEEPSPEED_OVERFLOW_CHECK_ON_DEVICE_SINCE = date(2024, 2, 15)
"""deepspeedai/DeepSpeed 1c9e5ef2d (v0.13.3, "Check overflow on device without host
synchronization for each tensor", #5115): ZeRO-1/2's `_has_inf_or_nan` builds masks on the device
(`vramplan.distributed.sharding.OVERFLOW_CHECK_BYTES` per value) where `float(x.float().sum())`
made the fp32 copy alone; the same at edaa7221."""
