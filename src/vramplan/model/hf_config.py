"""Hugging Face `config.json` -> `Architecture`. The only module that knows HF key names.

Each supported `model_type` has one small reader that mirrors how the transformers module of that
family builds its layers (the file is named in each reader's docstring). A key that the family needs
and the config lacks is an error naming it; a key the transformers config class gives a default to
takes that same default (the config class is the definition of the format, so that is not a guess).
An unsupported `model_type` is an error listing the supported ones.

`load_config` and `check_safetensors_index` read files; everything else is pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vramplan.files import read_text_file
from vramplan.model import hf_dense_families, hf_moe_families, hf_remote_code
from vramplan.model.architecture import Architecture, MlpKind, NormKind, PositionKind, QkNormKind
from vramplan.model.hf_common import (
    MAX_CONFIG_BYTES,
    ConfigError,
    ConfigFileError,
    ConfigKeys,
    Dropout,
    InvalidConfigValue,
    MissingConfigKey,
    head_dim_of,
    json_object,
    llama_like,
    replace_fields,
    rotary_factor,
    with_window,
)

__all__ = ["CONFIG_FILE", "DTYPE_BYTES", "SAFETENSORS_INDEX_FILE", "SUPPORTED_MODEL_TYPES",
           "ConfigError", "ConfigFileError", "InvalidConfigValue", "MissingConfigKey",
           "MissingModelType", "SafetensorsCheck", "UnsupportedModelType",
           "check_safetensors_index", "load_config", "parse_config", "parse_config_text",
           "read_config_file"]

CONFIG_FILE = "config.json"
SAFETENSORS_INDEX_FILE = "model.safetensors.index.json"

# --- errors ---------------------------------------------------------------------------------------


class MissingModelType(ConfigError):
    """No `model_type` key: the family cannot be known (and is never guessed)."""

    key = "error.config_no_model_type"

    def __init__(self) -> None:
        super().__init__("model_type", choices=", ".join(SUPPORTED_MODEL_TYPES))


class UnsupportedModelType(ConfigError):
    """A `model_type` no reader exists for."""

    key = "error.config_model_type"

    def __init__(self, model_type: str) -> None:
        super().__init__(model_type, choices=", ".join(SUPPORTED_MODEL_TYPES))


# --- one reader per family ------------------------------------------------------------------------


def _llama(keys: ConfigKeys) -> Architecture:
    bias = keys.get_bool("attention_bias", False)
    return llama_like(keys, qkv_bias=bias, attn_out_bias=bias,
                      mlp_bias=keys.get_bool("mlp_bias", False), tied_default=False,
                      kv_heads_default_mha=True)


def _mistral(keys: ConfigKeys) -> Architecture:
    """models/mistral/: Llama's layout; `sliding_window` (if set) applies to every layer."""
    base = llama_like(keys, qkv_bias=False, attn_out_bias=False, mlp_bias=False,
                      tied_default=False)
    return with_window(base, keys.get_opt_int("sliding_window"))


def _qwen2(keys: ConfigKeys) -> Architecture:
    """models/qwen2/modeling_qwen2.py: bias on q/k/v only. configuration_qwen2.py: the sliding
    window is used only when `use_sliding_window`, on layers `max_window_layers` and after."""
    base = llama_like(keys, qkv_bias=True, attn_out_bias=False, mlp_bias=False,
                      tied_default=False)
    if not keys.get_bool("use_sliding_window", False):
        return base
    first = keys.get_opt_int("max_window_layers") or 0
    return with_window(base, keys.get_opt_int("sliding_window"), first)


def _mixtral(keys: ConfigKeys) -> Architecture:
    """models/mixtral/modeling_mixtral.py: a router (no bias) and `num_local_experts` SwiGLU experts
    of `intermediate_size` in every block."""
    base = _mistral(keys)
    return replace_fields(base, n_experts=keys.get_int("num_local_experts"),
                          experts_per_token=keys.get_int("num_experts_per_tok"))


def _gemma(keys: ConfigKeys) -> Architecture:
    """models/gemma/modeling_gemma.py: GeGLU, explicit head_dim, tied head, embeddings scaled by
    sqrt(hidden_size) (no parameter)."""
    bias = keys.get_bool("attention_bias", False)  # GemmaAttention: q/k/v/o
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=True)
    # GemmaMLP uses `hidden_activation` and falls back to gelu_pytorch_tanh when it is null,
    # whatever `hidden_act` says (the first Gemma configs carry hidden_act "gelu").
    activation = keys.get_str("hidden_activation", default="gelu_pytorch_tanh")
    # GemmaRMSNorm: `output * (1.0 + self.weight.float())`, cast after (modeling_gemma.py)
    return replace_fields(base, activation=activation, embedding_scale=math.sqrt(base.hidden_size),
                          norm_scale_fp32=True)


def _gemma2(keys: ConfigKeys) -> Architecture:
    """models/gemma2/modeling_gemma2.py: Gemma plus post-attention and post-feedforward norms (four
    per block); configuration_gemma2.py: the sliding window is on every other layer (0, 2, 4...)."""
    base = _gemma(keys)
    window = keys.get_opt_int("sliding_window")
    # Gemma2Config defaults: attn_logit_softcapping=50.0, final_logit_softcapping=30.0
    # (configuration_gemma2.py); a null value turns soft-capping off
    return replace_fields(
        base, sandwich_norms=True, sliding_window=window,
        sliding_window_layers=(base.n_layers + 1) // 2 if window else 0,
        attn_logit_softcapping=keys.get_opt_float("attn_logit_softcapping", 50.0),
        final_logit_softcapping=keys.get_opt_float("final_logit_softcapping", 30.0))



def _phi(keys: ConfigKeys) -> Architecture:
    """models/phi/modeling_phi.py (Phi-1, Phi-1.5, Phi-2): parallel block under one LayerNorm,
    biases everywhere, plain GELU MLP, partial rotary, untied head with a bias."""
    keys.require_false("qk_layernorm")
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_hidden_layers"), hidden_size=hidden,
        intermediate_size=keys.get_int("intermediate_size"), n_heads=heads,
        n_kv_heads=keys.get_int("num_key_value_heads", default=heads),
        head_dim=head_dim_of(keys, hidden, heads), vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", False), mlp=MlpKind.PLAIN,
        activation=keys.get_str("hidden_act", default="gelu_new"), qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True, norm=NormKind.LAYERNORM, norm_bias=True, position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("max_position_embeddings"), parallel_block=True,
        shared_block_norm=True, head_bias=True,
        partial_rotary_factor=keys.get_float("partial_rotary_factor", 0.5),
        rope_theta=keys.get_float("rope_theta", 10000.0), dtype=keys.dtype(),
        **_phi_dropout(keys),
    )


def _phi_dropout(keys: ConfigKeys) -> Dropout:
    """modeling_phi.py: `embed_dropout` (embd_pdrop) on the embeddings, `attention_dropout` on
    the probabilities, `resid_dropout` (resid_pdrop) on the attention output and on the MLP
    output (PhiDecoderLayer.forward); PhiConfig defaults all three to 0.0."""
    resid = keys.get_float("resid_pdrop", 0.0)
    return {"embedding_dropout": keys.get_float("embd_pdrop", 0.0),
            "attention_dropout": keys.get_float("attention_dropout", 0.0),
            "attention_output_dropout": resid, "mlp_output_dropout": resid}


def _phi3(keys: ConfigKeys) -> Architecture:
    """models/phi3/modeling_phi3.py: fused qkv_proj and gate_up_proj, no biases, RMSNorm."""
    base = llama_like(keys, qkv_bias=False, attn_out_bias=False, mlp_bias=False,
                      tied_default=False, kv_heads_default_mha=True)
    base = with_window(base, keys.get_opt_int("sliding_window"))  # every layer
    # Phi3DecoderLayer: resid_attn_dropout and resid_mlp_dropout (resid_pdrop, Phi3Config 0.0)
    resid = keys.get_float("resid_pdrop", 0.0)
    return replace_fields(base, fused_qkv=True, fused_gate_up=True,
                          partial_rotary_factor=keys.get_float("partial_rotary_factor", 1.0),
                          attention_output_dropout=resid, mlp_output_dropout=resid)


def _falcon(keys: ConfigKeys) -> Architecture:
    """models/falcon/modeling_falcon.py: fused query_key_value; multi-query (one k/v head) unless
    `new_decoder_architecture` (then `num_kv_heads` groups and two LayerNorms, ln_attn and ln_mlp);
    parallel attention/MLP under one shared LayerNorm in the original architecture."""
    keys.require_false("alibi")
    hidden = keys.get_int("hidden_size", "n_embed")
    heads = keys.get_int("num_attention_heads", "n_head")
    new_arch = keys.get_bool("new_decoder_architecture", False)
    parallel = new_arch or keys.get_bool("parallel_attn", True)
    if new_arch:
        kv_heads = keys.get_int("num_kv_heads", "n_head_kv", default=heads)
        shared_norm = keys.get_int("num_ln_in_parallel_attn", default=2) == 1
    else:
        kv_heads = 1 if keys.get_bool("multi_query", True) else heads
        shared_norm = parallel
    bias = keys.get_bool("bias", False)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_hidden_layers", "n_layer"),
        hidden_size=hidden, intermediate_size=keys.get_int("ffn_hidden_size", default=4 * hidden),
        n_heads=heads, n_kv_heads=kv_heads, head_dim=head_dim_of(keys, hidden, heads),
        vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True),
        mlp=MlpKind.PLAIN, activation=keys.get_str("activation", default="gelu"), qkv_bias=bias,
        attn_out_bias=bias, mlp_bias=bias, norm=NormKind.LAYERNORM, norm_bias=True,
        position=PositionKind.ROPE, max_position_embeddings=keys.get_int(
            "max_position_embeddings", default=2048),
        parallel_block=parallel, shared_block_norm=shared_norm, fused_qkv=True,
        rope_theta=keys.get_float("rope_theta", 10000.0), dtype=keys.dtype(),
        **_falcon_dropout(keys, parallel),
    )


def _falcon_dropout(keys: ConfigKeys, parallel: bool) -> Dropout:
    """FalconDecoderLayer.forward: `dropout_add(attention_output, residual, attention_dropout)`
    in a sequential block, then `dropout_add(mlp_output, residual, hidden_dropout)`, where a
    parallel block has added attention_output to mlp_output first (one dropout); FalconAttention
    drops the probabilities with `attention_dropout`. No embedding dropout. FalconConfig: 0.0."""
    attention = keys.get_float("attention_dropout", 0.0)
    return {"attention_dropout": attention,
            "attention_output_dropout": 0.0 if parallel else attention,
            "mlp_output_dropout": keys.get_float("hidden_dropout", 0.0)}


def _gpt2(keys: ConfigKeys) -> Architecture:
    """models/gpt2/modeling_gpt2.py: Conv1D c_attn (fused q/k/v) and MLP with biases, LayerNorms,
    learned position embeddings (`n_positions`), tied head."""
    hidden = keys.get_int("n_embd", "hidden_size")
    heads = keys.get_int("n_head", "num_attention_heads")
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("n_layer", "num_hidden_layers"),
        hidden_size=hidden, intermediate_size=keys.get_int("n_inner", default=4 * hidden),
        n_heads=heads, n_kv_heads=heads, head_dim=head_dim_of(keys, hidden, heads),
        vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True),
        mlp=MlpKind.PLAIN, activation=keys.get_str("activation_function", default="gelu_new"),
        qkv_bias=True, attn_out_bias=True, mlp_bias=True, norm=NormKind.LAYERNORM,
        norm_bias=True, position=PositionKind.LEARNED,
        max_position_embeddings=keys.get_int("n_positions", "max_position_embeddings"),
        fused_qkv=True, dtype=keys.dtype(), eager_softmax_fp32=False,
        **_gpt2_dropout(keys, default=0.1),
    )


def _gpt2_dropout(keys: ConfigKeys, default: float) -> Dropout:
    """GPT-2, StarCoder and GPT-J: `drop` (embd_pdrop) on the embeddings, `attn_pdrop` on the
    probabilities, `resid_dropout` (resid_pdrop) after the attention's output projection and
    the MLP's `dropout` (resid_pdrop) after its last projection (modeling_gpt2.py GPT2Attention,
    GPT2MLP, GPT2Model; modeling_gpt_bigcode.py and modeling_gptj.py alike). GPT2Config and
    GPTBigCodeConfig default all three to 0.1, GPTJConfig to 0.0."""
    resid = keys.get_float("resid_pdrop", default)
    return {"embedding_dropout": keys.get_float("embd_pdrop", default),
            "attention_dropout": keys.get_float("attn_pdrop", default),
            "attention_output_dropout": resid, "mlp_output_dropout": resid}


def _gpt_bigcode(keys: ConfigKeys) -> Architecture:
    """models/gpt_bigcode/modeling_gpt_bigcode.py (StarCoder): GPT-2 layout with multi-query
    attention (one k/v head) in one fused c_attn."""
    base = _gpt2(keys)
    kv_heads = 1 if keys.get_bool("multi_query", True) else base.n_heads
    # its eager_attention_forward: `softmax(attn_weights, dim=-1, dtype=torch.float32)`
    return replace_fields(base, n_kv_heads=kv_heads, eager_softmax_fp32=True)


def _gpt_neox(keys: ConfigKeys) -> Architecture:
    """models/gpt_neox/modeling_gpt_neox.py (Pythia, StableLM-Alpha): fused query_key_value, two
    LayerNorms, parallel residual by default, partial rotary (`rotary_pct`), untied `embed_out`."""
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    bias = keys.get_bool("attention_bias", True)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_hidden_layers"), hidden_size=hidden,
        intermediate_size=keys.get_int("intermediate_size"), n_heads=heads, n_kv_heads=heads,
        head_dim=head_dim_of(keys, hidden, heads), vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", False), mlp=MlpKind.PLAIN,
        activation=keys.get_str("hidden_act", default="gelu"), qkv_bias=bias, attn_out_bias=bias,
        mlp_bias=True, norm=NormKind.LAYERNORM, norm_bias=True, position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("max_position_embeddings"),
        parallel_block=keys.get_bool("use_parallel_residual", True), fused_qkv=True,
        partial_rotary_factor=keys.get_float("rotary_pct", 0.25),
        rope_theta=keys.get_float("rotary_emb_base", 10000.0), dtype=keys.dtype(),
        **_gpt_neox_dropout(keys),
    )


def _gpt_neox_dropout(keys: ConfigKeys) -> Dropout:
    """modeling_gpt_neox.py: `emb_dropout`, `post_attention_dropout` and `post_mlp_dropout` all
    use `hidden_dropout`; GPTNeoXAttention drops the probabilities with `attention_dropout`
    (GPTNeoXConfig: 0.0 both)."""
    hidden = keys.get_float("hidden_dropout", 0.0)
    return {"embedding_dropout": hidden,
            "attention_dropout": keys.get_float("attention_dropout", 0.0),
            "attention_output_dropout": hidden, "mlp_output_dropout": hidden}


def _gptj(keys: ConfigKeys) -> Architecture:
    """models/gptj/modeling_gptj.py (GPT-J-6B): attention and MLP side by side under one LayerNorm
    (ln_1); q/k/v/out_proj without bias, fc_in/fc_out with bias; `rotary_dim` dimensions of each
    head rotated; lm_head with a bias, untied by default (GPTJConfig)."""
    hidden = keys.get_int("n_embd", "hidden_size")
    heads = keys.get_int("n_head", "num_attention_heads")
    head_dim = head_dim_of(keys, hidden, heads)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("n_layer", "num_hidden_layers"),
        hidden_size=hidden, intermediate_size=keys.get_int("n_inner", default=4 * hidden),
        n_heads=heads, n_kv_heads=heads, head_dim=head_dim, vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", False), mlp=MlpKind.PLAIN,
        activation=keys.get_str("activation_function", default="gelu_new"), qkv_bias=False,
        attn_out_bias=False, mlp_bias=True, norm=NormKind.LAYERNORM, norm_bias=True,
        position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("n_positions", "max_position_embeddings"),
        parallel_block=True, shared_block_norm=True, head_bias=True,
        partial_rotary_factor=rotary_factor(_gptj_rotary_dim(keys, head_dim), head_dim),
        rope_theta=10000.0,  # create_sinusoidal_positions: a fixed base of 10000
        # eager_attention_forward: `torch.matmul(query.to(torch.float32),
        # key.to(torch.float32).transpose(2, 3))`, the softmax in fp32
        eager_qk_fp32=True,
        dtype=keys.dtype(),
        **_gpt2_dropout(keys, default=0.0),
    )


def _gptj_rotary_dim(keys: ConfigKeys, head_dim: int) -> int:
    """GPTJConfig: `rotary_dim` 64 when absent; null rotates the whole head (GPTJAttention)."""
    if "rotary_dim" in keys.config and keys.config["rotary_dim"] is None:
        return head_dim
    rotary_dim = keys.get_int("rotary_dim", default=64)
    if rotary_dim > head_dim:
        raise InvalidConfigValue("rotary_dim", rotary_dim, "expect.at_most", n=head_dim)
    return rotary_dim


def _opt(keys: ConfigKeys) -> Architecture:
    """models/opt/modeling_opt.py (OPT-1.3B to 66B): q/k/v/out_proj and fc1 -> ReLU -> fc2, with
    biases when `enable_bias`; two LayerNorms per block before attention and MLP, a final
    LayerNorm; learned positions in `OPTLearnedPositionalEmbedding`, whose table has 2 rows more
    than `max_position_embeddings`; lm_head tied to embed_tokens (OPTConfig defaults)."""
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    _opt_require_supported_layout(keys, hidden)
    bias = keys.get_bool("enable_bias", True)
    affine = keys.get_bool("layer_norm_elementwise_affine", True)
    if hidden % heads:  # OPTAttention: head_dim = embed_dim // num_heads, else a ValueError
        raise InvalidConfigValue("num_attention_heads", heads, "expect.divisor", n=hidden)
    return Architecture(
        family=keys.model_type, n_layers=keys.get_int("num_hidden_layers"), hidden_size=hidden,
        intermediate_size=keys.get_int("ffn_dim"), n_heads=heads, n_kv_heads=heads,
        head_dim=hidden // heads, vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", True), mlp=MlpKind.PLAIN,
        activation=keys.get_str("activation_function", default="relu"), qkv_bias=bias,
        attn_out_bias=bias, mlp_bias=bias, norm=NormKind.LAYERNORM, norm_bias=affine,
        norm_weight=affine, position=PositionKind.LEARNED,
        max_position_embeddings=keys.get_int("max_position_embeddings", default=2048),
        position_offset=2, dtype=keys.dtype(),
        **_opt_dropout(keys),
    )


def _opt_dropout(keys: ConfigKeys) -> Dropout:
    """OPTDecoderLayer.forward: `nn.functional.dropout(hidden_states, p=self.dropout)` after
    self_attn and after fc2 (`dropout`, OPTConfig 0.1); OPTAttention drops the probabilities
    with `attention_dropout` (0.0). OPTDecoder keeps `config.dropout` but applies no embedding
    dropout."""
    hidden = keys.get_float("dropout", 0.1)
    return {"attention_dropout": keys.get_float("attention_dropout", 0.0),
            "attention_output_dropout": hidden, "mlp_output_dropout": hidden}


def _opt_require_supported_layout(keys: ConfigKeys, hidden: int) -> None:
    """Refuse the OPT layouts this reader does not model: `word_embed_proj_dim` other than
    `hidden_size` (OPT-350M's project_in/project_out), LayerNorms after the residual adds
    (`do_layer_norm_before: false`, OPT-350M), and `_remove_final_layer_norm`."""
    proj = keys.get_int("word_embed_proj_dim", default=hidden)
    if proj != hidden:
        raise InvalidConfigValue("word_embed_proj_dim", proj, "expect.equal_hidden_size",
                                 n=hidden)
    if not keys.get_bool("do_layer_norm_before", True):
        raise InvalidConfigValue("do_layer_norm_before", False, "expect.true_only")
    keys.require_false("_remove_final_layer_norm")


def _stablelm(keys: ConfigKeys) -> Architecture:
    """models/stablelm/modeling_stablelm.py (StableLM-3B-4E1T, StableLM 2): LayerNorms with bias,
    SwiGLU, optional q/k/v bias and per-head q/k LayerNorms (no bias), one shared norm when
    `use_parallel_residual`."""
    base = llama_like(keys, qkv_bias=keys.get_bool("use_qkv_bias", False), attn_out_bias=False,
                      mlp_bias=False, tied_default=False)
    parallel = keys.get_bool("use_parallel_residual", False)
    return replace_fields(
        base, norm=NormKind.LAYERNORM, norm_bias=True, parallel_block=parallel,
        shared_block_norm=parallel,
        qk_norm=QkNormKind.PER_HEAD if keys.get_bool("qk_layernorm", False) else QkNormKind.NONE,
        partial_rotary_factor=keys.get_float("partial_rotary_factor", 0.25),
        # StableLmDecoderLayer: `self.dropout` (hidden_dropout, StableLmConfig 0.0) on the MLP
        # output only
        mlp_output_dropout=keys.get_float("hidden_dropout", 0.0),
    )


def _olmo(keys: ConfigKeys) -> Architecture:
    """models/olmo/modeling_olmo.py (OLMo 1): LayerNorm without scale or bias (OlmoLayerNorm has no
    parameters), SwiGLU, optional attention bias."""
    bias = keys.get_bool("attention_bias", False)
    base = llama_like(keys, qkv_bias=bias, attn_out_bias=bias, mlp_bias=False,
                      tied_default=False, kv_heads_default_mha=True)
    return replace_fields(base, norm=NormKind.LAYERNORM, norm_weight=False,
                          layernorm_on_fp32_copy=True)



_READERS: dict[str, Callable[[ConfigKeys], Architecture]] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "phi": _phi,
    "phi3": _phi3,
    "falcon": _falcon,
    "gpt2": _gpt2,
    "gpt_bigcode": _gpt_bigcode,
    "gpt_neox": _gpt_neox,
    "gptj": _gptj,
    "opt": _opt,
    "stablelm": _stablelm,
    "olmo": _olmo,
    **hf_dense_families.READERS,
    **hf_moe_families.READERS,
    **hf_remote_code.READERS,
}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted(_READERS))
"""The `model_type` values `parse_config` reads."""


def parse_config(config: Mapping[str, Any]) -> Architecture:
    """The architecture a Hugging Face config.json mapping describes (pure: no I/O)."""
    if not isinstance(config, Mapping):
        raise ConfigFileError(type(config).__name__, "not_object")
    model_type = config.get("model_type")
    if model_type is None:
        raise MissingModelType
    if not isinstance(model_type, str) or model_type not in _READERS:
        raise UnsupportedModelType(str(model_type))
    return _READERS[model_type](ConfigKeys(config, model_type))


def parse_config_text(text: str, label: str = CONFIG_FILE) -> Architecture:
    """The architecture of config.json text pasted or uploaded by a user (pure: no I/O);
    `label` names it in errors."""
    return parse_config(json_object(text, label))


# --- files ----------------------------------------------------------------------------------------


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The JSON object in `path` (a config.json, or a model folder holding one)."""
    try:
        file = _config_path(Path(path))
    except OSError as error:  # a name too long for the file system, a loop of links...
        raise ConfigFileError(str(path), "unreadable",
                              cause=error.strerror or type(error).__name__) from None
    return read_json_file(file)


def read_json_file(file: Path) -> dict[str, Any]:
    """The JSON object in the regular file `file`, of at most `MAX_CONFIG_BYTES`
    (`vramplan.files.read_text_file`)."""
    label = str(file)

    def problem(reason: str, **params: object) -> ConfigFileError:
        return ConfigFileError(label, "not_json" if reason == "not_utf8" else reason, **params)

    return json_object(read_text_file(file, MAX_CONFIG_BYTES, problem), label)


def load_config(path: str | Path) -> Architecture:
    """The architecture of a local config.json file or model folder."""
    return parse_config(read_config_file(path))


def _config_path(path: Path) -> Path:
    return path / CONFIG_FILE if path.is_dir() else path


DTYPE_BYTES: Mapping[str, int] = {
    "float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "float8_e4m3fn": 1,
    "float8_e5m2": 1, "int8": 1, "uint8": 1,
}
"""Bytes per element of the `torch_dtype` names of config.json files (torch.dtype.itemsize)."""


@dataclass(frozen=True, slots=True)
class SafetensorsCheck:
    """The parameter count implied by a checkpoint's `total_size`, next to ours."""

    total_size_bytes: int
    """`metadata.total_size` of model.safetensors.index.json (bytes of all stored tensors)."""
    dtype_bytes: int
    params_from_index: float
    """total_size / dtype_bytes (not a whole number when tensors of several dtypes are stored)."""
    params_from_config: int

    @property
    def difference(self) -> float:
        return self.params_from_index - self.params_from_config

    @property
    def matches(self) -> bool:
        return self.params_from_index == self.params_from_config


def check_safetensors_index(path: str | Path, arch: Architecture,
                            dtype_bytes: int) -> SafetensorsCheck | None:
    """Cross-check `arch` against the folder's model.safetensors.index.json (None if there is none).

    A checkpoint that stores a tied head twice, or extra buffers, shows up as a difference: the
    caller reports it rather than hiding it.
    """
    folder = Path(path)
    folder = folder if folder.is_dir() else folder.parent
    index = folder / SAFETENSORS_INDEX_FILE
    if not index.is_file():
        return None
    data = read_json_file(index)
    try:
        total = data["metadata"]["total_size"]
    except (KeyError, TypeError):
        raise ConfigFileError(str(index), "not_json") from None
    if isinstance(total, bool) or not isinstance(total, int) or total <= 0:
        raise InvalidConfigValue("metadata.total_size", total, "expect.positive_int")
    return SafetensorsCheck(total, dtype_bytes, total / dtype_bytes, arch.params_total)
