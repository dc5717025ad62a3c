"""Invariants of the GPU catalogue: names carry the size, each spelling finds one card."""

from __future__ import annotations

import pytest

from vramplan.presets.gpus import GPUS, Gpu, find_gpu


@pytest.mark.parametrize("gpu", GPUS, ids=[gpu.name for gpu in GPUS])
def test_the_name_ends_in_the_marketed_size(gpu: Gpu) -> None:
    assert gpu.name.endswith(f"-{gpu.memory_gib}gb")
    assert gpu.name == gpu.name.lower() and " " not in gpu.name


@pytest.mark.parametrize("gpu", GPUS, ids=[gpu.name for gpu in GPUS])
def test_the_source_is_an_https_address(gpu: Gpu) -> None:
    assert gpu.source.startswith("https://")


def test_names_and_aliases_are_unique() -> None:
    spellings = [spelling for gpu in GPUS for spelling in (gpu.name, *gpu.aliases)]
    assert len(spellings) == len(set(spellings))


@pytest.mark.parametrize("gpu", GPUS, ids=[gpu.name for gpu in GPUS])
def test_each_name_and_alias_finds_its_card(gpu: Gpu) -> None:
    for spelling in (gpu.name, *gpu.aliases):
        assert find_gpu(spelling) is gpu
        assert find_gpu(spelling.upper()) is gpu


@pytest.mark.parametrize("gpu", GPUS, ids=[gpu.name for gpu in GPUS])
def test_every_nvidia_card_has_its_compute_capability_and_no_other_does(gpu: Gpu) -> None:
    """NVIDIA's table (developer.nvidia.com/cuda-gpus) gives each of its cards one; AMD's have
    none (ROCm reports a gfx version, not a CUDA capability)."""
    assert (gpu.cuda_capability is not None) is (gpu.vendor == "NVIDIA")


@pytest.mark.parametrize(("name", "card"), [
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"),  # nvidia-smi's name
    ("NVIDIA H100 80GB HBM3", "h100-80gb"),
    ("H100 SXM", "h100-80gb"),
    ("Tesla T4", "t4-16gb"),
    ("GeForce RTX 3090", "rtx-3090-24gb"),
    ("4090", "rtx-4090-24gb"),
    ("AMD Instinct MI300X", "mi300x-192gb"),
    # workstation and older cards of published runs, sold in one size
    ("NVIDIA GeForce RTX 3090 Ti", "rtx-3090-ti-24gb"),
    ("NVIDIA RTX A5000", "rtx-a5000-24gb"),
    ("NVIDIA TITAN RTX", "titan-rtx-24gb"),
    ("Tesla P40", "p40-24gb"),
    ("NVIDIA L40", "l40-48gb"),
    # the export versions of the A100 and H100, as nvidia-smi names them
    ("NVIDIA H800 80GB HBM3", "h800-80gb"),
    ("NVIDIA A800-SXM4-80GB", "a800-80gb"),
    ("NVIDIA A800 40GB PCIe", "a800-40gb"),
    ("A800", "a800-80gb"),
    # a consumer card's series written against its number
    ("RTX4090", "rtx-4090-24gb"),
    ("rtx3090ti", "rtx-3090-ti-24gb"),
    ("NVIDIA GeForce RTX5090", "rtx-5090-32gb"),
])
def test_a_card_is_found_without_its_brand_form_factor_or_memory_type(name: str,
                                                                      card: str) -> None:
    """The CLI, the API and the case files share `find_gpu`: the words that do not tell the
    catalogue's cards apart are dropped, the rest is the card's name or alias."""
    assert find_gpu(name).name == card


@pytest.mark.parametrize("name", ["V100", "RTX 3080", "8x A100 80GB", "Tesla K80"])
def test_a_name_the_catalogue_does_not_hold_is_refused(name: str) -> None:
    """No size guessed (`V100`: 16 or 32 GB, `RTX 3080`: 10 or 12 GB), no count of cards read
    as a card (the case files' reader drops it, the options do not), no card outside the
    catalogue."""
    from vramplan.errors import UnknownName

    with pytest.raises(UnknownName):
        find_gpu(name)
