"""Presets added in 2026-12 (sixth batch) for models that measured runs name and the registry
lacked: Nous Hermes 2 Mixtral 8x7B DPO. The same round made `gpt-j` a spelling of `gpt-j-6b`
(`vramplan.presets.models`).

As in `vramplan.presets.models_2026e`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the files the values were read from, with their
commits where the page showed one. No value here was written from memory. Counts are checked
against transformers on the meta device (tests/test_param_counts_meta.py).

The official file of Nous Hermes 2 Mixtral 8x7B DPO was found in the stored pages; copies on the
Hub that say what they copy (a repository named after it, a `_name_or_path` naming the official
repository, a quantization of it) agree with it on every key kept, as the comment above the preset
says. The candidates of this round left out, and why, are listed in docs/models.md.

Data only: no file I/O at import.
"""

from __future__ import annotations

from vramplan.presets.model_preset import ModelPreset, hub_config_url, make_preset

_preset, _blob = make_preset, hub_config_url


MODELS_2026F: tuple[ModelPreset, ...] = (
    # Nous Research Nous Hermes 2 Mixtral 8x7B DPO: Mixtral-8x7B-v0.1 (`mixtral-8x7b`: 32 layers of
    # width 4,096, 8 experts of 14,336, 2 per token) fine-tuned with two added ChatML tokens, a
    # 32,002-token vocabulary. The official file (@b8e3f24, transformers 4.37.0.dev0,
    # bfloat16; its `_name_or_path` is the SFT stage it was trained from,
    # NousResearch/OpenHermes-2.5-Mixtral-8x7B-epoch4), LoneStriker's 6.0bpw exl2 quantization of
    # the model (@4779f81, the same file), yentinglin's Taiwan-LLM-8x7B-DPO (@e55b96a,
    # transformers 4.37.2, `_name_or_path` NousResearch/Nous-Hermes-2-Mixtral-8x7B-DPO) and
    # TheBloke's AWQ quantization (@8137037, `_name_or_path` a local
    # nousresearch_nous-hermes-2-mixtral-8x7b-dpo folder; float16, its quantization keys left out)
    # agree on every key below; torch_dtype is the official file's.
    _preset(
        "nous-hermes-2-mixtral-8x7b-dpo",
        "NousResearch/Nous-Hermes-2-Mixtral-8x7B-DPO",
        "Nous Hermes 2 Mixtral 8x7B DPO",
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
            "vocab_size": 32002,
        },
        read_from=(
            "the official file "
            + _blob("NousResearch/Nous-Hermes-2-Mixtral-8x7B-DPO", "b8e3f24")
            + "; " + _blob("LoneStriker/Nous-Hermes-2-Mixtral-8x7B-DPO-6.0bpw-h6-exl2",
                           "4779f814370dbfc8e6368ca6b4d628a52cc18715")
            + "; " + _blob("yentinglin/Taiwan-LLM-8x7B-DPO", "e55b96a")
            + "; " + _blob("TheBloke/Nous-Hermes-2-Mixtral-8x7B-DPO-AWQ", "8137037")
        ),
    ),
)
"""The presets of this module, in display order."""
