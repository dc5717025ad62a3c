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
