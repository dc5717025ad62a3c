"""Unsloth's `unsloth_fused_ce_loss` chunks (unslothai/unsloth-zoo
unsloth_zoo/fused_losses/cross_entropy_loss.py `get_chunk_size`, `_get_chunk_multiplier`),
counted by hand."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from vramplan.model.lora_targets import parse_lora_targets
from vramplan.presets.frameworks.unsloth import (
    UnslothLossChunking,
    unsloth_code,
    unsloth_release_date,
)
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.allocations.program import StepShape
from vramplan.training.allocations.step import reserved_at_first_loss
from vramplan.training.setup import TrainingSetup, allocator_config
from vramplan.training.specs import block_spec, head_spec, unsloth_loss_chunks
from vramplan.vocab import Checkpointing, Framework, Method, Precision, Quant

GIB = 2**30
GEMMA3_VOCAB = 262_208  # gemma-3-27b's config.json vocab_size
ONE_GIB = UnslothLossChunking.ONE_GIB
HALF_FREE = UnslothLossChunking.HALF_FREE
CAPPED = UnslothLossChunking.HALF_FREE_CAPPED


@pytest.mark.parametrize(("tokens", "vocab", "chunks"), [
    # 4096 * 262208 / 2**30 = 1.0002: round 1, times 4 (gemma-3-27b, batch 2 x 2048)
    (4096, GEMMA3_VOCAB, 4),
    # 4096 * 151936 / 2**30 = 0.580: round 1 (qwen3-32b)
    (4096, 151_936, 4),
    # 4096 * 128256 / 2**30 = 0.489: round 0, so max(0, 1) = 1 (llama-3.3-70b)
    (4096, 128_256, 1),
    # 2560 * 2**20 / 2**30 = 2.5: Python rounds half to even, 2, times 4
    (2560, 2**20, 8),
])
def test_one_gib_target_rounds_the_logits_gib_to_a_multiple_of_four(
        tokens: int, vocab: int, chunks: int) -> None:
    assert unsloth_loss_chunks(tokens, vocab, ONE_GIB, None) == chunks


def test_half_the_free_memory_is_the_target() -> None:
    # 20 GiB free: 2 * 4096 * 262208 / (20 * 2**30) = 0.100, round 0: one chunk
    assert unsloth_loss_chunks(4096, GEMMA3_VOCAB, HALF_FREE, 20 * GIB) == 1
    # 1 GiB free: 2 * 4096 * 262208 / 2**30 = 2.0004, round 2, times 4
    assert unsloth_loss_chunks(4096, GEMMA3_VOCAB, HALF_FREE, GIB) == 8
    # nothing free (an estimate past the card): a chunk per row
    assert unsloth_loss_chunks(4096, GEMMA3_VOCAB, HALF_FREE, 0) == 4096


def test_capped_target_is_at_most_four_gib_and_rounds_up() -> None:
    # 4 * 262208 * 4096 bytes of fp32 logits over min(80 / 2, 4) GiB = 1.0002 > 1: ceil(0.25) * 4
    assert unsloth_loss_chunks(4096, GEMMA3_VOCAB, CAPPED, 80 * GIB) == 4
    # 4095 rows: 0.99996, fits one chunk
    assert unsloth_loss_chunks(4095, GEMMA3_VOCAB, CAPPED, 80 * GIB) == 1
    # 2 GiB free, a 1 GiB target: 4.0008, ceil(1.0002) * 4
    assert unsloth_loss_chunks(4096, GEMMA3_VOCAB, CAPPED, 2 * GIB) == 8
    # no card: the cap
    assert unsloth_loss_chunks(4096, GEMMA3_VOCAB, CAPPED, None) == 4


def test_the_chunking_of_each_release() -> None:
    # before 2025.8.5 Cut Cross-Entropy; 2025.8.5 to 2025.9.1 `target_gb = 1`; from 2025.9.2
    # (requires unsloth_zoo>=2025.9.3) half the free memory; today's capped
    assert unsloth_code(unsloth_release_date((2025, 8, 4))).loss_chunking is None
    assert unsloth_code(unsloth_release_date((2025, 8, 5))).loss_chunking is ONE_GIB
    assert unsloth_code(unsloth_release_date((2025, 9, 1))).loss_chunking is ONE_GIB
    assert unsloth_code(unsloth_release_date((2025, 9, 2))).loss_chunking is HALF_FREE
    assert unsloth_code(date(2026, 7, 6)).loss_chunking is CAPPED
    assert unsloth_code(None).loss_chunking is CAPPED


def _gemma3(day: date, free: int | None) -> TrainingSetup:
    return TrainingSetup(method=Method.QLORA, precision=Precision.BF16_TRUE, quant=Quant.NF4_DQ,
                         lora_rank=8, lora_targets=parse_lora_targets("all"), batch=2,
                         seq_len=2048, checkpointing=Checkpointing.FULL,
                         framework=Framework.UNSLOTH, code_date=day, card_free_bytes=free)


def test_the_chunk_comes_from_the_free_memory_at_the_first_loss() -> None:
    arch = architecture_of(find_model("gemma-3-27b"))
    on_release = _gemma3(date(2025, 9, 1), 40 * GIB)
    assert head_spec(arch, on_release).fused_rows == 1024  # 4 chunks of 4096 rows
    later = dataclasses.replace(on_release, code_date=date(2025, 9, 8))
    before_loss = StepShape(spec=block_spec(arch, later), loss_rows=4096)
    held = reserved_at_first_loss(arch, later, before_loss, allocator_config(later))
    assert 0 < held < 40 * GIB
    # 2 * 4096 * 262208 = 2.15e9 < half of what is left: one chunk of every row
    assert head_spec(arch, later).fused_rows == 4096
    # a card with 1 GiB more than the load and first forward reserve on the 40 GiB card (the
    # allocator's warm-up at load is capped by the card's free memory, so what is reserved can
    # differ on the smaller card): more chunks
    tight = dataclasses.replace(later, card_free_bytes=held + GIB)
    held_tight = reserved_at_first_loss(arch, tight, before_loss, allocator_config(tight))
    chunks = unsloth_loss_chunks(4096, GEMMA3_VOCAB, HALF_FREE, held + GIB - held_tight)
    assert chunks > 1
    assert head_spec(arch, tight).fused_rows == -(-4096 // chunks)


def test_a_fused_loss_replays_each_chunk_size_once() -> None:
    """Every chunk frees what it made: a full chunk and the last, shorter one stand for the
    loop (a chunk per row when nothing is free would otherwise be a program of every row)."""
    from vramplan.training.allocations.loss import _chunk_sizes

    assert _chunk_sizes(10, 4) == [4, 2]
    assert _chunk_sizes(8, 4) == [4]
    assert _chunk_sizes(3, 4) == [3]
