"""config.json readers of the dense families released since 2024: Qwen3, Gemma 3 (text and the
multimodal wrapper), OLMo 2, Command R and R7B (`cohere`, `cohere2`), Granite 3, StarCoder2,
SmolLM3; of two families of 2021-2022 that the PEFT and DeepSpeed-Chat benchmarks use, BLOOM
and GPT-Neo; and of MosaicML's MPT (2023).

Part of the config.json layer (`vramplan.model.hf_config` holds the registry and the rules); each
reader names the transformers 5.24 file whose layers it mirrors. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from vramplan.model.architecture import (
    BLOOM_GELU,
    Architecture,
    MlpKind,
    NormKind,
    PositionKind,
    QkNormKind,
)
from vramplan.model.hf_common import (
    ConfigKeys,
    Dropout,
    InvalidConfigValue,
    derived_head_dim,
    llama_like,
    local_layer_count,
    replace_fields,
)
from vramplan.model.hf_vision import siglip_tower


def _qwen3(keys: ConfigKeys) -> Architecture:
    """models/qwen3/modeling_qwen3.py: Llama's layout with `attention_bias` on q/k/v/o and an
    RMSNorm over head_dim on queries and keys (`q_norm`, `k_norm`). `head_dim` and
    `num_key_value_heads` are required: Qwen3Config defaults them to constants of one model (128,
    32). configuration_qwen3.py: with `use_sliding_window`, layers from `max_window_layers` (28 by
    default) on are sliding."""
    keys.get_int("head_dim")  # required (llama_like would derive it)
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False)
    first = keys.get_int("max_window_layers", default=28)
    return replace_fields(base, qk_norm=QkNormKind.PER_HEAD_SHARED,
                          **_sliding(keys, base.n_layers, lambda layer: layer >= first))


def _sliding(keys: ConfigKeys, n_layers: int, default: Callable[[int], bool],
             switch: str = "use_sliding_window") -> dict[str, int | None]:
    """`sliding_window` and the count of sliding layers, when the `switch` key turns the window on
    (Qwen3Config and SmolLM3Config null the window otherwise)."""
    window = keys.get_opt_int("sliding_window") if keys.get_bool(switch, False) else None
    if window is None:
        return {"sliding_window": None, "sliding_window_layers": 0}
    return {"sliding_window": window,
            "sliding_window_layers": local_layer_count(keys, n_layers, default)}


def _gemma3_text(keys: ConfigKeys) -> Architecture:
    """models/gemma3/modeling_gemma3.py `Gemma3TextModel` (Gemma 3 1B, and the language model of
    4B to 27B): Gemma 2's four norms per block and embeddings scaled by sqrt(hidden_size), an
    RMSNorm over head_dim on queries and keys, no soft-capping unless set. `head_dim` and
    `num_key_value_heads` are required (Gemma3TextConfig defaults: 256 and 4, one model's);
    `vocab_size` and `max_position_embeddings` take the class defaults, 262,208 and 131,072,
    which the official 27B config.json relies on (it leaves both out). configuration_gemma3.py:
    `layer_types`, else every layer sliding but each `sliding_window_pattern`-th (6)."""
    keys.get_int("head_dim")  # required (llama_like would derive it)
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=True, vocab_default=262_208,
                      max_position_default=131_072)
    pattern = keys.get_int("sliding_window_pattern", default=6)
    window = keys.get_opt_int("sliding_window")
    layers = local_layer_count(keys, base.n_layers, lambda layer: bool((layer + 1) % pattern))
    return replace_fields(
        base, activation=keys.get_str("hidden_activation", default="gelu_pytorch_tanh"),
        embedding_scale=math.sqrt(base.hidden_size), sandwich_norms=True,
        qk_norm=QkNormKind.PER_HEAD_SHARED, norm_scale_fp32=True, sliding_window=window,
        sliding_window_layers=layers if window else 0,
        attn_logit_softcapping=keys.get_opt_float("attn_logit_softcapping", None),
        final_logit_softcapping=keys.get_opt_float("final_logit_softcapping", None))


def _gemma3(keys: ConfigKeys) -> Architecture:
    """models/gemma3/modeling_gemma3.py `Gemma3ForConditionalGeneration` (Gemma 3 4B, 12B, 27B): the
    `text_config` language model, a SigLIP `vision_config` tower and the projector; the head is
    tied to the language model's embedding unless the top-level `tie_word_embeddings` (default
    true) says otherwise; each image takes `mm_tokens_per_image` tokens (256)."""
    text = _gemma3_text(keys.sub("text_config"))
    vision = siglip_tower(keys.sub("vision_config"), text.hidden_size,
                          keys.get_int("mm_tokens_per_image", default=256))
    return replace_fields(text, family=keys.model_type, vision=vision,
                          tied_embeddings=keys.get_bool("tie_word_embeddings", True),
                          dtype=keys.dtype() or text.dtype)


def _olmo2(keys: ConfigKeys) -> Architecture:
    """models/olmo2/modeling_olmo2.py (OLMo 2): no norm on the inputs of attention and MLP, an
    RMSNorm on each of their outputs (`post_attention_layernorm`, `post_feedforward_layernorm`);
    queries and keys normed over their whole width (`q_norm` over n_heads x head_dim, `k_norm`
    over n_kv_heads x head_dim); `attention_bias` on q/k/v/o."""
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False, kv_heads_default_mha=True)
    # Olmo2RMSNorm: `(self.weight * hidden_states).to(input_dtype)`, the scale in fp32
    return replace_fields(base, qk_norm=QkNormKind.PER_HEAD, norms_after_sublayers=True,
                          norm_scale_fp32=True)


def _cohere(keys: ConfigKeys) -> Architecture:
    """models/cohere/modeling_cohere.py (Command R): attention and MLP side by side on one
    `input_layernorm`, a LayerNorm with a weight and no bias (`CohereLayerNorm`), also before the
    head; `attention_bias` on q/k/v/o; with `use_qk_norm`, per-head LayerNorms on queries and
    keys ([n_heads, head_dim] and [n_kv_heads, head_dim]); the tied head's logits scaled by
    `logit_scale` (no parameter)."""
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=True, kv_heads_default_mha=True)
    qk_norm = QkNormKind.PER_HEAD if keys.get_bool("use_qk_norm", False) else QkNormKind.NONE
    return replace_fields(base, norm=NormKind.LAYERNORM, norm_bias=False, parallel_block=True,
                          shared_block_norm=True, qk_norm=qk_norm, norm_python_layernorm=True)


def _cohere2(keys: ConfigKeys) -> Architecture:
    """models/cohere2/modeling_cohere2.py (Command R7B): Command R's parallel block, head_dim
    forced to hidden_size / num_attention_heads (Cohere2Config), no q/k norm;
    configuration_cohere2.py: `layer_types`, else sliding on every layer but each
    `sliding_window_pattern`-th (4), with RoPE only there; `sliding_window` required (its
    default, 4096, is one model's)."""
    bias = keys.get_bool("attention_bias", False)
    hidden, heads = keys.get_int("hidden_size"), keys.get_int("num_attention_heads")
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=True, kv_heads_default_mha=True)
    pattern = keys.get_int("sliding_window_pattern", default=4)
    window = keys.get_int("sliding_window")
    return replace_fields(
        base, head_dim=derived_head_dim(keys, hidden, heads),
        norm=NormKind.LAYERNORM, norm_bias=False, parallel_block=True, shared_block_norm=True,
        norm_python_layernorm=True, sliding_window=window,
        sliding_window_layers=local_layer_count(keys, base.n_layers,
                                                lambda layer: bool((layer + 1) % pattern)))


def _granite(keys: ConfigKeys) -> Architecture:
    """models/granite/modeling_granite.py (Granite 3): Llama's shapes with `attention_bias` and
    `mlp_bias`; its multipliers (embedding, attention, residual, logits) are scalars, not
    parameters."""
    bias = keys.get_bool("attention_bias", False)
    return llama_like(keys, qkv_bias=bias, attn_out_bias=bias,
                      mlp_bias=keys.get_bool("mlp_bias", False), tied_default=False,
                      kv_heads_default_mha=True)


def _starcoder2(keys: ConfigKeys) -> Architecture:
    """models/starcoder2/modeling_starcoder2.py (StarCoder2): q/k/v/o and a plain MLP (`c_fc` ->
    activation -> `c_proj`), biases when `use_bias`; LayerNorms with bias; head tied by default
    (Starcoder2Config); `sliding_window` on every layer when set; `num_key_value_heads` required
    (default 2, one model's)."""
    hidden, heads = keys.get_int("hidden_size"), keys.get_int("num_attention_heads")
    bias = keys.get_bool("use_bias", True)
    layers = keys.get_int("num_hidden_layers")
    window = keys.get_opt_int("sliding_window")
    return Architecture(
        family=keys.model_type, n_layers=layers, hidden_size=hidden,
        intermediate_size=keys.get_int("intermediate_size"), n_heads=heads,
        n_kv_heads=keys.get_int("num_key_value_heads"),
        head_dim=derived_head_dim(keys, hidden, heads),
        vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True), mlp=MlpKind.PLAIN,
        activation=keys.get_str("hidden_act", default="gelu_pytorch_tanh"), qkv_bias=bias,
        attn_out_bias=bias, mlp_bias=bias, norm=NormKind.LAYERNORM, norm_bias=True,
        position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("max_position_embeddings"),
        sliding_window=window, sliding_window_layers=layers if window else 0,
        rope_theta=keys.get_float("rope_theta", 10000.0), dtype=keys.dtype(),
        **_starcoder2_dropout(keys),
    )


def _starcoder2_dropout(keys: ConfigKeys) -> Dropout:
    """modeling_starcoder2.py: `embedding_dropout` on the embeddings, `attention_dropout` on the
    probabilities, `residual_dropout` on the attention's and the MLP's outputs (Starcoder2Config:
    0.0 each)."""
    residual = keys.get_float("residual_dropout", 0.0)
    return {"embedding_dropout": keys.get_float("embedding_dropout", 0.0),
            "attention_dropout": keys.get_float("attention_dropout", 0.0),
            "attention_output_dropout": residual, "mlp_output_dropout": residual}


def _smollm3(keys: ConfigKeys) -> Architecture:
    """models/smollm3/modeling_smollm3.py (SmolLM3): Llama's shapes with `attention_bias` and
    `mlp_bias`, tied head by default; every `no_rope_layer_interval`-th layer without RoPE (no
    parameter); configuration_smollm3.py: with `use_sliding_window`, the layers without RoPE
    flag (`no_rope_layers[i]` 0) are sliding. `num_key_value_heads` required (default 4)."""
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias,
                      mlp_bias=keys.get_bool("mlp_bias", False), tied_default=True)
    interval = keys.get_int("no_rope_layer_interval", default=4)
    rope = keys.get_int_list("no_rope_layers") or tuple(
        int((layer + 1) % interval != 0) for layer in range(base.n_layers))
    return replace_fields(base, **_sliding(
        keys, base.n_layers, lambda layer: layer < len(rope) and not rope[layer]))


BLOOM_TRAINED_CONTEXT = 2048
"""Tokens per training sequence of every BLOOM model (the model cards' "Sequence length: 2048
tokens"; Le Scao et al. 2022, arXiv:2211.05100, section 3.3). ALiBi has no position table, and
BloomConfig no context key: the `seq_length` some config.json files carry is read first."""


def _bloom(keys: ConfigKeys) -> Architecture:
    """models/bloom/modeling_bloom.py (BLOOM, BLOOMZ): the word embeddings go through a LayerNorm
    (`word_embeddings_layernorm`) before the first block; ALiBi, no position table; one fused
    `query_key_value` and `dense`, both with biases; `dense_h_to_4h` -> BloomGelu ->
    `dense_4h_to_h`, 4 x hidden_size whatever `n_inner` says, with biases; LayerNorms with bias
    before attention and MLP and before the head; head tied by default (BloomConfig).
    BloomConfig reads an `n_embed` key as hidden_size (its `__post_init__`, `n_embed` first),
    `n_head` / `num_attention_heads` and `n_layer` / `num_hidden_layers`; `hidden_dropout` drops
    the attention's and the MLP's outputs (`dropout_add`), `attention_dropout` the probabilities
    (0.0 both). `slow_but_exact` splits the output projections into `pretraining_tp` partial
    matmuls, not modelled: refused."""
    keys.require_false("slow_but_exact")
    hidden = keys.get_int("n_embed", "hidden_size")
    heads = keys.get_int("n_head", "num_attention_heads")
    hidden_dropout = keys.get_float("hidden_dropout", 0.0)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("n_layer", "num_hidden_layers"),
        hidden_size=hidden, intermediate_size=4 * hidden, n_heads=heads, n_kv_heads=heads,
        head_dim=derived_head_dim(keys, hidden, heads),
        vocab_size=keys.get_int("vocab_size", default=250_880),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True), mlp=MlpKind.PLAIN,
        # BloomGelu: a custom autograd Function (tanh approximation) that saves its input only
        activation=BLOOM_GELU, qkv_bias=True, attn_out_bias=True, mlp_bias=True,
        norm=NormKind.LAYERNORM, norm_bias=True, position=PositionKind.ALIBI,
        max_position_embeddings=keys.get_int("seq_length", default=BLOOM_TRAINED_CONTEXT),
        fused_qkv=True, embedding_norm=True, sdpa_attention=False, flash_attention=False,
        dtype=keys.dtype(), attention_dropout=keys.get_float("attention_dropout", 0.0),
        attention_output_dropout=hidden_dropout, mlp_output_dropout=hidden_dropout,
    )


def _gpt_neo(keys: ConfigKeys) -> Architecture:
    """models/gpt_neo/modeling_gpt_neo.py (GPT-Neo 125M to 2.7B): learned positions (`wpe`,
    `max_position_embeddings` rows); q/k/v_proj without bias, `out_proj` with one; `c_fc` ->
    activation (`gelu_new`) -> `c_proj`, `intermediate_size` or 4 x hidden_size, with biases;
    two LayerNorms per block and `ln_f`; head tied by default (GPTNeoConfig). Scores are not
    scaled by 1/sqrt(head_dim), and eager attention computes them in fp32 (`eager_qk_fp32`).
    `attention_types` lays out global and local layers (GPTNeoConfig
    `expand_attention_types_params`, which must give one per layer); a local layer masks all
    but the last `window_size` tokens in its own bool buffer but computes every score, and
    transformers caches every token for it (DynamicCache reads no window from GPTNeoConfig,
    which has no `sliding_window`), so no layer is modelled as windowed: every layer holds a
    `max_position_embeddings`^2 mask buffer (`causal_mask_buffers`). Dropout: `embed_dropout`
    on the embeddings, `attention_dropout` on the probabilities, `resid_dropout` on the
    attention's and the MLP's outputs (0.0 each)."""
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_heads", "num_attention_heads")
    layers = keys.get_int("num_layers", "num_hidden_layers")
    _gpt_neo_attention_layers(keys, layers)
    resid = keys.get_float("resid_dropout", 0.0)
    return Architecture(
        family=keys.model_type, n_layers=layers, hidden_size=hidden,
        intermediate_size=keys.get_int("intermediate_size", default=4 * hidden), n_heads=heads,
        n_kv_heads=heads, head_dim=derived_head_dim(keys, hidden, heads),
        vocab_size=keys.get_int("vocab_size", default=50_257),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True), mlp=MlpKind.PLAIN,
        activation=keys.get_str("activation_function", default="gelu_new"), qkv_bias=False,
        attn_out_bias=True, mlp_bias=True, norm=NormKind.LAYERNORM, norm_bias=True,
        position=PositionKind.LEARNED,
        max_position_embeddings=keys.get_int("max_position_embeddings", default=2048),
        eager_qk_fp32=True, causal_mask_buffers=True, sdpa_attention=False, dtype=keys.dtype(),
        embedding_dropout=keys.get_float("embed_dropout", 0.0),
        attention_dropout=keys.get_float("attention_dropout", 0.0),
        attention_output_dropout=resid, mlp_output_dropout=resid,
    )


_GPT_NEO_DEFAULT_TYPES = [[["global", "local"], 12]]
"""GPTNeoConfig's `attention_types` when the key is absent or null."""


def _gpt_neo_attention_layers(keys: ConfigKeys, layers: int) -> tuple[str, ...]:
    """The layer kinds `attention_types` expands to ([[kinds, repeat], ...], each list of kinds
    repeated), checked as GPTNeoConfig checks them: one `global` or `local` per layer."""
    types = keys.config.get("attention_types")
    types = _GPT_NEO_DEFAULT_TYPES if types is None else types
    kinds: list[str] = []
    valid = isinstance(types, list)
    for item in types if valid else ():
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list)
                and isinstance(item[1], int) and not isinstance(item[1], bool)
                and all(kind in ("global", "local") for kind in item[0])):
            valid = False
            break
        kinds += item[0] * item[1]
    if not valid or len(kinds) != layers:
        raise InvalidConfigValue(keys.path("attention_types"), types,
                                 "expect.attention_types", n=layers)
    return tuple(kinds)


def _mpt(keys: ConfigKeys) -> Architecture:
    """models/mpt/modeling_mpt.py (MosaicML MPT-7B): ALiBi, no position table (transformers builds
    no `wpe`, whatever `learned_pos_emb` says); one fused `Wqkv` of 3 x d_model and `out_proj`,
    no biases; `up_proj` -> exact GELU -> `down_proj`, 4 x d_model whatever `expansion_ratio`
    says; LayerNorms without bias (`norm_1.bias = None`) before attention and MLP and before the
    head; head tied (MptForCausalLM `_tied_weights_keys`). Eager attention only (no SDPA or
    FlashAttention path), its softmax on an fp32 copy of the scores. `attn_config.attn_pdrop`
    drops the probabilities, the attention's output and the MLP's output. Options transformers
    does not build as the original remote code did are refused: an `expansion_ratio` other than 4,
    `no_bias` false, `attn_config.alibi` false, `qk_ln`, a multi-query `attn_type`; so is
    `clip_qkv` (a clamp on the fused projection, which keeps its input: not modelled)."""
    attn = keys.sub("attn_config")
    if keys.get_int("expansion_ratio", default=4) != 4:
        raise InvalidConfigValue(keys.path("expansion_ratio"), keys.config["expansion_ratio"],
                                 "expect.unsupported_option")
    if not keys.get_bool("no_bias", True):
        raise InvalidConfigValue(keys.path("no_bias"), False, "expect.unsupported_option")
    if not attn.get_bool("alibi", True):
        raise InvalidConfigValue(attn.path("alibi"), False, "expect.unsupported_option")
    if attn.get_str("attn_type", default="multihead_attention") != "multihead_attention":
        raise InvalidConfigValue(attn.path("attn_type"), attn.config["attn_type"],
                                 "expect.unsupported_option")
    attn.require_false("qk_ln")
    attn.require_false("clip_qkv")
    hidden, heads = keys.get_int("d_model"), keys.get_int("n_heads")
    dropout = attn.get_float("attn_pdrop", 0.0)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("n_layers"), hidden_size=hidden,
        intermediate_size=4 * hidden, n_heads=heads, n_kv_heads=heads,
        head_dim=derived_head_dim(keys, hidden, heads), vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True), mlp=MlpKind.PLAIN,
        activation="gelu", qkv_bias=False, attn_out_bias=False, mlp_bias=False,
        norm=NormKind.LAYERNORM, norm_bias=False, position=PositionKind.ALIBI,
        max_position_embeddings=keys.get_int("max_seq_len"), fused_qkv=True,
        sdpa_attention=False, flash_attention=False, dtype=keys.dtype(),
        attention_dropout=dropout, attention_output_dropout=dropout, mlp_output_dropout=dropout,
    )


READERS: dict[str, Callable[[ConfigKeys], Architecture]] = {
    "qwen3": _qwen3,
    "gemma3_text": _gemma3_text,
    "gemma3": _gemma3,
    "olmo2": _olmo2,
    "cohere": _cohere,
    "cohere2": _cohere2,
    "granite": _granite,
    "starcoder2": _starcoder2,
    "smollm3": _smollm3,
    "bloom": _bloom,
    "gpt_neo": _gpt_neo,
    "mpt": _mpt,
}
"""The `model_type` values this module reads."""
