"""Presets added in 2026-12 (fourth batch) for models that measured runs name and the registry
lacked: Vicuna 13B v1.5, Qwen2.5-0.5B-Instruct, Zephyr 7B alpha, OpenHermes 2.5 Mistral 7B,
Hermes 3 Llama 3.1 8B and Llama 3.1 Tulu 3 8B. The same round made DeepSeek Coder 6.7B Instruct
an alias of `deepseek-coder-6.7b` and MPT-7B-Chat one of `mpt-7b` (copies of their files have the
base presets' keys).

As in `vramplan.presets.models_2026c`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the files the values were read from, with their
commits where the page showed one. No value here was written from memory. Counts are checked
against transformers on the meta device (tests/test_param_counts_meta.py).

The official files were not found in the stored pages: every preset was read from copies on the
Hub whose `_name_or_path` names the official repository (or that say what they are a copy of),
and at least two copies agree on every key kept. A key on which the copies disagree
(`torch_dtype` of fine-tunes and quantizations) is left out, and so are keys that only the newer
transformers versions write (`head_dim`, `mlp_bias`), as the comment above the preset says. A
fine-tune published by another organization than its base's (Vicuna, Zephyr, OpenHermes, Hermes,
Tulu) is a preset of its own even where its keys are its base's, as `zephyr-7b-beta` is.

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vramplan.presets.model_preset import ModelPreset, hub_config_url, make_preset

if TYPE_CHECKING:
    from typing import Any

_preset, _blob = make_preset, hub_config_url


def _mistral_7b_v01(**extra: Any) -> dict[str, Any]:
    """The keys that the Zephyr 7B alpha and OpenHermes 2.5 copies read here write alike, which
    are Mistral-7B-v0.1's (`mistral-7b-v0.1`, torch_dtype aside), with the keys each changes."""
    return {
        "architectures": ["MistralForCausalLM"],
        "hidden_act": "silu",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "model_type": "mistral",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "sliding_window": 4096,
        "tie_word_embeddings": False,
        "vocab_size": 32000,
        **extra,
    }


def _llama_31_8b(**extra: Any) -> dict[str, Any]:
    """The keys that the Hermes 3 and Tulu 3 copies read here write alike, which are Llama 3.1
    8B's (32 layers of width 4,096, 8 key/value heads, Llama 3's RoPE scaling to 131,072
    positions), with the keys each changes."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 131072,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": {
            "factor": 8.0,
            "high_freq_factor": 4.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        **extra,
    }


MODELS_2026D: tuple[ModelPreset, ...] = (
    # LMSYS Vicuna 13B v1.5: Llama 2 13B fine-tuned (`llama-2-13b`'s shapes, 4,096 positions).
    # FasterDecoding's Medusa head repository (transformers 4.34.0), ksathyan's merge (4.47.0.dev0)
    # and ClarenceDan's fine-tune (4.46.0), all with `_name_or_path` lmsys/vicuna-13b-v1.5, agree
    # on every key below (float16). `head_dim` and `mlp_bias`, which the two newer ones write
    # (LlamaConfig's derived value and default), and `max_length` are left out.
    _preset(
        "vicuna-13b-v1.5",
        "lmsys/vicuna-13b-v1.5",
        "Vicuna 13B v1.5",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 13824,
            "max_position_embeddings": 4096,
            "model_type": "llama",
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
            "num_key_value_heads": 40,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "vocab_size": 32000,
        },
        read_from=(
            _blob("FasterDecoding/medusa-1.0-vicuna-13b-v1.5",
                  "5c0ea0c8892792e1dcf638e73ae58e452264a2bb")
            + "; " + _blob("ksathyan/vicuna-merged") + "; "
            + _blob("ClarenceDan/c007fb8a-c322-4d5b-a9da-daaef71ab0c3")
        ),
    ),
    # Qwen2.5-0.5B-Instruct: `qwen2.5-0.5b`'s shapes and 32,768 positions, with
    # max_window_layers 21 where the base says 24 (unused: no sliding window), so a preset of
    # its own. Jonathanmann's qwen-sms-3400 (transformers 4.46.2) and chinmaydk99's Open-R1
    # distillation (4.49.0.dev0), both with `_name_or_path` Qwen/Qwen2.5-0.5B-Instruct, agree on
    # every key below; they disagree on torch_dtype (float16, bfloat16), left out, and both write
    # the null `sliding_window` of transformers 4.45 and later, left out (the key is unused).
    _preset(
        "qwen2.5-0.5b-instruct",
        "Qwen/Qwen2.5-0.5B-Instruct",
        "Qwen2.5 0.5B Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 896,
            "intermediate_size": 4864,
            "max_position_embeddings": 32768,
            "max_window_layers": 21,
            "model_type": "qwen2",
            "num_attention_heads": 14,
            "num_hidden_layers": 24,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": True,
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            _blob("Jonathanmann/qwen-sms-3400") + "; "
            + _blob("chinmaydk99/Qwen2.5-0.5B-Open-R1-Distill",
                    "e34bbfc774942ade90682fdeac70b41e562914d7")
        ),
    ),
    # HuggingFaceH4 Zephyr 7B alpha: Mistral-7B-v0.1 fine-tuned without changing the
    # architecture. centroIA's merge (transformers 4.36.0.dev0), azale-ai's Starstreak-7b-alpha
    # (4.35.0.dev0) and rathi2023's merged adapter (4.34.0), all with `_name_or_path`
    # HuggingFaceH4/zephyr-7b-alpha, agree on every key below; they disagree on torch_dtype
    # (bfloat16, float16), left out, as for `zephyr-7b-beta`.
    _preset(
        "zephyr-7b-alpha",
        "HuggingFaceH4/zephyr-7b-alpha",
        "Zephyr 7B alpha",
        _mistral_7b_v01(),
        read_from=(
            _blob("centroIA/zephyr-Merged") + "; "
            + _blob("azale-ai/Starstreak-7b-alpha", "67cdddfaf5a4108444b5a02c4b6402797734b311")
            + "; " + _blob("rathi2023/Zephyr-finetuned-MergedAdapterForumQAOnly")
        ),
    ),
    # Teknium OpenHermes 2.5 Mistral 7B: Mistral-7B-v0.1 fine-tuned with two added ChatML tokens,
    # a 32,002-token vocabulary. LoneStriker's DPOpenHermes exl2 quantization (transformers
    # 4.35.2), txus's NeuralHermes (4.37.0.dev0) and vicky4s4s's mistral-2-7B (4.37.0.dev0), all
    # with `_name_or_path` teknium/OpenHermes-2.5-Mistral-7B, agree on every key below; they
    # disagree on torch_dtype (bfloat16, float16), left out.
    _preset(
        "openhermes-2.5-mistral-7b",
        "teknium/OpenHermes-2.5-Mistral-7B",
        "OpenHermes 2.5 Mistral 7B",
        _mistral_7b_v01(vocab_size=32002),
        read_from=(
            _blob("LoneStriker/DPOpenHermes-7B-6.0bpw-h6-exl2",
                  "402f1f8f3f8b3f22b0327a721c3386a88f6e614b")
            + "; " + _blob("txus/NeuralHermes-2.5-Mistral-7B",
                           "728ed53e275258d1219dc078d137d104a033c2d2")
            + "; " + _blob("vicky4s4s/mistral-2-7B")
        ),
    ),
    # Nous Research Hermes 3 Llama 3.1 8B (arXiv:2408.11857): Llama 3.1 8B's keys, its
    # 128,256-token vocabulary. nick911's duplicate of the repository (transformers 4.44.0.dev0)
    # and jssky's fine-tune (4.46.3), both with `_name_or_path` NousResearch/Hermes-3-Llama-3.1-8B,
    # agree on every key below (bfloat16); `head_dim`, written by the newer one only, is left out.
    _preset(
        "hermes-3-llama-3.1-8b",
        "NousResearch/Hermes-3-Llama-3.1-8B",
        "Hermes 3 Llama 3.1 8B",
        _llama_31_8b(torch_dtype="bfloat16", vocab_size=128256),
        read_from=(
            _blob("nick911/hermes-3-llama-3-1-8B") + "; "
            + _blob("jssky/e7b79a88-7469-44e1-a9dd-89bc6a5f195a",
                    "79e4ac88df257904f9cdb0bcc51763004bc5d79a")
        ),
    ),
    # AllenAI Llama 3.1 Tulu 3 8B (arXiv:2411.15124): Llama 3.1 8B with a 128,264-token
    # vocabulary (8 rows added for its chat tokens). allknowingroger's LlamaSlerp1-8B merge
    # (transformers 4.45.2) and arrafmousa's llama_encoder (4.48.2), both with `_name_or_path`
    # allenai/Llama-3.1-Tulu-3-8B, and lurker18's AWQ quantization (4.45.2, `_name_or_path` a
    # local AllenAI/Llama-3.1-Tulu-3-8B folder; its quantization keys left out) agree on every key
    # below; they disagree on torch_dtype (bfloat16, float32, float16), left out.
    _preset(
        "llama-3.1-tulu-3-8b",
        "allenai/Llama-3.1-Tulu-3-8B",
        "Llama 3.1 Tulu 3 8B",
        _llama_31_8b(head_dim=128, vocab_size=128264),
        read_from=(
            _blob("allknowingroger/LlamaSlerp1-8B") + "; " + _blob("arrafmousa/llama_encoder")
            + "; " + _blob("lurker18/Llama_3.1_Tulu_3_8B_AWQ_4bit")
        ),
    ),
)
"""The presets of this module, in display order."""
