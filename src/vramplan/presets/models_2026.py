"""Presets added in 2026-12 for models people fine-tune and serve that the registry lacked: the
DeepSeek-R1 Qwen distillations (1.5B, 7B, 14B, 32B), QwQ-32B and QwQ-32B-Preview, Qwen2 0.5B and
1.5B Instruct, and Ministral 8B Instruct 2410; then Mistral Large Instruct 2407, Codestral 22B,
Command R (c4ai-command-r-v01) and Command R7B, OLMo 1B, OLMoE-1B-7B-0924-Instruct, Qwen2.5-Math
1.5B and 7B, Llama 3.1 Nemotron 70B Instruct, CodeGemma 7B and StableLM 2 1.6B.

As in `vramplan.presets.models`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the copy the values were read from, with its
commit. No value here was written from memory. Counts are checked against transformers on the meta
device (tests/test_param_counts_meta.py).

The official files themselves were not found in the stored copies; every preset was read from
copies on the Hub (fine-tunes, quantizations and conversions) whose `_name_or_path` names the
official repository or whose model folder is its snapshot, and at least two copies agree on every
key kept (Command R7B: one copy, whose count is the published one). A key on which the copies
disagree (`torch_dtype` of a fine-tune, `sliding_window`) is left out when it does not change the
count, as the comment above the preset says. transformers 4.45 and later write `sliding_window`
null when `use_sliding_window` is false, so a Qwen2 copy saved by them does not tell the official
value: where no older copy was read, `sliding_window` is left out (Qwen2Config does not use it
when `use_sliding_window` is false, nor does `vramplan.model.hf_config`).

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vramplan.presets.model_preset import ModelPreset, copy_on_hub, hub_config_url, make_preset

if TYPE_CHECKING:
    from typing import Any

_preset, _copy, _blob = make_preset, copy_on_hub, hub_config_url


def qwen2_config(*, hidden: int, inter: int, layers: int, heads: int, kv: int, vocab: int,
                 tied: bool, max_pos: int, window_layers: int, rms_eps: float,
                 rope_theta: float, **extra: Any) -> dict[str, Any]:
    """The keys every Qwen2-layout config.json read here writes alike (`Qwen2ForCausalLM`,
    SiLU, bfloat16, no sliding window used), with the shape keys each gives."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": max_pos,
        "max_window_layers": window_layers,
        "model_type": "qwen2",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "rms_norm_eps": rms_eps,
        "rope_theta": rope_theta,
        "tie_word_embeddings": tied,
        "torch_dtype": "bfloat16",
        "use_sliding_window": False,
        "vocab_size": vocab,
        **extra,
    }


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
        qwen2_config(hidden=1536, inter=8960, layers=28, heads=12, kv=2, vocab=151936, tied=False,
                     max_pos=131072, window_layers=21, rms_eps=1e-06, rope_theta=10000),
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
        qwen2_config(hidden=3584, inter=18944, layers=28, heads=28, kv=4, vocab=152064, tied=False,
                     max_pos=131072, window_layers=28, rms_eps=1e-06, rope_theta=10000),
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
        qwen2_config(hidden=5120, inter=13824, layers=48, heads=40, kv=8, vocab=152064, tied=False,
                     max_pos=131072, window_layers=48, rms_eps=1e-05, rope_theta=1000000.0),
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
        qwen2_config(hidden=5120, inter=27648, layers=64, heads=40, kv=8, vocab=152064, tied=False,
                     max_pos=131072, window_layers=64, rms_eps=1e-05, rope_theta=1000000.0),
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
        qwen2_config(hidden=5120, inter=27648, layers=64, heads=40, kv=8, vocab=152064, tied=False,
                     max_pos=131072, window_layers=64, rms_eps=1e-05, rope_theta=1000000.0,
                     sliding_window=32768),
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
        qwen2_config(hidden=5120, inter=27648, layers=64, heads=40, kv=8, vocab=152064, tied=False,
                     max_pos=32768, window_layers=64, rms_eps=1e-05, rope_theta=1000000.0),
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
        qwen2_config(hidden=896, inter=4864, layers=24, heads=14, kv=2, vocab=151936, tied=True,
                     max_pos=32768, window_layers=24, rms_eps=1e-06, rope_theta=1000000.0,
                     sliding_window=32768),
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
        qwen2_config(hidden=1536, inter=8960, layers=28, heads=12, kv=2, vocab=151936, tied=True,
                     max_pos=32768, window_layers=28, rms_eps=1e-06, rope_theta=1000000.0,
                     sliding_window=32768),
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
    # Mistral Large Instruct 2407 (123B), released only as an instruct model: Mistral's layout
    # with 88 layers of width 12,288, 96 query heads and 8 key/value heads (head_dim 128, equal
    # to the width over the heads, so the official file, saved by transformers 4.42.3, writes
    # none). The official repository's commit 5c9ce5b5 raised max_position_embeddings from
    # 32,768 to 131,072 (casperhansen's and TechxGenus's AWQ copies replay that commit, citing
    # it; unsloth's bnb-4bit copy made the same change). xmadai's INT4 copy (transformers
    # 4.45.2, `_name_or_path` the official repository) and ModelCloud's GPTQ copy (4.43.1, saved
    # from a local Mistral-Large-Instruct-2407 folder) agree on every key below; SillyTilly's
    # duplicate of the official repository (4.42.3, before the fix) agrees but for the 32,768
    # positions and has no head_dim.
    _preset(
        "mistral-large-2407",
        "mistralai/Mistral-Large-Instruct-2407",
        "Mistral Large Instruct 2407",
        {
            "architectures": ["MistralForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 12288,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "model_type": "mistral",
            "num_attention_heads": 96,
            "num_hidden_layers": 88,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32768,
        },
        aliases=("mistral-large-instruct-2407", "mistral-large-2"),
        read_from=(
            _blob("xmadai/Mistral-Large-Instruct-2407-xMADai-INT4",
                  "8311d35b74867ed092baaf72a7d07ed892a8a92e") + "; "
            + _blob("ModelCloud/Mistral-Large-Instruct-2407-gptq-4bit") + "; "
            + _blob("IntervitensInc/Mistral-Large-Instruct-2407-chatml",
                    "526778ec421ea9e9f001348f6fc79ca576e5fc26")
            + " (a duplicate of SillyTilly/Mistral-Large-Instruct-2407, before the fix); the "
            "positions: https://huggingface.co/mistralai/Mistral-Large-Instruct-2407/commit/"
            "5c9ce5b5f7a7ad62d03e8c66c719b66d586de26b, as replayed by "
            "https://huggingface.co/casperhansen/mistral-large-instruct-2407-awq/commit/"
            "1b91a828d8121dc12dbd493ebfc9cdf4b0a861c3"
        ),
    ),
    # Mistral AI Codestral 22B v0.1: Mistral's layout with 56 layers of width 6,144, 48 query
    # and 8 key/value heads (head_dim 128, not written by the transformers 4.40-4.42 copies),
    # RoPE base 1e6, the 32,768-token v3 vocabulary, no window. Four copies whose
    # `_name_or_path` is mistralai/Codestral-22B-v0.1 agree on every key below: MrezaPRZ's
    # fine-tune (transformers 4.41.2), AI4DS's (4.42.3), tomasonjo's text2cypher (4.41.1, via
    # unsloth) and TechxGenus's AWQ copy (4.40.0, saved in float16). Fine-tunes that added chat
    # tokens (migtissera's Trinity, 32,771) are not counted.
    _preset(
        "codestral-22b",
        "mistralai/Codestral-22B-v0.1",
        "Codestral 22B v0.1",
        {
            "architectures": ["MistralForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 6144,
            "intermediate_size": 16384,
            "max_position_embeddings": 32768,
            "model_type": "mistral",
            "num_attention_heads": 48,
            "num_hidden_layers": 56,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32768,
        },
        aliases=("codestral-22b-v0.1",),
        read_from=(
            _blob("MrezaPRZ/codestral_bird_train") + " (commit c674e76); the config.json added "
            "by https://huggingface.co/AI4DS/sql_generator_codestral_no_cot_epoch_2/commit/"
            "b27e6ca89ac230889d2f2bd3595b5f2a98d52849; "
            + _blob("tomasonjo/text2cypher-codestral-16bit") + "; "
            + _blob("TechxGenus/Codestral-22B-v0.1-AWQ")
        ),
    ),
    # Cohere Command R (c4ai-command-r-v01, 35B): Cohere's parallel block (one LayerNorm, no
    # bias), 40 layers of width 8,192, full multi-head attention (64 key/value heads), RoPE base
    # 8e6, a 256,000-token vocabulary with the head tied (no tie_word_embeddings key: CohereConfig
    # ties by default), logits scaled by 0.0625. TheDrummer's Coomand-R-35B-v1 (transformers
    # 4.40.0.dev0) and prince-canuma's 4-bit copy (4.39.0.dev0, saved in float16), both with
    # `_name_or_path` CohereForAI/c4ai-command-r-v01, agree on every key below; they predate
    # `use_qk_norm` (false by default, as Aya 23 writes it).
    _preset(
        "c4ai-command-r-v01",
        "CohereForAI/c4ai-command-r-v01",
        "Command R (c4ai-command-r-v01)",
        {
            "architectures": ["CohereForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 22528,
            "layer_norm_eps": 1e-05,
            "logit_scale": 0.0625,
            "max_position_embeddings": 8192,
            "model_type": "cohere",
            "num_attention_heads": 64,
            "num_hidden_layers": 40,
            "num_key_value_heads": 64,
            "rope_theta": 8000000.0,
            "torch_dtype": "bfloat16",
            "vocab_size": 256000,
        },
        aliases=("command-r", "command-r-v01", "command-r-35b"),
        read_from=(
            _blob("BeaverLegacy/Coomand-R-35B-v1", "ff13ed8870eb641c7c6c523c1522650d94337fa4")
            + "; " + _blob("prince-canuma/c4ai-command-r-v01-4bit")
        ),
    ),
    # Cohere Command R7B (c4ai-command-r7b-12-2024): Command R's parallel block with GQA (8
    # key/value heads, head_dim 128), three sliding-window layers (4,096 tokens, with RoPE) for
    # each global one (no positional embedding), RoPE base 50,000, the head tied to the 256,000
    # -token embedding (no tie_word_embeddings key; `use_embedding_sharing` true). Read from
    # huihui-ai's abliterated copy (transformers 4.48.0.dev0, `_name_or_path` the official
    # repository), whose keys include the official file's Cohere-internal ones (layer_switch,
    # rotary_pct, use_parallel_block...; left out, transformers ignores them). One copy only:
    # its count, 8,028,033,024, is the 8.028 billion the Open LLM Leaderboard's request file
    # lists for the official repository at revision a9650f3b.
    _preset(
        "c4ai-command-r7b-12-2024",
        "CohereForAI/c4ai-command-r7b-12-2024",
        "Command R7B (c4ai-command-r7b-12-2024)",
        {
            "architectures": ["Cohere2ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "layer_norm_eps": 1e-05,
            "logit_scale": 0.25,
            "max_position_embeddings": 8192,
            "model_type": "cohere2",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rope_theta": 50000,
            "sliding_window": 4096,
            "sliding_window_pattern": 4,
            "torch_dtype": "bfloat16",
            "vocab_size": 256000,
        },
        aliases=("command-r7b", "command-r7b-12-2024"),
        read_from=(
            _blob("huihui-ai/c4ai-command-r7b-12-2024-abliterated") + "; the 8.028 billion "
            "parameters: https://huggingface.co/datasets/open-llm-leaderboard/requests/blob/main/"
            "CohereForAI/c4ai-command-r7b-12-2024_eval_request_False_bfloat16_original.json"
        ),
    ),
    # AI2 OLMo 1B (the transformers-native allenai/OLMo-1B-hf; allenai/OLMo-1B itself needs the
    # hf_olmo remote code): 16 layers of width 2,048, full multi-head attention, OLMo's
    # non-parametric LayerNorm, no biases, the 50,304-token embedding tied to the head. The
    # onnx-community conversion (transformers 4.46.1), kykim0's SFT (4.40.0) and Shahradmz's PPO
    # fine-tune (4.46.2), all with `_name_or_path` allenai/OLMo-1B-hf, agree on every key below;
    # they disagree on torch_dtype (none, bfloat16, float16), left out. KTH's ORPO copy (a
    # vocabulary resized to 50,282) is not counted.
    _preset(
        "olmo-1b",
        "allenai/OLMo-1B-hf",
        "OLMo 1B",
        {
            "architectures": ["OlmoForCausalLM"],
            "attention_bias": False,
            "clip_qkv": None,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "max_position_embeddings": 2048,
            "model_type": "olmo",
            "num_attention_heads": 16,
            "num_hidden_layers": 16,
            "num_key_value_heads": 16,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": True,
            "vocab_size": 50304,
        },
        aliases=("olmo-1b-hf",),
        read_from=(
            _blob("onnx-community/OLMo-1B-hf") + " (commit e733678); "
            + _blob("kykim0/OLMo-1B-SFT-hf", "3b018ff5fc6e6cde1ebb248a4dbd98bcdda6ed56") + "; "
            + _blob("Shahradmz/OLMo-1B-hf-PPO-constitution-1")
        ),
    ),
    # Qwen2.5-Math 1.5B and 7B (base models): Qwen2.5-1.5B's and -7B's shapes with 4,096
    # positions and RoPE base 10,000; the 1.5B ties its head, the 7B does not. Copies saved by
    # transformers 4.44 and later disagree on sliding_window (null, 4096), left out (unused, see
    # the module docstring); use_mrope false (the default) is left out too.
    # 1.5B: unsloth's copy (transformers 4.44.2, `_name_or_path` Qwen/Qwen2.5-Math-1.5B) and
    # mlx-community's bf16 conversion (4.44.0, the official file's keys without
    # `_name_or_path`) agree on every key below.
    _preset(
        "qwen2.5-math-1.5b",
        "Qwen/Qwen2.5-Math-1.5B",
        "Qwen2.5-Math 1.5B",
        qwen2_config(hidden=1536, inter=8960, layers=28, heads=12, kv=2, vocab=151936, tied=True,
                     max_pos=4096, window_layers=21, rms_eps=1e-06, rope_theta=10000),
        read_from=(
            _blob("unsloth/Qwen2.5-Math-1.5B") + " (commit ce1410e); "
            + _blob("mlx-community/Qwen2.5-Math-1.5B-bf16",
                    "c4eab3af176f2821f3e0f8c16aa73f9bd1e6043c")
        ),
    ),
    # 7B: unsloth's copy (transformers 4.44.2), qnguyen3's Quan-Mathy-7B (4.46.1), both with
    # `_name_or_path` Qwen/Qwen2.5-Math-7B, and TIGER-Lab's CFT fine-tune (4.46.1, from a local
    # Qwen2.5-Math-7B folder) agree on every key below. Same count as `qwen2.5-7b`.
    _preset(
        "qwen2.5-math-7b",
        "Qwen/Qwen2.5-Math-7B",
        "Qwen2.5-Math 7B",
        qwen2_config(hidden=3584, inter=18944, layers=28, heads=28, kv=4, vocab=152064, tied=False,
                     max_pos=4096, window_layers=28, rms_eps=1e-06, rope_theta=10000),
        read_from=(
            _blob("unsloth/Qwen2.5-Math-7B") + " (commit 471a1a0); "
            + _blob("qnguyen3/Quan-Mathy-7B") + "; "
            + _blob("TIGER-Lab/Qwen2.5-Math-7B-CFT", "refs%2Fpr%2F1")
        ),
    ),
    # NVIDIA Llama-3.1-Nemotron-70B-Instruct (the transformers release, -HF): Llama 3.1 70B
    # Instruct fine-tuned with RLHF (arXiv:2410.01257) without changing the architecture:
    # Llama 3.1 70B's keys (`llama-3.1-70b`), written out with head_dim 128 and mlp_bias false
    # by the transformers 4.44 that saved it. TheDrummer's Nautilus-70B-v0.1 (transformers
    # 4.45.1, bfloat16) and xmadai's INT4 copy, both with `_name_or_path`
    # nvidia/Llama-3.1-Nemotron-70B-Instruct-HF, agree on every key below, as does Blackroot's
    # Mirai-70B (from a local Llama-3.1-Nemotron-70B-Instruct-HF folder, saved in float16).
    _preset(
        "llama-3.1-nemotron-70b-instruct",
        "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF",
        "Llama 3.1 Nemotron 70B Instruct",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "mlp_bias": False,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
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
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        aliases=("llama-3.1-nemotron-70b-instruct-hf", "nemotron-70b"),
        read_from=(
            _blob("TheDrummer/Nautilus-70B-v0.1") + " (commit 4dc475c); "
            + _blob("xmadai/Llama-3.1-Nemotron-70B-Instruct-xMADai-INT4") + "; "
            + _blob("Blackroot/Mirai-70B-3.85B-6H-0.1-Public-Alpha")
        ),
    ),
    # Google CodeGemma 7B (the base code model): Gemma 7B's shapes (`gemma-7b`) with the
    # activation written as gelu_pytorch_tanh (hidden_act and hidden_activation), which Gemma's
    # MLP uses either way. Three MrezaPRZ fine-tunes with `_name_or_path` google/codegemma-7b
    # (transformers 4.41.2 and 4.42.4, bfloat16) and cjhyeok's code-gemma7b-fc (4.39.3, saved
    # in float32) agree on every key below; torch_dtype, on which they differ, is left out.
    _preset(
        "codegemma-7b",
        "google/codegemma-7b",
        "CodeGemma 7B",
        {
            "architectures": ["GemmaForCausalLM"],
            "attention_bias": False,
            "head_dim": 256,
            "hidden_act": "gelu_pytorch_tanh",
            "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": 3072,
            "intermediate_size": 24576,
            "max_position_embeddings": 8192,
            "model_type": "gemma",
            "num_attention_heads": 16,
            "num_hidden_layers": 28,
            "num_key_value_heads": 16,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000.0,
            "vocab_size": 256000,
        },
        read_from=(
            _blob("MrezaPRZ/codegemma_bird_train", "e0d40ded7023f35e2f04d040f993cb63ca18d1bd")
            + "; " + _blob("MrezaPRZ/codegemma_high_quality_sft_gemini") + "; the config.json "
            "added by https://huggingface.co/MrezaPRZ/"
            "codegemma_data_augmentation_bird_combined_with_synethetic_bird_dev/commit/"
            "20e47af08d2b4c3cb97ad9a3fe4d143f660ae11b; " + _blob("cjhyeok/code-gemma7b-fc")
        ),
    ),
    # Stability AI StableLM 2 1.6B (base): the keys of `stablelm-2-zephyr-1.6b`, its chat
    # fine-tune (LayerNorm, q/k/v biases, a quarter of each head rotated, the 100,352-token
    # vocabulary, untied head). vain05's ORPO fine-tune (transformers 4.39.0.dev0,
    # `_name_or_path` stabilityai/stablelm-2-1_6b) and finetuningsubnet's copy (4.38.2, from a
    # local stablelm-2-1_6b folder) agree on every key below; Xenova's copy of the first,
    # remote-code release (stablelm_epoch) gives the same shapes. The official file now says
    # float16 (its commit "revert(config): use `float16` default torch dtype"), the copies
    # bfloat16: torch_dtype is left out.
    _preset(
        "stablelm-2-1.6b",
        "stabilityai/stablelm-2-1_6b",
        "StableLM 2 1.6B",
        {
            "architectures": ["StableLmForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 4096,
            "model_type": "stablelm",
            "num_attention_heads": 32,
            "num_hidden_layers": 24,
            "num_key_value_heads": 32,
            "partial_rotary_factor": 0.25,
            "rope_scaling": None,
            "rope_theta": 10000,
            "tie_word_embeddings": False,
            "use_qkv_bias": True,
            "vocab_size": 100352,
        },
        aliases=("stablelm-2-1_6b",),
        read_from=(
            _blob("vain05/stablelm-2-1_6b-orpo-full-v3") + "; the config.json added by "
            "https://huggingface.co/finetuningsubnet/stablelm-2-1_6b/commit/"
            "6793d6f50bd8a8a530065b5bbd7e38b8e067db11; "
            + _blob("Xenova/stablelm-2-1_6b", "e1b228897bff366bfac63fd35b1f218497771607")
        ),
    ),
    # AI2 OLMoE-1B-7B-0924-Instruct (arXiv:2409.02060): 16 layers of width 2,048, 64 experts of
    # width 1,024 with 8 routed per token (no shared expert), RMSNorm on the whole-width queries
    # and keys, full multi-head attention, an untied 50,304-token head. Two copies with
    # `_name_or_path` allenai/OLMoE-1B-7B-0924-Instruct (interview-eval's GSM8K fine-tune and
    # Muennighoff's mathtest, both transformers 4.45.0.dev0) agree on every key below; the
    # official allenai/OLMoE-1B-7B-0924-SFT file (read too, 4.44.0.dev0) has the same keys but
    # rms_norm_eps, which it leaves at its default (1e-5).
    _preset(
        "olmoe-1b-7b-0924-instruct",
        "allenai/OLMoE-1B-7B-0924-Instruct",
        "OLMoE-1B-7B-0924 Instruct",
        {
            "architectures": ["OlmoeForCausalLM"],
            "attention_bias": False,
            "clip_qkv": None,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 1024,
            "max_position_embeddings": 4096,
            "model_type": "olmoe",
            "norm_topk_prob": False,
            "num_attention_heads": 16,
            "num_experts": 64,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 16,
            "num_key_value_heads": 16,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 50304,
        },
        aliases=("olmoe-1b-7b-instruct",),
        read_from=(
            _blob("interview-eval/olmoe-math-train-gsm8k-2") + " (commit 56cfe2c); "
            + _blob("Muennighoff/mathtest") + "; the SFT model's own file "
            + _blob("allenai/OLMoE-1B-7B-0924-SFT") + " (commit 94619a7)"
        ),
    ),
)
"""The presets of this module, in display order."""
