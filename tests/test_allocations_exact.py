"""The step program is built from one block of each kind (trained, frozen) rather than block by
block, and leaves out the tensors a setting does not have: checked here against the block-by-block
definitions on a broad grid of setups (dense and MoE presets, every method, precisions,
checkpointing, one GPU and the sharded schemes as `vramplan fit` builds them), so that the caching
allocator's replay of every program stays exactly what it was."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from vramplan.allocator import EventKind, alloc, free, replay
from vramplan.distributed.defaults import program_sharding, syncs_module_states
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.errors import VramplanError
from vramplan.model.architecture import Architecture
from vramplan.requests.reading import read
from vramplan.requests.training import fit_request
from vramplan.requests.vocabulary import FIT
from vramplan.training.allocations.load import by_lifetime
from vramplan.training.allocations.program import Sharding, StepShape
from vramplan.training.allocations.step import step_program
from vramplan.training.allocations.tensors import (
    ParamTensor,
    _block_tensors,
    outer_tensors,
    parameter_tensors,
    trained_blocks,
)
from vramplan.training.result import step_shape
from vramplan.training.setup import TrainingSetup

MODELS = ("gpt2", "qwen2.5-0.5b", "gemma-2-2b", "llama-2-7b", "llama-3.1-8b", "llama-2-70b",
          "mixtral-8x7b", "qwen3-30b-a3b")

VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"method": "lora"},
    {"method": "qlora"},
    {"method": "freeze", "train_layers": 2},
    {"method": "lora", "lora_targets": "q,v,head"},
    {"checkpointing": "full", "batch": 2, "seq_len": 1024},
    {"precision": "mixed", "optimizer": "adamw-8bit", "seq_len": 4096},
    {"precision": "fp32", "optimizer": "sgd-momentum", "optimizer_impl": "for-loop"},
    {"method": "qlora", "quant": "nf4-dq", "optimizer": "paged-adamw", "framework": "litgpt"},
    {"gpus": 4, "sharding": "zero3", "offload": "optimizer"},
    {"gpus": 8, "sharding": "fsdp", "batch": 2},
    {"gpus": 4, "sharding": "fsdp", "method": "qlora", "checkpointing": "full"},
)


def _cases() -> Iterator[tuple[str, Architecture, TrainingSetup, StepShape, Sharding]]:
    """Each model with each variant it accepts, as the per-GPU estimate builds its program
    (`PerGpuEstimate.allocator_cache_bytes`)."""
    for model in MODELS:
        for fields in VARIANTS:
            try:
                request = fit_request(read(FIT, {"model": model, "gpu": "h100-80gb", **fields},
                                           text=False))
            except VramplanError:
                continue
            plan = request.setup
            estimate = estimate_per_gpu(plan.arch, plan.training, plan.parallelism)
            single = estimate.single
            shape = step_shape(single.arch, single.setup)
            sharding = program_sharding(single.states, estimate.sharded,
                                        synced=syncs_module_states(single.setup.framework))
            name = model + "".join(f",{key}={value}" for key, value in fields.items())
            yield name, single.arch, single.setup, shape, sharding


CASES = list(_cases())


def test_the_grid_is_broad() -> None:
    assert len(CASES) >= 80
    assert len({setup.method for _, _, setup, _, _ in CASES}) >= 4
    assert any(sharding.gather_bytes for *_, sharding in CASES)


def _listed_block_by_block(arch: Architecture, setup: TrainingSetup) -> list[ParamTensor]:
    before, after = outer_tensors(arch, setup)
    blocks = [tensor for block, trains in enumerate(trained_blocks(arch, setup))
              for tensor in _block_tensors(arch, setup, block, trains)]
    return [*before, *blocks, *after]


def _merged_by_lifetime(params: list[ParamTensor]) -> list[ParamTensor]:
    """One tensor per (block, trainable) where its first tensor comes; the embeddings, final
    norm and head kept apart, grouped by whether they train."""
    merged: dict[tuple[int | None, bool], list[ParamTensor]] = {}
    for tensor in params:
        merged.setdefault((tensor.block, tensor.trainable), []).append(tensor)
    grouped: list[ParamTensor] = []
    for (block, trainable), tensors in merged.items():
        if block is None:
            grouped += tensors
        else:
            grouped.append(ParamTensor(sum(t.elements for t in tensors),
                                       sum(t.n_bytes for t in tensors), trainable, block))
    return grouped


@pytest.mark.parametrize(("name", "arch", "setup", "shape", "sharding"), CASES,
                         ids=[case[0] for case in CASES])
def test_the_program_is_the_block_by_block_one(name: str, arch: Architecture,
                                               setup: TrainingSetup, shape: StepShape,
                                               sharding: Sharding) -> None:
    listed = _listed_block_by_block(arch, setup)
    assert list(parameter_tensors(arch, setup)) == listed
    assert list(by_lifetime(arch, setup)) == _merged_by_lifetime(listed)
    # every free is of a tensor the program allocated and has not freed yet
    live: set[int] = set()
    for event in step_program(arch, setup, shape, sharding):
        if event.kind is EventKind.ALLOC:
            assert event.tensor not in live
            live.add(event.tensor)
        elif event.kind is EventKind.FREE:
            live.remove(event.tensor)


def test_a_free_of_a_tensor_never_allocated_changes_nothing() -> None:
    """What the program leaves out for an empty tensor: the replay ignored its free."""
    program = [alloc(1, 3 << 20), alloc(2, 700), free(1), alloc(3, 5 << 20), free(2)]
    with_empty = [*program[:2], free(99), *program[2:], free(100)]
    assert replay(with_empty) == replay(program)
