"""LoRA parameter counts: r x (d_in + d_out) per adapted matrix, anchored to litgpt's published
"Trainable parameters" column."""

from __future__ import annotations

import pytest

from vramplan.errors import OutOfRange, UnknownName
from vramplan.model.lora_targets import (
    BLOCK_TARGETS,
    lora_breakdown,
    lora_params,
    parse_lora_targets,
)
from vramplan.presets.models import architecture_of, find_model
from vramplan.vocab import LoraTarget

Q_V = frozenset({LoraTarget.Q, LoraTarget.V})


@pytest.mark.parametrize(("model", "expected"), [
    # Lightning-AI/litgpt tutorials/resource-tables.md (commit 0cc02afa), "Finetuning with LoRA
    # on 1 GPU", column "Trainable parameters", r=8 on query and value (finetune/lora.py defaults)
    ("phi-1.5", 1_572_864),
    ("stablelm-base-alpha-3b", 2_097_152),
    ("llama-2-7b", 4_194_304),
    ("llama-2-13b", 6_553_600),
    ("falcon-40b", 12_042_240),
])
def test_counts_equal_litgpt_published_trainable_parameters(model: str, expected: int) -> None:
    assert lora_params(architecture_of(find_model(model)), 8, Q_V) == expected


def test_each_matrix_is_rank_times_in_plus_out() -> None:
    arch = architecture_of(find_model("llama-3-8b"))
    matrices = {m.target: m for m in lora_breakdown(arch, 16, Q_V)}
    assert matrices[LoraTarget.Q].params_each == 16 * (4096 + 4096)
    assert matrices[LoraTarget.V].params_each == 16 * (4096 + 1024)  # GQA: 8 kv heads x 128
    assert matrices[LoraTarget.V].copies == 32


def test_all_means_every_block_linear_and_head_is_separate() -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    everything = parse_lora_targets("all;head")
    assert everything == BLOCK_TARGETS | {LoraTarget.HEAD}
    blocks_only = lora_params(arch, 8, parse_lora_targets("all"))
    expected_blocks = 8 * arch.n_layers * sum(
        lin.in_features + lin.out_features for lin in arch.block_linears())
    assert blocks_only == expected_blocks
    head = 8 * (arch.hidden_size + arch.vocab_size)
    assert lora_params(arch, 8, everything) == blocks_only + head


def test_plain_mlp_has_no_gate_adapter() -> None:
    arch = architecture_of(find_model("phi-2"))
    targets = {m.target for m in lora_breakdown(arch, 8, parse_lora_targets("all"))}
    assert LoraTarget.GATE not in targets
    assert {LoraTarget.UP, LoraTarget.DOWN} <= targets


@pytest.mark.parametrize("rank", [1, 4, 64])
def test_count_is_linear_in_rank(rank: int) -> None:
    arch = architecture_of(find_model("mistral-7b-v0.1"))
    assert lora_params(arch, rank, Q_V) == rank * lora_params(arch, 1, Q_V)


def test_targets_parse_with_semicolons_or_commas() -> None:
    assert parse_lora_targets("q;v") == parse_lora_targets("v, q") == Q_V


def test_unknown_target_names_the_accepted_ones() -> None:
    with pytest.raises(UnknownName) as caught:
        parse_lora_targets("q;query")
    assert caught.value.field == "lora_targets"
    assert "gate" in str(caught.value)


def test_rank_must_be_positive() -> None:
    with pytest.raises(OutOfRange):
        lora_breakdown(architecture_of(find_model("phi-2")), 0, Q_V)


@pytest.mark.parametrize(("written", "targets"), [
    # torchtune's names (LORA_ATTN_MODULES; FeedForward's w1 gate, w2 down, w3 up)
    ("['q_proj', 'v_proj', 'output_proj']", "q;v;o"),
    ("w1;w2;w3", "gate;up;down"),
    # litgpt's flags
    ("lora_query;lora_value;lora_mlp", "q;v;gate;up;down"),
    # fused projections adapt their parts; modules, their linears
    ("query_key_value", "q;k;v"),
    ("c_attn", "q;k;v"),
    ("qkv_proj;gate_up_proj", "q;k;v;gate;up"),
    ("attention", "q;k;v;o"),
    ("mlp", "gate;up;down"),
    # OPT's names for its ungated MLP and attention output
    ("q_proj,v_proj,out_proj,fc1,fc2", "q;v;o;up;down"),
])
def test_other_stacks_names_of_the_targets(written: str, targets: str) -> None:
    assert parse_lora_targets(written) == parse_lora_targets(targets)


def test_an_ungated_mlp_named_whole_adapts_its_two_linears() -> None:
    """`mlp` asks for the gate too, which Phi-2's MLP does not have: fc1 and fc2 get adapters."""
    arch = architecture_of(find_model("phi-2"))
    assert lora_params(arch, 8, parse_lora_targets("mlp")) \
        == lora_params(arch, 8, parse_lora_targets("up;down")) > 0


# --- adapters on the checkpoint's own modules (peft on transformers' code) -------------------


def test_peft_puts_one_adapter_on_a_fused_qkv_linear() -> None:
    # GPT-2's c_attn (768 -> 2304): one A of r x 768 and one B of 2304 x r, whichever of q, k
    # and v are asked for; counted as logical linears (litgpt) q and v would be two adapters
    arch = architecture_of(find_model("gpt2"))
    fused = lora_breakdown(arch, 8, frozenset({LoraTarget.Q, LoraTarget.V}), fused_modules=True)
    assert [(m.in_features, m.out_features, m.copies) for m in fused] == [(768, 2304, 12)]
    assert lora_params(arch, 8, frozenset({LoraTarget.Q, LoraTarget.V}),
                       fused_modules=True) == 12 * 8 * (768 + 2304)
    assert lora_params(arch, 8, frozenset({LoraTarget.Q, LoraTarget.V})) == 12 * 2 * 8 * (768 + 768)


def test_peft_adapts_phi3s_fused_qkv_and_gate_up_once_each() -> None:
    # Phi-3-mini: qkv_proj 3072 -> 9216, o_proj, gate_up_proj 3072 -> 16384, down_proj
    arch = architecture_of(find_model("phi-3-mini-4k"))
    shapes = [(m.in_features, m.out_features)
              for m in lora_breakdown(arch, 8, frozenset({LoraTarget.ALL}), fused_modules=True)]
    assert shapes == [(3072, 9216), (3072, 3072), (3072, 16384), (8192, 3072)]


def test_separate_projections_are_the_same_either_way() -> None:
    arch = architecture_of(find_model("llama-2-7b"))
    targets = frozenset({LoraTarget.ALL})
    assert lora_breakdown(arch, 16, targets, fused_modules=True) == lora_breakdown(arch, 16,
                                                                                   targets)
