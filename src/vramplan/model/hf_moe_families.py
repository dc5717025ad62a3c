"""config.json readers of the mixture-of-experts families: Qwen2-MoE, Qwen3-MoE, Llama 4,
DeepSeek-V2 and V3 (and R1, and Kimi K2, whose `kimi_k2` config is DeepSeek-V3's), gpt-oss,
GLM-4.5, OLMoE.

transformers 5 stores each layer's routed experts as two 3-D parameters (`experts.gate_up_proj`,
`experts.down_proj`): the count is the same as `n_experts` separate linears. Part of the
config.json layer (`vramplan.model.hf_config`); each reader names the transformers 5.24 file whose
layers it mirrors. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from vramplan.model.architecture import (
    Architecture,
    LatentAttention,
    LocalAttention,
    QkNormKind,
)
from vramplan.model.hf_common import (
    ConfigKeys,
    InvalidConfigValue,
    checkpoint_format,
    llama_like,
    local_layer_count,
    replace_fields,
    rotary_factor,
)
from vramplan.model.hf_vision import llama4_tower


def _qwen3_moe(keys: ConfigKeys) -> Architecture:
    """models/qwen3_moe/modeling_qwen3_moe.py: Qwen3's attention (q/k RMSNorm over head_dim);
    layer i holds a softmax top-k router (`gate`, no bias) and `num_experts` experts of
    `moe_intermediate_size` unless i is in `mlp_only_layers` or (i + 1) is no multiple of
    `decoder_sparse_step` (`Qwen3MoeDecoderLayer`), where a dense MLP of `intermediate_size`
    stands. `num_experts`, `num_experts_per_tok`, `moe_intermediate_size` and
    `num_key_value_heads` are required (their defaults are one model's)."""
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False)
    step = keys.get_int("decoder_sparse_step", default=1)
    mlp_only = set(keys.get_int_list("mlp_only_layers"))
    dense = tuple(layer for layer in range(base.n_layers)
                  if layer in mlp_only or (layer + 1) % step)
    return replace_fields(
        base, qk_norm=QkNormKind.PER_HEAD_SHARED, n_experts=keys.get_int("num_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok"),
        moe_intermediate_size=keys.get_int("moe_intermediate_size"), dense_layers=dense)


def _qwen2_moe(keys: ConfigKeys) -> Architecture:
    """models/qwen2_moe/modeling_qwen2_moe.py (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention
    (`Qwen2MoeAttention`: q/k/v with `qkv_bias`, true by default, o without); layer i holds a
    softmax top-k router (`Qwen2MoeTopKRouter`, no bias), `num_experts` experts of
    `moe_intermediate_size` and one shared expert (`Qwen2MoeMLP` of
    `shared_expert_intermediate_size`) scaled by the sigmoid of `shared_expert_gate` (a linear of
    one output, no bias) unless i is in `mlp_only_layers` or (i + 1) is no multiple of
    `decoder_sparse_step` (`Qwen2MoeDecoderLayer`), where a dense MLP of `intermediate_size`
    stands. Sizes are required (Qwen2MoeConfig's defaults are Qwen1.5-MoE-A2.7B's).
    configuration_qwen2_moe.py windows every other layer below `max_window_layers` when
    `use_sliding_window` (Qwen2's dense reader windows the layers from it on): not read here,
    refused."""
    keys.require_false("use_sliding_window")
    base = llama_like(keys, qkv_bias=keys.get_bool("qkv_bias", True), attn_out_bias=False,
                      mlp_bias=False, tied_default=False)
    step = keys.get_int("decoder_sparse_step", default=1)
    mlp_only = set(keys.get_int_list("mlp_only_layers"))
    dense = tuple(layer for layer in range(base.n_layers)
                  if layer in mlp_only or (layer + 1) % step)
    return replace_fields(
        base, n_experts=keys.get_int("num_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok"),
        moe_intermediate_size=keys.get_int("moe_intermediate_size"), n_shared_experts=1,
        shared_expert_intermediate_size=keys.get_int("shared_expert_intermediate_size"),
        shared_expert_gate=True, shared_experts_first=True, dense_layers=dense)


def _llama4(keys: ConfigKeys) -> Architecture:
    """models/llama4/modeling_llama4.py `Llama4ForConditionalGeneration` (Llama 4 Scout,
    Maverick): the `text_config` language model, the vision tower and the projector; the head is
    untied unless the top-level `tie_word_embeddings` says so."""
    text = _llama4_text(keys.sub("text_config"))
    vision = llama4_tower(keys.sub("vision_config"), text.hidden_size)
    return replace_fields(text, family=keys.model_type, vision=vision,
                          tied_embeddings=keys.get_bool("tie_word_embeddings", False),
                          dtype=keys.dtype() or text.dtype)


def _llama4_text(keys: ConfigKeys) -> Architecture:
    """`Llama4TextModel`: layers in `moe_layers` (by default every `interleave_moe_layer_step`-th,
    configuration_llama4.py) hold a sigmoid top-k router (`Llama4Router`, an nn.Linear without
    bias), `num_local_experts` experts of `intermediate_size` and one shared expert of the same
    width; the other layers a dense MLP of `intermediate_size_mlp`. The q/k L2 norm has no weight.
    Layers that apply RoPE (`no_rope_layers[i]` 1; by default all but every
    `no_rope_layer_interval`-th) use chunked attention of `attention_chunk_size` tokens; the
    others see the whole context. `head_dim`, `num_key_value_heads`, `num_local_experts`,
    `num_experts_per_tok` and `attention_chunk_size` (null allowed) are required."""
    keys.get_int("head_dim")  # required (llama_like would derive it)
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False)
    layers = base.n_layers
    step = keys.get_int("interleave_moe_layer_step", default=1)
    moe = set(keys.get_int_list("moe_layers") or range(step - 1, layers, step))
    dense = tuple(layer for layer in range(layers) if layer not in moe)
    interval = keys.get_int("no_rope_layer_interval", default=4)
    rope = keys.get_int_list("no_rope_layers") or tuple(
        int((layer + 1) % interval != 0) for layer in range(layers))
    chunk = keys.require_key("attention_chunk_size")
    chunk = None if chunk is None else keys.get_int("attention_chunk_size")
    local = local_layer_count(
        keys, layers, lambda layer: chunk is not None and layer < len(rope) and bool(rope[layer]))
    return replace_fields(
        base, intermediate_size=(keys.get_int("intermediate_size_mlp") if dense
                                 else base.intermediate_size),
        moe_intermediate_size=base.intermediate_size,
        n_experts=keys.get_int("num_local_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok"), n_shared_experts=1,
        dense_layers=dense, sliding_window=chunk, sliding_window_layers=local if chunk else 0,
        local_attention=LocalAttention.CHUNKED, experts_see_every_token=True,
        # its eager_attention_forward: `softmax(attn_weights, dim=-1)` in the scores' dtype
        eager_softmax_fp32=False,
        qk_norm=(QkNormKind.L2_PER_HEAD if keys.get_bool("use_qk_norm", True)
                 else QkNormKind.NONE))


def _deepseek_v3(keys: ConfigKeys) -> Architecture:
    """models/deepseek_v3/modeling_deepseek_v3.py (DeepSeek-V3, R1; Kimi K2): multi-head latent
    attention (`LatentAttention`); the first `first_k_dense_replace` layers hold a dense MLP of
    `intermediate_size`, the others a sigmoid router (a float32 parameter without bias; its
    `e_score_correction_bias` is a buffer), `n_routed_experts` experts of
    `moe_intermediate_size` and the shared experts as one MLP of `n_shared_experts` x that width.
    Keys and values are expanded to every head, whatever `num_key_value_heads` says. The MTP
    modules of `num_nextn_predict_layers` are recorded, not built (as in transformers). Every size
    is required: DeepseekV3Config's defaults are DeepSeek-V3's own."""
    heads = keys.get_int("num_attention_heads")
    q_lora = keys.require_key("q_lora_rank")
    mla = LatentAttention(
        kv_lora_rank=keys.get_int("kv_lora_rank"),
        qk_rope_head_dim=keys.get_int("qk_rope_head_dim"),
        qk_nope_head_dim=keys.get_int("qk_nope_head_dim"),
        v_head_dim=keys.get_int("v_head_dim"),
        q_lora_rank=None if q_lora is None else keys.get_int("q_lora_rank"))
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(ConfigKeys({**keys.config, "head_dim": mla.qk_head_dim,
                                  "num_key_value_heads": heads}, keys.model_type),
                      qkv_bias=bias, attn_out_bias=bias, mlp_bias=False, tied_default=False)
    return replace_fields(
        base, latent_attention=mla, router_fp32=True,
        partial_rotary_factor=rotary_factor(mla.qk_rope_head_dim, mla.qk_head_dim),
        n_experts=keys.get_int("n_routed_experts", "num_local_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok"),
        n_shared_experts=_shared_experts(keys),
        moe_intermediate_size=keys.get_int("moe_intermediate_size"),
        dense_layers=_first_dense(keys, base.n_layers),
        mtp_layers=_mtp_layers(keys), checkpoint_format=checkpoint_format(keys))


def _deepseek_v2(keys: ConfigKeys) -> Architecture:
    """models/deepseek_v2/modeling_deepseek_v2.py (DeepSeek-V2, V2-Lite): DeepSeek-V3's layout
    (`_deepseek_v3`: latent attention, with or without a query latent; dense first
    `first_k_dense_replace` layers; a float32 router, `DeepseekV2TopkRouter`; shared experts as one
    MLP of `n_shared_experts` x `moe_intermediate_size`). Its router is a softmax without V3's
    correction bias, a buffer either way. `DeepseekV2DecoderLayer` puts the experts in every layer
    from `first_k_dense_replace` on and ignores `moe_layer_freq`, which the original remote code
    applied: a value other than 1 is refused, as the two would count differently."""
    freq = keys.get_int("moe_layer_freq", default=1)
    if freq != 1:
        raise InvalidConfigValue(keys.path("moe_layer_freq"), freq, "expect.unsupported_option")
    return _deepseek_v3(keys)


def _first_dense(keys: ConfigKeys, n_layers: int) -> tuple[int, ...]:
    """The first `first_k_dense_replace` layers, required (0 allowed: every layer MoE)."""
    value = keys.require_key("first_k_dense_replace")
    count = 0 if value in (None, 0) else keys.get_int("first_k_dense_replace")
    return tuple(range(min(count, n_layers)))


def _shared_experts(keys: ConfigKeys) -> int:
    """`n_shared_experts`, required, 0 allowed (no shared MLP)."""
    value = keys.require_key("n_shared_experts")
    return 0 if value in (None, 0) else keys.get_int("n_shared_experts")


def _mtp_layers(keys: ConfigKeys) -> int:
    """`num_nextn_predict_layers` (0 when absent: the checkpoint says nothing of MTP modules)."""
    return 0 if not keys.config.get("num_nextn_predict_layers") else keys.get_int(
        "num_nextn_predict_layers")


def _gpt_oss(keys: ConfigKeys) -> Architecture:
    """models/gpt_oss/modeling_gpt_oss.py (gpt-oss-20b, 120b): q/k/v/o with `attention_bias`
    (true by default) and one learned sink logit per head (`sinks`); every layer a softmax top-k
    router with a bias and `num_local_experts` SwiGLU experts of `intermediate_size` with biases
    (`gate_up_proj_bias`, `down_proj_bias`); configuration_gpt_oss.py: `layer_types`, else sliding
    on even layers. `head_dim`, `num_key_value_heads` and `sliding_window` are required (their
    defaults are one model's)."""
    keys.get_int("head_dim")  # required (llama_like would derive it)
    bias = keys.get_bool("attention_bias", True)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=True, tied_default=False)
    # GptOssRMSNorm: `(self.weight * hidden_states).to(input_dtype)`, the scale in fp32
    return replace_fields(
        base, attention_sinks=True, router_bias=True, norm_scale_fp32=True,
        swiglu_limit=keys.get_float("swiglu_limit", 7.0),
        n_experts=keys.get_int("num_local_experts", "num_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok", "experts_per_token"),
        sliding_window=keys.get_int("sliding_window"),
        sliding_window_layers=local_layer_count(keys, base.n_layers,
                                                lambda layer: bool((layer + 1) % 2)),
        checkpoint_format=checkpoint_format(keys))


def _glm4_moe(keys: ConfigKeys) -> Architecture:
    """models/glm4_moe/modeling_glm4_moe.py (GLM-4.5, GLM-4.5-Air): `attention_bias` on q/k/v but
    not o; with `use_qk_norm`, an RMSNorm over head_dim on queries and keys; partial RoPE
    (`partial_rotary_factor`, 0.5); DeepSeek-V3's MoE (dense first `first_k_dense_replace`
    layers, a float32 sigmoid router, shared experts); MTP modules recorded, not built. Sizes are
    required (Glm4MoeConfig's defaults are one model's)."""
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=False, mlp_bias=False,
                      tied_default=False)
    qk_norm = (QkNormKind.PER_HEAD_SHARED if keys.get_bool("use_qk_norm", False)
               else QkNormKind.NONE)
    return replace_fields(
        base, qk_norm=qk_norm, router_fp32=True,
        partial_rotary_factor=keys.get_float("partial_rotary_factor", 0.5),
        n_experts=keys.get_int("n_routed_experts", "num_local_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok"),
        n_shared_experts=_shared_experts(keys),
        moe_intermediate_size=keys.get_int("moe_intermediate_size"),
        dense_layers=_first_dense(keys, base.n_layers),
        mtp_layers=_mtp_layers(keys), checkpoint_format=checkpoint_format(keys))


def _olmoe(keys: ConfigKeys) -> Architecture:
    """models/olmoe/modeling_olmoe.py (OLMoE): Llama's block with an RMSNorm on the whole query
    (`q_norm` over hidden_size) and on the whole key (`k_norm` over n_kv_heads x head_dim) before
    RoPE, `attention_bias` on q/k/v/o; every layer a softmax top-k router (`OlmoeTopKRouter`, no
    bias, in the input's dtype) and `num_experts` SwiGLU experts of `intermediate_size`.
    `head_dim` is hidden_size / num_attention_heads (the norms' widths assume it: another value is
    refused); `clip_qkv` clamps q, k and v in place, not modelled: refused. `num_experts` and
    `num_experts_per_tok` are required (OlmoeConfig's 64 and 8 are one model's)."""
    keys.require_false("clip_qkv")
    hidden, heads = keys.get_int("hidden_size"), keys.get_int("num_attention_heads")
    explicit = keys.get_opt_int("head_dim")
    if explicit is not None and explicit * heads != hidden:
        raise InvalidConfigValue(keys.path("head_dim"), explicit, "expect.unsupported_option")
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False, kv_heads_default_mha=True)
    return replace_fields(
        base, qk_norm=QkNormKind.PER_HEAD, n_experts=keys.get_int("num_experts"),
        experts_per_token=keys.get_int("num_experts_per_tok"))


READERS: dict[str, Callable[[ConfigKeys], Architecture]] = {
    "qwen2_moe": _qwen2_moe,
    "qwen3_moe": _qwen3_moe,
    "llama4": _llama4,
    "llama4_text": _llama4_text,
    "deepseek_v2": _deepseek_v2,
    "deepseek_v3": _deepseek_v3,
    "kimi_k2": _deepseek_v3,
    "gpt_oss": _gpt_oss,
    "glm4_moe": _glm4_moe,
    "olmoe": _olmoe,
}
"""The `model_type` values this module reads. `kimi_k2` (Kimi K2's config.json, whose
`architectures` is `DeepseekV3ForCausalLM`) is read as `deepseek_v3`: transformers has no
`kimi_k2` config class and rewrites it to `deepseek_v3` itself (models/kimi_k25/
configuration_kimi_k25.py)."""

TRANSFORMERS_MODEL_TYPE: dict[str, str] = {"kimi_k2": "deepseek_v3"}
"""The transformers `model_type` that builds a config of another name (for the tracer and the
tests that build the real model)."""
