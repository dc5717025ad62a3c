"""What a CUDA process holds on the device outside PyTorch's allocator: one constant for the
training, per-GPU and inference estimates alike."""

from __future__ import annotations

from vramplan.units import BYTES_PER_MIB

CUDA_CONTEXT_BYTES = 500 * BYTES_PER_MIB
"""The CUDA context, kernels and cuBLAS/cuDNN workspaces that nvidia-smi counts and
`torch.cuda.max_memory_allocated` does not. It depends on the GPU, driver, CUDA version and loaded
libraries (lazy module loading, CUDA_MODULE_LOADING=LAZY, is the default since CUDA 11.7 with
PyTorch 1.13): reports run from about 300 MiB to over 1 GiB (pytorch/pytorch issue #34323: 781 MB
for a bare `torch.zeros(1).cuda()`; the PyTorch note on torch.cuda.memory_allocated: "some context
needs to be created on GPU"). 500 MiB is a middle value of that 300 MiB to 1 GiB range, which the
inference report prints beside it. No measured case in cases.csv backs it yet."""
