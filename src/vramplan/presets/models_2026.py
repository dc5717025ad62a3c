"""Presets added in 2026-12 for models people fine-tune and serve that the registry lacked: the
DeepSeek-R1 Qwen distillations (1.5B, 7B, 14B, 32B), QwQ-32B and QwQ-32B-Preview, Qwen2 0.5B and
1.5B Instruct, and Ministral 8B Instruct 2410.

As in `vramplan.presets.models`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the copy the values were read from, with its
commit. No value here was written from memory. Counts are checked against transformers on the meta
device (tests/test_param_counts_meta.py).

The official files themselves were not found in the stored copies; every preset was read from
copies on the Hub (fine-tunes, quantizations and conversions) whose `_name_or_path` names the
official repository or whose model folder is its snapshot, and at least two copies agree on every
key kept. transformers 4.45 and later write `sliding_window` null when `use_sliding_window` is
false, so a Qwen2 copy saved by them does not tell the official value: where no older copy was
read, `sliding_window` is left out (Qwen2Config does not use it when `use_sliding_window` is
false, nor does `vramplan.model.hf_config`).

Data only: no file I/O at import.
"""

from __future__ import annotations

from vramplan.presets.model_preset import ModelPreset, copy_on_hub, hub_config_url, make_preset

_preset, _copy = make_preset, copy_on_hub


def _blob(repo: str, revision: str = "main") -> str:
    return hub_config_url(repo, revision)


MODELS_2026: tuple[ModelPreset, ...] = (
    # DeepSeek-R1-Distill-Qwen (arXiv:2501.12948): Qwen2.5 bases fine-tuned on R1's outputs, the
    # base's architecture with RoPE base 10,000 at 1.5B and 7B. Read from copies naming
    # deepseek-ai/DeepSeek-R1-Distill-Qwen-*; all were saved by transformers 4.46 to 4.49, which
    # write sliding_window null (left out, see the module docstring).
    # 1.5B: onnx-community's conversion (transformers 4.46.3), a GRPO fine-tune (4.49.0.dev0) and
    # a Qwen2Config print-out quoted in a public serving script (4.48.3) agree on every key. The
    # vocabulary is 151,936 and the head untied (unlike Qwen2.5-1.5B, which ties it).
    _preset(
        "deepseek-r1-distill-qwen-1.5b",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
        "DeepSeek-R1-Distill-Qwen 1.5B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 1536,
            "intermediate_size": 8960,
            "max_position_embeddings": 131072,
            "max_window_layers": 21,
            "model_type": "qwen2",
            "num_attention_heads": 12,
            "num_hidden_layers": 28,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            _copy("onnx-community/DeepSeek-R1-Distill-Qwen-1.5B-ONNX") + "; "
            + _blob("schwamaths/Qwen2.5-1.5B-Open-R1-GRPO") + "; a Qwen2Config print-out with "
            "`_name_or_path` deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B in a public script "
            "(code-search index file ids 810375405, 52422771377; repository/path not exposed by "
            "the index)"
        ),
    ),
    # 7B: prithivMLmods/QwQ-R1-Distill-7B-CoT (transformers 4.47.1), ABrain's fine-tune (4.46.2,
    # saved in float16) and unsloth's bnb-4bit copy agree on every shape key; torch_dtype is the
    # bfloat16 of the first and of the official tree's shards: the two safetensors files listed
    # on the official repository (8.61 GB + 6.62 GB) hold 15.23 GB, 2 bytes x this preset's
    # 7,615,616,512 (the count of Qwen2.5-7B, its base).
    _preset(
        "deepseek-r1-distill-qwen-7b",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
        "DeepSeek-R1-Distill-Qwen 7B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "max_position_embeddings": 131072,
            "max_window_layers": 28,
            "model_type": "qwen2",
            "num_attention_heads": 28,
            "num_hidden_layers": 28,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("prithivMLmods/QwQ-R1-Distill-7B-CoT") + " (commit 615c6cd); "
            + _blob("ABrain/HPGPT-DeepSeek-R1-Distill-Qwen-7B-R") + "; "
            + _blob("unsloth/DeepSeek-R1-Distill-Qwen-7B-unsloth-bnb-4bit") + "; shard sizes "
            "from https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/tree/"
            "09db661939bdd5a289fea1b3c7cbd4c555562bca"
        ),
    ),
    # 14B: osllmai-community's bnb-4bit copy (transformers 4.48.1), neody/r1-14b-awq (saved from
    # the snapshot c79f47ac of the official repository, 4.47.1) and RealSafe-R1-14B (4.45.2)
    # agree on every key: Qwen2.5-14B's shapes, RMSNorm eps 1e-5, RoPE base 1e6.
    _preset(
        "deepseek-r1-distill-qwen-14b",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
        "DeepSeek-R1-Distill-Qwen 14B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 13824,
            "max_position_embeddings": 131072,
            "max_window_layers": 48,
            "model_type": "qwen2",
            "num_attention_heads": 40,
            "num_hidden_layers": 48,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("osllmai-community/DeepSeek-R1-Distill-Qwen-14B-bnb-4bit") + "; "
            + _blob("neody/r1-14b-awq") + "; "
            + _blob("RealSafe/RealSafe-R1-14B", "refs%2Fpr%2F1")
        ),
    ),
    # 32B: AIFunOver's OpenVINO conversion (transformers 4.46.1, `_name_or_path`
    # deepseek-ai/DeepSeek-R1-Distill-Qwen-32B) gives every key; they are those of Qwen2.5-32B
    # (the official Qwen/Qwen2.5-32B file, read too, and `qwen2.5-32b`), its base, whose
    # config.json has the same size (664 bytes) as the distillation's in the official tree.
    _preset(
        "deepseek-r1-distill-qwen-32b",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "DeepSeek-R1-Distill-Qwen 32B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 27648,
            "max_position_embeddings": 131072,
            "max_window_layers": 64,
            "model_type": "qwen2",
            "num_attention_heads": 40,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("AIFunOver/DeepSeek-R1-Distill-Qwen-32B-openvino-8bit") + " (commit ffac8c6); "
            "the base's own file https://huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json "
            "and the distillation's tree https://huggingface.co/deepseek-ai/"
            "DeepSeek-R1-Distill-Qwen-32B/tree/main"
        ),
    ),
    # Qwen QwQ-32B (March 2025): Qwen2.5-32B's shapes with 131,072 positions. unsloth's copy
    # (transformers 4.49.0, `_name_or_path` Qwen/QwQ-32B) and SeerAttention's attention-gate
    # model built on it (4.49.0) agree on every key, sliding_window 32768 included; kaitchup's
    # GPTQ copy (4.47.1, sliding_window null) agrees on the rest.
    _preset(
        "qwq-32b",
        "Qwen/QwQ-32B",
        "QwQ-32B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 27648,
            "max_position_embeddings": 131072,
            "max_window_layers": 64,
            "model_type": "qwen2",
            "num_attention_heads": 40,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("unsloth/QwQ-32B", "403266f19437562e1152ca719315275081826623") + "; "
            + _blob("SeerAttention/SeerAttention-QwQ-32B-AttnGates") + "; "
            + _blob("kaitchup/QwQ-32B-AutoRoundGPTQ-4bit")
        ),
    ),
    # QwQ-32B-Preview (November 2024): the same shapes with 32,768 positions. unsloth's copy
    # (transformers 4.46.3, `_name_or_path` Qwen/QwQ-32B-Preview), casperhansen's AWQ copy saved
    # from a snapshot of the official repository (4.47.0) and a Qwen2Config print-out (4.45.2) in
    # a public README agree on every key; all write sliding_window null (left out).
    _preset(
        "qwq-32b-preview",
        "Qwen/QwQ-32B-Preview",
        "QwQ-32B-Preview",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 27648,
            "max_position_embeddings": 32768,
            "max_window_layers": 64,
            "model_type": "qwen2",
            "num_attention_heads": 40,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("unsloth/QwQ-32B-Preview", "1397937f36a3c66794210ed56a363a19d1616275") + "; "
            + _blob("casperhansen/qwq-32b-preview-awq",
                    "5b43e366071ba6fc50da3f124bb5b9f08ea2d508")
            + "; a Qwen2Config print-out (code-search index file id 46166741757)"
        ),
    ),
    # Qwen2 0.5B and 1.5B Instruct: their bases' shapes (`qwen2-0.5b`, `qwen2-1.5b`) with 32,768
    # positions where the bases say 131,072, so presets of their own. mlc-llm's 'qwen2_0_5b' and
    # 'qwen2_1_5b' copy the keys of these files (transformers 4.40.1, the chat eos_token_id
    # 151645; they name no repository); copies on the Hub with `_name_or_path`
    # Qwen/Qwen2-*-Instruct agree on every key below.
    _preset(
        "qwen2-0.5b-instruct",
        "Qwen/Qwen2-0.5B-Instruct",
        "Qwen2 0.5B Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 896,
            "intermediate_size": 4864,
            "max_position_embeddings": 32768,
            "max_window_layers": 24,
            "model_type": "qwen2",
            "num_attention_heads": 14,
            "num_hidden_layers": 24,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "@79d603f085f50500e9509fa01785ffa7ecfaaa93 entry 'qwen2_0_5b'; "
            + _copy("hsiehpinghan/Qwen2-0.5B-Instruct",
                    "5d18c64db24e6304476027ba26f0a0bf221a4397")
            + " (transformers 4.41.0); "
            + _blob("harry85/Qwen2-0.5B-Instruct", "71ca0f25bf423ea4424ced43f34b39741e9bcdfb")
            + " (4.41.2, saved in float32)"
        ),
    ),
    _preset(
        "qwen2-1.5b-instruct",
        "Qwen/Qwen2-1.5B-Instruct",
        "Qwen2 1.5B Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 1536,
            "intermediate_size": 8960,
            "max_position_embeddings": 32768,
            "max_window_layers": 28,
            "model_type": "qwen2",
            "num_attention_heads": 12,
            "num_hidden_layers": 28,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "@79d603f085f50500e9509fa01785ffa7ecfaaa93 entry 'qwen2_1_5b'; "
            + _copy("Granther/Qwen-1.5B-Instruct-RP", "c9c79d7e50089e7d49ceb4e487ed65469cd7c6c7")
            + " (transformers 4.42.4); the config.json added by "
            "https://huggingface.co/MrezaPRZ/Qwen2-1.5B-Instruct_NL2SQL_BIRD/commit/"
            "7b75e04dc6cae2bd21de2afc194ef9208e1d7b6a (4.44.0, sliding_window null)"
        ),
    ),
    # Mistral AI Ministral 8B Instruct 2410, released only as an instruct model: an explicit
    # head_dim of 128, GQA with 8 key/value heads, RoPE base 1e8, the 131,072-token Tekken
    # vocabulary, a 32,768-token window (every layer). Three copies agree on every key below:
    # rivaon/sydney (transformers 4.45.0, bfloat16, `_name_or_path` the official repository),
    # Spestly's Ava-1.0-8B (4.46.3, saved in float16) and stan-hua's AWQ copy saved from the
    # snapshot 4847e87e of the official repository. Its count, 8,019,808,256, is the 8.02 billion
    # the open LLM leaderboard requests list for it.
    _preset(
        "ministral-8b",
        "mistralai/Ministral-8B-Instruct-2410",
        "Ministral 8B Instruct 2410",
        {
            "architectures": ["MistralForCausalLM"],
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 32768,
            "model_type": "mistral",
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 100000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 131072,
        },
        aliases=("ministral-8b-instruct-2410", "ministral-8b-2410"),
        read_from=(
            _copy("rivaon/sydney") + "; "
            + _blob("Spestly/Ava-1.0-8B", "aca72869fdaf508aaff93c905eb1b601841f5557") + "; "
            + _blob("stan-hua/Ministral-8B-Instruct-2410-AWQ-W4A16") + "; the 8.02 billion "
            "parameters: https://huggingface.co/datasets/le-leadboard/requests/blob/"
            "58b72ab3ecbce3c36453a6821a4997672c343aed/mistralai/"
            "Ministral-8B-Instruct-2410_eval_request_False_bfloat16_Original.json"
        ),
    ),
)
"""The presets of this module, in display order."""
