"""config.json readers of the dense families released since 2024: Qwen3, Gemma 3 (text and the
multimodal wrapper), OLMo 2, Command R and R7B (`cohere`, `cohere2`), Granite 3, StarCoder2,
SmolLM3.

Part of the config.json layer (`vramplan.model.hf_config` holds the registry and the rules); each
reader names the transformers 5.24 file whose layers it mirrors. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from vramplan.model.architecture import (
    Architecture,
    MlpKind,
    NormKind,
    PositionKind,
    QkNormKind,
)
from vramplan.model.hf_common import (
    ConfigKeys,
    Dropout,
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
}
"""The `model_type` values this module reads."""
