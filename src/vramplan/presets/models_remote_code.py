"""Presets of models whose code is the checkpoint's own (`trust_remote_code=True`), read by
`vramplan.model.hf_remote_code`: Qwen (v1) 1.8B, 7B and 72B, ChatGLM2-6B and ChatGLM3-6B,
Baichuan2-13B-Chat, InternLM2.5-7B-Chat.

Each preset keeps the architecture keys of the published config.json (tokenizer, precision-switch
and cache keys left out); `source` is the official file on the Hub and `read_from` names the
copy the values were read from, with its commit: the Hub pages themselves are not in the stored
corpora. transformers cannot build these model types, so the counts are checked against the
checkpoints' published `total_size` where one was found (tests/test_remote_code.py), not on the
meta device. Left out, and why: docs/models.md.

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import Any

from vramplan.presets.model_preset import ModelPreset, make_preset


def _qwen(**keys: Any) -> dict[str, Any]:
    """The keys every Qwen (v1) config.json read carries with the same value: `QWenLMHeadModel`,
    full rotary embeddings, untied head, no bias but on `c_attn` (`no_bias`), 128-wide heads."""
    return {
        "architectures": ["QWenLMHeadModel"],
        "model_type": "qwen",
        "attn_dropout_prob": 0.0,
        "emb_dropout_prob": 0.0,
        "kv_channels": 128,
        "layer_norm_epsilon": 1e-06,
        "no_bias": True,
        "rotary_pct": 1.0,
        "tie_word_embeddings": False,
        **keys,
    }


def _chatglm(**keys: Any) -> dict[str, Any]:
    """The keys ChatGLM2-6B's and ChatGLM3-6B's config.json share (all but `seq_length`)."""
    return {
        "architectures": ["ChatGLMModel"],
        "model_type": "chatglm",
        "add_bias_linear": False,
        "add_qkv_bias": True,
        "apply_query_key_layer_scaling": True,
        "apply_residual_connection_post_layernorm": False,
        "attention_dropout": 0.0,
        "attention_softmax_in_fp32": True,
        "ffn_hidden_size": 13696,
        "fp32_residual_connection": False,
        "hidden_dropout": 0.0,
        "hidden_size": 4096,
        "kv_channels": 128,
        "layernorm_epsilon": 1e-05,
        "multi_query_attention": True,
        "multi_query_group_num": 2,
        "num_attention_heads": 32,
        "num_layers": 28,
        "original_rope": True,
        "padded_vocab_size": 65024,
        "post_layer_norm": True,
        "rmsnorm": True,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
        **keys,
    }


MODELS_REMOTE_CODE: tuple[ModelPreset, ...] = (
    # Qwen-1_8B: a ModelScope copy of the official file (github.com/hjw-develop/Qwen
    # Qwen-1_8B/config.json @c2e96957, with the `configuration.json` ModelScope adds beside it).
    make_preset(
        "qwen-1.8b", "Qwen/Qwen-1_8B", "Qwen-1.8B",
        _qwen(hidden_size=2048, intermediate_size=11008, max_position_embeddings=8192,
              num_attention_heads=16, num_hidden_layers=24, rotary_emb_base=10000,
              seq_length=8192, vocab_size=151936),
        aliases=("qwen-1_8b",),
        read_from="github.com/hjw-develop/Qwen Qwen-1_8B/config.json @c2e96957 (ModelScope copy)",
    ),
    # Qwen-7B: a git mirror of the Hub repository (github.com/zhangningboo/Qwen-7B, which holds
    # the Hub's commits, config.json as of e7a368b of 2023-11-30: 32,768 positions where the
    # file of 2023-09-24, abcb6d6, said 8,192). Alibaba's MNN keeps a copy of Qwen-7B-Chat's file
    # (alibaba/MNN transformers/llm/export/llm_models/Qwen-7B-Chat/config.json @5e62c78f) with
    # the same shapes (8,192 positions).
    make_preset(
        "qwen-7b", "Qwen/Qwen-7B", "Qwen-7B",
        _qwen(hidden_size=4096, intermediate_size=22016, max_position_embeddings=32768,
              num_attention_heads=32, num_hidden_layers=32, rotary_emb_base=10000,
              seq_length=8192, vocab_size=151936),
        aliases=("Qwen/Qwen-7B-Chat", "qwen-7b-chat"),
        read_from="github.com/zhangningboo/Qwen-7B config.json @ffe04dd5 (mirror of the Hub "
                  "repository; the file of e7a368b)",
    ),
    # Qwen-72B: a git mirror of the ModelScope repository qwen/Qwen-72B
    # (github.com/mapengAdam/qianwen-72B config.json, the file of c634a7ec, 2023-11-27; its first
    # version, 3334bfe, was a training dump and was replaced).
    make_preset(
        "qwen-72b", "Qwen/Qwen-72B", "Qwen-72B",
        _qwen(hidden_size=8192, intermediate_size=49152, max_position_embeddings=8192,
              num_attention_heads=64, num_hidden_layers=80, rotary_emb_base=1000000,
              seq_length=8192, vocab_size=152064),
        read_from="github.com/mapengAdam/qianwen-72B config.json @c677f291 (mirror of the "
                  "ModelScope repository qwen/Qwen-72B; the file of c634a7ec)",
    ),
    # ChatGLM3-6B: a git mirror of the Hub repository (github.com/czk1997/chatglm3-copy, whose
    # log merges huggingface.co/THUDM/chatglm3-6b; config.json at 456aa875, 2023-12-07).
    # ChatGLM2-6B's file (github.com/syjjhl/chatglm2-6b @8fd7fba2, a mirror of the Hub
    # repository) differs in `seq_length` only (32,768).
    make_preset(
        "chatglm3-6b", "THUDM/chatglm3-6b", "ChatGLM3-6B",
        _chatglm(seq_length=8192),
        aliases=("zai-org/chatglm3-6b",),
        read_from="github.com/czk1997/chatglm3-copy config.json @456aa875 (mirror of the Hub "
                  "repository)",
    ),
    make_preset(
        "chatglm2-6b", "THUDM/chatglm2-6b", "ChatGLM2-6B",
        _chatglm(seq_length=32768),
        aliases=("zai-org/chatglm2-6b",),
        read_from="github.com/syjjhl/chatglm2-6b config.json @8fd7fba2 (mirror of the Hub "
                  "repository)",
    ),
    # Baichuan2-13B-Chat: a git mirror of the Hub repository (github.com/jrd77/Baichuan2-13B-Chat,
    # which holds the Hub's c6f8592a "fix NormHead eval"; config.json as of c21a0af6,
    # 2023-09-08). The Base model's file was not found.
    make_preset(
        "baichuan2-13b-chat", "baichuan-inc/Baichuan2-13B-Chat", "Baichuan2-13B-Chat",
        {
            "architectures": ["BaichuanForCausalLM"],
            "model_type": "baichuan",
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 13696,
            "model_max_length": 4096,
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
            "rms_norm_eps": 1e-06,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 125696,
        },
        read_from="github.com/jrd77/Baichuan2-13B-Chat config.json @c6f8592a (mirror of the Hub "
                  "repository)",
    ),
    # InternLM2.5-7B-Chat: no copy of the official file with its repository named was found. Read
    # from a tutorial's transcription of it (its repository not named by the code index), which
    # agrees on every key kept with a dumped `llm_config` whose `_name_or_path` is
    # internlm/internlm2_5-7b-chat and with an MLX test's trimmed internlm2-7b config; its count
    # is the one HfApi's safetensors metadata gives for the repository (7,737,708,544, printed
    # in a third-party model list and in a tool's README).
    make_preset(
        "internlm2.5-7b-chat", "internlm/internlm2_5-7b-chat", "InternLM2.5-7B-Chat",
        {
            "architectures": ["InternLM2ForCausalLM"],
            "model_type": "internlm2",
            "attn_implementation": "eager",
            "bias": False,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "max_position_embeddings": 32768,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {"type": "dynamic", "factor": 2.0},
            "rope_theta": 1000000,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 92544,
        },
        aliases=("internlm2_5-7b-chat",),
        read_from="third-party transcriptions of internlm/internlm2_5-7b-chat's config.json "
                  "(see the comment above the preset)",
    ),
)
