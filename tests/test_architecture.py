"""The spec and its exact counts: published totals, a hand-counted block, and invariants."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vramplan.i18n import Lang
from vramplan.model.architecture import (
    Architecture,
    MlpKind,
    ModelOutOfRange,
    NormKind,
    ParamGroup,
    PositionKind,
    QkNormKind,
)
from vramplan.presets.models import architecture_of, find_model

# Totals published with the models (the issue quotes the first four; all are the parameter counts
# the Hugging Face Hub shows for the safetensors checkpoints of these repositories).
PUBLISHED = {
    "llama-2-7b": 6_738_415_616,
    "llama-3-8b": 8_030_261_248,
    "llama-3.2-3b": 3_212_749_824,  # tied embeddings
    "mistral-7b-v0.1": 7_241_732_096,
    # GPT-2 small: 124,439,808 (the "124M" of the model card; Karpathy's nanoGPT prints it too).
    "gpt2": 124_439_808,
}


@pytest.mark.parametrize(("name", "expected"), PUBLISHED.items(), ids=list(PUBLISHED))
def test_published_totals(name: str, expected: int) -> None:
    assert architecture_of(find_model(name)).params_total == expected


def test_mixtral_active_parameters() -> None:
    # Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088, section 2.1: 47B parameters,
    # 13B active per token (2 of 8 experts).
    arch = architecture_of(find_model("mixtral-8x7b"))
    assert round(arch.params_total / 1e9) == 47
    assert round(arch.params_active / 1e9) == 13


def _tiny(**changes: object) -> Architecture:
    base = Architecture(
        family="llama", n_layers=2, hidden_size=8, intermediate_size=12, n_heads=4, n_kv_heads=2,
        head_dim=2, vocab_size=10, tied_embeddings=False, mlp=MlpKind.GATED, activation="silu",
        qkv_bias=False, attn_out_bias=False, mlp_bias=False, norm=NormKind.RMSNORM,
        norm_bias=False, position=PositionKind.ROPE, max_position_embeddings=16,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_hand_counted_gqa_block() -> None:
    arch = _tiny()
    # q 8x8, k 8x4, v 8x4, o 8x8 ; gate, up 8x12, down 12x8 ; two RMSNorm scales of 8
    attention = 64 + 32 + 32 + 64
    mlp = 96 + 96 + 96
    norms = 8 + 8
    assert arch.params_per_block == attention + mlp + norms == 496
    # embedding 10x8, untied head 8x10, final norm 8
    assert arch.params_total == 2 * 496 + 80 + 80 + 8


def test_hand_counted_biases_layernorm_and_learned_positions() -> None:
    arch = _tiny(n_kv_heads=4, mlp=MlpKind.PLAIN, qkv_bias=True, attn_out_bias=True,
                 mlp_bias=True, norm=NormKind.LAYERNORM, norm_bias=True,
                 position=PositionKind.LEARNED, tied_embeddings=True, head_bias=True)
    attention = 4 * (64 + 8)
    mlp = (96 + 12) + (96 + 8)
    norms = 2 * 16
    assert arch.params_per_block == attention + mlp + norms
    assert arch.params_embedding == 80 + 16 * 8
    assert arch.params_head == 10  # tied weight counted once, its own bias remains
    assert arch.params_total == 2 * arch.params_per_block + 80 + 128 + 16 + 10


def test_qk_norms_and_parallel_shared_norm() -> None:
    shared = _tiny(parallel_block=True, shared_block_norm=True)
    assert shared.norms_per_block == 1
    assert _tiny(sandwich_norms=True).norms_per_block == 4
    assert _tiny(qk_norm=QkNormKind.PER_HEAD_SHARED).params_qk_norm == 2 * 2
    assert _tiny(qk_norm=QkNormKind.PER_HEAD).params_qk_norm == (4 + 2) * 2
    assert _tiny(norm_weight=False, norm=NormKind.LAYERNORM).params_norms_per_block == 0


def test_moe_linears_and_router() -> None:
    arch = _tiny(n_experts=4, experts_per_token=2)
    roles = [(lin.role, lin.count, lin.routed) for lin in arch.mlp_linears()]
    assert roles == [("router", 1, False), ("gate", 4, True), ("up", 4, True), ("down", 4, True)]
    assert arch.params_router_per_block == 8 * 4
    assert arch.params_mlp_per_block == 4 * 288
    assert arch.params_total - arch.params_active == 2 * 2 * 288


def test_fused_projections_are_listed_as_logical_gqa_linears() -> None:
    falcon = architecture_of(find_model("falcon-40b"))
    assert falcon.fused_qkv
    by_role = {lin.role: lin for lin in falcon.block_linears()}
    assert by_role["k"].out_features == falcon.n_kv_heads * falcon.head_dim == 8 * 64
    assert by_role["q"].out_features == 8192
    phi3 = architecture_of(find_model("phi-3-mini-4k"))
    assert {lin.role for lin in phi3.block_linears()} == {"q", "k", "v", "o", "gate", "up", "down"}


def test_head_linear_exists_even_when_tied() -> None:
    arch = architecture_of(find_model("llama-3.2-1b"))
    assert arch.tied_embeddings
    assert arch.head_linear().out_features == arch.vocab_size
    assert arch.params_head == 0


def test_tying_removes_exactly_the_head_matrix() -> None:
    untied = _tiny()
    assert untied.params_total - _tiny(tied_embeddings=True).params_total == 8 * 10


@pytest.mark.parametrize("field", ["n_layers", "hidden_size", "vocab_size", "head_dim"])
@pytest.mark.parametrize("value", [0, -1, 10**12])
def test_sizes_out_of_the_model_bounds_are_refused(field: str, value: int) -> None:
    with pytest.raises(ModelOutOfRange) as raised:
        _tiny(**{field: value})
    assert raised.value.params["name"] == field


def test_a_model_of_more_than_100_000_billion_parameters_is_refused() -> None:
    """Every size within its bound, the product beyond the seed calculator's largest N."""
    with pytest.raises(ModelOutOfRange) as raised:
        _tiny(n_layers=10_000, hidden_size=1_000_000, intermediate_size=1_000_000)
    assert raised.value.params["name"] == "params"


def test_kv_heads_must_divide_heads() -> None:
    with pytest.raises(ModelOutOfRange) as raised:
        _tiny(n_kv_heads=3)
    assert "do not divide" in raised.value.message(Lang.EN)


@given(
    layers=st.integers(1, 8), hidden=st.integers(1, 64), inter=st.integers(1, 128),
    kv=st.sampled_from([1, 2, 4]), groups=st.integers(1, 4), head_dim=st.integers(1, 16),
    vocab=st.integers(1, 500), tied=st.booleans(), gated=st.booleans(), biases=st.booleans(),
    experts=st.integers(1, 4), learned=st.booleans(),
)
def test_components_sum_to_total(*, layers: int, hidden: int, inter: int, kv: int, groups: int,
                                 head_dim: int, vocab: int, tied: bool, gated: bool,
                                 biases: bool, experts: int, learned: bool) -> None:
    arch = _tiny(n_layers=layers, hidden_size=hidden, intermediate_size=inter, n_heads=kv * groups,
                 n_kv_heads=kv, head_dim=head_dim, vocab_size=vocab, tied_embeddings=tied,
                 mlp=MlpKind.GATED if gated else MlpKind.PLAIN, qkv_bias=biases,
                 mlp_bias=biases, n_experts=experts, experts_per_token=1,
                 position=PositionKind.LEARNED if learned else PositionKind.ROPE)
    components = arch.params_by_component()
    assert sum(components.values()) == arch.params_total
    assert arch.params_total == (arch.params_embedding + arch.params_blocks
                                 + arch.params_final_norm + arch.params_head)
    assert components[ParamGroup.HEAD] == (0 if tied else hidden * vocab)
    assert arch.params_active <= arch.params_total
    assert arch.params_non_embedding == arch.params_total - arch.params_embedding - arch.params_head


