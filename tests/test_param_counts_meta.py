"""Every preset's exact count against the real transformers model, built on the meta device.

No weights are allocated and nothing is downloaded: `AutoConfig.for_model` takes the preset's
config.json keys and `from_config` builds the module tree under `torch.device("meta")`. Tied weights
are one Parameter object and are counted once.
"""

from __future__ import annotations

import functools
import warnings

import pytest

from vramplan.model.hf_remote_code import REMOTE_CODE_TYPES
from vramplan.presets.models import MODELS, ModelPreset, architecture_of, find_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.trace

BUILT = tuple(preset for preset in MODELS if preset.family not in REMOTE_CODE_TYPES)
"""The presets transformers can build: a remote-code family's count is checked against its
checkpoint instead (tests/test_remote_code.py)."""


def _meta_model(preset: ModelPreset) -> object:
    return _meta_model_named(preset.name)


@functools.cache
def _meta_model_named(name: str) -> object:
    preset = find_model(name)
    return _meta_build(preset.transformers_type, preset.config_kwargs())


def _meta_build(model_type: str, keys: dict[str, object]) -> object:
    """The class the checkpoint names in `architectures` (Gemma3ForConditionalGeneration,
    Llama4ForConditionalGeneration: the vision tower included, as published), else
    AutoModelForCausalLM; quantization_config left out (counts are of the logical model)."""
    keys = {key: value for key, value in keys.items() if key != "quantization_config"}
    config = transformers.AutoConfig.for_model(model_type, **keys)
    names = keys.get("architectures") or []
    cls = getattr(transformers, str(names[0]), None) if names else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            if cls is not None:
                return cls(config)
            return transformers.AutoModelForCausalLM.from_config(config)


def _unique_numel(model: object) -> int:
    seen: set[int] = set()
    total = 0
    for parameter in model.parameters():  # type: ignore[attr-defined]
        if id(parameter) not in seen:
            seen.add(id(parameter))
            total += parameter.numel()
    return total


@pytest.mark.parametrize("preset", BUILT, ids=[preset.name for preset in BUILT])
def test_count_matches_transformers_on_meta_device(preset: ModelPreset) -> None:
    model = _meta_model(preset)
    assert architecture_of(preset).params_total == _unique_numel(model)


def _blocks(model: object, n_layers: int) -> object:
    """The ModuleList of decoder blocks (`model.layers`, `transformer.h`, `gpt_neox.layers`...)."""
    lists = [module for module in model.modules()  # type: ignore[attr-defined]
             if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers]
    return max(lists, key=lambda blocks: sum(p.numel() for p in blocks.parameters()))


def _block_sizes(model: object, n_layers: int) -> list[int]:
    return [sum(p.numel() for p in block.parameters())
            for block in _blocks(model, n_layers)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("preset", BUILT, ids=[preset.name for preset in BUILT])
def test_block_and_embedding_match_transformers(preset: ModelPreset) -> None:
    arch = architecture_of(preset)
    model = _meta_model(preset)
    # every block, in order: dense and MoE layers of a mixed model included
    assert [arch.params_of_layer(i) for i in range(arch.n_layers)] == _block_sizes(
        model, arch.n_layers)
    embedding = model.get_input_embeddings()  # type: ignore[attr-defined]
    assert arch.params_token_embedding == embedding.weight.numel()
    positions = [m for name, m in model.named_modules()  # type: ignore[attr-defined]
                 if name.endswith(("embed_positions", "wpe"))]
    assert arch.params_position_embedding == sum(m.weight.numel() for m in positions)
    head = model.get_output_embeddings()  # type: ignore[attr-defined]
    assert (head.weight is embedding.weight) is arch.tied_embeddings


_TINY = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
         "num_hidden_layers": 2, "vocab_size": 100, "max_position_embeddings": 32}

# Small configs that switch every option the readers model, one family at a time.
VARIANTS: dict[str, dict[str, object]] = {
    "llama-biases-tied-gqa": {"model_type": "llama", **_TINY, "num_key_value_heads": 2,
                              "attention_bias": True, "mlp_bias": True,
                              "tie_word_embeddings": True},
    "llama-head-dim": {"model_type": "llama", **_TINY, "head_dim": 32},
    "mistral-window": {"model_type": "mistral", **_TINY, "num_key_value_heads": 1,
                       "sliding_window": 8},
    "mixtral-4-experts": {"model_type": "mixtral", **_TINY, "num_local_experts": 4,
                          "num_experts_per_tok": 2, "num_key_value_heads": 2},
    "qwen2-untied": {"model_type": "qwen2", **_TINY, "num_key_value_heads": 2,
                     "tie_word_embeddings": False},
    "gemma-bias": {"model_type": "gemma", **_TINY, "head_dim": 8, "attention_bias": True,
                   "num_key_value_heads": 1},
    "gemma2-untied": {"model_type": "gemma2", **_TINY, "head_dim": 16,
                      "num_key_value_heads": 2, "tie_word_embeddings": False},
    "phi-gqa": {"model_type": "phi", **_TINY, "num_key_value_heads": 2,
                "partial_rotary_factor": 0.5},
    "phi3-gqa": {"model_type": "phi3", **_TINY, "num_key_value_heads": 2, "pad_token_id": 0},
    "falcon-mha-sequential-bias": {"model_type": "falcon", **_TINY, "multi_query": False,
                                   "parallel_attn": False, "bias": True},
    "falcon-new-one-norm": {"model_type": "falcon", **_TINY, "new_decoder_architecture": True,
                            "num_kv_heads": 2, "num_ln_in_parallel_attn": 1,
                            "ffn_hidden_size": 80},
    "gpt2-inner-untied": {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2,
                          "n_positions": 32, "vocab_size": 100, "n_inner": 80,
                          "tie_word_embeddings": False},
    "gpt-bigcode-mha": {"model_type": "gpt_bigcode", "n_embd": 64, "n_head": 4, "n_layer": 2,
                        "n_positions": 32, "vocab_size": 100, "multi_query": False},
    "gpt-neox-sequential-nobias": {"model_type": "gpt_neox", **_TINY,
                                   "use_parallel_residual": False, "attention_bias": False},
    "stablelm-qk-norm-parallel": {"model_type": "stablelm", **_TINY, "num_key_value_heads": 2,
                                  "qk_layernorm": True, "use_qkv_bias": True,
                                  "use_parallel_residual": True},
    "stablelm-sequential": {"model_type": "stablelm", **_TINY, "num_key_value_heads": 4},
    "gptj-tied-inner-odd-rotary": {"model_type": "gptj", "n_embd": 64, "n_head": 4, "n_layer": 2,
                                   "n_positions": 32, "vocab_size": 100, "n_inner": 80,
                                   "rotary_dim": 6, "tie_word_embeddings": True},
    "olmo-bias-tied": {"model_type": "olmo", **_TINY, "attention_bias": True,
                       "tie_word_embeddings": True},
    "opt-nobias-untied": {"model_type": "opt", "hidden_size": 64, "ffn_dim": 80,
                          "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 100,
                          "max_position_embeddings": 32, "enable_bias": False,
                          "tie_word_embeddings": False},
    "opt-norms-without-affine": {"model_type": "opt", "hidden_size": 64, "ffn_dim": 80,
                                 "num_attention_heads": 4, "num_hidden_layers": 2,
                                 "vocab_size": 100, "max_position_embeddings": 32,
                                 "layer_norm_elementwise_affine": False},
    "bloom-n-embed-untied": {"model_type": "bloom", "n_embed": 64, "n_layer": 2,
                             "num_attention_heads": 4, "vocab_size": 100,
                             "tie_word_embeddings": False},
    "bloom-hidden-size-n-head": {"model_type": "bloom", "hidden_size": 96, "n_layer": 3,
                                 "n_head": 4, "vocab_size": 100},
    "gpt-neo-inner-untied-local-first": {"model_type": "gpt_neo", "hidden_size": 64,
                                         "num_layers": 3, "num_heads": 4, "vocab_size": 100,
                                         "max_position_embeddings": 32, "intermediate_size": 80,
                                         "tie_word_embeddings": False,
                                         "attention_types": [[["local"], 1],
                                                             [["global", "local"], 1]]},
    "qwen3-tied-bias-window": {"model_type": "qwen3", **_TINY, "num_key_value_heads": 2,
                               "head_dim": 24, "attention_bias": True, "tie_word_embeddings": True,
                               "use_sliding_window": True, "sliding_window": 8,
                               "max_window_layers": 1},
    "qwen3-moe-sparse-step": {"model_type": "qwen3_moe", **_TINY, "num_hidden_layers": 4,
                              "num_key_value_heads": 2, "num_experts": 4,
                              "num_experts_per_tok": 2, "moe_intermediate_size": 40,
                              "decoder_sparse_step": 2, "mlp_only_layers": [3]},
    "mpt-untied": {"model_type": "mpt", "d_model": 64, "n_heads": 4, "n_layers": 2,
                   "vocab_size": 100, "max_seq_len": 32, "attn_config": {"alibi": True},
                   "tie_word_embeddings": False},
    "qwen2-moe-sparse-step-shared-width": {
        "model_type": "qwen2_moe", **_TINY, "num_hidden_layers": 4, "num_key_value_heads": 2,
        "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 40,
        "shared_expert_intermediate_size": 56, "decoder_sparse_step": 2, "mlp_only_layers": [3]},
    "qwen2-moe-no-qkv-bias": {
        "model_type": "qwen2_moe", **_TINY, "num_key_value_heads": 4, "num_experts": 4,
        "num_experts_per_tok": 1, "moe_intermediate_size": 40,
        "shared_expert_intermediate_size": 80, "qkv_bias": False},
    "gemma3-text-bias": {"model_type": "gemma3_text", **_TINY, "num_hidden_layers": 7,
                         "head_dim": 16, "num_key_value_heads": 2, "attention_bias": True,
                         "sliding_window": 8},
    "gemma3-vision-untied": {
        "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
        "tie_word_embeddings": False, "mm_tokens_per_image": 16,
        "text_config": {"model_type": "gemma3_text", **_TINY, "head_dim": 16,
                        "num_key_value_heads": 2, "sliding_window": 8},
        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32,
                          "intermediate_size": 48, "num_hidden_layers": 2,
                          "num_attention_heads": 2, "image_size": 32, "patch_size": 8,
                          "vision_use_head": False}},
    "llama4-interleaved-vision": {
        "model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
        "text_config": {"model_type": "llama4_text", **_TINY, "num_hidden_layers": 4,
                        "head_dim": 16, "num_key_value_heads": 2, "intermediate_size_mlp": 128,
                        "num_local_experts": 4, "num_experts_per_tok": 1,
                        "interleave_moe_layer_step": 2, "attention_chunk_size": 16},
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 32,
                          "intermediate_size": 128, "num_hidden_layers": 2,
                          "num_attention_heads": 2, "image_size": 32, "patch_size": 8,
                          "projector_input_dim": 48, "projector_output_dim": 48,
                          "vision_output_dim": 48, "pixel_shuffle_ratio": 0.5}},
    "deepseek-v3-mla-dense-first": {
        "model_type": "deepseek_v3", **_TINY, "num_hidden_layers": 3, "num_key_value_heads": 4,
        "q_lora_rank": 24, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
        "v_head_dim": 12, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2,
        "moe_intermediate_size": 20, "first_k_dense_replace": 1, "n_group": 2, "topk_group": 1,
        "attention_bias": True},
    "deepseek-v3-full-rank-queries": {
        "model_type": "deepseek_v3", **_TINY, "num_key_value_heads": 4, "q_lora_rank": None,
        "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16,
        "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
        "moe_intermediate_size": 20, "first_k_dense_replace": 0, "n_group": 1, "topk_group": 1},
    "deepseek-v2-full-rank-queries-dense-first": {
        "model_type": "deepseek_v2", **_TINY, "num_hidden_layers": 3, "num_key_value_heads": 4,
        "q_lora_rank": None, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
        "v_head_dim": 12, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2,
        "moe_intermediate_size": 20, "first_k_dense_replace": 1, "moe_layer_freq": 1},
    "deepseek-v2-query-latent-bias": {
        "model_type": "deepseek_v2", **_TINY, "num_key_value_heads": 4, "q_lora_rank": 24,
        "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16,
        "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
        "moe_intermediate_size": 20, "first_k_dense_replace": 0, "attention_bias": True},
    "olmoe-gqa-bias": {"model_type": "olmoe", **_TINY, "num_key_value_heads": 2,
                       "num_experts": 4, "num_experts_per_tok": 2, "attention_bias": True},
    "olmoe-mha-tied": {"model_type": "olmoe", **_TINY, "num_experts": 4,
                       "num_experts_per_tok": 1, "tie_word_embeddings": True},
    "gpt-oss-sinks-expert-biases": {"model_type": "gpt_oss", **_TINY, "head_dim": 24,
                                    "num_key_value_heads": 2, "num_local_experts": 4,
                                    "num_experts_per_tok": 2, "sliding_window": 8},
    "olmo2-gqa": {"model_type": "olmo2", **_TINY, "num_key_value_heads": 2,
                  "attention_bias": True},
    "glm4-moe-qk-norm": {"model_type": "glm4_moe", **_TINY, "num_hidden_layers": 3,
                         "num_key_value_heads": 2, "head_dim": 24, "use_qk_norm": True,
                         "attention_bias": True, "n_routed_experts": 4, "num_experts_per_tok": 2,
                         "n_shared_experts": 1, "moe_intermediate_size": 20,
                         "first_k_dense_replace": 1, "partial_rotary_factor": 0.5},
    "cohere-qk-norm-bias": {"model_type": "cohere", **_TINY, "num_key_value_heads": 2,
                            "use_qk_norm": True, "attention_bias": True},
    "cohere2-window-untied": {"model_type": "cohere2", **_TINY, "num_hidden_layers": 4,
                              "num_key_value_heads": 2, "sliding_window": 8,
                              "tie_word_embeddings": False},
    "granite-biases": {"model_type": "granite", **_TINY, "num_key_value_heads": 2,
                       "attention_bias": True, "mlp_bias": True},
    "starcoder2-nobias-untied": {"model_type": "starcoder2", **_TINY, "num_key_value_heads": 2,
                                 "use_bias": False, "tie_word_embeddings": False,
                                 "sliding_window": 8},
    "smollm3-untied-biases": {"model_type": "smollm3", **_TINY, "num_key_value_heads": 2,
                              "mlp_bias": True, "attention_bias": True,
                              "tie_word_embeddings": False, "pad_token_id": None},
}


@pytest.mark.parametrize("config", VARIANTS.values(), ids=list(VARIANTS))
def test_every_modelled_option_matches_transformers(config: dict[str, object]) -> None:
    from vramplan.model.hf_config import parse_config

    keys = {key: value for key, value in config.items() if key != "model_type"}
    model = _meta_build(str(config["model_type"]), keys)
    arch = parse_config(config)
    assert arch.params_total == _unique_numel(model)
    assert [arch.params_of_layer(i) for i in range(arch.n_layers)] == _block_sizes(
        model, arch.n_layers)


@pytest.mark.parametrize("name", ["bloom-n-embed-untied", "bloom-hidden-size-n-head",
                                  "gpt-neo-inner-untied-local-first"])
def test_embedding_norm_and_mask_buffers_match_transformers(name: str) -> None:
    # BLOOM's word_embeddings_layernorm; GPT-Neo's bool causal mask, one buffer per layer
    from vramplan.model.hf_config import parse_config

    config = VARIANTS[name]
    keys = {key: value for key, value in config.items() if key != "model_type"}
    model = _meta_build(str(config["model_type"]), keys)
    arch = parse_config(config)
    norms = [m for n, m in model.named_modules()  # type: ignore[attr-defined]
             if n.endswith("word_embeddings_layernorm")]
    assert arch.params_embedding_norm == sum(p.numel() for m in norms for p in m.parameters())
    masks = [b for b in model.buffers() if b.dtype == torch.bool]  # type: ignore[attr-defined]
    assert arch.buffer_bytes == sum(b.numel() * b.element_size() for b in masks)


_ONE_PER_FAMILY = {preset.family: preset for preset in reversed(BUILT)}
"""A preset of each model_type transformers builds (the first listed)."""


@pytest.mark.parametrize("preset", list(_ONE_PER_FAMILY.values()),
                         ids=list(_ONE_PER_FAMILY))
def test_every_lora_target_names_modules_of_the_real_model(preset: ModelPreset) -> None:
    # `vramplan trace` puts adapters on these modules: each case-format target must find some
    from vramplan.model.architecture import MlpKind
    from vramplan.tracer.model import lora_target_modules

    arch = architecture_of(preset)
    targets = ["q", "k", "v", "o"]
    # transformers 5 stores a mixture of experts as 3-D parameters, not linears: no MLP target
    if arch.n_experts == 1:
        targets += ["up", "down", *(["gate"] if arch.mlp is MlpKind.GATED else [])]
    model = _meta_model(preset)
    for target in targets:
        assert lora_target_modules(model, preset.family, (target,)), target  # type: ignore[arg-type]


_MLA_LORA_MODULES = {"k": {"self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj"},
                     "v": {"self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj"},
                     "o": {"self_attn.o_proj"}}


@pytest.mark.parametrize(("name", "expected"), [
    # no query latent, a dense first layer: one q_proj; the dense MLP and the shared experts
    ("deepseek-v2-full-rank-queries-dense-first", {
        **_MLA_LORA_MODULES, "q": {"self_attn.q_proj"},
        **{part: {f"mlp.{part}_proj", f"mlp.shared_experts.{part}_proj"}
           for part in ("gate", "up", "down")}}),
    # a query latent, experts in every layer: q_a/q_b; only the shared experts are linears
    ("deepseek-v2-query-latent-bias", {
        **_MLA_LORA_MODULES, "q": {"self_attn.q_a_proj", "self_attn.q_b_proj"},
        **{part: {f"mlp.shared_experts.{part}_proj"} for part in ("gate", "up", "down")}}),
])
def test_latent_attention_lora_targets_are_the_projections_of_modeling_deepseek_v2(
        name: str, expected: dict[str, set[str]]) -> None:
    from vramplan.tracer.model import lora_target_modules

    config = VARIANTS[name]
    keys = {key: value for key, value in config.items() if key != "model_type"}
    model = _meta_build(str(config["model_type"]), keys)
    for target, modules in expected.items():
        found = lora_target_modules(model, "deepseek_v2", (target,))  # type: ignore[arg-type]
        # names inside a block: "model.layers.0.self_attn.q_proj" -> "self_attn.q_proj"
        assert {full.split(".", 3)[3] for full in found} == modules, target


@pytest.mark.parametrize("name", ["deepseek-v3-mla-dense-first", "glm4-moe-qk-norm"])
def test_mtp_module_matches_transformers_mtp_model(name: str) -> None:
    # transformers builds MTP modules only in MtpModel (modeling_layers.py), for
    # generate(use_mtp=True); vramplan counts them when loaded (`mtp_loaded`)
    from vramplan.model.hf_config import parse_config

    config = VARIANTS[name]
    keys = {key: value for key, value in config.items() if key != "model_type"}
    main = _meta_build(str(config["model_type"]), keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            mtp = transformers.modeling_layers.MtpModel(main, 2)
    own = {id(p) for p in main.parameters()}  # type: ignore[attr-defined]
    mtp_params = sum(p.numel() for p in mtp.parameters() if id(p) not in own)
    arch = parse_config({**config, "num_nextn_predict_layers": 2})
    assert arch.mtp_layers * arch.params_mtp_module == mtp_params


@pytest.mark.parametrize("name", ["gemma3-vision-untied", "llama4-interleaved-vision"])
def test_vision_tower_and_projector_match_transformers(name: str) -> None:
    from vramplan.model.hf_config import parse_config

    config = VARIANTS[name]
    keys = {key: value for key, value in config.items() if key != "model_type"}
    model = _meta_build(str(config["model_type"]), keys)
    core = getattr(model, "model", model)
    tower = getattr(core, "vision_tower", None) or getattr(core, "vision_model", None)
    if tower is None:  # Llama4ForConditionalGeneration holds them itself
        tower = model.vision_model  # type: ignore[attr-defined]
        core = model
    projector = core.multi_modal_projector
    vision = parse_config(config).vision
    assert vision is not None
    assert vision.params_tower == sum(p.numel() for p in tower.parameters())
    assert vision.params_projector == sum(p.numel() for p in projector.parameters())
