"""config.json readers of families whose model code lives in the checkpoint's Hub repository, not
in transformers (`trust_remote_code=True`): Qwen (v1), ChatGLM2 and ChatGLM3, Baichuan 2,
InternLM2 and InternLM2.5. What their code does at run time (its loss, its cache) is in
`vramplan.presets.frameworks.transformers.REMOTE_CODE`.

transformers has no class for these model types, so nothing here can be built on the meta
device: each preset's count is checked against its checkpoint's published size instead
(tests/test_remote_code.py). Each reader names the Hub file whose layers it mirrors. Part of
the config.json layer (`vramplan.model.hf_config`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from vramplan.model.architecture import Architecture, MlpKind, NormKind, PositionKind
from vramplan.model.hf_common import (
    ConfigKeys,
    InvalidConfigValue,
    derived_head_dim,
    llama_like,
    replace_fields,
)


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


def _chatglm(keys: ConfigKeys) -> Architecture:
    """ChatGLM2-6B and ChatGLM3-6B `modeling_chatglm.py` (THUDM/chatglm3-6b, read in a git
    mirror): `SelfAttention` has one fused `query_key_value` of heads x `kv_channels` plus, under
    `multi_query_attention`, 2 x `multi_query_group_num` key and value heads (bias when
    `add_bias_linear` or `add_qkv_bias`), and `dense` back (bias when `add_bias_linear`); `MLP`
    one fused `dense_h_to_4h` of 2 x `ffn_hidden_size` (SwiGLU) and `dense_4h_to_h`; RMSNorms
    (`rmsnorm`, else LayerNorms) before attention and MLP and, with `post_layer_norm`, before
    the head; rotary embeddings over half of each head (`RotaryEmbedding(rotary_dim // 2)`);
    `word_embeddings` of `padded_vocab_size` and an `output_layer` of its own, without bias.
    `hidden_dropout` drops the attention's and the MLP's outputs. Refused: a residual taken
    after the norm or kept in fp32 (`apply_residual_connection_post_layernorm`,
    `fp32_residual_connection`), which the estimates do not model."""
    keys.require_false("apply_residual_connection_post_layernorm")
    keys.require_false("fp32_residual_connection")
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    head_dim = keys.get_opt_int("kv_channels") or derived_head_dim(keys, hidden, heads)
    kv_heads = keys.get_int("multi_query_group_num", default=1) \
        if keys.get_bool("multi_query_attention", False) else heads
    linear_bias = keys.get_bool("add_bias_linear", False)
    rmsnorm = keys.get_bool("rmsnorm", True)
    dropout = keys.get_float("hidden_dropout", 0.0)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_layers"), hidden_size=hidden,
        intermediate_size=keys.get_int("ffn_hidden_size"), n_heads=heads, n_kv_heads=kv_heads,
        head_dim=head_dim, vocab_size=keys.get_int("padded_vocab_size"), tied_embeddings=False,
        mlp=MlpKind.GATED, activation="silu",
        qkv_bias=linear_bias or keys.get_bool("add_qkv_bias", False),
        attn_out_bias=linear_bias, mlp_bias=linear_bias,
        norm=NormKind.RMSNORM if rmsnorm else NormKind.LAYERNORM, norm_bias=not rmsnorm,
        position=PositionKind.ROPE, max_position_embeddings=keys.get_int("seq_length"),
        fused_qkv=True, fused_gate_up=True, partial_rotary_factor=0.5,
        final_norm=keys.get_bool("post_layer_norm", True), dtype=keys.dtype(),
        attention_dropout=keys.get_float("attention_dropout", 0.0),
        attention_output_dropout=dropout, mlp_output_dropout=dropout,
    )


def _baichuan(keys: ConfigKeys) -> Architecture:
    """Baichuan 2 `modeling_baichuan.py` (baichuan-inc/Baichuan2-13B-Chat, read in a git mirror;
    Baichuan2-7B's file in a third party's annotated copy): one fused `W_pack` of 3 x
    hidden_size and `o_proj`, full multi-head attention; gate/up/down SwiGLU; RMSNorms; an
    untied `NormHead`; no biases. The 13B file takes ALiBi and `model_max_length` positions,
    the 7B file rotary embeddings and `max_position_embeddings`: a config with
    `max_position_embeddings` is read as the 7B layout, one without as the 13B layout. Without
    xformers the attention is written out, its softmax in the scores' dtype; there is no
    FlashAttention path."""
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    rotary = "max_position_embeddings" in keys.config
    positions = keys.get_int("max_position_embeddings" if rotary else "model_max_length")
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_hidden_layers"), hidden_size=hidden,
        intermediate_size=keys.get_int("intermediate_size"), n_heads=heads, n_kv_heads=heads,
        head_dim=derived_head_dim(keys, hidden, heads), vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", False), mlp=MlpKind.GATED,
        activation=keys.get_str("hidden_act", default="silu"), qkv_bias=False,
        attn_out_bias=False, mlp_bias=False, norm=NormKind.RMSNORM, norm_bias=False,
        position=PositionKind.ROPE if rotary else PositionKind.ALIBI,
        max_position_embeddings=positions, fused_qkv=True, eager_softmax_fp32=False,
        flash_attention=False, dtype=keys.dtype(),
    )


def _internlm2(keys: ConfigKeys) -> Architecture:
    """InternLM2 and InternLM2.5 `modeling_internlm2.py` (OpenGVLab/InternVL's copy of the first
    file): Llama's layout with one fused `wqkv` of (heads + 2 x key-value heads) x head_dim,
    grouped per key-value head, and `wo` (bias when `bias`), `w1`/`w3`/`w2` SwiGLU without
    bias, RMSNorms, an untied `output` head. The file picks its attention from the config's own
    `attn_implementation` key (`eager` in the published files; `flash_attention_2` the other
    choice, no SDPA path), so SDPA asked of transformers runs the eager attention."""
    bias = keys.get_bool("bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False)
    return replace_fields(base, fused_qkv=True, sdpa_attention=False)


READERS: dict[str, Callable[[ConfigKeys], Architecture]] = {
    "qwen": _qwen,
    "chatglm": _chatglm,
    "baichuan": _baichuan,
    "internlm2": _internlm2,
}
"""The `model_type` values this module reads."""

REMOTE_CODE_TYPES = frozenset(READERS)
"""Model types transformers cannot build: their code is the checkpoint's own."""
