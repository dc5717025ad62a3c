"""The tiled MLP (`TrainingSetup.tiled_mlp`): the tiles each stack takes, what the block saves
and what its backward holds, hand-computed; the request field and the case notes that set it."""

from __future__ import annotations

import dataclasses
from datetime import date
from fractions import Fraction
from typing import Any

import pytest

from vramplan.model.hf_config import parse_config
from vramplan.training.activations.backward import block_backward_transient
from vramplan.training.activations.block import block_saved
from vramplan.training.activations.spec import BlockSpec, total_per_token
from vramplan.training.setup import TrainingSetup
from vramplan.training.specs import mlp_tile_tokens
from vramplan.validation.notes import TILED_MLP_NOTE
from vramplan.vocab import Attention, Framework, Method

# H = 64, I = 1024: the MLP's backward is the block's largest (3 x 2 x 1024 bytes a token
# against attention's 3 x 2 x 64 + 4 x 64 and the RMSNorm's 5 x 4 x 64)
TINY_LLAMA = parse_config({"model_type": "llama", "hidden_size": 64, "intermediate_size": 1024,
                           "num_hidden_layers": 2, "num_attention_heads": 4,
                           "num_key_value_heads": 4, "vocab_size": 100,
                           "max_position_embeddings": 256})


def _full_spec(**changes: object) -> BlockSpec:
    spec = BlockSpec(framework=Framework.HF, residual_bytes=2, compute_bytes=2, autocast=False,
                     weights_train=True, base_keeps_input=False, lora_targets=frozenset(),
                     lora_rank=8, lora_dropout=False, attention=Attention.SDPA)
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(("framework", "shape", "code_date", "tile"), [
    # shape: batch, seq_len, hidden
    # Unsloth's "arctic" rule: tiles of `hidden` tokens, the remainder in a last tile
    (Framework.UNSLOTH, (1, 486607, 2880), None, 2880),
    (Framework.UNSLOTH, (1, 1000, 4096), None, 1000),  # shorter than one tile: one tile
    # two sequences of 8,192 at hidden 4,096: two tiles of 4,096, then the second sequence
    # whole (remainder = 16,384 - 2 x 4,096)
    (Framework.UNSLOTH, (2, 8192, 4096), None, 8192),
    # axolotl: ceil(seq / hidden) shards of each sequence, then ceil(seq / 32,768)
    (Framework.AXOLOTL, (2, 65536, 4096), date(2026, 1, 1), 2 * 4096),
    (Framework.AXOLOTL, (2, 65536, 4096), None, 2 * 32768),
    (Framework.AXOLOTL, (1, 65537, 4096), date(2026, 1, 1), 3856),  # 17 shards: ceil(65,537/17)
    # DeepSpeed's example: ceil(seq / hidden) shards, the flattened batch chunked in backward
    (Framework.DEEPSPEED, (2, 10000, 4096), None, 6667),
])
def test_the_largest_tile_of_each_stack(framework: Framework, shape: tuple[int, int, int],
                                        code_date: date | None, tile: int) -> None:
    batch, seq_len, hidden = shape
    setup = TrainingSetup(method=Method.LORA, batch=batch, seq_len=seq_len, framework=framework,
                          tiled_mlp=True, code_date=code_date)
    assert mlp_tile_tokens(setup, hidden) == tile


def test_a_tiled_mlp_saves_only_its_input() -> None:
    """bf16, every weight trains: the MLP saves gate, act(gate), up and their product (the down
    projection's input), 1,024 values each, beside the second norm's output, which gate and up
    keep; tiled, `TiledMLP` keeps that output alone."""
    plain = block_saved(TINY_LLAMA, _full_spec(), 128)
    tiled = block_saved(TINY_LLAMA, _full_spec(mlp_tile_share=Fraction(1, 4)), 128)
    assert total_per_token(plain) - total_per_token(tiled) == 4 * 2 * 1024
    names = {item.name for item in tiled}
    assert "norm_2_out" in names
    assert not names & {"gate_out", "act_out", "up_out", "mlp_hidden"}


def test_a_tiled_mlp_backward_holds_one_tile_and_the_input_gradient() -> None:
    """Per token of the step: the incoming gradient and the input's whole gradient (2 x 64
    each) and a quarter of what the MLP saves and makes for one token (4 x 2 x 1,024 saved,
    3 x 2 x 1,024 gradients), whichever is larger against attention and the norm (here the
    tile: 3,584 + 256 = 3,840 > 1,280)."""
    tiled = _full_spec(mlp_tile_share=Fraction(1, 4))
    assert block_backward_transient(TINY_LLAMA, tiled) == 2 * 64 + 2 * 64 + (8 + 6) * 1024 // 4
    # untiled: the three intermediate-wide gradients alone
    assert block_backward_transient(TINY_LLAMA, _full_spec()) == 3 * 2 * 1024


def test_one_tile_of_a_long_sequence_costs_what_the_untiled_mlp_costs_for_that_tile() -> None:
    """Llama-3.1-8B-shaped run, Unsloth, 131,072 tokens: the tiled step's backward holds far
    less than the untiled one, and the saved activations lose exactly the MLP's own tensors."""
    from vramplan.presets.models import architecture_of, find_model
    from vramplan.training.estimate import estimate_training

    arch = architecture_of(find_model("llama-3.1-8b"))
    setup = TrainingSetup(method=Method.LORA, batch=1, seq_len=131072,
                          framework=Framework.UNSLOTH, lora_rank=16)
    plain = estimate_training(arch, setup)
    tiled = estimate_training(arch, dataclasses.replace(setup, tiled_mlp=True))
    assert tiled.allocated_bytes < plain.allocated_bytes
    names = {item.name for item in tiled.block_saved}
    assert not names & {"gate_out", "up_out"}


@pytest.mark.parametrize(("notes", "tiled"), [
    ("FastLanguageModel.from_pretrained(..., unsloth_tiled_mlp True)", True),
    ("from_pretrained(unsloth_tiled_mlp=True)", True),
    ("axolotl config: tiled_mlp: true, sequence_len 65536", True),
    ("UNSLOTH_TILED_MLP=arctic", True),
    ("ArcticTraining recipe: tiled_mlp_compute: true", True),
    ("no tiled_mlp_compute (commented out)", False),
    ("unsloth_tiled_mlp False", False),
    ("tiled_mlp: false", False),
    ("Unsloth's tiled MLP is not used", False),
])
def test_notes_that_say_the_mlp_ran_tiled(notes: str, tiled: bool) -> None:
    assert (TILED_MLP_NOTE.search(notes) is not None) is tiled


def test_the_request_field_reaches_the_setup() -> None:
    from vramplan.requests.reading import read
    from vramplan.requests.training import training_setup
    from vramplan.requests.vocabulary import FIT

    given = read(FIT, {"method": "lora", "framework": "unsloth", "tiled_mlp": "true"}, text=True)
    assert training_setup(given).tiled_mlp
    assert not training_setup(read(FIT, {"method": "lora"}, text=True)).tiled_mlp


def test_checkpoints_kept_on_the_host_leave_one_reloaded_input_on_the_gpu() -> None:
    """ArcticTraining's `activation_checkpoint_cpu_offload` (`CheckpointFunctionWithCPUOffload`):
    the blocks' checkpointed inputs live in host memory; backward brings each back into a fresh
    tensor beside its block's recomputation. Tiny Llama (2 blocks, hidden 64), 512 tokens, bf16:
    the saved activations lose the two inputs, the blocks' backward gains one."""
    from vramplan.training.estimate import estimate_training
    from vramplan.training.result import Phase
    from vramplan.training.setup import offloads_checkpoints
    from vramplan.vocab import Checkpointing

    setup = TrainingSetup(method=Method.FULL, batch=1, seq_len=512, framework=Framework.HF,
                          checkpointing=Checkpointing.FULL, gradient_accumulation=False)
    on_host = dataclasses.replace(setup, checkpoints_on_host=True)
    assert offloads_checkpoints(on_host) and not offloads_checkpoints(setup)
    plain, offloaded = estimate_training(TINY_LLAMA, setup), estimate_training(TINY_LLAMA, on_host)
    one_input = 2 * 64 * 512
    assert plain.activations_bytes - offloaded.activations_bytes == 2 * one_input

    def temporaries(estimate: Any) -> int:
        return next(part.memory_bytes for phase in estimate.phases
                    if phase.phase is Phase.BACKWARD_BLOCKS for part in phase.parts
                    if part.kind.name == "BACKWARD_TEMPORARIES")

    assert temporaries(offloaded) - temporaries(plain) == one_input


@pytest.mark.parametrize(("notes", "on_host"), [
    ("activation_checkpoint_cpu_offload: true", True),
    ("no activation_checkpoint_cpu_offload and no tiled_mlp_compute (both commented out)", False),
])
def test_notes_that_say_the_checkpoints_went_to_the_host(notes: str, on_host: bool) -> None:
    from vramplan.validation.notes import CHECKPOINTS_ON_HOST_NOTE

    assert (CHECKPOINTS_ON_HOST_NOTE.search(notes) is not None) is on_host
