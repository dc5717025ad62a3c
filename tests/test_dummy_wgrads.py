"""Megatron-LM's cached dummy weight gradients (Transformer Engine's `get_dummy_wgrad`), counted
by hand for a small Llama."""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import date
from typing import Any

import pytest

from vramplan.allocator import EventKind
from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.model.hf_config import parse_config
from vramplan.parts import PartKind
from vramplan.training.allocations.step import step_program
from vramplan.training.dummy_wgrads import dummy_wgrad_bytes, dummy_wgrad_shapes
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Phase, PhaseMemory, step_shape
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import Framework, Method, Precision, Scheme

SMALL: dict[str, Any] = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
                         "num_hidden_layers": 4, "num_attention_heads": 16,
                         "num_key_value_heads": 4, "vocab_size": 32000,
                         "max_position_embeddings": 4096, "tie_word_embeddings": False}
"""Head dim 64: queries 1024 wide, keys and values 256 each."""

# bf16, one tensor per shape: the head [32000, 1024], linear_fc2 [1024, 2816], linear_fc1
# [2 x 2816, 1024], linear_proj [1024, 1024], linear_qkv [1024 + 2 x 256, 1024]
HEAD_BYTES = 2 * 32000 * 1024
BLOCK_BYTES = 2 * (1024 * 2816 + 5632 * 1024 + 1024 * 1024 + 1536 * 1024)
# on one of two tensor-parallel ranks: [16000, 1024], [1024, 1408], [2816, 1024], [1024, 512],
# [768, 1024]
TP2_BYTES = 2 * (16000 * 1024 + 1024 * 1408 + 2816 * 1024 + 1024 * 512 + 768 * 1024)


def _setup(**extra: Any) -> TrainingSetup:
    return TrainingSetup(**{"method": Method.FULL, "precision": Precision.MIXED, "batch": 1,
                            "seq_len": 256, "framework": Framework.MEGATRON,
                            "gradient_accumulation": False, **extra})


def test_one_tensor_per_weight_shape_counted_by_hand() -> None:
    arch = parse_config(SMALL)
    assert dummy_wgrad_shapes(arch, _setup()) == (
        (32000, 1024), (1024, 2816), (5632, 1024), (1024, 1024), (1536, 1024))
    assert dummy_wgrad_bytes(arch, _setup()) == HEAD_BYTES + BLOCK_BYTES == 88_080_384
    assert dummy_wgrad_bytes(arch, _setup(), tensor_parallel=2) == TP2_BYTES == 44_040_192
    assert dummy_wgrad_bytes(arch, _setup(), head=False) == BLOCK_BYTES


@pytest.mark.parametrize(("day", "expected"), [
    (date(2025, 4, 7), 0),  # before Transformer Engine ba5dc5dde: a fresh tensor each backward
    (date(2025, 4, 8), BLOCK_BYTES),  # TE's linears cached, Megatron's head not yet
    (date(2025, 7, 31), BLOCK_BYTES),
    (date(2025, 8, 1), HEAD_BYTES + BLOCK_BYTES),  # Megatron-LM e7c55de99e
    (None, HEAD_BYTES + BLOCK_BYTES),  # today's code
])
def test_the_cache_comes_with_transformer_engine_and_megatron_code_dates(
        day: date | None, expected: int) -> None:
    assert dummy_wgrad_bytes(parse_config(SMALL), _setup(code_date=day)) == expected


def test_routed_experts_take_theirs_once_grouped_linear_caches_them() -> None:
    """TE d2945c6a5 (2025-10-27): one tensor for every expert of a shape."""
    moe = parse_config({**SMALL, "model_type": "mixtral", "num_local_experts": 4,
                        "num_experts_per_tok": 2})
    attention = 2 * (1024 * 1024 + 1536 * 1024)
    experts = 2 * (5632 * 1024 + 1024 * 2816)
    assert dummy_wgrad_bytes(moe, _setup(code_date=date(2025, 10, 26))) \
        == HEAD_BYTES + attention
    assert dummy_wgrad_bytes(moe, _setup(code_date=date(2025, 10, 27))) \
        == HEAD_BYTES + attention + experts


@pytest.mark.parametrize("setup", [
    _setup(gradient_accumulation_fusion=False),  # the hook gets the real gradient
    dataclasses.replace(_setup(), framework=Framework.HF),
    _setup(method=Method.LORA, lora_rank=8),  # frozen base weights make no weight gradient
])
def test_no_cache_without_megatrons_fused_accumulation_of_trained_weights(
        setup: TrainingSetup) -> None:
    assert dummy_wgrad_bytes(parse_config(SMALL), setup) == 0


def _frozen(phase: PhaseMemory) -> int:
    return sum(p.memory_bytes for p in phase.parts if p.kind is PartKind.FROZEN_WEIGHTS)


def test_one_gpu_holds_them_in_every_phase_of_a_later_step() -> None:
    arch = parse_config(SMALL)
    fused = estimate_training(arch, _setup())
    unfused = estimate_training(arch, _setup(gradient_accumulation_fusion=False))
    assert [_frozen(a) - _frozen(b) for a, b in zip(fused.phases, unfused.phases, strict=True)] \
        == [HEAD_BYTES + BLOCK_BYTES] * len(fused.phases)


def test_a_tensor_parallel_rank_holds_its_shards_shapes_from_the_first_backward() -> None:
    """A figure of the first step: not yet in its forward and loss."""
    arch = parse_config(SMALL)
    for first in (False, True):
        held = {}
        for fused in (True, False):
            setup = _setup(first_step_report=first, gradient_accumulation_fusion=fused)
            plan = default_parallelism(setup, Scheme.ZERO1, 8, tensor_parallel=2)
            held[fused] = {phase.phase: _frozen(phase)
                           for phase in estimate_per_gpu(arch, setup, plan).phases}
        added = {phase: held[True][phase] - held[False][phase] for phase in held[True]}
        early = (Phase.LOSS_FORWARD, Phase.BACKWARD_START)
        assert {phase: n for phase, n in added.items() if phase not in early} \
            == dict.fromkeys(set(added) - set(early), TP2_BYTES)
        assert {added[phase] for phase in early} == {0 if first else TP2_BYTES}


def test_the_program_makes_each_of_them_once_at_the_first_backward() -> None:
    arch = parse_config(SMALL)
    programs = {}
    for fused in (True, False):
        setup = _setup(gradient_accumulation_fusion=fused)
        programs[fused] = step_program(arch, setup, step_shape(arch, setup))
    allocs = [Counter(e.n_bytes for e in program if e.kind is EventKind.ALLOC)
              for program in (programs[True], programs[False])]
    assert sorted((allocs[0] - allocs[1]).elements()) == sorted(
        2 * rows * columns for rows, columns in dummy_wgrad_shapes(arch, _setup()))
    backward = next(i for i, e in enumerate(programs[True])
                    if e.kind is EventKind.MARK and e.name == "backward")
    assert programs[True][:backward] == programs[False][:backward]
