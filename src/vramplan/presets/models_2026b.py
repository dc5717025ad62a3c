"""Presets added in 2026-12 (second batch) for models that published runs name and the registry
lacked: the Qwen1.5 base models 1.8B, 4B and 14B and Qwen1.5-110B-Chat, Qwen1.5-MoE-A2.7B (and
its chat model) and Qwen2-57B-A14B, Yi-1.5 6B, 9B and 34B, DeepSeek LLM 67B,
DeepSeek-Coder-V2-Lite, MPT-7B and Falcon 180B.

As in `vramplan.presets.models_2026`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the copies the values were read from, with their
commits where the page showed one. No value here was written from memory. Counts are checked
against transformers on the meta device (tests/test_param_counts_meta.py).

The official files were found only for some chat releases (named where they were); every preset
was read from copies on the Hub (fine-tunes, quantizations and conversions) whose `_name_or_path`
names the official repository or a local folder of it, and at least two copies agree on every key
kept. A key on which the copies disagree (`torch_dtype` of a fine-tune, Qwen's unused
`sliding_window`) is left out, as the comment above the preset says. A chat or instruct release
whose file has the base's keys is an alias of the base preset (`vramplan.model.resolve`).

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vramplan.presets.model_preset import ModelPreset, copy_on_hub, hub_config_url, make_preset
from vramplan.presets.models_2024_2026 import DEEPSEEK_V2_LITE_CONFIG
from vramplan.presets.models_2026 import qwen2_config

if TYPE_CHECKING:
    from typing import Any

_preset, _copy, _blob = make_preset, copy_on_hub, hub_config_url


def _qwen2_moe(*, hidden: int, inter: int, layers: int, heads: int, kv: int, max_pos: int,
               window_layers: int, moe_inter: int, shared_inter: int, experts: int, top_k: int,
               **extra: Any) -> dict[str, Any]:
    """The keys the Qwen2-MoE config.json files read here write alike (`Qwen2MoeForCausalLM`,
    SiLU, every layer MoE, no top-k renormalization, RMSNorm eps 1e-6, RoPE base 1e6, the
    151,936-token vocabulary, untied head, bfloat16, no sliding window used), with the shape keys
    each gives."""
    return {
        "architectures": ["Qwen2MoeForCausalLM"],
        "decoder_sparse_step": 1,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": max_pos,
        "max_window_layers": window_layers,
        "model_type": "qwen2_moe",
        "moe_intermediate_size": moe_inter,
        "norm_topk_prob": False,
        "num_attention_heads": heads,
        "num_experts": experts,
        "num_experts_per_tok": top_k,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "shared_expert_intermediate_size": shared_inter,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "use_sliding_window": False,
        "vocab_size": 151936,
        **extra,
    }


def _yi15(*, hidden: int, inter: int, layers: int, heads: int, kv: int) -> dict[str, Any]:
    """The keys the Yi-1.5 config.json files read here write alike (Llama's layout with GQA,
    4,096 positions, RoPE base 5e6, RMSNorm eps 1e-6, the 64,000-token vocabulary, untied head,
    bfloat16), with the shape keys each gives."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": 4096,
        "model_type": "llama",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 5000000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vocab_size": 64000,
    }


MODELS_2026B: tuple[ModelPreset, ...] = (
    # Qwen1.5 (February 2024, model_type qwen2): q/k/v biases, full multi-head attention below
    # 32B, RoPE base 1e6 (5e6 at 4B), `use_sliding_window` false (so `sliding_window` is unused).
    # 1.8B: the official repository's first upload (b98943d1, transformers 4.37.0.dev0) said 8,192
    # positions and a 4,096 window; copies saved from it since (anonymous-guest's fine-tune,
    # 4.41.2, and aloobun's Synch, 4.38.2, both with `_name_or_path` Qwen/Qwen1.5-1.8B, and
    # GreenBitAI's quantization of the snapshot 7846de7e, 4.39.2) say 32,768 and 32,768, the
    # values kept; the count does not depend on them. Untied head. Qwen1.5-1.8B-Chat's copies
    # (CMLL's ZhongJing-2 merge, 4.41.2, and XinNuyoah's model-2.0, 4.39.3, `_name_or_path`
    # Qwen/Qwen1.5-1.8B-Chat) have the same keys: an alias.
    _preset(
        "qwen1.5-1.8b",
        "Qwen/Qwen1.5-1.8B",
        "Qwen1.5 1.8B",
        qwen2_config(hidden=2048, inter=5504, layers=24, heads=16, kv=16, vocab=151936, tied=False,
                     max_pos=32768, window_layers=21, rms_eps=1e-06, rope_theta=1000000.0,
                     sliding_window=32768),
        aliases=("Qwen/Qwen1.5-1.8B-Chat", "qwen1.5-1.8b-chat"),
        read_from=(
            _copy("anonymous-guest/QiangGuoAI-V1.1-1.8B") + "; "
            + _blob("aloobun/Synch-Qwen1.5-1.8B", "5dede2620e5a01e039d3bdec9aa96b55610cd5b8")
            + "; " + _blob("GreenBitAI/Qwen-1.5-1.8B-channel-mix-bpw-2.5") + "; the first upload "
            + _blob("Qwen/Qwen1.5-1.8B", "b98943d1952941250f261b99a347df61194d2a85")
            + "; the chat model's copies " + _blob("CMLL/ZhongJing-2-1_8b-merge") + ", "
            + _blob("XinNuyoah/model-2.0")
        ),
    ),
    # 4B: 40 layers of width 2,560, 20 heads, RoPE base 5e6, untied head. The official
    # Qwen1.5-4B-Chat file (4cd30db7, transformers 4.37.0.dev0) and a copy saved from a local
    # Qwen1.5-4B snapshot (ricdomolm's ttt-mc-qwen-1.5-4b, 4.40.0.dev0) agree on every key below;
    # they disagree on the unused `sliding_window` (4,096, 32,768), left out.
    _preset(
        "qwen1.5-4b",
        "Qwen/Qwen1.5-4B",
        "Qwen1.5 4B",
        qwen2_config(hidden=2560, inter=6912, layers=40, heads=20, kv=20, vocab=151936, tied=False,
                     max_pos=32768, window_layers=21, rms_eps=1e-06, rope_theta=5000000.0),
        aliases=("Qwen/Qwen1.5-4B-Chat", "qwen1.5-4b-chat"),
        read_from=(
            _copy("ricdomolm/ttt-mc-qwen-1.5-4b") + "; the chat model's official file "
            + _blob("Qwen/Qwen1.5-4B-Chat", "4cd30db761e4324c49da09d64f36d60b494cb109")
        ),
    ),
    # 14B: the shapes of `qwen1.5-14b-chat` (a preset of its own: its copies disagree on
    # `sliding_window` and `torch_dtype`, which it leaves out). M4-ai's Hercules (transformers
    # 4.39.2, `_name_or_path` Qwen/Qwen1.5-14B), a copy saved from a local Qwen1.5-14B folder
    # (charlieCs's dacon-qa, 4.38.2) and silk-road's Haruhi-Zero (4.37.0) agree on every key below.
    _preset(
        "qwen1.5-14b",
        "Qwen/Qwen1.5-14B",
        "Qwen1.5 14B",
        qwen2_config(hidden=5120, inter=13696, layers=40, heads=40, kv=40, vocab=152064, tied=False,
                     max_pos=32768, window_layers=35, rms_eps=1e-06, rope_theta=1000000.0,
                     sliding_window=32768),
        read_from=(
            _blob("M4-ai/Hercules-Qwen1.5-14B", "90ce55b834163743d6b8c2bb65de677e052cbfb2") + "; "
            "the .ipynb_checkpoints/config-checkpoint.json of https://huggingface.co/charlieCs/"
            "Qwen-14B-dacon-qa/tree/76248e6b6e02a0b19aa4b294325dc97c62518891; "
            + _blob("silk-road/Haruhi-Zero-14B-0_5")
        ),
    ),
    # Qwen1.5-110B-Chat (April 2024): 80 layers of width 8,192, GQA with 8 key/value heads, an
    # untied 152,064-token head. second-state's copy of the official file (transformers 4.37.2)
    # and study-hjt's GPTQ-Int8 quantization of a local Qwen1.5-110B-Chat folder (4.39.3, saved in
    # float16) agree on every key below. The base Qwen1.5-110B's own file was not read: its
    # llama.cpp conversion (ollama's qwen:110b-text-v1.5) gives the same shapes, and the Open LLM
    # Leaderboard's request file lists it at 111.21 billion parameters, this preset's count
    # (111,209,914,368); it answers as an alias.
    _preset(
        "qwen1.5-110b-chat",
        "Qwen/Qwen1.5-110B-Chat",
        "Qwen1.5 110B Chat",
        qwen2_config(hidden=8192, inter=49152, layers=80, heads=64, kv=8, vocab=152064, tied=False,
                     max_pos=32768, window_layers=70, rms_eps=1e-06, rope_theta=1000000.0,
                     sliding_window=32768),
        aliases=("qwen1.5-110b", "Qwen/Qwen1.5-110B"),
        read_from=(
            _blob("second-state/Qwen1.5-110B-Chat-GGUF", "27c76188b519dae460a3ffa6c13650feeae27a7a")
            + "; " + _blob("study-hjt/Qwen1.5-110B-Chat-GPTQ-Int8") + "; the base's shapes: "
            "https://ollama.com/library/qwen:110b-text-v1.5-q5_0 (GGUF metadata); its 111.21 "
            "billion parameters: https://huggingface.co/datasets/open-llm-leaderboard/requests/"
            "blob/5642b6b269d4d27d5e749d1fc1c179159e2a356e/Qwen/"
            "Qwen1.5-110B_eval_request_False_bfloat16_Original.json"
        ),
    ),
    # Qwen1.5-MoE-A2.7B (March 2024, model_type qwen2_moe): 24 layers of width 2,048, each with
    # 60 experts of width 1,408 (4 routed per token) and a shared expert of width 5,632 behind a
    # sigmoid gate; full multi-head attention with q/k/v biases. MaziyarPanahi's Wikihow fine-tune
    # (transformers 4.40.0.dev0), jayzeng's llm-fun (a bnb-4bit copy) and RichardErkhov's 8-bit
    # copy, all with `_name_or_path` Qwen/Qwen1.5-MoE-A2.7B, agree on every key below (8,192
    # positions). The chat model says 32,768: a preset of its own, below.
    _preset(
        "qwen1.5-moe-a2.7b",
        "Qwen/Qwen1.5-MoE-A2.7B",
        "Qwen1.5-MoE-A2.7B",
        _qwen2_moe(hidden=2048, inter=5632, layers=24, heads=16, kv=16, max_pos=8192,
                   window_layers=21, moe_inter=1408, shared_inter=5632, experts=60, top_k=4,
                   sliding_window=32768),
        read_from=(
            _blob("MaziyarPanahi/Qwen1.5-MoE-A2.7B-Wikihow",
                  "f2045481b0b67a1324363fa416dca672026c1d28")
            + "; " + _blob("jayzeng/llm-fun") + "; "
            + _blob("RichardErkhov/Qwen_-_Qwen1.5-MoE-A2.7B-8bits")
        ),
    ),
    # Qwen1.5-MoE-A2.7B-Chat: the base's keys with 32,768 positions. ByteResearch's Hermes
    # fine-tune (transformers 4.40.0.dev0, from a local Qwen1.5-MoE-A2.7B-Chat folder) and
    # RichardErkhov's 4-bit copy (4.40.2, saved in float16; `torch_dtype` bfloat16 kept from the
    # first) agree on every other key below.
    _preset(
        "qwen1.5-moe-a2.7b-chat",
        "Qwen/Qwen1.5-MoE-A2.7B-Chat",
        "Qwen1.5-MoE-A2.7B Chat",
        _qwen2_moe(hidden=2048, inter=5632, layers=24, heads=16, kv=16, max_pos=32768,
                   window_layers=21, moe_inter=1408, shared_inter=5632, experts=60, top_k=4,
                   sliding_window=32768),
        read_from=(
            _blob("ByteResearch/Hermes-Qwen1.5-MoE-A2.7B-Chat-240405") + "; the config.json "
            "added by https://huggingface.co/RichardErkhov/Qwen_-_Qwen1.5-MoE-A2.7B-Chat-4bits/"
            "commit/371818386e308d5dcce3e0527c001de93d3ed18c"
        ),
    ),
    # Qwen2-57B-A14B (June 2024): 28 layers of width 3,584, 64 experts of width 2,560 (8 routed
    # per token) and a shared expert of width 20,480; GQA with 4 key/value heads; 131,072
    # positions. Read from the official file (759c0d83, transformers 4.40.1); zhoukz's bnb-4bit
    # copy (4.42.4, `_name_or_path` Qwen/Qwen2-57B-A14B) agrees on every shape key and writes
    # max_window_layers 28, sliding_window 131,072 and `mlp_only_layers` [] (the window keys
    # unused: `use_sliding_window` is false); the official values are kept.
    _preset(
        "qwen2-57b-a14b",
        "Qwen/Qwen2-57B-A14B",
        "Qwen2-57B-A14B",
        _qwen2_moe(hidden=3584, inter=18944, layers=28, heads=28, kv=4, max_pos=131072,
                   window_layers=21, moe_inter=2560, shared_inter=20480, experts=64, top_k=8,
                   sliding_window=4096),
        read_from=(
            _blob("Qwen/Qwen2-57B-A14B", "759c0d83a2b7ad416611d984fdfffbec8de361c2") + "; "
            + _blob("zhoukz/qwen2-57b-a14b-4bit")
        ),
    ),
    # 01.AI Yi-1.5 (May 2024): Yi's layout continued-pretrained, RoPE base 5e6. Each size's chat
    # release has the same keys as its base (the official chat files read): aliases.
    # 6B: rabbitcat's BashCopilot (transformers 4.40.2, from a local Yi-1.5-6B folder), the
    # official Yi-1.5-6B-Chat file (dd86db5e, 4.40.0) and fakezeta's OpenVINO copy of the chat
    # model (4.40.1) agree on every key below.
    _preset(
        "yi-1.5-6b",
        "01-ai/Yi-1.5-6B",
        "Yi-1.5 6B",
        _yi15(hidden=4096, inter=11008, layers=32, heads=32, kv=4),
        aliases=("01-ai/Yi-1.5-6B-Chat", "yi-1.5-6b-chat"),
        read_from=(
            _blob("rabbitcat/BashCopilot-6B-preview", "1c4507cc863e4d67916377b621fa6e631a450ad5")
            + "; the chat model's official file "
            + _blob("01-ai/Yi-1.5-6B-Chat", "dd86db5e101a25cc977f978735b4eaf5a9e5a5cf") + "; "
            + _blob("fakezeta/Yi-1.5-6B-Chat-ov-int8")
        ),
    ),
    # 9B: 48 layers. qnguyen3's Master-Yi-9B (transformers 4.40.1, `_name_or_path`
    # 01-ai/Yi-1.5-9B), fakezeta's OpenVINO copy of the chat model (4.40.1) and nbeerbower's
    # yi-gutenberg-9B (4.40.2, from 01-ai/Yi-1.5-9B-Chat) agree on every key below (fakezeta's
    # writes no torch_dtype). Not `yi-9b` (Yi-9B: RoPE base 10,000).
    _preset(
        "yi-1.5-9b",
        "01-ai/Yi-1.5-9B",
        "Yi-1.5 9B",
        _yi15(hidden=4096, inter=11008, layers=48, heads=32, kv=4),
        aliases=("01-ai/Yi-1.5-9B-Chat", "yi-1.5-9b-chat"),
        read_from=(
            _blob("qnguyen3/Master-Yi-9B", "2ee9c8936539bec96a0e3cdaf939fce033b3a556") + "; "
            + _blob("fakezeta/Yi-1.5-9B-Chat-ov-int8") + "; "
            + _blob("nbeerbower/yi-gutenberg-9B")
        ),
    ),
    # 34B: 60 layers of width 7,168, 56 heads, 8 key/value heads. adamo1139's mirror of the base
    # (transformers 4.37.2), mlx-community's 4-bit conversion (4.37.2) and the official
    # Yi-1.5-34B-Chat file (7b967a3a, 4.40.0) agree on every key below; KnutJaegersberg's Deita-34b
    # (from a local Yi-1.5-34B folder, 4.38.2) too, but for float16.
    _preset(
        "yi-1.5-34b",
        "01-ai/Yi-1.5-34B",
        "Yi-1.5 34B",
        _yi15(hidden=7168, inter=20480, layers=60, heads=56, kv=8),
        aliases=("01-ai/Yi-1.5-34B-Chat", "yi-1.5-34b-chat"),
        read_from=(
            _blob("adamo1139/Yi-1.5-34B-base-mirror") + "; "
            + _blob("mlx-community/Yi-1.5-34B-4bit", "refs%2Fpr%2F2") + "; the chat model's "
            "official file "
            + _blob("01-ai/Yi-1.5-34B-Chat", "7b967a3a456738c0330b1624980dd6a7d3ed33f5") + "; "
            + _blob("KnutJaegersberg/Deita-34b")
        ),
    ),
    # DeepSeek LLM 67B base (arXiv:2401.02954): Llama's layout, 95 layers of width 8,192, GQA
    # with 8 key/value heads, the 102,400-token vocabulary. Vivacem's DeepSeek-67B-MMIQC
    # (transformers 4.35.2, saved from the snapshot c3f813a1 of the official repository) and
    # LoneStriker's exl2 copy of a fine-tune of a local deepseek-llm-67b-base folder (4.34.1)
    # agree on every key below; they disagree on torch_dtype (bfloat16, float16), left out.
    _preset(
        "deepseek-llm-67b",
        "deepseek-ai/deepseek-llm-67b-base",
        "DeepSeek LLM 67B",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 22016,
            "max_position_embeddings": 4096,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 95,
            "num_key_value_heads": 8,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "vocab_size": 102400,
        },
        aliases=("deepseek-llm-67b-base",),
        read_from=(
            _blob("Vivacem/DeepSeek-67B-MMIQC") + "; "
            + _blob("LoneStriker/deepseek-llm-67b-Spicy-3.1-1-2.65bpw-h6-exl2",
                    "521fbd852b854423330cd4b85b57b89b178971bf")
        ),
    ),
    # DeepSeek-Coder-V2-Lite (arXiv:2406.11931), Base and Instruct: DeepSeek-V2-Lite's
    # architecture (`deepseek-v2-lite`: MLA with kv_lora_rank 512, one dense layer then 64 routed
    # experts of width 1,408, 6 per token, and 2 shared ones), continued-pretrained on code.
    # nm-testing's W8A8 copy (transformers 4.44.2, saved from the snapshot e434a23f of the
    # official Instruct repository) gives every key but the vocabulary, each equal to
    # `deepseek-v2-lite`'s (so the preset takes `DEEPSEEK_V2_LITE_CONFIG`); onekq-ai's bnb-4bit
    # copy of the Base (`_name_or_path` deepseek-ai/DeepSeek-Coder-V2-Lite-Base) agrees on the
    # keys it shows (through qk_rope_head_dim). The vocabulary, 102,400, is the
    # `deepseek2.vocab_size` that llama.cpp's conversion read from the official Base and
    # Instruct files (legraphista's imatrix logs).
    _preset(
        "deepseek-coder-v2-lite",
        "deepseek-ai/DeepSeek-Coder-V2-Lite-Base",
        "DeepSeek-Coder-V2-Lite",
        DEEPSEEK_V2_LITE_CONFIG,
        aliases=("deepseek-coder-v2-lite-base", "deepseek-coder-v2-lite-instruct",
                 "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct"),
        read_from=(
            "https://huggingface.co/nm-testing/DeepSeek-Coder-V2-Lite-Instruct-W8A8/raw/"
            "e1baf6d59e48a5e8ed950b867461ab5d57c226e7/config.json; "
            + _blob("onekq-ai/DeepSeek-Coder-V2-Lite-Base-bnb-4bit") + "; the vocabulary: "
            "https://huggingface.co/legraphista/DeepSeek-Coder-V2-Lite-Base-IMat-GGUF/raw/"
            "5ffc46df43ad8cdd802a695a7d4bed44146b4ee0/imatrix.log and "
            "https://huggingface.co/legraphista/DeepSeek-Coder-V2-Lite-Instruct-IMat-GGUF/blob/"
            "6231ed58d768f0c0c9ae71c09d6fc7e859b59c99/imatrix.log"
        ),
    ),
    # MosaicML MPT-7B (May 2023, model_type mpt; transformers builds it natively as
    # `MptForCausalLM`): 32 layers of width 4,096, ALiBi, no biases, a 4 x MLP with exact GELU,
    # the 50,432-token vocabulary tied to the head. OpenVINO's int8 copy (transformers 4.40.2,
    # `_name_or_path` mosaicml/mpt-7b) gives every top-level key below; crashx's Flax copy (its
    # `auto_map` names mosaicml/mpt-7b's code) gives the same `attn_config`, and so do the other
    # keys it shows. htriedman's fine-tune of mosaicml/mpt-7b-instruct (4.31.0) has every key below:
    # an alias. `tokenizer_name`, `init_config`, `init_device` and `verbose` (no weights) are left
    # out.
    _preset(
        "mpt-7b",
        "mosaicml/mpt-7b",
        "MPT-7B",
        {
            "architectures": ["MPTForCausalLM"],
            "attn_config": {
                "alibi": True,
                "alibi_bias_max": 8,
                "attn_impl": "torch",
                "attn_pdrop": 0,
                "attn_type": "multihead_attention",
                "attn_uses_sequence_id": False,
                "clip_qkv": None,
                "prefix_lm": False,
                "qk_ln": False,
                "softmax_scale": None,
            },
            "d_model": 4096,
            "emb_pdrop": 0,
            "embedding_fraction": 1.0,
            "expansion_ratio": 4,
            "learned_pos_emb": True,
            "logit_scale": None,
            "max_seq_len": 2048,
            "model_type": "mpt",
            "n_heads": 32,
            "n_layers": 32,
            "no_bias": True,
            "norm_type": "low_precision_layernorm",
            "resid_pdrop": 0,
            "torch_dtype": "bfloat16",
            "vocab_size": 50432,
        },
        # MPT-7B-Chat writes the same keys (torch_dtype aside: float16 in abhinavkulkarni's AWQ
        # copy of mosaicml/mpt-7b-chat, huggingface.co/abhinavkulkarni/mosaicml-mpt-7b-chat-w4-
        # g128-awq @a89bd3fd, its vocabulary in commit 6981fd8; Pratye/mpt-7b-chat-2's config
        # names mosaicml/mpt-7b-chat and agrees), so it is an alias (read 2026-12-05)
        aliases=("mosaicml/mpt-7b-instruct", "mpt-7b-instruct", "mosaicml/mpt-7b-chat",
                 "mpt-7b-chat"),
        read_from=(
            _blob("OpenVINO/mpt-7b-int8-ov", "e34e53b8f7d13eeddf6b7b85a0060fb8ffc3b83a") + "; "
            + _blob("crashx/flax-mpt7b") + "; the instruct model's "
            + _blob("htriedman/mpt-7b-instruct-wiki-sparql",
                    "37fc00b71e06903e8334e7453a6233e8266fe9b7")
        ),
    ),
    # TII Falcon 180B (September 2023): Falcon 40B's new decoder architecture (parallel attention
    # and MLP, two LayerNorms, no biases) with 80 layers of width 14,848, 232 query heads and 8
    # key/value groups. A copy of the official file in gojiteji's LLM-Comparer space (transformers
    # 4.32.0, bfloat16) and TheBloke's GPTQ copy made from it (4.33.0, saved in float16) agree on
    # every key below; so do the chat model's copies (quantumaikr's WizardLM_Orca fine-tune of
    # tiiuae/falcon-180B-chat, 4.31.0, and TeeZee's AWQ copy): an alias. torch_dtype, on which
    # the copies differ, is left out.
    _preset(
        "falcon-180b",
        "tiiuae/falcon-180B",
        "Falcon 180B",
        {
            "architectures": ["FalconForCausalLM"],
            "alibi": False,
            "bias": False,
            "hidden_size": 14848,
            "layer_norm_epsilon": 1e-05,
            "model_type": "falcon",
            "multi_query": True,
            "new_decoder_architecture": True,
            "num_attention_heads": 232,
            "num_hidden_layers": 80,
            "num_kv_heads": 8,
            "parallel_attn": True,
            "vocab_size": 65024,
        },
        aliases=("tiiuae/falcon-180B-chat", "falcon-180b-chat"),
        read_from=(
            "tiiuae/falcon-180B/config.json added by https://huggingface.co/spaces/gojiteji/"
            "LLM-Comparer/commit/18c3fb5caedb38507d1f06be0f6d4e434f08aa5d; "
            + _blob("TheBloke/Falcon-180B-GPTQ", "e2efd96fff8d334e87793521b66bf7fbb84ed561")
            + "; the chat model's " + _blob("quantumaikr/falcon-180B-WizardLM_Orca") + ", "
            + _blob("TeeZee/falcon-180B-chat-AWQ", "76a540e551572ca6294e3fd0b6965b63367294db")
        ),
    ),
)
"""The presets of this module, in display order."""
