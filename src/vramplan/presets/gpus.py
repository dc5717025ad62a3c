"""The GPU catalogue: memory as sold, with the vendor page it comes from.

Vendors sell memory in binary units labelled "GB": an "80 GB" H100 holds 80 GiB (80 * 2**30 bytes).
`memory_gib` is that marketed figure, read as GiB. What a program can allocate is a little less (the
CUDA context, ECC and driver reservations); the detailed mode accounts for that, the seed mode
does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vramplan.units import BYTES_PER_GIB


@dataclass(frozen=True, slots=True)
class Gpu:
    """One accelerator model."""

    name: str
    """Catalogue name: lowercase kebab-case with the memory size (`h100-80gb`)."""
    display_name: str
    vendor: str
    memory_gib: int
    """Memory as marketed ("80 GB"), which is 80 GiB."""
    source: str
    common: bool = False
    """Shown by default when no GPU is chosen."""
    aliases: tuple[str, ...] = ()
    cuda_capability: tuple[int, int] | None = None
    """CUDA compute capability (`torch.cuda.get_device_capability()`), from NVIDIA's table
    (`_NV_CAPABILITY`); None for other vendors. Code that picks kernels by it reads it
    (torchtitan's SDPA backends, `vramplan.presets.frameworks.torchtitan.TorchtitanCode`)."""

    @property
    def capacity_bytes(self) -> int:
        return self.memory_gib * BYTES_PER_GIB  # whole GiB: exact in integers


_NV = "https://www.nvidia.com"
# NVIDIA's own documentation lists memory per GPU in tables: the MIG user guide's supported GPUs,
# and the GPU tables of its NIM inference microservices.
_NV_MIG = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-gpus.html"
_NV_NIM = "https://docs.nvidia.com/nim/large-language-models/1.13.0/supported-models.html"
_ROCM = "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"
_NV_CAPABILITY = "https://developer.nvidia.com/cuda-gpus"
"""NVIDIA's compute capability table, the source of every `cuda_capability` below."""
GPUS: tuple[Gpu, ...] = (
    Gpu("rtx-3090-24gb", "NVIDIA GeForce RTX 3090", "NVIDIA", 24,
        f"{_NV}/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/",
        aliases=("rtx-3090", "3090"), cuda_capability=(8, 6)),
    Gpu("rtx-4080-16gb", "NVIDIA GeForce RTX 4080", "NVIDIA", 16,
        f"{_NV_NIM} (GeForce RTX 4080, 16 GB)", aliases=("rtx-4080", "4080"),
        cuda_capability=(8, 9)),
    Gpu("rtx-4090-24gb", "NVIDIA GeForce RTX 4090", "NVIDIA", 24,
        f"{_NV}/en-us/geforce/graphics-cards/40-series/rtx-4090/", common=True,
        aliases=("rtx-4090", "4090"), cuda_capability=(8, 9)),
    Gpu("rtx-5090-32gb", "NVIDIA GeForce RTX 5090", "NVIDIA", 32,
        f"{_NV}/en-us/geforce/graphics-cards/50-series/rtx-5090/", aliases=("rtx-5090", "5090"),
        cuda_capability=(12, 0)),
    Gpu("rtx-3090-ti-24gb", "NVIDIA GeForce RTX 3090 Ti", "NVIDIA", 24,
        f"{_NV}/en-us/geforce/graphics-cards/30-series/rtx-3090-3090ti/",
        aliases=("rtx-3090-ti", "3090-ti"), cuda_capability=(8, 6)),
    # the RTX 3080 is sold with 10 or 12 GB: only its Ti, 12 GB, has a bare alias
    Gpu("rtx-3080-ti-12gb", "NVIDIA GeForce RTX 3080 Ti", "NVIDIA", 12,
        f"{_NV}/en-us/geforce/graphics-cards/30-series/rtx-3080-3080ti/",
        aliases=("rtx-3080-ti", "3080-ti"), cuda_capability=(8, 6)),
    Gpu("rtx-4070-ti-12gb", "NVIDIA GeForce RTX 4070 Ti", "NVIDIA", 12,
        f"{_NV}/en-us/geforce/graphics-cards/40-series/rtx-4070-family/",
        aliases=("rtx-4070-ti", "4070-ti"), cuda_capability=(8, 9)),
    Gpu("rtx-5080-16gb", "NVIDIA GeForce RTX 5080", "NVIDIA", 16,
        f"{_NV_NIM} (GeForce RTX 5080, 16 GB)", aliases=("rtx-5080", "5080"),
        cuda_capability=(12, 0)),
    Gpu("rtx-2080-ti-11gb", "NVIDIA GeForce RTX 2080 Ti", "NVIDIA", 11,
        f"{_NV}/en-us/geforce/graphics-cards/rtx-2080-ti/",
        aliases=("rtx-2080-ti", "2080-ti"), cuda_capability=(7, 5)),
    Gpu("titan-rtx-24gb", "NVIDIA TITAN RTX", "NVIDIA", 24,
        f"{_NV}/en-us/deep-learning-ai/products/titan-rtx/", aliases=("titan-rtx",),
        cuda_capability=(7, 5)),
    Gpu("rtx-a4000-16gb", "NVIDIA RTX A4000", "NVIDIA", 16,
        f"{_NV}/en-us/design-visualization/rtx-a4000/", aliases=("rtx-a4000", "a4000"),
        cuda_capability=(8, 6)),
    Gpu("rtx-a4500-20gb", "NVIDIA RTX A4500", "NVIDIA", 20,
        f"{_NV}/en-us/design-visualization/rtx-a4500/", aliases=("rtx-a4500", "a4500"),
        cuda_capability=(8, 6)),
    Gpu("rtx-a5000-24gb", "NVIDIA RTX A5000", "NVIDIA", 24,
        f"{_NV}/en-us/design-visualization/rtx-a5000/", aliases=("rtx-a5000", "a5000"),
        cuda_capability=(8, 6)),
    Gpu("quadro-rtx-8000-48gb", "NVIDIA Quadro RTX 8000", "NVIDIA", 48,
        f"{_NV}/en-us/design-visualization/quadro/rtx-8000/",
        aliases=("quadro-rtx-8000", "rtx-8000"), cuda_capability=(7, 5)),
    Gpu("rtx-pro-6000-blackwell-96gb", "NVIDIA RTX PRO 6000 Blackwell", "NVIDIA",
        96, f"{_NV_NIM} (NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GB)",
        aliases=("rtx-pro-6000-blackwell", "rtx-pro-6000"), cuda_capability=(12, 0)),
    Gpu("t4-16gb", "NVIDIA T4", "NVIDIA", 16,
        f"{_NV}/en-us/data-center/tesla-t4/", aliases=("t4",), cuda_capability=(7, 5)),
    Gpu("v100-16gb", "NVIDIA V100 16GB", "NVIDIA", 16,
        f"{_NV}/en-us/data-center/v100/", cuda_capability=(7, 0)),
    Gpu("v100-32gb", "NVIDIA V100 32GB", "NVIDIA", 32,
        f"{_NV}/en-us/data-center/v100/", cuda_capability=(7, 0)),
    Gpu("l4-24gb", "NVIDIA L4", "NVIDIA", 24,
        f"{_NV}/en-us/data-center/l4/", aliases=("l4",), cuda_capability=(8, 9)),
    Gpu("a10-24gb", "NVIDIA A10", "NVIDIA", 24,
        "https://learn.microsoft.com/en-us/azure/virtual-machines/nva10v5-series"
        " (a full A10 holds a 24 GiB frame buffer)", aliases=("a10",), cuda_capability=(8, 6)),
    Gpu("a10g-24gb", "NVIDIA A10G", "NVIDIA", 24,
        "https://aws.amazon.com/ec2/instance-types/g5/ (24 GB per A10G)", aliases=("a10g",),
        cuda_capability=(8, 6)),
    Gpu("a30-24gb", "NVIDIA A30", "NVIDIA", 24, f"{_NV_MIG} (A30, 24GB)", aliases=("a30",),
        cuda_capability=(8, 0)),
    Gpu("a40-48gb", "NVIDIA A40", "NVIDIA", 48,
        f"{_NV}/en-us/data-center/a40/", aliases=("a40",), cuda_capability=(8, 6)),
    Gpu("l40-48gb", "NVIDIA L40", "NVIDIA", 48,
        f"{_NV}/en-us/data-center/l40/", aliases=("l40",), cuda_capability=(8, 9)),
    Gpu("p100-16gb", "NVIDIA Tesla P100 16GB", "NVIDIA", 16,
        f"{_NV}/en-us/data-center/tesla-p100/ (16 GB CoWoS HBM2)", aliases=("p100",),
        cuda_capability=(6, 0)),
    Gpu("p40-24gb", "NVIDIA Tesla P40", "NVIDIA", 24,
        f"{_NV}/en-us/data-center/tesla-p40/", aliases=("p40",), cuda_capability=(6, 1)),
    Gpu("a2-16gb", "NVIDIA A2", "NVIDIA", 16,
        f"{_NV}/en-us/data-center/products/a2/", aliases=("a2",), cuda_capability=(8, 6)),
    Gpu("l40s-48gb", "NVIDIA L40S", "NVIDIA", 48,
        f"{_NV}/en-us/data-center/l40s/", aliases=("l40s",), cuda_capability=(8, 9)),
    Gpu("rtx-a6000-48gb", "NVIDIA RTX A6000", "NVIDIA", 48,
        f"{_NV}/en-us/design-visualization/rtx-a6000/", aliases=("rtx-a6000", "a6000"),
        cuda_capability=(8, 6)),
    Gpu("rtx-6000-ada-48gb", "NVIDIA RTX 6000 Ada Generation", "NVIDIA", 48,
        f"{_NV_NIM} (NVIDIA RTX 6000 Ada Generation, 48 GB)", aliases=("rtx-6000-ada",),
        cuda_capability=(8, 9)),
    Gpu("a100-40gb", "NVIDIA A100 40GB", "NVIDIA", 40,
        f"{_NV}/en-us/data-center/a100/", common=True, cuda_capability=(8, 0)),
    Gpu("a100-80gb", "NVIDIA A100 80GB", "NVIDIA", 80,
        f"{_NV}/en-us/data-center/a100/", aliases=("a100",), cuda_capability=(8, 0)),
    Gpu("h100-80gb", "NVIDIA H100 80GB", "NVIDIA", 80,
        f"{_NV}/en-us/data-center/h100/", common=True, aliases=("h100",), cuda_capability=(9, 0)),
    Gpu("h100-nvl-94gb", "NVIDIA H100 NVL", "NVIDIA", 94,
        f"{_NV_NIM} (H100 NVL, 94 GB)", aliases=("h100-nvl",), cuda_capability=(9, 0)),
    Gpu("h20-96gb", "NVIDIA H20", "NVIDIA", 96, f"{_NV_MIG} (H20, 96GB)", aliases=("h20",),
        cuda_capability=(9, 0)),
    # NVIDIA's export versions of the A100 and H100 (the cards of published Chinese runs:
    # ColossalAI, ms-swift, DeepSeek). NVIDIA's capability table does not list them; they are the
    # A100's GA100 and the H100's GH100 (PyTorch's own warning names "NVIDIA H800 with CUDA
    # capability sm_90": liguodongiot/llm-action docs/llm-base/h800-env-install.md). The A800 is
    # sold with 80 GB and, as a PCIe card, 40 GB: its bare name is the 80 GB card, as the A100's is.
    Gpu("a800-40gb", "NVIDIA A800 40GB", "NVIDIA", 40,
        "https://siliconcat.net/gpu/nvidia-a800-pcie-40-gb (40 GB, 108 SMs, GA100)",
        cuda_capability=(8, 0)),
    Gpu("a800-80gb", "NVIDIA A800 80GB", "NVIDIA", 80,
        "https://huggingface.co/hardware/a800 (Memory 80GB)", aliases=("a800",),
        cuda_capability=(8, 0)),
    Gpu("h800-80gb", "NVIDIA H800 80GB", "NVIDIA", 80,
        "https://huggingface.co/hardware/h800 (Memory 80GB)", aliases=("h800",),
        cuda_capability=(9, 0)),
    # The GH200 superchip is sold with 96 GB (HBM3) or 144 GB (HBM3e): no bare alias picks one.
    Gpu("gh200-96gb", "NVIDIA GH200 96GB (HBM3)", "NVIDIA", 96, f"{_NV_NIM} (GH200, 96 GB)",
        cuda_capability=(9, 0)),
    Gpu("gh200-144gb", "NVIDIA GH200 144GB (HBM3e)", "NVIDIA", 144,
        "https://docs.nvidia.com/nim/bionemo/genmol/support-matrix (NVIDIA GH200 144GB, 144 GB)",
        cuda_capability=(9, 0)),
    Gpu("h200-141gb", "NVIDIA H200 141GB", "NVIDIA", 141,
        f"{_NV}/en-us/data-center/h200/", common=True, aliases=("h200",), cuda_capability=(9, 0)),
    Gpu("b200-180gb", "NVIDIA B200", "NVIDIA", 180,
        f"{_NV}/en-us/data-center/dgx-b200/ (1,440 GB for 8 GPUs)", aliases=("b200",),
        cuda_capability=(10, 0)),
    Gpu("b300-288gb", "NVIDIA B300", "NVIDIA", 288,
        "https://docs.nvidia.com/nim/large-language-models/2.0.6/day-0/support-matrix-day-0.html"
        " (NVIDIA-B300-SXM6-AC, 288 GB per GPU)", aliases=("b300",), cuda_capability=(10, 3)),
    # An MI250X module holds 128 GB (ROCm's GPU specifications) on two graphics compute dies (GCDs);
    # ROCm shows each GCD as its own device (ROCm's MI250 microarchitecture page) with 64 GB (OLCF's
    # Frontier user guide). A PyTorch process allocates on one device, so the entry sizes one GCD.
    Gpu("mi250x-gcd-64gb", "AMD Instinct MI250X (one GCD)", "AMD", 64,
        "https://docs.olcf.ornl.gov/systems/frontier_user_guide.html"
        " (each MI250X has 2 GCDs, each a GPU with 64 GB)", aliases=("mi250x",)),
    Gpu("mi300x-192gb", "AMD Instinct MI300X", "AMD", 192,
        "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
        aliases=("mi300x",)),
    Gpu("mi325x-256gb", "AMD Instinct MI325X", "AMD", 256, f"{_ROCM} (MI325X, 256 GiB)",
        aliases=("mi325x",)),
    Gpu("mi355x-288gb", "AMD Instinct MI355X", "AMD", 288, f"{_ROCM} (MI355X, 288 GiB)",
        aliases=("mi355x",)),
)


_NOT_THE_CARD = frozenset({"nvidia", "geforce", "tesla", "amd", "instinct", "sxm", "sxm2",
                           "sxm3", "sxm4", "sxm5", "pcie", "hbm2", "hbm2e", "hbm3", "hbm3e"})
"""Words of a card's name that do not tell the catalogue's cards apart: brands, form factors,
memory types (nvidia-smi's `NVIDIA A100-SXM4-80GB` is the `a100-80gb`, `Tesla T4` the `t4-16gb`,
`H100 80GB HBM3` the `h100-80gb`, `AMD Instinct MI300X` the `mi300x-192gb`)."""


_SERIES_AND_NUMBER = re.compile(r"(?<=\brtx)(?=\d)|(?<=\bgtx)(?=\d)|(?<=\d)(?=ti\b)")
"""A consumer card's series or `Ti` written against its number (`RTX4090`, `rtx3090ti`): the
catalogue's `rtx 4090`, `rtx 3090 ti`."""


def card_key(name: str) -> str:
    """`name` in the form card names are compared in: any case, `_`, `-` and spaces as one `-`,
    the series apart from the number (`_SERIES_AND_NUMBER`), without the words that do not tell
    cards apart (`_NOT_THE_CARD`)."""
    spaced = _SERIES_AND_NUMBER.sub(" ", name.strip().lower().replace("_", " "))
    words = spaced.replace("-", " ").split()
    return "-".join(word for word in words if word not in _NOT_THE_CARD)


_BY_NAME: dict[str, Gpu] = {
    card_key(alias): gpu for gpu in GPUS for alias in (gpu.name, *gpu.aliases)
}
COMMON_GPUS: tuple[Gpu, ...] = tuple(gpu for gpu in GPUS if gpu.common)


def find_gpu(name: str) -> Gpu:
    """The GPU called `name` (catalogue name or alias, any case, with or without the brand, form
    factor or memory type: `card_key`), or an error listing the names."""
    from vramplan.errors import UnknownName

    try:
        return _BY_NAME[card_key(name)]
    except KeyError:
        raise UnknownName("gpu", name, [gpu.name for gpu in GPUS]) from None
