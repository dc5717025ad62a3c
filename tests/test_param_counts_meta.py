"""Every preset's exact count against the real transformers model, built on the meta device.

No weights are allocated and nothing is downloaded: `AutoConfig.for_model` takes the preset's
config.json keys and `from_config` builds the module tree under `torch.device("meta")`. Tied weights
are one Parameter object and are counted once.
"""

from __future__ import annotations

import functools
import warnings

import pytest

from vramplan.presets.models import MODELS, ModelPreset, architecture_of, find_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.trace


def _meta_model(preset: ModelPreset) -> object:
    return _meta_model_named(preset.name)


@functools.cache
def _meta_model_named(name: str) -> object:
    preset = find_model(name)
    config = transformers.AutoConfig.for_model(preset.family, **preset.config_kwargs())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            return transformers.AutoModelForCausalLM.from_config(config)


def _unique_numel(model: object) -> int:
    seen: set[int] = set()
    total = 0
    for parameter in model.parameters():  # type: ignore[attr-defined]
        if id(parameter) not in seen:
            seen.add(id(parameter))
            total += parameter.numel()
    return total


@pytest.mark.parametrize("preset", MODELS, ids=[preset.name for preset in MODELS])
def test_count_matches_transformers_on_meta_device(preset: ModelPreset) -> None:
    model = _meta_model(preset)
    assert architecture_of(preset).params_total == _unique_numel(model)


def _blocks(model: object, n_layers: int) -> object:
    """The ModuleList of decoder blocks (`model.layers`, `transformer.h`, `gpt_neox.layers`...)."""
    lists = [module for module in model.modules()  # type: ignore[attr-defined]
             if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers]
    return max(lists, key=lambda blocks: sum(p.numel() for p in blocks.parameters()))


@pytest.mark.parametrize("preset", MODELS, ids=[preset.name for preset in MODELS])
def test_block_and_embedding_match_transformers(preset: ModelPreset) -> None:
    arch = architecture_of(preset)
    model = _meta_model(preset)
    block = _blocks(model, arch.n_layers)[0]  # type: ignore[index]
    assert arch.params_per_block == sum(p.numel() for p in block.parameters())
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
}


@pytest.mark.parametrize("config", VARIANTS.values(), ids=list(VARIANTS))
def test_every_modelled_option_matches_transformers(config: dict[str, object]) -> None:
    from vramplan.model.hf_config import parse_config

    keys = {key: value for key, value in config.items() if key != "model_type"}
    hf_config = transformers.AutoConfig.for_model(str(config["model_type"]), **keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = transformers.AutoModelForCausalLM.from_config(hf_config)
    arch = parse_config(config)
    assert arch.params_total == _unique_numel(model)
    block = _blocks(model, arch.n_layers)[0]  # type: ignore[index]
    assert arch.params_per_block == sum(p.numel() for p in block.parameters())


_ONE_PER_FAMILY = {preset.family: preset for preset in reversed(MODELS)}
"""A preset of each model_type (the first listed)."""


@pytest.mark.parametrize("preset", list(_ONE_PER_FAMILY.values()),
                         ids=list(_ONE_PER_FAMILY))
def test_every_lora_target_names_modules_of_the_real_model(preset: ModelPreset) -> None:
    # `vramplan trace` puts adapters on these modules: each case-format target must find some
    from vramplan.model.architecture import MlpKind
    from vramplan.trace.model import lora_target_modules

    arch = architecture_of(preset)
    targets = ["q", "k", "v", "o"]
    # transformers 5 stores a mixture of experts as 3-D parameters, not linears: no MLP target
    if arch.n_experts == 1:
        targets += ["up", "down", *(["gate"] if arch.mlp is MlpKind.GATED else [])]
    model = _meta_model(preset)
    for target in targets:
        assert lora_target_modules(model, preset.family, (target,)), target  # type: ignore[arg-type]
