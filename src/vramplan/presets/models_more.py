"""More presets of the families that already have a reader: OPT-125M, the smaller Pythia models,
Qwen1.5, Qwen2, the Qwen2.5 and Qwen3 releases whose config.json differs from their base's, the
TinyLlama chat model, OpenLLaMA, Vicuna, Yi, DeepSeek LLM, DeepSeek Coder, StableLM and BLOOM
176B (Zephyr, which takes Mistral 7B's keys, is beside it in `vramplan.presets.models`).

As in `vramplan.presets.models`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout rates equal to the config class's defaults, initialization and
cache keys left out), `source` is the official file on the Hub, and `read_from` names the copy the
values were read from, with its commit. Where a copy was translated from another format (litgpt's
`config.py`) or trimmed (gpu_poor keeps only the shape keys), the comment above the preset says so,
and what was checked. No value here was written from memory. Counts are checked against
transformers on the meta device (tests/test_param_counts_meta.py).

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vramplan.presets.model_preset import ModelPreset, copy_on_hub, hub_config_url, make_preset

if TYPE_CHECKING:
    from typing import Any

_preset, _hub, _copy = make_preset, hub_config_url, copy_on_hub

_LITGPT = ("github.com/Lightning-AI/litgpt litgpt/config.py "
           "@26857050fe3ff627cd714fe92f5838f51a3d5efa")
_GPU_POOR = ("github.com/RahulSChand/gpu_poor public/all_configs.json "
             "@ad2fc0ef0e6ceeb7684363504eecc3342a5e7dc4 (trimmed copies: the shape keys and "
             "vocab_size of each repository's config.json)")
_MLC = ("github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
        "@79d603f085f50500e9509fa01785ffa7ecfaaa93")


def _pythia(*, hidden: int, layers: int, heads: int) -> dict[str, Any]:
    """The keys of the Pythia config.json files (GPT-NeoX, 2,048 positions, a quarter of each head
    rotated, parallel residual, untied `embed_out`), translated from litgpt's entries, whose
    defaults give them: `bias`, `parallel_residual`, `rotary_percentage` 0.25, `norm_eps` 1e-5,
    `rope_base` 10000, GELU, `intermediate_size` 4 x `n_embd`, and the vocabulary 50,254 padded to
    a multiple of 128 (50,304, the vocab_size gpu_poor's copies give)."""
    return {
        "architectures": ["GPTNeoXForCausalLM"],
        "model_type": "gpt_neox",
        "hidden_act": "gelu",
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "layer_norm_eps": 1e-05,
        "max_position_embeddings": 2048,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "rotary_emb_base": 10000,
        "rotary_pct": 0.25,
        "tie_word_embeddings": False,
        "use_parallel_residual": True,
        "vocab_size": 50304,
    }


def _pythia_read_from(name: str) -> str:
    return (f"{_LITGPT} entry '{name}' (commented source "
            f"https://huggingface.co/EleutherAI/{name}/blob/main/config.json), and the shape keys "
            f"and vocab_size of EleutherAI/{name} and EleutherAI/{name}-deduped in {_GPU_POOR}")


def _open_llama(*, hidden: int, inter: int, layers: int) -> dict[str, Any]:
    """OpenLLaMA (openlm-research), translated from litgpt's entries: LLaMA's layout, 32 heads
    (litgpt's default `n_head`), 2,048 positions, RMSNorm eps 1e-6, the 32,000-token vocabulary
    untied; no `num_key_value_heads` (LlamaConfig then uses num_attention_heads)."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_act": "silu",
        "hidden_size": hidden,
        "intermediate_size": inter,
        "max_position_embeddings": 2048,
        "num_attention_heads": 32,
        "num_hidden_layers": layers,
        "rms_norm_eps": 1e-06,
        "tie_word_embeddings": False,
        "vocab_size": 32000,
    }


MODELS_MORE: tuple[ModelPreset, ...] = (
    # Meta OPT-125M (arXiv:2205.01068): OPT-1.3B's layout (no embedding projection, LayerNorms
    # before the sublayers). Two copies with `_name_or_path` facebook/opt-125m and transformers
    # 4.21.0.dev0 agree on every key below and disagree on torch_dtype (float32 in one, float16
    # in the other), which is left out.
    _preset(
        "opt-125m",
        "facebook/opt-125m",
        "OPT 125M",
        {
            "architectures": ["OPTForCausalLM"],
            "model_type": "opt",
            "activation_function": "relu",
            "do_layer_norm_before": True,
            "ffn_dim": 3072,
            "hidden_size": 768,
            "max_position_embeddings": 2048,
            "num_attention_heads": 12,
            "num_hidden_layers": 12,
            "vocab_size": 50272,
            "word_embed_proj_dim": 768,
        },
        read_from=(
            "a copy of the config.json with `_name_or_path` facebook/opt-125m passed as a Mamba "
            "hybrid's attn_cfg in a public script (code-search index file id 67322646830), and "
            "a markdown note quoting the config.json (file id 59461262682; repository/path not "
            "exposed by the index); transformers 4.27.2's OPTConfig print-out of the same keys "
            "(file id 35126208054)"
        ),
    ),
    # EleutherAI Pythia (arXiv:2304.01373), the sizes below 6.9B. The keys are translated from
    # litgpt (see `_pythia`); gpu_poor's trimmed copies give the same shapes and vocabulary for
    # each repository and its -deduped twin (the same architecture, trained on the deduplicated
    # Pile), which is an alias. The model card's non-embedding counts (tests/test_registry.py)
    # are these presets' blocks and final norm.
    *(_preset(f"pythia-{size}", f"EleutherAI/pythia-{size}", f"Pythia {label}",
              _pythia(hidden=hidden, layers=layers, heads=heads),
              aliases=(f"EleutherAI/pythia-{size}-deduped",),
              read_from=_pythia_read_from(f"pythia-{size}"))
      for size, label, hidden, layers, heads in (
          ("70m", "70M", 512, 6, 8), ("160m", "160M", 768, 12, 12),
          ("410m", "410M", 1024, 24, 16), ("1b", "1B", 2048, 16, 8),
          ("1.4b", "1.4B", 2048, 24, 16), ("2.8b", "2.8B", 2560, 32, 32))),
    # Qwen1.5 (model_type qwen2): q/k/v biases, no GQA below 32B. The 0.5B ties its head (the
    # print-out below), the 7B does not (its checkpoint's 15,442,649,088 bf16 bytes are
    # 7,721,324,544 parameters, this count). Each one's chat release has the same keys (the 7B's
    # official file; the 0.5B's copies, which disagree on torch_dtype only): aliases.
    _preset(
        "qwen1.5-0.5b",
        "Qwen/Qwen1.5-0.5B",
        "Qwen1.5 0.5B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "max_position_embeddings": 32768,
            "max_window_layers": 21,
            "num_attention_heads": 16,
            "num_hidden_layers": 24,
            "num_key_value_heads": 16,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        aliases=("Qwen/Qwen1.5-0.5B-Chat", "qwen1.5-0.5b-chat"),
        read_from=(
            "transformers 4.41.2's Qwen2Config print-out with `_name_or_path` Qwen/Qwen1.5-0.5B "
            "in a public fine-tuning write-up (code-search index file id 29205825897; "
            "repository/path not exposed by the index; its id2label and pad_token_id are the "
            "script's); the shapes agree with github.com/abhibambhaniya/GenZ-LLM-Analyzer "
            "GenZ/Models/Model_sets/alibaba.py @091bdd0a2777dfe4d405a8fcdd91c8f12b474bf3; the chat "
            "model's copies (`_name_or_path` Qwen/Qwen1.5-0.5B-Chat, transformers 4.37.2, every "
            "key but torch_dtype alike: the first writes none, the second float32) "
            + _hub("Xenova/Qwen1.5-0.5B-Chat", "59d179b9a48f44cddd73760e2f65ef56b827d94b")
            + " and the config.json added by https://huggingface.co/ytyeung/"
            "Qwen1.5-0.5B-Chat-SFT-riddles/commit/d45042c9b55712f4beaa423a6f8f7970cd1f7472"
        ),
    ),
    _preset(
        "qwen1.5-7b",
        "Qwen/Qwen1.5-7B",
        "Qwen1.5 7B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 32768,
            "max_window_layers": 28,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        aliases=("Qwen/Qwen1.5-7B-Chat", "qwen1.5-7b-chat"),
        read_from=(
            "github.com/huggingface/transformers (a fork's commit in the stored history) "
            "examples/pytorch/torchacc/qwen/Qwen1.5-7B/config.json and "
            "model.safetensors.index.json @f092c38c0bf55916e1c78bcf0f800a7f8a54860b (the model "
            "folder, README of Qwen/Qwen1.5-7B included); the chat model's official file, every "
            "key above alike (transformers 4.37.0): "
            + _hub("Qwen/Qwen1.5-7B-Chat", "c893e33b7355e09bd215b8c3fbde3b6bef3d2864")
        ),
    ),
    # Qwen2.5-1.5B-Instruct: the base's shapes, but its config.json says 32,768 positions (the
    # base's 131,072) and max_window_layers 21 (use_sliding_window is false, so no window).
    _preset(
        "qwen2.5-1.5b-instruct",
        "Qwen/Qwen2.5-1.5B-Instruct",
        "Qwen2.5 1.5B Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 1536,
            "intermediate_size": 8960,
            "max_position_embeddings": 32768,
            "max_window_layers": 21,
            "num_attention_heads": 12,
            "num_hidden_layers": 28,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": 32768,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "transformers 4.50.0.dev0's Qwen2Config print-out of "
            "Qwen/Qwen2.5-1.5B-Instruct/config.json in a public training log (code-search index "
            "file id 55986451419; repository/path not exposed by the index)"
        ),
    ),
    # Qwen3-30B-A3B-Base: the post-trained model's shapes with a 32,768-token context (the
    # post-trained config.json says 40,960), so a preset of its own. litgpt's entry for this
    # repository says 40,960: it was not used.
    _preset(
        "qwen3-30b-a3b-base",
        "Qwen/Qwen3-30B-A3B-Base",
        "Qwen3 30B-A3B Base",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 32768,
            "max_window_layers": 48,
            "mlp_only_layers": [],
            "moe_intermediate_size": 768,
            "norm_topk_prob": True,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "router_aux_loss_coef": 0.001,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/AI-Hypercomputer/maxtext "
            "src/maxtext/checkpoint_conversion/utils/hf_model_configs.py "
            "@e591f30cbbf217ed67ef71263ec0538239f9c3b8, `qwen3_30b_a3b_base_config` (\"Matches "
            "Qwen/Qwen3-30B-A3B-Base\", a re-typed copy with transformers_version 4.51.0)"
        ),
    ),
    # Qwen2 (arXiv:2407.10671), the base releases beside `qwen2-0.5b` and the 72B post-trained
    # release: Qwen2.5's layout (q/k/v biases, GQA). The Qwen2-7B model card's table gives 7.6B
    # parameters, 6.5B without embeddings: this preset's 7,615,616,512 and 6,525,621,760.
    # Qwen2-1.5B: a fine-tune saved by transformers 4.41.2 with `_name_or_path` Qwen/Qwen2-1.5B
    # and the base's end-of-text eos_token_id. Another copy naming the same base (arcee-ai's
    # arcee-lite, an edited file) says 32,768 positions and the chat eos, which are the
    # -Instruct file's: not used.
    _preset(
        "qwen2-1.5b",
        "Qwen/Qwen2-1.5B",
        "Qwen2 1.5B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 1536,
            "intermediate_size": 8960,
            "max_position_embeddings": 131072,
            "max_window_layers": 28,
            "num_attention_heads": 12,
            "num_hidden_layers": 28,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 131072,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=_copy("thundax/Qwen2-1.5B-Sign") + " (upload commit 16014b0)",
    ),
    # Qwen2-7B: the -Instruct preset's shapes with the base's 131,072 positions. Two copies with
    # `_name_or_path` Qwen/Qwen2-7B saved by transformers 4.41.2 agree on every key below: a
    # fine-tune's config.json on the Hub, and TableGPT's vLLM script quoting its model's
    # `llm_config` (its use_cache false is the training run's).
    _preset(
        "qwen2-7b",
        "Qwen/Qwen2-7B",
        "Qwen2 7B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "max_position_embeddings": 131072,
            "max_window_layers": 28,
            "num_attention_heads": 28,
            "num_hidden_layers": 28,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("alielfilali01/PG7BB") + " (upload commit 0aa47d0)" + "; and a public "
            "TableGPT vLLM script's quoted config.json (code-search index file id 3761174183; "
            "repository/path not exposed by the index)"
        ),
    ),
    # Qwen2-72B: its own config.json says RMSNorm eps 1e-5 and max_window_layers 28 (the
    # -Instruct file: 1e-6 and 80) and 131,072 positions (-Instruct: 32,768).
    _preset(
        "qwen2-72b",
        "Qwen/Qwen2-72B",
        "Qwen2 72B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 29568,
            "max_position_embeddings": 131072,
            "max_window_layers": 28,
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "sliding_window": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=_hub("Qwen/Qwen2-72B", "c03367ee2f85a5f870d5aa3feb9928c9156e048f"),
    ),
    _preset(
        "qwen2-72b-instruct",
        "Qwen/Qwen2-72B-Instruct",
        "Qwen2 72B Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 29568,
            "max_position_embeddings": 32768,
            "max_window_layers": 80,
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=_hub("Qwen/Qwen2-72B-Instruct", "7c7b4195787f74b15d14d70a52653ca5cf0c4d75"),
    ),
    # Qwen1.5-14B-Chat: no GQA, an untied 152,064-token head. Three copies of its config.json
    # agree on the keys below: one with `_name_or_path` Qwen/Qwen1.5-14B-Chat (transformers
    # 4.46.3, which writes sliding_window null), a fine-tune saved from a local
    # Qwen1.5-14B-Chat folder (4.39.1) and an AWQ quantization of it (4.37.2); they disagree on
    # eos_token_id, sliding_window (unused: use_sliding_window is false) and torch_dtype, left
    # out. The base Qwen1.5-14B's own file was not read.
    _preset(
        "qwen1.5-14b-chat",
        "Qwen/Qwen1.5-14B-Chat",
        "Qwen1.5 14B Chat",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 13696,
            "max_position_embeddings": 32768,
            "max_window_layers": 35,
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
            "num_key_value_heads": 40,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": False,
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=(
            _copy("DeepDream2045/9f7439e2-56ef-48b6-b4d7-4b2f1d24d44e") + " (commit 7bcde2f)"
            + "; " + _copy("MACLAB-HFUT/PsycoLLM") + " (upload commit e654645)"
            + "; " + _copy("LoneStriker/Qwen1.5-14B-Chat-AWQ") + " (commit cdf10f1)"
        ),
    ),
    # Qwen1.5-72B-Chat: no GQA (64 key/value heads). Its config.json says sliding_window 4096,
    # which use_sliding_window false leaves unused.
    _preset(
        "qwen1.5-72b-chat",
        "Qwen/Qwen1.5-72B-Chat",
        "Qwen1.5 72B Chat",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 24576,
            "max_position_embeddings": 32768,
            "max_window_layers": 70,
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 64,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 4096,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 152064,
        },
        read_from=_hub("Qwen/Qwen1.5-72B-Chat", "3eebb4deedb8c952318504d9afc9b335fcb7bc84"),
    ),
    # TinyLlama 1.1B Chat v1.0: the base's shapes; its config.json says bfloat16 where the base
    # checkpoint's says float32, so a preset of its own. litgpt builds both from one entry.
    _preset(
        "tinyllama-1.1b-chat",
        "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
        "TinyLlama 1.1B Chat",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "max_position_embeddings": 2048,
            "num_attention_heads": 32,
            "num_hidden_layers": 22,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32000,
        },
        aliases=("tinyllama-chat",),
        read_from=(
            f"{_MLC} entry 'tinyllama_1b_chat_v1.0' (transformers 4.35.0), and {_LITGPT} "
            "entry 'tiny-llama-1.1b-chat' (the same shapes)"
        ),
    ),
    # OpenLLaMA (openlm-research), translated from litgpt (see `_open_llama`); gpu_poor's trimmed
    # copies give the same shapes and vocabulary.
    _preset(
        "open-llama-3b",
        "openlm-research/open_llama_3b",
        "OpenLLaMA 3B",
        _open_llama(hidden=3200, inter=8640, layers=26),
        read_from=(f"{_LITGPT} entry 'open_llama_3b' (commented source "
                   "https://huggingface.co/openlm-research/open_llama_3b/blob/main/config.json), "
                   f"and {_GPU_POOR}"),
    ),
    _preset(
        "open-llama-7b",
        "openlm-research/open_llama_7b",
        "OpenLLaMA 7B",
        _open_llama(hidden=4096, inter=11008, layers=32),
        read_from=(f"{_LITGPT} entry 'open_llama_7b' (commented source "
                   "https://huggingface.co/openlm-research/open_llama_7b/blob/main/config.json), "
                   f"and {_GPU_POOR}"),
    ),
    # LMSYS Vicuna 7B v1.5: Llama 2 7B fine-tuned without changing the architecture; LLaVA-1.5,
    # built on it, keeps its keys in its own config (`_name_or_path` lmsys/vicuna-7b-v1.5), and
    # gpu_poor's trimmed copy gives the same shapes and vocabulary.
    _preset(
        "vicuna-7b-v1.5",
        "lmsys/vicuna-7b-v1.5",
        "Vicuna 7B v1.5",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "vocab_size": 32000,
        },
        read_from=(
            "LLaVA-1.5's LlavaConfig print-out with `_name_or_path` lmsys/vicuna-7b-v1.5 "
            "(transformers 4.31.0) in a public annotated copy of llava/model/multimodal_projector/"
            "builder.py (code-search index file id 8410662249; repository/path not exposed by "
            f"the index), and {_GPU_POOR}"
        ),
    ),
    # 01.AI Yi-6B (arXiv:2403.04652): LLaMA's layout with 4 key/value heads, a 64,000-token
    # vocabulary and RoPE base 5e6.
    _preset(
        "yi-6b",
        "01-ai/Yi-6B",
        "Yi 6B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 4,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_theta": 5000000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 64000,
        },
        read_from=(
            "github.com/InternLM/InternEvo-HFModels huggingface_model/yi/yi_6B/configuration_yi.py "
            "@2cbc0493db4b35fea9f121374db20582f2ecf759 (the config.json's keys re-typed as "
            "YiConfig's defaults, transformers_version 4.34.0 and architectures "
            "LlamaForCausalLM included)"
        ),
    ),
    # Yi-9B: Yi-6B's shapes with 48 layers, RoPE base 1e4 and RMSNorm eps 1e-6. Read from an AWQ
    # quantization's config.json with `_name_or_path` 01-ai/Yi-9B (transformers 4.39.0.dev0;
    # its quantization_config and float16 torch_dtype are the quantizer's, left out). The Open
    # LLM Leaderboard's request file gives 8.829 billion parameters; this count is
    # 8,829,407,232.
    _preset(
        "yi-9b",
        "01-ai/Yi-9B",
        "Yi 9B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 10000,
            "tie_word_embeddings": False,
            "vocab_size": 64000,
        },
        read_from=_copy("TechxGenus/Yi-9B-AWQ") + " (upload commit ba69fa5)",
    ),
    # 01.AI Yi-34B (arXiv:2403.04652): LLaMA's layout, 60 layers, 8 key/value heads. Its own
    # config.json, rewritten for LlamaForCausalLM ("compatible with Llama"). The Open LLM
    # Leaderboard's request file gives 34.389 billion parameters; this count is 34,388,917,248.
    # Yi-34B-Chat is an alias: gizmo-ai's duplicate of TheBloke's Yi-34B-Chat-AWQ (transformers
    # 4.35.2, `_name_or_path` a local 01-ai_yi-34b-chat/source folder, upload 3ccb407) and
    # Minami-su's Yi_34B_Chat_2bit (4.34.0, `_name_or_path` Yi-34B-Chat/, upload fd6295f) write
    # every architecture key below alike (their quantization keys and float16 aside).
    _preset(
        "yi-34b",
        "01-ai/Yi-34B",
        "Yi 34B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_act": "silu",
            "hidden_size": 7168,
            "intermediate_size": 20480,
            "max_position_embeddings": 4096,
            "num_attention_heads": 56,
            "num_hidden_layers": 60,
            "num_key_value_heads": 8,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 5000000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 64000,
        },
        aliases=("01-ai/Yi-34B-Chat", "yi-34b-chat"),
        read_from=_hub("01-ai/Yi-34B", "3ace5f03eee58aa00438b15ea3f0d535f3a81e46"),
    ),
    # DeepSeek LLM 7B Chat (arXiv:2401.02954): LLaMA's layout, 30 layers, a 102,400-token
    # vocabulary. The print-out also shows head_dim 128, which transformers derives (4096 / 32)
    # and which the file need not carry, and the launcher's pad_token_id; both left out.
    _preset(
        "deepseek-llm-7b-chat",
        "deepseek-ai/deepseek-llm-7b-chat",
        "DeepSeek LLM 7B Chat",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "mlp_bias": False,
            "num_attention_heads": 32,
            "num_hidden_layers": 30,
            "num_key_value_heads": 32,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 102400,
        },
        read_from=(
            "transformers 4.48.3's LlamaConfig print-out with `_name_or_path` "
            "deepseek-ai/deepseek-llm-7b-chat in a public verl training log (code-search index "
            "file id 52834852015; repository/path not exposed by the index)"
        ),
    ),
    # DeepSeek Coder (arXiv:2401.14196), base models: LLaMA's layout, a 32,256-token vocabulary,
    # 16,384 positions by linear RoPE scaling (factor 4, base 1e5). Their own files were not
    # found; copies saved by transformers from each base agree on every key below and
    # disagree on torch_dtype (bfloat16 or float16), left out.
    _preset(
        "deepseek-coder-6.7b",
        "deepseek-ai/deepseek-coder-6.7b-base",
        "DeepSeek Coder 6.7B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 16384,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": {"factor": 4.0, "type": "linear"},
            "rope_theta": 100000,
            "tie_word_embeddings": False,
            "vocab_size": 32256,
        },
        # instruct variant: the same keys (cfahlgren1/NaturalSQL-6.7B-v0 @c7fca374, transformers
        # 4.37.0.dev0, and lesso03/31957c40-f0da-4aea-8466-e8110a76d5d6, 4.46.0, whose
        # rope_scaling also has the `rope_type` that transformers 4.45 and later write: copies
        # with `_name_or_path` deepseek-ai/deepseek-coder-6.7b-instruct on the Hub)
        aliases=("deepseek-ai/deepseek-coder-6.7b-instruct", "deepseek-coder-6.7b-instruct"),
        read_from=(
            "copies with `_name_or_path` deepseek-ai/deepseek-coder-6.7b-base: "
            + _copy("juewang/deepseek-coder-6.7b-base-trt-int4-g64-hf") + " (commit 9dc2267)"
            + " (transformers 4.41.0.dev0); "
            + _copy("AIGym/deepseek-coder-6.7b-chat") + " (commit 38319c7)"
            + " (4.36.2)"
        ),
    ),
    _preset(
        "deepseek-coder-33b",
        "deepseek-ai/deepseek-coder-33b-base",
        "DeepSeek Coder 33B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_act": "silu",
            "hidden_size": 7168,
            "intermediate_size": 19200,
            "max_position_embeddings": 16384,
            "num_attention_heads": 56,
            "num_hidden_layers": 62,
            "num_key_value_heads": 8,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": {"factor": 4.0, "type": "linear"},
            "rope_theta": 100000,
            "tie_word_embeddings": False,
            "vocab_size": 32256,
        },
        read_from=(
            "copies saved from deepseek-coder-33b-base: "
            + _copy("RichardErkhov/deepseek-ai_-_deepseek-coder-33b-base-4bits",
                    "da376c562933a8c667f7ff61c1d12bdb9206d2a9")
            + " (transformers 4.39.3, quantization_config left out); "
            + _copy("codefuse-ai/CodeFuse-DeepSeek-33B-4bits",
                    "eaa10ca65bbb737beba31eb48c107f80f8498459")
            + " (4.33.2)"
        ),
    ),
    # Stability AI StableLM-3B-4E1T (model_type stablelm): LayerNorms, SwiGLU, a quarter of each
    # head rotated, no q/k/v bias. litgpt's entries for it and for StableLM Zephyr 3B (its
    # instruction-tuned version) are the same, so Zephyr 3B is an alias; mlc-llm's 'stablelm'
    # entry (which does not name its repository) has the same keys and says bfloat16.
    _preset(
        "stablelm-3b-4e1t",
        "stabilityai/stablelm-3b-4e1t",
        "StableLM-3B-4E1T",
        {
            "architectures": ["StableLmForCausalLM"],
            "model_type": "stablelm",
            "hidden_act": "silu",
            "hidden_size": 2560,
            "intermediate_size": 6912,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "partial_rotary_factor": 0.25,
            "rope_theta": 10000,
            "tie_word_embeddings": False,
            "use_qkv_bias": False,
            "vocab_size": 50304,
        },
        aliases=("stabilityai/stablelm-zephyr-3b",),
        read_from=(
            f"{_LITGPT} entries 'stablelm-3b-4e1t' and 'stablelm-zephyr-3b' (commented sources "
            "their config.json on the Hub), translated, and "
            f"{_MLC} entry 'stablelm' (transformers 4.38.0)"
        ),
    ),
    # StableLM 2 Zephyr 1.6B: StableLM 2's layout (q/k/v biases, a 100,352-token vocabulary).
    _preset(
        "stablelm-2-zephyr-1.6b",
        "stabilityai/stablelm-2-zephyr-1_6b",
        "StableLM 2 Zephyr 1.6B",
        {
            "architectures": ["StableLmForCausalLM"],
            "model_type": "stablelm",
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 24,
            "num_key_value_heads": 32,
            "partial_rotary_factor": 0.25,
            "rope_theta": 10000,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "use_qkv_bias": True,
            "vocab_size": 100352,
        },
        read_from=f"{_MLC} entry 'stablelm-2-zephyr-1_6b' (transformers 4.38.0)",
    ),
    # BigScience BLOOM 176B (arXiv:2211.05100): the smaller BLOOM presets' layout (beside them in
    # `vramplan.presets.models`). gpu_poor's trimmed copy of bigscience/bloom gives n_layer,
    # num_attention_heads and the vocabulary under the key names of bloom-560m to 3b, and no
    # `hidden_size`, so the width is under `n_embed` as in those files; its value, 14336, is the
    # BigScience model card's ("Hidden layers are 14336-dimensional", with 70 layers and 112
    # heads), and gpu_poor's copy of bigscience/bloom-petals (the same weights for Petals) says
    # hidden_size 14336. The count equals the Hub model card's 176,247,271,424 parameters
    # (tests/test_hf_config.py).
    _preset(
        "bloom-176b",
        "bigscience/bloom",
        "BLOOM 176B",
        {
            "architectures": ["BloomForCausalLM"],
            "model_type": "bloom",
            "n_embed": 14336,
            "n_layer": 70,
            "num_attention_heads": 112,
            "vocab_size": 250880,
        },
        read_from=(
            f"{_GPU_POOR}, entries 'bigscience/bloom' and 'bigscience/bloom-petals'; the width: "
            "github.com/bigscience-workshop/model_card README.md "
            "@9f15dce8b4910bb63127b945ab0db75c9729ff21"
        ),
    ),
)
"""The presets of this module, in display order."""
