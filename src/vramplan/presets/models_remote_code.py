"""Presets of models whose code is the checkpoint's own (`trust_remote_code=True`), read by
`vramplan.model.hf_remote_code`: Qwen (v1) 1.8B, 7B and 72B.

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
)
