"""Reading Hugging Face config.json: family layouts, defaults, errors and the safetensors check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vramplan.i18n import Lang
from vramplan.model.architecture import MlpKind, NormKind, PositionKind, QkNormKind
from vramplan.model.hf_config import (
    SUPPORTED_MODEL_TYPES,
    ConfigFileError,
    InvalidConfigValue,
    MissingConfigKey,
    MissingModelType,
    UnsupportedModelType,
    check_safetensors_index,
    load_config,
    parse_config,
    parse_config_text,
)
from vramplan.presets.models import find_model

FIXTURES = Path(__file__).parent / "fixtures" / "configs"


def _config(name: str, **changes: Any) -> dict[str, Any]:
    config = dict(find_model(name).config)
    config.update(changes)
    return {key: value for key, value in config.items() if value is not ...}


def test_every_issue_family_is_supported() -> None:
    issue = {"llama", "mistral", "mixtral", "qwen2", "gemma", "gemma2", "phi", "phi3", "falcon",
             "gpt_bigcode", "gpt2", "gpt_neox", "stablelm", "olmo"}
    assert issue <= set(SUPPORTED_MODEL_TYPES)


def test_load_a_folder_and_a_file_alike() -> None:
    folder = load_config(FIXTURES / "llama-2-7b")
    file = load_config(FIXTURES / "llama-2-7b" / "config.json")
    assert folder == file
    assert folder.params_total == 6_738_415_616
    assert folder.dtype == "float16"


def test_llama_defaults_follow_the_transformers_config_class() -> None:
    # LlamaConfig: num_key_value_heads defaults to num_attention_heads (MHA).
    arch = parse_config(_config("llama-2-7b", num_key_value_heads=...))
    assert arch.n_kv_heads == arch.n_heads == 32


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "qwen2.5-7b", "gemma-7b", "gemma-2-9b"])
def test_kv_heads_are_required_where_the_class_default_is_a_constant(name: str) -> None:
    # MistralConfig defaults num_key_value_heads to 8, Qwen2Config to 32, GemmaConfig to 16...:
    # values of their reference models, which would be guesses for another model.
    with pytest.raises(MissingConfigKey) as raised:
        parse_config(_config(name, num_key_value_heads=...))
    assert "'num_key_value_heads'" in raised.value.message(Lang.EN)


def test_family_specific_layouts() -> None:
    qwen = parse_config(_config("qwen2.5-7b"))
    assert (qwen.qkv_bias, qwen.attn_out_bias, qwen.sliding_window) == (True, False, None)
    gemma2 = parse_config(_config("gemma-2-9b"))
    assert gemma2.norms_per_block == 4 and gemma2.tied_embeddings
    assert (gemma2.sliding_window, gemma2.sliding_window_layers) == (4096, 21)
    assert gemma2.activation == "gelu_pytorch_tanh"
    phi = parse_config(_config("phi-2"))
    assert phi.shared_block_norm and phi.head_bias and phi.mlp is MlpKind.PLAIN
    assert phi.rotary_dim == 32  # 80 x 0.4
    falcon7 = parse_config(_config("falcon-7b"))
    assert (falcon7.n_kv_heads, falcon7.norms_per_block, falcon7.tied_embeddings) == (1, 1, True)
    falcon40 = parse_config(_config("falcon-40b"))
    assert (falcon40.n_kv_heads, falcon40.norms_per_block) == (8, 2)
    starcoder = parse_config(_config("starcoder"))
    assert starcoder.n_kv_heads == 1 and starcoder.position is PositionKind.LEARNED
    neox = parse_config(_config("pythia-6.9b"))
    assert neox.parallel_block and not neox.shared_block_norm and neox.norms_per_block == 2
    olmo = parse_config(_config("olmo-7b"))
    assert olmo.norm is NormKind.LAYERNORM and olmo.norm_params == 0
    mistral = parse_config(_config("mistral-7b-v0.1"))
    assert (mistral.sliding_window, mistral.sliding_window_layers) == (4096, 32)


def test_gemma2_soft_capping_follows_the_config_class() -> None:
    """configuration_gemma2.py: attn_logit_softcapping 50.0, final_logit_softcapping 30.0 by
    default; null turns them off."""
    config = _config("gemma-2-9b")
    assert (parse_config(config).attn_logit_softcapping,
            parse_config(config).final_logit_softcapping) == (50.0, 30.0)
    absent = {k: v for k, v in config.items() if not k.endswith("_softcapping")}
    assert parse_config(absent).attn_logit_softcapping == 50.0
    off = {**config, "attn_logit_softcapping": None, "final_logit_softcapping": None}
    assert parse_config(off).attn_logit_softcapping is None
    assert parse_config(off).final_logit_softcapping is None
    assert parse_config(_config("gemma-2b")).attn_logit_softcapping is None


def test_falcon_old_key_names_are_read() -> None:
    config = _config("falcon-7b", num_attention_heads=..., num_hidden_layers=..., n_head=71,
                     n_layer=32)
    assert parse_config(config).params_total == 6_921_720_704


def test_llama1_has_the_shapes_of_llama2_at_2048_positions() -> None:
    # LLaMA 7B and Llama 2 7B differ in context length and RMSNorm epsilon, not in any weight
    # (arXiv:2302.13971 Table 2, arXiv:2307.09288 Table 1): the same 6,738,415,616 parameters.
    llama1 = parse_config(_config("llama-7b"))
    assert llama1.params_total == parse_config(_config("llama-2-7b")).params_total
    assert (llama1.n_kv_heads, llama1.max_position_embeddings, llama1.tied_embeddings) == (
        32, 2048, False)
    llama30 = parse_config(_config("llama-30b"))  # 52 heads of 128
    assert (llama30.n_heads, llama30.head_dim, llama30.n_layers) == (52, 128, 60)


def test_gpt_neox_20b_layout() -> None:
    neox = parse_config(_config("gpt-neox-20b"))
    assert neox.activation == "gelu_fast" and neox.parallel_block and neox.norms_per_block == 2
    assert (neox.head_dim, neox.rotary_dim) == (96, 24)  # rotary_pct 0.25 of 6144 / 64
    assert neox.qkv_bias and neox.attn_out_bias and not neox.tied_embeddings


def test_gptj_layout_and_rotary_dim() -> None:
    gptj = parse_config(_config("gpt-j-6b"))
    assert gptj.parallel_block and gptj.norms_per_block == 1 and gptj.head_bias
    assert not (gptj.qkv_bias or gptj.attn_out_bias or gptj.tied_embeddings) and gptj.mlp_bias
    assert (gptj.head_dim, gptj.rotary_dim, gptj.intermediate_size) == (256, 64, 16384)
    # GPTJConfig: rotary_dim 64 when absent; null rotates the whole head
    assert parse_config(_config("gpt-j-6b", rotary_dim=...)).rotary_dim == 64
    assert parse_config(_config("gpt-j-6b", rotary_dim=None)).rotary_dim == 256
    # a quotient that falls short when multiplied back (30 / 88 x 88 < 30) still gives 30
    odd = parse_config({**_config("gpt-j-6b"), "n_embd": 88 * 16, "rotary_dim": 30})
    assert odd.rotary_dim == 30
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(_config("gpt-j-6b", rotary_dim=512))
    message = raised.value.message(Lang.EN)
    assert "'rotary_dim'" in message and "no larger than 256" in message


def test_gptj_block_count() -> None:
    # per block: q, k, v, out (4 x 4096^2, no bias), fc_in and fc_out with biases, one LayerNorm
    gptj = parse_config(_config("gpt-j-6b"))
    assert gptj.params_per_block == 4 * 4096**2 + 2 * 4096 * 16384 + 16384 + 4096 + 2 * 4096
    assert gptj.params_head == 50400 * 4096 + 50400  # untied lm_head with its bias


def test_opt_position_table_has_two_extra_rows() -> None:
    # transformers modeling_opt.py: OPTLearnedPositionalEmbedding(max_position_embeddings + 2)
    opt = parse_config(_config("opt-6.7b"))
    assert (opt.max_position_embeddings, opt.position_table_rows) == (2048, 2050)
    assert opt.params_position_embedding == 2050 * 4096
    assert opt.position is PositionKind.LEARNED and opt.tied_embeddings
    assert opt.activation == "relu" and opt.mlp is MlpKind.PLAIN and opt.norms_per_block == 2
    assert opt.qkv_bias and opt.attn_out_bias and opt.mlp_bias and opt.norm_bias
    # a public fp16 total for facebook/opt-6.7b: 13,316,947,968 bytes
    assert 2 * opt.params_total == 13_316_947_968


def test_other_families_have_no_position_offset() -> None:
    gpt2 = parse_config(_config("gpt2"))
    assert gpt2.position_table_rows == gpt2.max_position_embeddings == 1024
    assert parse_config(_config("llama-2-7b")).position_table_rows == 0


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("word_embed_proj_dim", 512, "equal to hidden_size"),
    ("do_layer_norm_before", False, "true (false is not supported yet)"),
    ("_remove_final_layer_norm", True, "not supported yet"),
])
def test_opt_layouts_not_modelled_are_refused(key: str, value: object, expected: str) -> None:
    # OPT-350M: 512-wide embeddings with project_in/project_out, LayerNorms after the residual
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config({**_config("opt-1.3b"), key: value})
    message = raised.value.message(Lang.EN)
    assert f"'{key}'" in message and expected in message


def test_stablelm_per_head_qk_norms() -> None:
    config = {"model_type": "stablelm", "hidden_size": 64, "intermediate_size": 96,
              "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
              "vocab_size": 100, "max_position_embeddings": 32, "qk_layernorm": True,
              "use_qkv_bias": True}
    arch = parse_config(config)
    assert arch.qk_norm is QkNormKind.PER_HEAD and arch.qkv_bias and arch.norm_bias
    assert arch.params_qk_norm == (4 + 2) * 16


def test_missing_key_is_named() -> None:
    with pytest.raises(MissingConfigKey) as raised:
        parse_config(_config("mistral-7b-v0.1", intermediate_size=...))
    message = raised.value.message(Lang.EN)
    assert "'intermediate_size'" in message and "'mistral'" in message
    assert "« intermediate_size »" in raised.value.message(Lang.FR)


def test_unsupported_model_type_lists_the_supported_ones() -> None:
    with pytest.raises(UnsupportedModelType) as raised:
        load_config(FIXTURES / "falcon-7b-refinedweb")
    message = raised.value.message(Lang.EN)
    assert "RefinedWebModel" in message and "falcon" in message and "llama" in message


def test_missing_model_type_is_never_guessed() -> None:
    config = _config("llama-2-7b", model_type=...)
    with pytest.raises(MissingModelType):
        parse_config(config)


@pytest.mark.parametrize(("key", "value"), [
    ("hidden_size", "4096"), ("hidden_size", 0), ("num_hidden_layers", True),
    ("tie_word_embeddings", "no"), ("rope_theta", "big"), ("num_attention_heads", 30),
])
def test_bad_values_are_refused_with_the_key(key: str, value: object) -> None:
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(_config("llama-2-7b", **{key: value}))
    assert f"'{key}'" in raised.value.message(Lang.EN)


@pytest.mark.parametrize(("name", "option"), [("falcon-7b", "alibi"),
                                              ("phi-2", "qk_layernorm")])
def test_options_not_modelled_are_refused_not_ignored(name: str, option: str) -> None:
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(_config(name, **{option: True}))
    assert "not supported" in raised.value.message(Lang.EN)


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError) as missing:
        load_config(tmp_path / "nowhere")
    assert missing.value.key == "error.config_file_not_found"
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigFileError) as broken:
        load_config(tmp_path)
    assert broken.value.key == "error.config_file_not_json"
    (tmp_path / "config.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigFileError) as not_object:
        load_config(tmp_path)
    assert not_object.value.key == "error.config_file_not_object"


def test_safetensors_index_agrees() -> None:
    arch = load_config(FIXTURES / "llama-2-7b")
    check = check_safetensors_index(FIXTURES / "llama-2-7b", arch, 2)
    assert check is not None and check.matches and check.difference == 0


def test_safetensors_index_disagreement_is_reported() -> None:
    arch = load_config(FIXTURES / "llama-2-7b-extra-tensor")
    check = check_safetensors_index(FIXTURES / "llama-2-7b-extra-tensor", arch, 2)
    assert check is not None and not check.matches
    assert check.difference == 32_000 * 4_096


def test_no_index_means_no_check(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(dict(find_model("gpt2").config)))
    assert check_safetensors_index(tmp_path, load_config(tmp_path), 4) is None


def test_sliding_window_layers_follow_each_family() -> None:
    # configuration_qwen2.py: only with use_sliding_window, on layers >= max_window_layers.
    qwen = parse_config(_config("qwen2.5-7b", use_sliding_window=True, sliding_window=4096,
                                max_window_layers=21))
    assert (qwen.sliding_window, qwen.sliding_window_layers) == (4096, 28 - 21)
    assert parse_config(_config("qwen2.5-7b", sliding_window=4096)).sliding_window is None
    # LlamaModel has no sliding window: a stray key changes nothing.
    assert parse_config(_config("llama-3-8b", sliding_window=4096)).sliding_window is None
    phi3 = parse_config(_config("phi-3-mini-4k"))
    assert (phi3.sliding_window, phi3.sliding_window_layers) == (2047, 32)
    assert parse_config(_config("mistral-7b-v0.3")).sliding_window is None


def test_pasted_text_is_parsed_or_refused_by_name() -> None:
    text = (FIXTURES / "llama-2-7b" / "config.json").read_text(encoding="utf-8")
    assert parse_config_text(text).params_total == 6_738_415_616
    with pytest.raises(ConfigFileError) as raised:
        parse_config_text("{", label="upload.json")
    assert "'upload.json'" in raised.value.message(Lang.EN)
    with pytest.raises(ConfigFileError):
        parse_config_text("42")


_TINY = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 128,
         "max_position_embeddings": 256, "intermediate_size": 128}


@pytest.mark.parametrize(("config", "rates"), [
    # GPT2Config: embd_pdrop, attn_pdrop, resid_pdrop 0.1 (embedding, probabilities, both outputs)
    ({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "vocab_size": 128,
      "n_positions": 256}, (0.1, 0.1, 0.1, 0.1)),
    # OPTConfig: dropout 0.1 after self_attn and fc2, attention_dropout 0.0, no embedding dropout
    ({"model_type": "opt", **_TINY, "ffn_dim": 128}, (0.0, 0.0, 0.1, 0.1)),
    # GPT-NeoX: hidden_dropout on the embeddings and both outputs
    ({"model_type": "gpt_neox", **_TINY, "hidden_dropout": 0.2, "attention_dropout": 0.3},
     (0.2, 0.3, 0.2, 0.2)),
    # Falcon's parallel block: one dropout (hidden_dropout) on the sum of both branches
    ({"model_type": "falcon", **_TINY, "hidden_dropout": 0.2, "attention_dropout": 0.3},
     (0.0, 0.3, 0.0, 0.2)),
    ({"model_type": "phi", **_TINY, "resid_pdrop": 0.1}, (0.0, 0.0, 0.1, 0.1)),
    ({"model_type": "llama", **_TINY, "attention_dropout": 0.1}, (0.0, 0.1, 0.0, 0.0)),
], ids=["gpt2", "opt", "gpt_neox", "falcon", "phi", "llama"])
def test_dropout_rates_read_per_family(config: dict[str, object],
                                       rates: tuple[float, float, float, float]) -> None:
    arch = parse_config(config)
    assert (arch.embedding_dropout, arch.attention_dropout, arch.attention_output_dropout,
            arch.mlp_output_dropout) == rates


# --- the 2024-2026 families ---------------------------------------------------------------------


def test_every_family_of_issue_15_is_supported() -> None:
    assert {"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "llama4", "deepseek_v3", "kimi_k2",
            "gpt_oss", "olmo2", "glm4_moe", "cohere", "cohere2", "granite", "starcoder2",
            "smollm3"} <= set(SUPPORTED_MODEL_TYPES)


@pytest.mark.parametrize(("name", "key"), [
    ("qwen3-8b", "head_dim"),             # Qwen3Config's 128 is one model's
    ("gemma-3-1b", "head_dim"),
    ("gpt-oss-20b", "sliding_window"),
    ("deepseek-v3", "q_lora_rank"),       # null is allowed, absent is not
    ("deepseek-v3", "first_k_dense_replace"),
    ("qwen3-30b-a3b", "num_experts"),
])
def test_a_class_default_of_one_model_is_required(name: str, key: str) -> None:
    with pytest.raises(MissingConfigKey) as raised:
        parse_config(_config(name, **{key: ...}))
    assert raised.value.value == key


def test_a_nested_key_is_named_with_its_path() -> None:
    config = json.loads(json.dumps(dict(find_model("gemma-3-27b").config)))
    del config["text_config"]["hidden_size"]
    with pytest.raises(MissingConfigKey) as raised:
        parse_config(config)
    assert raised.value.message(Lang.EN) == (
        "config: the key 'text_config.hidden_size' is missing (it is required for model_type "
        "'gemma3')")


def test_a_siglip_tower_with_its_pooling_head_is_refused_not_miscounted() -> None:
    config = json.loads(json.dumps(dict(find_model("gemma-3-4b").config)))
    config["vision_config"]["vision_use_head"] = True
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(config)
    assert raised.value.value == "vision_config.vision_use_head"


@pytest.mark.parametrize("layer_types", [["full_attention"], ["sliding_attention", "linear"],
                                         "sliding_attention"])
def test_layer_types_must_list_every_layer_by_a_known_type(layer_types: object) -> None:
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(_config("gpt-oss-20b", layer_types=layer_types, num_hidden_layers=2))
    assert raised.value.value == "layer_types"


def test_layer_types_decide_the_local_layers() -> None:
    types = ["sliding_attention", "full_attention"] * 12
    arch = parse_config(_config("gpt-oss-20b", layer_types=types))
    assert (arch.sliding_window, arch.sliding_window_layers) == (128, 12)
    alternated = parse_config(_config("gpt-oss-20b", layer_types=...))  # the class's own rule
    assert alternated.sliding_window_layers == 12


def test_the_families_read_their_layout() -> None:
    gemma = parse_config(dict(find_model("gemma-3-27b").config))
    assert (gemma.sliding_window, gemma.sliding_window_layers) == (1024, 52)  # 5 of every 6
    assert gemma.vocab_size == 262_208 and gemma.max_position_embeddings == 131_072
    assert gemma.vision is not None and gemma.vision.tokens_per_image == 256
    maverick = parse_config(dict(find_model("llama-4-maverick-17b-128e-instruct").config))
    assert maverick.dense_layers == tuple(range(0, 48, 2))
    assert (maverick.intermediate_size, maverick.expert_intermediate_size) == (16384, 8192)
    assert maverick.sliding_window_layers == 36 and maverick.vision is not None
    v3 = parse_config(dict(find_model("deepseek-v3").config))
    assert v3.dense_layers == (0, 1, 2) and v3.mtp_layers == 1
    assert v3.checkpoint_format == "fp8-block128" and v3.latent_attention is not None
    assert v3.latent_attention.cached_values_per_token == 576
    kimi = parse_config(dict(find_model("kimi-k2").config))
    assert (kimi.family, kimi.n_experts, kimi.n_heads, kimi.mtp_layers) == ("kimi_k2", 384, 64, 0)
    oss = parse_config(dict(find_model("gpt-oss-120b").config))
    assert oss.attention_sinks and oss.checkpoint_format == "mxfp4" and oss.router_bias
    olmo = parse_config(dict(find_model("olmo-2-32b").config))
    assert olmo.norms_after_sublayers and olmo.qk_norm is QkNormKind.PER_HEAD
    cohere = parse_config(dict(find_model("aya-23-8b").config))
    assert cohere.parallel_block and cohere.norm is NormKind.LAYERNORM and not cohere.norm_bias
    assert parse_config(dict(find_model("smollm3-3b").config)).sliding_window is None
    coder = parse_config(dict(find_model("starcoder2-7b").config))
    assert coder.mlp is MlpKind.PLAIN and coder.tied_embeddings and coder.sliding_window == 4096


def test_qwen3_moe_dense_layers_follow_the_sparse_step_and_mlp_only_layers() -> None:
    arch = parse_config(_config("qwen3-30b-a3b", decoder_sparse_step=2, mlp_only_layers=[1]))
    # layers 0, 2, 4, ... fail (i + 1) % 2 == 0; layer 1 is listed
    assert arch.dense_layers == (0, 1, *range(2, 48, 2))


@pytest.mark.parametrize(("name", "params"), [
    # keras-team/keras-hub bloom_presets.py (its `params`, of the same checkpoints)
    ("bloom-560m", 559_214_592), ("bloom-1b1", 1_065_314_304), ("bloom-1b7", 1_722_408_960),
    ("bloom-3b", 3_002_557_440),
    # the bigscience/bloom-7b1 model card: 7,069,016,064 parameters
    ("bloom-7b1", 7_069_016_064),
    # the bigscience/bloom model card: "176,247,271,424 parameters: 3,596,615,680 embedding
    # parameters" (copies of the card in the code-search index, e.g. file id 6345836259)
    ("bloom-176b", 176_247_271_424),
])
def test_bloom_counts_equal_the_published_ones(name: str, params: int) -> None:
    assert parse_config(_config(name)).params_total == params


def test_bloom_layout() -> None:
    # modeling_bloom.py: word_embeddings_layernorm, ALiBi, fused query_key_value with biases,
    # 4 x hidden MLP (n_inner ignored), tied head; the model card's 1,027,604,480 embedding
    # parameters for bloom-7b1
    bloom = parse_config(_config("bloom-7b1"))
    assert bloom.params_token_embedding == 1_027_604_480
    assert bloom.position is PositionKind.ALIBI and bloom.params_position_embedding == 0
    assert bloom.embedding_norm and bloom.params_embedding_norm == 2 * 4096
    assert bloom.fused_qkv and bloom.qkv_bias and bloom.attn_out_bias and bloom.mlp_bias
    assert bloom.intermediate_size == 4 * 4096 and bloom.tied_embeddings
    assert bloom.max_position_embeddings == 2048  # trained context (no key in BloomConfig)
    assert not (bloom.sdpa_attention or bloom.flash_attention)


def test_bloom_reads_n_embed_first_as_bloom_config_does() -> None:
    # BloomConfig.__post_init__: `hidden_size = hidden_size if n_embed is None else n_embed`
    config = {"model_type": "bloom", "n_embed": 64, "hidden_size": 32, "n_layer": 2,
              "num_attention_heads": 4, "vocab_size": 100, "seq_length": 512}
    arch = parse_config(config)
    assert (arch.hidden_size, arch.n_heads, arch.max_position_embeddings) == (64, 4, 512)


def test_bloom_slow_but_exact_is_refused() -> None:
    # pretraining_tp partial matmuls in the output projections: not modelled
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(_config("bloom-560m", slow_but_exact=True, pretraining_tp=4))
    assert "'slow_but_exact'" in raised.value.message(Lang.EN)


def test_gpt_neo_layout_and_mask_buffers() -> None:
    # modeling_gpt_neo.py: learned positions (wpe), q/k/v without bias, out_proj with one,
    # a bool max_positions^2 causal mask registered by every attention layer
    neo = parse_config(_config("gpt-neo-2.7b"))
    assert neo.position is PositionKind.LEARNED and neo.position_table_rows == 2048
    assert not neo.qkv_bias and neo.attn_out_bias and neo.mlp_bias
    assert neo.intermediate_size == 4 * 2560 and neo.activation == "gelu_new"
    assert neo.eager_qk_fp32 and not neo.sdpa_attention and neo.flash_attention
    assert neo.buffer_bytes == 32 * 2048 * 2048
    # local layers compute every score and cache every token in transformers: no window
    assert neo.sliding_window is None and neo.sliding_window_layers == 0


@pytest.mark.parametrize("types", [
    [[["global", "local"], 5]],          # 10 kinds for 24 layers
    [[["global", "sliding"], 12]],       # not a GPT-Neo kind
    "global",
])
def test_gpt_neo_attention_types_must_give_one_kind_per_layer(types: object) -> None:
    # GPTNeoConfig.__post_init__ raises unless expand_attention_types_params gives num_layers
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config(_config("gpt-neo-1.3b", attention_types=types))
    assert "24 layers" in raised.value.message(Lang.EN)


def test_gpt_neo_attention_types_default_as_gpt_neo_config() -> None:
    # absent: [[["global", "local"], 12]], which fits 24 layers only
    assert parse_config(_config("gpt-neo-1.3b", attention_types=...)).n_layers == 24
    with pytest.raises(InvalidConfigValue):
        parse_config(_config("gpt-neo-125m", attention_types=...))


# --- DeepSeek-V2 and OLMoE (counts: tests/test_param_counts_meta.py VARIANTS) -------------------

_TINY_MOE = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
             "num_hidden_layers": 3, "vocab_size": 100, "max_position_embeddings": 32}
_DEEPSEEK_V2 = {"model_type": "deepseek_v2", **_TINY_MOE, "q_lora_rank": None,
                "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
                "v_head_dim": 12, "n_routed_experts": 8, "num_experts_per_tok": 2,
                "n_shared_experts": 2, "moe_intermediate_size": 20, "first_k_dense_replace": 1}
_OLMOE = {"model_type": "olmoe", **_TINY_MOE, "num_experts": 4, "num_experts_per_tok": 2}


def test_deepseek_v2_reads_as_deepseek_v3_with_full_rank_queries() -> None:
    arch = parse_config(_DEEPSEEK_V2)
    assert arch.latent_attention is not None and arch.latent_attention.q_lora_rank is None
    assert arch.dense_layers == (0,) and arch.n_shared_experts == 2 and arch.router_fp32
    assert arch == parse_config({**_DEEPSEEK_V2, "moe_layer_freq": 1})


def test_deepseek_v2_layer_frequency_transformers_ignores_is_refused() -> None:
    # DeepseekV2DecoderLayer: experts in every layer from first_k_dense_replace on
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config({**_DEEPSEEK_V2, "moe_layer_freq": 2})
    assert "'moe_layer_freq'" in raised.value.message(Lang.EN)


def test_olmoe_norms_queries_and_keys_over_their_whole_width() -> None:
    arch = parse_config({**_OLMOE, "num_key_value_heads": 2})
    assert arch.qk_norm is QkNormKind.PER_HEAD and arch.n_experts == 4
    # q_norm over hidden_size, k_norm over n_kv_heads x head_dim (OlmoeAttention)
    assert arch.params_qk_norm == 64 + 2 * 16
    assert not arch.tied_embeddings and arch.n_kv_heads == 2
    assert parse_config(_OLMOE).n_kv_heads == 4  # OlmoeConfig: num_attention_heads


@pytest.mark.parametrize(("key", "value"), [("clip_qkv", 8.0), ("head_dim", 32)])
def test_olmoe_options_not_modelled_are_refused(key: str, value: object) -> None:
    with pytest.raises(InvalidConfigValue) as raised:
        parse_config({**_OLMOE, key: value})
    assert f"'{key}'" in raised.value.message(Lang.EN)
    assert parse_config({**_OLMOE, key: None}) == parse_config(_OLMOE)


@pytest.mark.parametrize("key", ["num_experts", "num_experts_per_tok"])
def test_olmoe_expert_counts_are_required(key: str) -> None:
    config = {name: value for name, value in _OLMOE.items() if name != key}
    with pytest.raises(MissingConfigKey):
        parse_config(config)
