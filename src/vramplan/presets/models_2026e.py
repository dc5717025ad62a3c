"""Presets added in 2026-12 (fifth batch) for models that measured runs name and the registry
lacked: Qwen3-0.6B-Base. The same round made Yi-34B-Chat an alias of `yi-34b` (two copies of its
file have the base preset's keys; `vramplan.presets.models_more`).

As in `vramplan.presets.models_2026d`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the files the values were read from, with their
commits where the page showed one. No value here was written from memory. Counts are checked
against transformers on the meta device (tests/test_param_counts_meta.py).

The official files were not found in the stored pages: every preset was read from copies on the
Hub that say what they are a copy of (a `_name_or_path`, or a field naming the official
repository as the model they were loaded from, or a repository named after it), and at least two
copies agree on every key kept. A key on which the copies disagree (`torch_dtype` of fine-tunes)
is left out, as the comment above the preset says. The candidates of this round left out, and
why, are listed in docs/models.md.

Data only: no file I/O at import.
"""

from __future__ import annotations

from vramplan.presets.model_preset import ModelPreset, hub_config_url, make_preset

_preset, _blob = make_preset, hub_config_url


MODELS_2026E: tuple[ModelPreset, ...] = (
    # Qwen3-0.6B-Base: Qwen3-0.6B's shapes (`qwen3-0.6b`: 28 layers of width 1,024, 16 heads,
    # 8 key/value heads, the head tied) with 32,768 positions where the post-trained model's file
    # says 40,960, as for `qwen3-8b-base`. nililba's MNLP_M2_rag_model (transformers 4.52.3, whose
    # config.json names `pretrained_model_name_or_path=Qwen/Qwen3-0.6B-Base` in its base_params),
    # CodeAtCMU's Qwen3-0.6B-Base_full_sft_JavaScript_data_12K and _Rust_data_12K (4.51.3) and
    # brygotti's MNLP_M2_mcqa_model (4.51.3, a duplicate of brygotti's
    # Qwen3-0.6B-Base-unified-dataset-... fine-tune) agree on every key below; they disagree on
    # torch_dtype (float32, bfloat16), left out. The base's eos token (151,643, where Qwen3-0.6B
    # says 151,645) is in all four, and out of the preset with the other tokenizer ids.
    _preset(
        "qwen3-0.6b-base",
        "Qwen/Qwen3-0.6B-Base",
        "Qwen3 0.6B Base",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "max_position_embeddings": 32768,
            "max_window_layers": 28,
            "model_type": "qwen3",
            "num_attention_heads": 16,
            "num_hidden_layers": 28,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": None,
            "tie_word_embeddings": True,
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            _blob("nililba/MNLP_M2_rag_model") + "; "
            + _blob("CodeAtCMU/Qwen3-0.6B-Base_full_sft_JavaScript_data_12K",
                    "b9617cbc8dd32df72dd76556eabe5f861a3c04b7")
            + "; " + _blob("CodeAtCMU/Qwen3-0.6B-Base_full_sft_Rust_data_12K",
                           "74ba8b232b8d0302f8719aa30f08c1bdba67c4b5")
            + "; " + _blob("brygotti/MNLP_M2_mcqa_model", "4a2c76c")
        ),
    ),
)
"""The presets of this module, in display order."""
