"""config.json readers of families whose model code lives in the checkpoint's Hub repository, not
in transformers (`trust_remote_code=True`): Qwen (v1).

transformers has no class for these model types, so nothing here can be built on the meta
device: each preset's count is checked against its checkpoint's published size instead
(tests/test_remote_code.py). Each reader names the Hub file whose layers it mirrors. Part of
the config.json layer (`vramplan.model.hf_config`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from vramplan.model.architecture import Architecture, MlpKind, NormKind, PositionKind
from vramplan.model.hf_common import ConfigKeys, InvalidConfigValue, derived_head_dim


def _qwen(keys: ConfigKeys) -> Architecture:
    """Qwen (v1) `modeling_qwen.py` (Hub repositories Qwen/Qwen-1_8B, Qwen-7B, Qwen-14B,
    Qwen-72B and their Chat models): `QWenAttention` has one fused `c_attn` of 3 x
    `kv_channels` x heads with a bias and `c_proj` (bias unless `no_bias`), full multi-head
    attention split at `hidden_size` (so kv_channels x heads must be hidden_size); `QWenMLP`
    holds `w1` and `w2` of `intermediate_size // 2` each and `c_proj` back, `a1 * silu(a2)`
    (a SwiGLU of half the config's `intermediate_size`), biased unless `no_bias`; RMSNorms
    `ln_1`, `ln_2`, `ln_f`; rotary embeddings over `rotary_pct` of each head; `wte` and an
    untied `lm_head` without bias (`QWenLMHeadModel`). `emb_dropout_prob` drops the
    embeddings, `attn_dropout_prob` the probabilities (0.0 in the published configs)."""
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    head_dim = derived_head_dim(keys, hidden, heads)
    if keys.get_int("kv_channels", default=head_dim) != head_dim:
        raise InvalidConfigValue(keys.path("kv_channels"), keys.config["kv_channels"],
                                 "expect.unsupported_option")
    ffn = keys.get_int("intermediate_size")
    bias = not keys.get_bool("no_bias", True)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_hidden_layers"),
        hidden_size=hidden, intermediate_size=ffn // 2, n_heads=heads, n_kv_heads=heads,
        head_dim=head_dim, vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", False), mlp=MlpKind.GATED,
        activation="silu", qkv_bias=True, attn_out_bias=bias, mlp_bias=bias,
        norm=NormKind.RMSNORM, norm_bias=False, position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("max_position_embeddings"), fused_qkv=True,
        partial_rotary_factor=keys.get_float("rotary_pct", 1.0),
        rope_theta=keys.get_float("rotary_emb_base", 10000.0), dtype=keys.dtype(),
        embedding_dropout=keys.get_float("emb_dropout_prob", 0.0),
        attention_dropout=keys.get_float("attn_dropout_prob", 0.0),
    )


READERS: dict[str, Callable[[ConfigKeys], Architecture]] = {
    "qwen": _qwen,
}
"""The `model_type` values this module reads."""

REMOTE_CODE_TYPES = frozenset(READERS)
"""Model types transformers cannot build: their code is the checkpoint's own."""
