"""Presets added in 2026-12 (third batch) for base models of the families already read that the
registry lacked: Qwen3-8B-Base, SmolLM (v1) 135M, 360M and 1.7B, DeepSeek LLM 7B base, DeepSeek
Coder 1.3B base, OPT-30B and Qwen2.5-Coder-3B.

As in `vramplan.presets.models_2026b`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the files the values were read from, with their
commits where the page showed one. No value here was written from memory. Counts are checked
against transformers on the meta device (tests/test_param_counts_meta.py).

The official files were read for SmolLM 135M and 360M (and for the SmolLM Instruct releases);
the other presets were read from copies whose `_name_or_path` names the official repository, or
that say what they are a copy of, and at least two copies agree on every key kept (Qwen3-8B-Base:
one copy, as its comment says). A key on which the copies disagree (`torch_dtype` of a fine-tune,
Qwen2's unused `sliding_window`) is left out when it does not change the count, as the comment
above the preset says. A chat or instruct release whose file has the base's keys is an alias of
the base preset (`vramplan.model.resolve`).

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vramplan.presets.model_preset import ModelPreset, hub_config_url, make_preset

if TYPE_CHECKING:
    from typing import Any

_preset, _blob = make_preset, hub_config_url


def _smollm(*, hidden: int, inter: int, layers: int, heads: int, kv: int,
            **extra: Any) -> dict[str, Any]:
    """The keys the SmolLM (v1) config.json files read here write alike (Llama's layout, 2,048
    positions, RoPE base 10,000, RMSNorm eps 1e-5, no biases, the 49,152-token vocabulary tied
    to the head), with the shape keys each gives."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": 2048,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "vocab_size": 49152,
        **extra,
    }


MODELS_2026C: tuple[ModelPreset, ...] = (
    # Qwen3-8B-Base: Qwen3-8B's shapes (`qwen3-8b`) with 32,768 positions where the
    # post-trained model's file says 40,960. One copy was found: the config.json that
    # Chen-Oliver's qwen3-8b-base keeps in its root and whose README names it as
    # Qwen/Qwen3-8B-Base's (transformers 4.51.0; eos 151643 where Qwen3-8B's file says 151645).
    # Its keys other than the positions equal `qwen3-8b`'s, whose count this preset has.
    _preset(
        "qwen3-8b-base",
        "Qwen/Qwen3-8B-Base",
        "Qwen3 8B Base",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 32768,
            "max_window_layers": 36,
            "model_type": "qwen3",
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/Chen-Oliver/qwen3-8b-base config.json "
            "@1e44ee1ac3ee33ba48776bd6e66a754ce0b07294 (its README.md: \"You'll need the "
            "`config.json` and the model weights for `Qwen/Qwen3-8B-Base`. [...] There is already "
            "one included in this repo.\")"
        ),
    ),
    # HuggingFace SmolLM, the first release (`smollm2-*` are the second).
    # 135M: 30 layers of width 576, 9 heads, 3 key/value heads. The official file (transformers
    # 4.41.2, bfloat16) and KnightsAnalytics' copy of it agree on every key below; the official
    # SmolLM-135M-Instruct file (v0.2, `_name_or_path` HuggingFaceTB/SmolLM-135M) too: an alias.
    _preset(
        "smollm-135m",
        "HuggingFaceTB/SmolLM-135M",
        "SmolLM 135M",
        _smollm(hidden=576, inter=1536, layers=30, heads=9, kv=3, torch_dtype="bfloat16"),
        aliases=("HuggingFaceTB/SmolLM-135M-Instruct", "smollm-135m-instruct"),
        read_from=(
            "the official file "
            + _blob("HuggingFaceTB/SmolLM-135M", "08113aee5325d8b522b49ed5fbad3f24cc27eeb2")
            + "; " + _blob("KnightsAnalytics/SmolLM-135M") + "; the instruct model's official "
            "file " + _blob("HuggingFaceTB/SmolLM-135M-Instruct")
        ),
    ),
    # 360M: 32 layers of width 960, 15 heads, 5 key/value heads. The official file (as its pull
    # request 4 shows it, transformers 4.41.2, bfloat16) and the official SmolLM-360M-Instruct
    # file (v0.2, `_name_or_path` HuggingFaceTB/SmolLM-360M) agree on every key below: an alias.
    _preset(
        "smollm-360m",
        "HuggingFaceTB/SmolLM-360M",
        "SmolLM 360M",
        _smollm(hidden=960, inter=2560, layers=32, heads=15, kv=5, torch_dtype="bfloat16"),
        aliases=("HuggingFaceTB/SmolLM-360M-Instruct", "smollm-360m-instruct"),
        read_from=(
            "the official file " + _blob("HuggingFaceTB/SmolLM-360M", "refs%2Fpr%2F4")
            + "; the instruct model's official file "
            + _blob("HuggingFaceTB/SmolLM-360M-Instruct")
        ),
    ),
    # 1.7B: 24 layers of width 2,048, 32 heads, no GQA. The base's own file was not found. The
    # official SmolLM-1.7B-Instruct file (transformers 4.42.3, bfloat16), unsloth's copy of it
    # (4.44.2) and mlx-community's fp16 conversion of the base (4.39.3, saved in float32, no
    # `mlp_bias` key: its transformers did not write one) agree on every key below; torch_dtype,
    # on which they disagree, is left out. The instruct model is an alias.
    _preset(
        "smollm-1.7b",
        "HuggingFaceTB/SmolLM-1.7B",
        "SmolLM 1.7B",
        _smollm(hidden=2048, inter=8192, layers=24, heads=32, kv=32),
        aliases=("HuggingFaceTB/SmolLM-1.7B-Instruct", "smollm-1.7b-instruct"),
        read_from=(
            "the instruct model's official file "
            + _blob("HuggingFaceTB/SmolLM-1.7B-Instruct",
                    "01de89e4e2b552fd1ac1c10a2852d9080275577c")
            + "; " + _blob("unsloth/SmolLM-1.7B-Instruct",
                           "eed2ce063e848a9e20ab2b762dd686b74a2ff95c")
            + "; the base's conversion " + _blob("mlx-community/SmolLM-1.7B-fp16", "refs%2Fpr%2F1")
        ),
    ),
    # DeepSeek LLM 7B base (arXiv:2401.02954): `deepseek-llm-7b-chat`'s keys. qnguyen3's QLoRA
    # merge (transformers 4.34.1), RikkiXu's zephyr-7b-sft-full (4.39.3) and Faust345's fine-tune
    # (4.49.0), all with `_name_or_path` deepseek-ai/deepseek-llm-7b-base, agree on every key
    # below; they disagree on torch_dtype (float16, bfloat16), left out. `mlp_bias` (false,
    # LlamaConfig's default) is written by the newest only, left out.
    _preset(
        "deepseek-llm-7b",
        "deepseek-ai/deepseek-llm-7b-base",
        "DeepSeek LLM 7B",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 30,
            "num_key_value_heads": 32,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "vocab_size": 102400,
        },
        aliases=("deepseek-llm-7b-base",),
        read_from=(
            _blob("qnguyen3/deepseek-vi-qlora-1e") + "; "
            + _blob("RikkiXu/zephyr-7b-sft-full", "d63dce5b68e7aa54676ceecad7e499b6def21dd4")
            + "; " + _blob("Faust345/Deepseek-llm-code-test-0.1")
        ),
    ),
    # DeepSeek Coder 1.3B base (arXiv:2401.14196): `deepseek-coder-6.7b`'s layout with 24 layers
    # of width 2,048 and 16 heads. OpenCodeInterpreter-DS-1.3B (transformers 4.38.1), l3lab's
    # ntp-mathlib fine-tune (4.38.2) and hpcgroup's hpc-coder-v2-1.3b (4.42.3), all with
    # `_name_or_path` deepseek-ai/deepseek-coder-1.3b-base, agree on every key below (bfloat16);
    # a fourth fine-tune says float32, so torch_dtype is left out, as for the 6.7B.
    _preset(
        "deepseek-coder-1.3b",
        "deepseek-ai/deepseek-coder-1.3b-base",
        "DeepSeek Coder 1.3B",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 5504,
            "max_position_embeddings": 16384,
            "model_type": "llama",
            "num_attention_heads": 16,
            "num_hidden_layers": 24,
            "num_key_value_heads": 16,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": {"factor": 4.0, "type": "linear"},
            "rope_theta": 100000,
            "tie_word_embeddings": False,
            "vocab_size": 32256,
        },
        aliases=("deepseek-coder-1.3b-base",),
        read_from=(
            _blob("m-a-p/OpenCodeInterpreter-DS-1.3B", "67e377c4e43d48bebddd0f94c99e3ab0e93616d7")
            + "; " + _blob("l3lab/ntp-mathlib-st-deepseek-coder-1.3b") + "; "
            + _blob("hpcgroup/hpc-coder-v2-1.3b") + "; float32 in " + _blob("stojchet/jdpo5k3")
        ),
    ),
    # Meta OPT-30B (arXiv:2205.01068): the OPT layout of `opt-66b` with 48 layers of width 7,168
    # and 56 heads. lucadiliello's DeepSpeed-inference shard (transformers 4.27.1) and KoboldAI's
    # OPT-30B-Erebus (4.21.2), both with `_name_or_path` facebook/opt-30b, agree on every key
    # below but the vocabulary, where the fine-tune's resized table says 50,265; ArthurZ's
    # opt-30b-sharded (4.20.0.dev0) gives 50,272, the value kept, and `_remove_final_layer_norm`
    # true where the other two say false (false kept, as the two copies of facebook/opt-30b say).
    _preset(
        "opt-30b",
        "facebook/opt-30b",
        "OPT 30B",
        {
            "architectures": ["OPTForCausalLM"],
            "_remove_final_layer_norm": False,
            "activation_function": "relu",
            "do_layer_norm_before": True,
            "ffn_dim": 28672,
            "hidden_size": 7168,
            "max_position_embeddings": 2048,
            "model_type": "opt",
            "num_attention_heads": 56,
            "num_hidden_layers": 48,
            "torch_dtype": "float16",
            "vocab_size": 50272,
            "word_embed_proj_dim": 7168,
        },
        read_from=(
            _blob("lucadiliello/opt-30b-deepspeed-inference-fp16-shard-2") + "; "
            + _blob("KoboldAI/OPT-30B-Erebus", "37e0691732c74210e673ff0829f1d79658293ed2") + "; "
            + _blob("ArthurZ/opt-30b-sharded", "refs%2Fpr%2F4")
        ),
    ),
    # Qwen2.5-Coder-3B: Qwen2.5-3B's layout (36 layers of width 2,048, GQA
    # with 2 key/value heads, the head tied). fasoo's Qwen2.5-Coder-3B-Spring merge (transformers
    # 4.46.3, `_name_or_path` Qwen/Qwen2.5-Coder-3B) and mlx-community's 8-bit and 4-bit
    # conversions (4.40.1; their quantization keys left out) agree on every key below; they
    # disagree on torch_dtype (float16, bfloat16) and on the unused `sliding_window` (null,
    # 32,768), left out.
    _preset(
        "qwen2.5-coder-3b",
        "Qwen/Qwen2.5-Coder-3B",
        "Qwen2.5-Coder 3B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 11008,
            "max_position_embeddings": 32768,
            "max_window_layers": 36,
            "model_type": "qwen2",
            "num_attention_heads": 16,
            "num_hidden_layers": 36,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": True,
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            _blob("fasoo/Qwen2.5-Coder-3B-Spring") + "; "
            + _blob("mlx-community/Qwen2.5-Coder-3B-8bit", "refs%2Fpr%2F1") + "; "
            + _blob("mlx-community/Qwen2.5-Coder-3B-4bit", "refs%2Fpr%2F1")
        ),
    ),
)
"""The presets of this module, in display order."""
