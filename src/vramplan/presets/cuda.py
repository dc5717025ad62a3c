"""What a CUDA process holds on the device outside PyTorch's allocator: one constant for the
training, per-GPU and inference estimates alike."""

from __future__ import annotations

from vramplan.presets.gpus import Gpu
from vramplan.units import BYTES_PER_MIB

CUDA_CONTEXT_BYTES = 500 * BYTES_PER_MIB
"""The CUDA context, kernels and cuBLAS/cuDNN workspaces that nvidia-smi counts and
`torch.cuda.max_memory_allocated` does not. It depends on the GPU, driver, CUDA version and loaded
libraries (lazy module loading, CUDA_MODULE_LOADING=LAZY, is the default since CUDA 11.7 with
PyTorch 1.13): reports run from about 300 MiB to over 1 GiB (pytorch/pytorch issue #34323: 781 MB
for a bare `torch.zeros(1).cuda()`; the PyTorch note on torch.cuda.memory_allocated: "some context
needs to be created on GPU"). 500 MiB is a middle value of that 300 MiB to 1 GiB range, which the
inference report prints beside it.

Published pairs of the allocator's and the device's figures for one process (collected
2026-12-02): with lazy loading, 254 MiB for a bare tensor against 616 MiB without it on the same
machine (pytorch/pytorch PR #86509, CUDA 11.7), about 300 MiB after moving a ResNet (issue
#107667), 0.15 GiB on a GTX 1080 and 0.73 GiB on an H200 with flash-attention loaded (vLLM
0.6.4's `non_torch_memory` in published logs): 150 to 750 MiB, 500 MiB inside it. Before lazy
loading (PyTorch 1.12 and older) 0.9 to 1.5 GiB (issue #49877: 1,486 MiB on an RTX 3090). NVML's
device-wide `used` (py3nvml; nvidia-smi's header on some drivers) also counts the driver's
reserved memory: optimum-benchmark's A100-80GB reports of 2023 (torch 2.1) read 1,403 to 1,428
MiB above `max_memory_reserved`, which optimum's GPTQ-benchmark rows in cases_vramplan.csv show
too (the estimate of their allocated peak sits about 1.4 GB under a figure that adds it)."""

NCCL_PAIR_COMMUNICATOR_BYTES = 544 * BYTES_PER_MIB
"""What one NCCL communicator of 2 ranks holds on each GPU once it has run a collective: its
channels' buffers (NCCL_BUFFSIZE per protocol, per channel, per peer), outside PyTorch's
allocator, so nvidia-smi counts it and `max_memory_reserved` does not. Measured by a PyTorch user
on 4 A100s linked by NVLink, one all-reduce per group: 544 MB for a group of 2 ranks, 688 MB for
groups of more (NVIDIA/nccl issue #964, 2023-08; read as MiB, the unit nvidia-smi prints). It
grows with the channels NCCL opens, which depend on the links (NVIDIA/nccl issue #986, NCCL's
author: "the memory usage is linearly tied to the number of channels"; fewer over PCIe), and with
send/receive or all-to-all traffic, which connects more peers (issue #1685: 4.3 GB after an
all-to-all on 8 H100s)."""

NCCL_COMMUNICATOR_BYTES = 688 * BYTES_PER_MIB
"""One NCCL communicator of more than 2 ranks, on each GPU (`NCCL_PAIR_COMMUNICATOR_BYTES`)."""


DRIVER_RESERVE_BYTES: dict[str, int] = {
    # rust-nvml/nvml-wrapper issue #57 (2024-03-25): on "our A100s" (the size is not said),
    # `nvmlDeviceGetMemoryInfo` gave 912 MB used with no process, its v2 7.8 MB. They are the
    # 80 GB ones: PyTorch's out-of-memory message gives an A100 80GB "a total capacity of
    # 79.15 GiB" (`cudaDeviceProp.totalGlobalMem`), 912.7 MB under the 81,920 MiB nvidia-smi
    # shows (modal-labs/modal-client PR #2797). optimum-benchmark's A100-80GB reports of late
    # 2023 (py3nvml, torch 2.1) read 1,403 to 1,428 MiB above `max_memory_reserved`: this
    # reserve plus `CUDA_CONTEXT_BYTES` is 1,362 MiB. The A100 40GB is left out: PyTorch's
    # messages give it 39.39 and 39.50 GiB, drivers apart.
    "a100-80gb": 904_200_000,
    # mayooot/detect-gpu issue #3 (2025-04-22), driver 535.129.03: two A10s with no process,
    # NVML v1 used 541,917,184 bytes each; on a third, a process of 706,740,224 bytes and
    # 1,257,242,624 used (550,502,400 beside it).
    "a10-24gb": 541_917_184,
}
"""What the driver sets aside on a card and NVML's first memory query counts as used
(nvml.h, `nvmlMemory_t.used`: "Sum of Reserved and Allocated device memory"), measured on an
idle card, in bytes, by catalogue name. CUDA never hands it out (`free_at_load_bytes`).
`nvidia-smi` (drivers R510 and later), `nvmlDeviceGetMemoryInfo_v2` and `torch.cuda.mem_get_info`
leave it out of used memory: a figure counts it only when read through the v1 query, as py3nvml
reads it (optimum-benchmark issue #31, 2023-08-18: "py3nvml measures reserved and not used
memory"; `vramplan.validation.notes.NVML_V1_NOTE`). It depends on the driver; the cards without
a published figure are absent."""


CUDA_TOTAL_BYTES: dict[str, int] = {
    # PyTorch's out-of-memory message prints `total_memory` (cudaDeviceProp.totalGlobalMem) in
    # GiB to two decimals ("GPU 0 has a total capacity of 14.75 GiB", "(GPU 0; 22.19 GiB total
    # capacity; ...)"); each figure below is one such message from a post that names the card,
    # kept in whole MiB. Newer drivers print a little less (T4: 14.75, 14.74, then 14.56 GiB in
    # 2025; A10G: 22.19 in 2023, 21.99 in 2024): the earlier figures are kept, about 0.2 GiB.
    # GDDR data-center cards lose a sixteenth to ECC (a T4's nvidia-smi total is 15,360 MiB).
    "t4-16gb": 15_104 * BYTES_PER_MIB,  # 14.75 GiB, Colab T4: hpcaitech/Open-Sora #697 (2024-09-09)
    "a10g-24gb": 22_723 * BYTES_PER_MIB,  # 22.19 GiB, ml.g5.12xlarge: vllm-project/vllm #372
    "a10-24gb": 22_579 * BYTES_PER_MIB,  # 22.05 GiB, "GPU: A10": InternLM/InternLM #71
    "l40s-48gb": 45_599 * BYTES_PER_MIB,  # 44.53 GiB, "GPU:L40S 48GB": Wan-Video/Wan2.1 #205
    "l40-48gb": 45_466 * BYTES_PER_MIB,  # 44.40 GiB, an L40: QwenLM/Qwen3-VL #2097
    "rtx-6000-ada-48gb": 45_496 * BYTES_PER_MIB,  # 44.43 GiB: DINGYANB/MTVCrafter #21
    "rtx-a6000-48gb": 48_681 * BYTES_PER_MIB,  # 47.54 GiB, 8x RTX A6000: vllm-project/vllm #4417
    "rtx-3090-24gb": 24_259 * BYTES_PER_MIB,  # 23.69 GiB, driver 545.23.08: vllm #2140
    "rtx-4090-24gb": 24_218 * BYTES_PER_MIB,  # 23.65 GiB, two 4090s: brjathu/LART #8
    "v100-32gb": 32_502 * BYTES_PER_MIB,  # 31.74 GiB, "V100 32GB": liucongg/ChatGLM-Finetuning #73
    "a100-40gb": 40_509 * BYTES_PER_MIB,  # 39.56 GiB, A100-SXM4-40GB: threestudio-project #402
    "a100-80gb": 81_050 * BYTES_PER_MIB,  # 79.15 GiB, "A100 80GB": vllm-project/vllm #4408
    "h100-80gb": 81_009 * BYTES_PER_MIB,  # 79.11 GiB, H100 80GB HBM3: vllm-project/vllm #27508
    "h100-nvl-94gb": 95_252 * BYTES_PER_MIB,  # 93.02 GiB, 2x H100 NVL: vllm-project/vllm #16712
    "h200-141gb": 143_165 * BYTES_PER_MIB,  # 139.81 GiB, driver 570.148.08: vllm #34553
    # no PyTorch figure found for the L4: its nvidia-smi total (modal-labs/modal-client PR
    # #2797, "L4: 23034MiB"), an upper bound (the A10's is 23,028 MiB for 22.05 GiB in CUDA)
    "l4-24gb": 23_034 * BYTES_PER_MIB,
}
"""What CUDA gives a process on each card in all (`torch.cuda.get_device_properties().
total_memory`, `cudaMemGetInfo`'s total), by catalogue name: the marketed memory less ECC's share
on GDDR data-center cards and the driver's reserve. No process holds more: an out-of-memory
verdict and the caching allocator's reserved peak are bounded by it (`cuda_total_bytes`)."""


def published_cuda_total_bytes(gpu: Gpu) -> int | None:
    """What CUDA hands out on `gpu` where a figure is published: its `total_memory`
    (`CUDA_TOTAL_BYTES`), or its capacity less the driver's reserve (`DRIVER_RESERVE_BYTES`);
    None for a card with neither."""
    total = CUDA_TOTAL_BYTES.get(gpu.name)
    if total is not None:
        return total
    reserve = DRIVER_RESERVE_BYTES.get(gpu.name)
    return gpu.capacity_bytes - reserve if reserve is not None else None


def cuda_total_bytes(gpu: Gpu) -> int:
    """All the memory CUDA hands out on `gpu`: its published total (`CUDA_TOTAL_BYTES`), else
    its capacity less the driver's reserve where that is published (`DRIVER_RESERVE_BYTES`),
    else its marketed capacity (an upper bound)."""
    published = published_cuda_total_bytes(gpu)
    return published if published is not None else gpu.capacity_bytes


def free_at_load_bytes(gpu: Gpu) -> int:
    """What `gpu` has free when a process loads its model (`torch.cuda.mem_get_info`): all
    that CUDA hands out (`cuda_total_bytes`) but the CUDA context."""
    return cuda_total_bytes(gpu) - CUDA_CONTEXT_BYTES
