"""The analytic model agrees with `vramplan trace` (a real transformers + peft training step counted
on fake tensors) within 3 % of the peak, over a matrix of tiny configurations: five families x
full/LoRA/freeze x precision regimes x checkpointing x attention kernels x batch and sequence.

The trace runs one transformers step without gradient accumulation, so the analytic side is asked
for `framework=hf, gradient_accumulation=False`.

Dropout runs at the configs' rates (GPT-2's 0.1 everywhere, OPT's `dropout` 0.1), with two
adjustments, because the tracer's fake tensors are CPU tensors and the model follows CUDA:
- the tracer itself routes `nn.functional.dropout` to `torch.native_dropout`, which is what
  `at::dropout` calls on CUDA (aten/src/ATen/native/Dropout.cpp, `is_fused_kernel_acceptable`:
  CUDA inputs only); on CPU it would save a noise tensor in the input's dtype instead of a bool
  mask;
- under SDPA the tracer runs the call without its attention-probability dropout: CPU runs
  `dropout_p > 0` through the math fallback (scores, probabilities and their dropout
  materialized), while CUDA's flash and memory-efficient kernels draw the mask again from the
  Philox seed, which is what the model counts (`vramplan.tracer.run._sdpa_dropout_as_on_cuda`).
  Eager attention keeps it as it is.

BLOOM and GPT-Neo run every combination with eager attention: transformers has no SDPA path for
them and falls back to eager, which is what the model counts for `sdpa` there.

Not in the matrix, with the reason:
- transformers' Falcon: its own attention (fused qkv split with `broadcast_to` copies, eager softmax
  in the model dtype, peft's adapter on the fused `query_key_value`) is not modelled operation by
  operation; litgpt's Falcon is, and is checked against measurements in test_validate.py.
- QLoRA under full checkpointing or with every linear adapted: see `QLORA_MATRIX`.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.model.hf_config import parse_config
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.parts import PartKind
from vramplan.tracer import make_setup
from vramplan.tracer.run import run_trace
from vramplan.tracer.setup import TRACED_ADAPTERS_FP32, TRACED_OPTIMIZER_IMPL
from vramplan.training.estimate import estimate_training
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    FsdpVersion,
    Method,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)

pytestmark = pytest.mark.trace

TOLERANCE = 0.03

_COMMON = {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
           "vocab_size": 512, "max_position_embeddings": 1024}
FAMILIES: dict[str, dict[str, Any]] = {
    # GQA, untied head
    "llama": {"model_type": "llama", **_COMMON, "intermediate_size": 352,
              "num_key_value_heads": 2, "tie_word_embeddings": False},
    # a vocabulary too small for the logits to hide the blocks' backward (the RMSNorms' fp32
    # gradients, the final norm's backward at the start of backward)
    "llama-vocab32": {"model_type": "llama", **_COMMON, "vocab_size": 32, "intermediate_size": 352,
                      "num_key_value_heads": 2, "tie_word_embeddings": False},
    # GQA, tied embeddings, q/k/v biases
    "qwen2": {"model_type": "qwen2", **_COMMON, "intermediate_size": 352,
              "num_key_value_heads": 2, "tie_word_embeddings": True},
    # MHA
    "mistral": {"model_type": "mistral", **_COMMON, "intermediate_size": 352,
                "num_key_value_heads": 4, "sliding_window": None},
    # parallel block with one shared LayerNorm, plain GELU (tanh, in Python) MLP, partial RoPE
    "phi": {"model_type": "phi", **_COMMON, "intermediate_size": 512,
            "partial_rotary_factor": 0.5},
    # learned positions with OPT's 2 extra rows, biases everywhere, fc1 -> ReLU -> fc2, tied head;
    # `dropout` 0
    "opt": {"model_type": "opt", **_COMMON, "ffn_dim": 512, "dropout": 0.0},
    # OPT with OPTConfig's default `dropout` 0.1 (attention output and fc2 output)
    "opt-dropout": {"model_type": "opt", **_COMMON, "ffn_dim": 512},
    # GPT-2 with GPT2Config's default dropout (embd/attn/resid_pdrop 0.1): fused c_attn, learned
    # positions, gelu_new in Python, softmax in the scores' dtype in eager attention
    "gpt2": {"model_type": "gpt2", "n_embd": 128, "n_layer": 2, "n_head": 4, "vocab_size": 512,
             "n_positions": 1024},
}
COMBOS = (  # method, precision, checkpointing, attention
    ("full", "bf16-true", "none", "sdpa"),
    ("full", "mixed", "none", "sdpa"),
    ("full", "fp32", "none", "sdpa"),
    ("full", "amp", "none", "sdpa"),
    ("lora", "bf16-true", "none", "sdpa"),
    ("lora", "amp", "none", "sdpa"),
    ("freeze", "bf16-true", "none", "sdpa"),
    ("full", "bf16-true", "full", "sdpa"),
    ("lora", "bf16-true", "full", "sdpa"),
    # autocast under full checkpointing: the casts are cached, not saved (TRL's defaults)
    ("full", "amp", "full", "sdpa"),
    ("lora", "amp", "full", "sdpa"),
    ("full", "bf16-true", "none", "eager"),
    ("lora", "bf16-true", "none", "eager"),
)
SHAPES = {"llama": ((2, 128), (1, 64)), "llama-vocab32": ((4, 128),), "qwen2": ((2, 128),),
          "mistral": ((2, 128),), "phi": ((2, 128), (1, 64)), "opt": ((2, 128),),
          "opt-dropout": ((2, 128),), "gpt2": ((2, 128), (1, 64))}
MATRIX = [(family, *combo, *shape) for family, combo in itertools.product(FAMILIES, COMBOS)
          for shape in SHAPES[family]]

EAGER_ONLY_FAMILIES: dict[str, dict[str, Any]] = {
    # ALiBi (no position table), a LayerNorm on the embeddings, fused query_key_value with
    # biases, BloomGelu (its derivative written out in Python in backward), tied head
    "bloom": {"model_type": "bloom", "hidden_size": 128, "n_layer": 2, "n_head": 4,
              "vocab_size": 512},
    # learned positions, q/k/v without bias, q and k upcast to fp32 by eager attention, one bool
    # causal-mask buffer of 1024 x 1024 per layer, a global and a local layer, gelu_new in Python
    "gpt_neo": {"model_type": "gpt_neo", "hidden_size": 128, "num_layers": 2, "num_heads": 4,
                "vocab_size": 512, "max_position_embeddings": 1024, "intermediate_size": 512,
                "attention_types": [[["global", "local"], 1]]},
    # ALiBi added to the scores, fused Wqkv and plain MLP without biases, LayerNorms without
    # bias, exact GELU, softmax on an fp32 copy of the scores, tied head
    "mpt": {"model_type": "mpt", "d_model": 128, "n_layers": 2, "n_heads": 4,
            "vocab_size": 512, "max_seq_len": 1024, "attn_config": {"alibi": True}},
}
"""Families whose transformers module has no SDPA path (`Architecture.sdpa_attention`): every
combination of COMBOS runs with eager attention, what transformers falls back to."""
EAGER_ONLY_EXCLUDED = {("mpt", "lora", "amp", "full", 1, 64): -4.6}
"""Combinations of EAGER_ONLY_FAMILIES outside 3 %, with the analytic peak's signed gap to the
trace's in percent. MPT adds its ALiBi tensor, built in fp32 whatever the model's dtype
(modeling_mpt.py `build_mpt_alibi_tensor`), to the scores: the scores turn fp32 before the
mask and the softmax, and under LoRA and full checkpointing the recomputed block's fp32
score-sized temporaries (two of 64 x 64 per head here) decide the peak; not modelled."""
MATRIX += [case for family in EAGER_ONLY_FAMILIES
           for case in dict.fromkeys((family, method, precision, checkpointing, "eager", *shape)
                                     for method, precision, checkpointing, _ in COMBOS
                                     for shape in ((2, 128), (1, 64)))
           if (case[0], *case[1:4], *case[5:]) not in EAGER_ONLY_EXCLUDED]
FAMILIES.update(EAGER_ONLY_FAMILIES)

# --- eager attention where the score matrices decide the peak ------------------------------------

WIDE_EAGER_FAMILIES: dict[str, dict[str, Any]] = {
    # 16 heads over 512 tokens: 8,192 scores per token beside a 256-wide residual stream, the
    # ratio of Llama-2-7B at 4,096 tokens. The softmax backward's score-sized tensors
    # (`scores_backward_extra`), the gradients the block made before it and transformers' 4-D
    # mask decide the peak; the model missed them by 19 to 36 % before they were counted
    "llama-wide-eager": {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
                         "num_attention_heads": 16, "num_key_value_heads": 16,
                         "intermediate_size": 688, "vocab_size": 512,
                         "max_position_embeddings": 2048, "tie_word_embeddings": False},
}
MATRIX += [(family, method, precision, checkpointing, "eager", 1, 512)
           for family in WIDE_EAGER_FAMILIES
           for method, precision, checkpointing in itertools.product(
               ("full", "lora", "freeze"), ("bf16-true", "mixed", "fp32", "amp"), ("none", "full"))]
FAMILIES.update(WIDE_EAGER_FAMILIES)

_MLA = {"q_lora_rank": 64, "kv_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 24,
        "v_head_dim": 32}
"""Multi-head latent attention with v_head_dim equal to the query/key head width: PyTorch's CPU
SDPA runs unequal widths through its math fallback (scores materialized), where CUDA's
memory-efficient kernel, what the model follows, saves q, k, v, the output and the log-sum-exp
either way."""
FAMILIES_2025: dict[str, dict[str, Any]] = {
    # q/k RMSNorm over head_dim, explicit head_dim
    "qwen3": {"model_type": "qwen3", **_COMMON, "intermediate_size": 352,
              "num_key_value_heads": 2, "head_dim": 32},
    # Gemma's fp32-scaled RMSNorms, four per block, q/k norms, sliding layers under a mask
    "gemma3_text": {"model_type": "gemma3_text", **_COMMON, "intermediate_size": 352,
                    "num_key_value_heads": 2, "head_dim": 32, "sliding_window": 64},
    # norms after attention and MLP, q/k norms over the whole projection
    "olmo2": {"model_type": "olmo2", **_COMMON, "intermediate_size": 352,
              "num_key_value_heads": 2},
    # parallel block under CohereLayerNorm (fp32 Python)
    "cohere": {"model_type": "cohere", **_COMMON, "intermediate_size": 352,
               "num_key_value_heads": 2},
    "cohere2": {"model_type": "cohere2", **_COMMON, "intermediate_size": 352,
                "num_key_value_heads": 2, "sliding_window": 64},
    "granite": {"model_type": "granite", **_COMMON, "intermediate_size": 352,
                "num_key_value_heads": 2},
    "starcoder2": {"model_type": "starcoder2", **_COMMON, "intermediate_size": 512,
                   "num_key_value_heads": 2},
    "smollm3": {"model_type": "smollm3", **_COMMON, "intermediate_size": 352,
                "num_key_value_heads": 2, "pad_token_id": None},
    # Phi-3 and Phi-4: fused qkv_proj (v a view of its output) and gate_up_proj
    "phi3": {"model_type": "phi3", **_COMMON, "intermediate_size": 352,
             "num_key_value_heads": 2, "pad_token_id": 0},
    # mixtures of experts (transformers' grouped_mm experts)
    "qwen3_moe": {"model_type": "qwen3_moe", **_COMMON, "intermediate_size": 352,
                  "num_key_value_heads": 2, "head_dim": 32, "num_experts": 8,
                  "num_experts_per_tok": 2, "moe_intermediate_size": 96},
    # attention sinks (eager only in transformers), clamped SwiGLU experts with biases
    "gpt_oss": {"model_type": "gpt_oss", **_COMMON, "intermediate_size": 96,
                "num_key_value_heads": 2, "head_dim": 32, "num_local_experts": 8,
                "num_experts_per_tok": 2, "sliding_window": 64},
    # MLA, a dense first layer, a shared expert, an fp32 router
    "deepseek_v3": {"model_type": "deepseek_v3", **_COMMON, **_MLA, "num_key_value_heads": 4,
                    "intermediate_size": 352, "n_routed_experts": 8, "num_experts_per_tok": 2,
                    "n_shared_experts": 1, "moe_intermediate_size": 96,
                    "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1},
    "glm4_moe": {"model_type": "glm4_moe", **_COMMON, "intermediate_size": 352,
                 "num_key_value_heads": 2, "head_dim": 32, "n_routed_experts": 8,
                 "num_experts_per_tok": 2, "n_shared_experts": 1, "moe_intermediate_size": 96,
                 "first_k_dense_replace": 1, "use_qk_norm": True, "attention_bias": True},
    # DeepSeek-V2-Lite's layout: MLA without a query latent (one q_proj), a dense first layer,
    # two shared experts as one MLP, a softmax router in fp32
    "deepseek_v2": {"model_type": "deepseek_v2", **_COMMON, **_MLA, "q_lora_rank": None,
                    "num_key_value_heads": 4, "intermediate_size": 352, "n_routed_experts": 8,
                    "num_experts_per_tok": 2, "n_shared_experts": 2, "moe_intermediate_size": 96,
                    "first_k_dense_replace": 1},
    # a shared expert of its own width behind a sigmoid gate, q/k/v biases, experts in every
    # layer behind a softmax router
    "qwen2_moe": {"model_type": "qwen2_moe", **_COMMON, "intermediate_size": 352,
                  "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2,
                  "moe_intermediate_size": 96, "shared_expert_intermediate_size": 160},
    # RMSNorms over the whole query and key projections (GQA: the key's is narrower), experts in
    # every layer behind a softmax router
    "olmoe": {"model_type": "olmoe", **_COMMON, "intermediate_size": 96,
              "num_key_value_heads": 2, "num_experts": 8, "num_experts_per_tok": 2},
    # a dense and a MoE layer, every expert computed for every token, chunked attention
    "llama4_text": {"model_type": "llama4_text", **_COMMON, "intermediate_size": 96,
                    "intermediate_size_mlp": 352, "num_key_value_heads": 2, "head_dim": 32,
                    "num_local_experts": 4, "num_experts_per_tok": 1,
                    "interleave_moe_layer_step": 2, "attention_chunk_size": 64},
}
_BF16_ONLY = {"qwen2_moe", "qwen3_moe", "gpt_oss", "deepseek_v3", "glm4_moe", "deepseek_v2",
              "olmoe", "llama4_text"}
"""bf16-true combinations only: the experts of all but Llama 4 go through `torch._grouped_mm`,
which the fake CPU tensors run in bfloat16 only ("Expected inputs of BF16 type"); Llama 4's
LoRA step under autocast is 3.6 % above the model (its router's scores under autocast are not
modelled)."""


FULL_CHECKPOINTING_EXCLUDED = {
    # every expert computed for every token, recomputed under LoRA
    ("llama4_text", "lora", "bf16-true"): -3.0,
}
"""Full-checkpointing combinations of the new families outside 3 %, with the analytic peak's
signed gap to the trace's in percent (2 x 128 tokens). Until 2026-12-06 (ninth session) also
gpt-oss's LoRA (-4.4 %, its recomputed experts' moments: `_activated_copies`), DeepSeek-V3's,
GLM-4-MoE's and DeepSeek-V2's full fine-tuning and LoRA (+3.4/-3.8, +3.2/-3.9, +5.9 %: the
dense first layer's backward counted as a MoE one, `_kind_backward_bytes`, and the MoE layer's
weighting backward, `moe_backward_transient`); Llama 4's LoRA was -11.8 % (-3.0 % now: the
recomputed experts' down projection, its output beside the weighted input and the product, is
counted; what is left was not read)."""


def _new_family_combos(family: str) -> list[tuple[str, ...]]:
    """The combinations of COMBOS each new family is checked on: bf16-true only where grouped_mm
    runs, eager only for gpt-oss (transformers has no SDPA path with sinks), full checkpointing
    but for `FULL_CHECKPOINTING_EXCLUDED`."""
    return [combo for combo in COMBOS
            if (family not in _BF16_ONLY or combo[1] == "bf16-true")
            and (family != "gpt_oss" or combo[3] == "eager")
            and (combo[2] == "none"
                 or (family, combo[0], combo[1]) not in FULL_CHECKPOINTING_EXCLUDED)]


MATRIX += [(family, *combo, 2, 128) for family in FAMILIES_2025
           for combo in _new_family_combos(family)]
# gpt-oss's eager attention under full checkpointing (COMBOS checkpoints under SDPA only)
MATRIX += [("gpt_oss", method, "bf16-true", "full", "eager", 2, 128) for method in ("full", "lora")
           if ("gpt_oss", method, "bf16-true") not in FULL_CHECKPOINTING_EXCLUDED]
FAMILIES.update(FAMILIES_2025)


# --- freeze under full checkpointing ------------------------------------------------------------

FREEZE_CHECKPOINTING_EXCLUDED = {
    ("glm4_moe", "bf16-true", 2, 128): -3.1, ("llama-vocab32", "bf16-true", 2, 128): +3.0,
    ("olmo2", "bf16-true", 2, 128): +3.3}
"""`freeze` of the last block under full checkpointing, outside 3 %, with the analytic peak's
signed gap to the trace's in percent (2026-12-06). Transformers' checkpointing makes the
embeddings' output require a gradient, so backward runs on through the frozen blocks, and the
step peaks in the first block's recomputed backward with the trained block's gradients made
(`vramplan.training.estimate._frozen_blocks_with_graph`); before that was modelled, 50 of the
192 combinations of every family, four precisions and both shapes were outside 3 % (down to
-10.7 %), 8 after. The model's moment holds the recomputed frozen block's whole saved set
beside its largest backward temporary; at 2 x 128 tokens it is up to 3.3 % over where the trace's
own moment comes later in the block (and fp32 Gemma 3, OLMo 2 and MPT, +6.3/+5.3/+4.7 %, and
StarCoder2 under `amp`, -3.3 %, are left out of the matrix's 2 x 128 shape)."""
FREEZE_CHECKPOINTING_MATRIX = [
    (family, "freeze", precision, "full",
     "eager" if family in EAGER_ONLY_FAMILIES or family in ("gpt_oss", "llama-wide-eager")
     else "sdpa", batch, seq_len)
    for family in FAMILIES
    for precision in (("bf16-true",) if family in _BF16_ONLY else ("bf16-true", "amp", "fp32",
                                                                     "mixed"))
    for batch, seq_len in ((1, 64), *(((2, 128),) if precision == "bf16-true" else ()))
    if (family, precision, batch, seq_len) not in FREEZE_CHECKPOINTING_EXCLUDED]
MATRIX += FREEZE_CHECKPOINTING_MATRIX


def test_every_new_family_is_in_the_matrix() -> None:
    assert {case[0] for case in MATRIX} >= set(FAMILIES_2025)


@pytest.mark.parametrize("case", MATRIX, ids=["-".join(map(str, case)) for case in MATRIX])
def test_analytic_peak_within_3_percent_of_trace(case: tuple[Any, ...]) -> None:
    _assert_q_v_step_agrees(FAMILIES[case[0]], case)


def _assert_q_v_step_agrees(config: dict[str, Any], case: tuple[Any, ...]) -> None:
    """The step of a `MATRIX` case (LoRA on q and v at rank 8) over `config`, traced and
    estimated alike, within 3 %."""
    family, method, precision, checkpointing, attention, batch, seq_len = case
    lora = method == "lora"
    traced = run_trace(make_setup(
        family, config, method=method, precision=precision, batch=batch, seq_len=seq_len,
        lora_r=8 if lora else None, lora_targets="q;v" if lora else None,
        checkpointing=checkpointing, attention=attention))
    analytic = estimate_training(parse_config(config), TrainingSetup(
        method=Method(method), precision=Precision(precision), batch=batch, seq_len=seq_len,
        framework=Framework.HF, gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing(checkpointing), attention=Attention(attention)))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


# --- LoRA adapters in fp32, peft's default -------------------------------------------------------

FP32_ADAPTER_FAMILIES = ("llama", "qwen2", "mistral", "phi", "opt", "olmo2", "cohere", "granite",
                         "starcoder2", "smollm3")
FP32_ADAPTER_MOE_FAMILIES = ("qwen3_moe", "olmoe", "qwen2_moe", "deepseek_v2", "deepseek_v3",
                             "glm4_moe")
FP32_ADAPTER_MATRIX = [(family, targets, checkpointing) for family in FP32_ADAPTER_FAMILIES
                       for targets, checkpointing in (("q;v", "none"), ("q;v", "full"),
                                                      ("all", "none"), ("all", "full"))]
FP32_ADAPTER_MATRIX += [(family, "q;v", "none") for family in FP32_ADAPTER_MOE_FAMILIES]
FP32_ADAPTER_MATRIX += [(family, targets, "full") for family in ("llama", "qwen2", "mistral")
                        for targets in ("gate;up;down", "gate", "up", "down")]
"""LoRA over a bf16 model with the adapters upcast to fp32 (`get_peft_model`'s default,
`TraceSetup.adapters_fp32`), in a loop without autocast: each adapter copies its input to fp32
and lora_A keeps that copy (`vramplan.training.setup.peft_casts_adapter_input`). Under full
checkpointing with the MLP adapted, the peak is in the recomputed forward, at the end of up's
adapter, whose fp32 sum sits beside what the block has saved so far and down's adapter
gradients (`vramplan.training.activations.backward.recomputed_forward_peak`); before that was
modelled (2026-12-06, seventh session), every linear adapted under full checkpointing was
-3.0 % Llama and Mistral, -3.1 % Qwen2 and SmolLM3, -4.4 % Granite, -6.3 % OPT, -7.3 %
StarCoder2, and the MLP -3.0 to -3.3 %, Cohere's parallel blocks -5.7 %; now within 2.5 %. Not
here, with the
analytic peak's signed gap to the trace's at 2 x 128 tokens (measured 2026-12-06): every
linear of an MoE model, whose routed experts the trace adapts through peft's
`target_parameters` (checked in `EXPERT_LORA_MATRIX`); full checkpointing on the MoE families
(-3.5 % DeepSeek-V3, -3.7 % GLM-4-MoE, as in `FULL_CHECKPOINTING_EXCLUDED`)."""


@pytest.mark.parametrize("case", FP32_ADAPTER_MATRIX,
                         ids=["-".join(case) for case in FP32_ADAPTER_MATRIX])
def test_fp32_adapters_analytic_peak_within_3_percent_of_trace(case: tuple[str, str, str]) -> None:
    family, targets, checkpointing = case
    _assert_lora_step_agrees(family, targets, checkpointing, Precision.BF16_TRUE,
                             adapters_fp32=True)


def _assert_lora_step_agrees(family: str, targets: str, checkpointing: str,
                             precision: Precision, *,
                             adapters_fp32: bool = TRACED_ADAPTERS_FP32) -> None:
    """One LoRA step of `family` (2 x 128 tokens, rank 8, SDPA) traced and estimated alike: the
    analytic peak within `TOLERANCE` of the trace's. fp32 adapters run in a loop without
    autocast (the analytic side told `no_autocast`)."""
    traced = run_trace(make_setup(
        family, FAMILIES[family], method="lora", precision=precision, batch=2, seq_len=128,
        lora_r=8, lora_targets=targets, checkpointing=checkpointing, attention="sdpa",
        adapters_fp32=adapters_fp32))
    analytic = estimate_training(parse_config(FAMILIES[family]), TrainingSetup(
        method=Method.LORA, precision=precision, batch=2, seq_len=128,
        framework=Framework.HF, gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8, lora_targets=parse_lora_targets(targets), adapters_fp32=adapters_fp32,
        no_autocast=adapters_fp32, checkpointing=Checkpointing(checkpointing),
        attention=Attention.SDPA))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


def test_fp32_adapters_are_what_the_trace_builds() -> None:
    """The setup's flag reaches peft: fp32 adapters, twice the bytes of bf16 ones."""
    def trained(fp32: bool) -> int:
        traced = run_trace(make_setup(
            "llama", FAMILIES["llama"], method="lora", precision="bf16-true", batch=1,
            seq_len=16, lora_r=8, lora_targets="q;v", adapters_fp32=fp32))
        return traced.breakdown[PartKind.TRAINABLE_WEIGHTS]
    assert trained(True) == 2 * trained(False)


# --- LoRA on the MLP alone, and on every linear ---------------------------------------------------

MLP_LORA_MATRIX = [(family, targets, checkpointing)
                   for family in ("llama", "llama-vocab32", "qwen2", "mistral", "olmo2")
                   for targets in ("gate;up;down", "down", "all", "up", "gate")
                   for checkpointing in ("none", "full")]
"""Adapters on the MLP alone, and on every linear. In the first block nothing before the MLP
trains, so its attention and second norm build no graph, and with the down projection alone
adapted neither act(gate) nor the product saves anything but the adapter's input (`block_saved`'s
`mid_needs_grad`). Before that was modelled, the 2-layer Llama with `down` alone was +15.6 %
(2026-12-06). Under full checkpointing the recomputed block's backward peaks after the down
projection's has freed what its adapter kept (`released_before_block_peak`); before that was
modelled, the model was +3.9 to +7.7 % above the trace on these families (2026-12-06). With up
or gate alone adapted, the first block's act(gate) * up keeps only the factor the other's
gradient needs (act(gate) for up's, up's output for gate's) and act(gate) keeps gate's output
only when it needs a gradient; OLMo 2's post-norm block builds no graph before an MLP adapted
alone. Before both were modelled (found by benchmarks/trace_fuzz.py, 2026-12-06) up alone was
+8.2 % (Llama) and +10.1 % (OLMo 2) without checkpointing, gate alone +3.6 and +5.8 %, and
OLMo 2's down alone +14.0 %. Not here: fp32 adapters and `amp`, in `FP32_ADAPTER_MATRIX` and
`MLP_LORA_AMP_MATRIX`."""


@pytest.mark.parametrize("case", MLP_LORA_MATRIX, ids=["-".join(c) for c in MLP_LORA_MATRIX])
def test_mlp_adapters_analytic_peak_within_3_percent_of_trace(case: tuple[str, str, str]) -> None:
    family, targets, checkpointing = case
    _assert_lora_step_agrees(family, targets, checkpointing, Precision.BF16_TRUE)


PLAIN_MLP_LORA_MATRIX = [(family, targets, "none")
                         for family in ("opt", "opt-dropout", "phi", "starcoder2")
                         for targets in ("up", "down")]
"""A plain MLP (fc1, activation, fc2) with one of its linears adapted. In the first block, with
fc2 (`down`) alone adapted, fc1's output needs no gradient and the activation saves nothing:
fc2's adapter keeps its input. Before that was modelled (found by benchmarks/trace_fuzz.py,
2026-12-06) the model counted the activation's saved tensors there too: Phi's Python tanh GELU
+22.0 %, StarCoder2's +6.3 % over the trace (2 x 128 tokens); OPT's ReLU keeps the output fc2
reads, so it agreed. Not here: Phi with `down` alone under full checkpointing (+6.8 %, the
same before)."""


@pytest.mark.parametrize("case", PLAIN_MLP_LORA_MATRIX,
                         ids=["-".join(c) for c in PLAIN_MLP_LORA_MATRIX])
def test_plain_mlp_adapters_within_3_percent_of_trace(case: tuple[str, str, str]) -> None:
    family, targets, checkpointing = case
    _assert_lora_step_agrees(family, targets, checkpointing, Precision.BF16_TRUE)


O_LORA_EXCLUDED = {("phi", "q;k;v;o", "none"): -3.3, ("deepseek_v3", "o", "full"): -5.5,
                   ("deepseek_v3", "q;k;v;o", "full"): -5.5}
O_LORA_MATRIX = [(family, targets, checkpointing)
                 for family in ("llama", "qwen2", "opt-dropout", "phi", "deepseek_v2",
                                "deepseek_v3")
                 for targets in ("o", "q;k;v;o") for checkpointing in ("none", "full")
                 if (family, targets, checkpointing) not in O_LORA_EXCLUDED]
"""Adapters on the output projection, alone and with q, k and v (2 x 128 tokens, SDPA). In the
first block, with o alone adapted, nothing inside attention needs a gradient and o's adapter
keeps its input: before that was counted (found by benchmarks/trace_fuzz.py, 2026-12-06) the
model left o's input out there and, for a latent attention, counted the attention's whole
saved set instead (before, with o alone: Phi -3.6 %, DeepSeek-V2 +3.7 %, DeepSeek-V3 +5.0 %;
in the fuzz, Llama and Qwen2 -3.2 to -4.1 % over 64 tokens, DeepSeek-V2 under eager attention
over 320 tokens +32 %). Left out, with the analytic peak's signed gap in percent:
`O_LORA_EXCLUDED` (DeepSeek-V3 under full checkpointing as in `FULL_CHECKPOINTING_EXCLUDED`;
Phi's parallel block with every attention linear adapted, the same before)."""


@pytest.mark.parametrize("case", O_LORA_MATRIX, ids=["-".join(c) for c in O_LORA_MATRIX])
def test_output_projection_adapters_within_3_percent_of_trace(case: tuple[str, str, str]) -> None:
    family, targets, checkpointing = case
    _assert_lora_step_agrees(family, targets, checkpointing, Precision.BF16_TRUE)


MLP_LORA_AMP_MATRIX = [(family, targets, checkpointing) for family in ("llama", "qwen2", "mistral")
                       for targets, checkpointing in (("gate;up;down", "none"), ("down", "none"),
                                                      ("gate;up;down", "full"), ("down", "full"),
                                                      ("all", "full"))]
"""Adapters on the MLP (and every linear) under `amp`: in the first block the frozen linears
that read a tensor needing no gradient save no 16-bit cast of their weight (q, k, v, o, gate and
up, and down too when neither gate nor up is adapted: `first_block_graphless_linears`). Before
that was modelled (2026-12-06) the model was +4.4 to +4.6 % above the trace with down alone.
Under full checkpointing the peak is at the end of the recomputed forward: down's adapter copies
its 16-bit input to fp32 (`peft_casts_adapter_input`), autocast casts that back for lora_A,
which keeps the cast, and the copy, the input and the base output are alive as lora_A runs
(`recomputed_forward_peak`); before that was modelled (2026-12-06, seventh session) these were
-7.2 to -8.6 %. Not here: the Llama with a 32-word vocabulary without checkpointing (-5.3 and
-5.9 % before the copies were counted, where the block's own tensors decide)."""


@pytest.mark.parametrize("case", MLP_LORA_AMP_MATRIX,
                         ids=["-".join(c) for c in MLP_LORA_AMP_MATRIX])
def test_mlp_adapters_under_amp_within_3_percent_of_trace(case: tuple[str, str, str]) -> None:
    family, targets, checkpointing = case
    _assert_lora_step_agrees(family, targets, checkpointing, Precision.AMP)


# --- LoRA on the routed experts -----------------------------------------------------------------

EXPERT_LORA_CASES = [("qwen3_moe", "all"), ("olmoe", "gate;up;down"), ("qwen2_moe", "gate;up;down"),
                     ("gpt_oss", "down"), ("llama4_text", "all")]
"""A trace adapts transformers 5's fused routed experts through peft's `target_parameters`, as
`vramplan.model.lora_targets` counts them, and `all` leaves out Llama 4's router, an nn.Linear that
returns scores and logits, which vramplan does not adapt either. Not here: DeepSeek-V3, DeepSeek-V2
and GLM-4-MoE, whose dense and shared MLPs peft 0.21 leaves without adapters when the experts'
parameters are targeted too (its transformers-5 conversion maps every `down_proj` name to the
experts' parameter, peft/utils/transformers_weight_conversion.py `_convert_peft_config_moe`), where
vramplan adapts them; Qwen2-MoE's `all`, where the trace also adapts the one-output
`shared_expert_gate`. The peaks: `EXPERT_LORA_MATRIX`."""


EXPERT_LORA_MATRIX = [(family, checkpointing, fp32)
                      for family in ("qwen3_moe", "olmoe", "gpt_oss")
                      for checkpointing in ("none", "full") for fp32 in (False, True)]
EXPERT_LORA_MATRIX += [("qwen2_moe", "none", False), ("qwen2_moe", "full", False),
                       ("qwen2_moe", "full", True), ("llama4_text", "none", False),
                       ("llama4_text", "none", True)]
"""Every linear adapted, the routed experts through `target_parameters`: the analytic peak
(`BlockSpec.experts_merged_per_token`: each adapted expert parameter's merged copy, with the
experts' inputs, kept for backward) within 3 % of the trace's. Not here, with the analytic
peak's signed gap (2 x 128 tokens, measured 2026-12-06): Qwen2-MoE without checkpointing with
fp32 adapters (-4.4 %: the trace adapts its one-output `shared_expert_gate`, whose input peft
copies to fp32); Llama 4 under full checkpointing (-5.3 %, -8.5 %: as in
`FULL_CHECKPOINTING_EXCLUDED`); DeepSeek-V3, DeepSeek-V2 and GLM-4-MoE, whose dense and shared
MLPs peft leaves without adapters (`EXPERT_LORA_CASES`); adapters on the MLP alone (+10 % on the
2-layer Qwen3-MoE with gate, up and down): a frozen attention builds no graph in the first
block, which the analytic model counts whole, a block's worth that a real depth dilutes."""


@pytest.mark.parametrize("case", EXPERT_LORA_MATRIX,
                         ids=["-".join(map(str, case)) for case in EXPERT_LORA_MATRIX])
def test_expert_adapters_analytic_peak_within_3_percent_of_trace(
        case: tuple[str, str, bool]) -> None:
    family, checkpointing, fp32 = case
    attention = "eager" if family == "gpt_oss" else "sdpa"
    traced = run_trace(make_setup(
        family, FAMILIES[family], method="lora", precision="bf16-true", batch=2, seq_len=128,
        lora_r=8, lora_targets="all", checkpointing=checkpointing, attention=attention,
        adapters_fp32=fp32))
    analytic = estimate_training(parse_config(FAMILIES[family]), TrainingSetup(
        method=Method.LORA, precision=Precision.BF16_TRUE, batch=2, seq_len=128,
        framework=Framework.HF, gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8, lora_targets=parse_lora_targets("all"), adapters_fp32=fp32,
        no_autocast=True, checkpointing=Checkpointing(checkpointing),
        attention=Attention(attention)))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


@pytest.mark.parametrize("case", EXPERT_LORA_CASES, ids=["-".join(c) for c in EXPERT_LORA_CASES])
def test_traced_expert_adapters_are_the_ones_counted(case: tuple[str, str]) -> None:
    from vramplan.model.lora_targets import lora_params

    family, targets = case
    traced = run_trace(make_setup(
        family, FAMILIES[family], method="lora", precision="bf16-true", batch=1, seq_len=32,
        lora_r=8, lora_targets=targets, attention="eager" if family == "gpt_oss" else "sdpa"))
    assert traced.params_trainable == lora_params(parse_config(FAMILIES[family]), 8,
                                                  parse_lora_targets(targets))


# --- MoE layers at a real top-k ------------------------------------------------------------------

MOE_TOP_K: dict[str, dict[str, Any]] = {
    "qwen3_moe": {"num_experts": 16, "num_experts_per_tok": 8},
    "olmoe": {"num_experts": 16, "num_experts_per_tok": 8},
    "qwen2_moe": {"num_experts": 16, "num_experts_per_tok": 8},
    "deepseek_v3": {"n_routed_experts": 16, "num_experts_per_tok": 8},
    "glm4_moe": {"n_routed_experts": 16, "num_experts_per_tok": 8},
    "deepseek_v2": {"n_routed_experts": 16, "num_experts_per_tok": 8},
    # gpt-oss-20b's 4 of 32 experts as wide as the hidden size
    "gpt_oss": {"num_local_experts": 16, "num_experts_per_tok": 4, "intermediate_size": 128},
}
"""Top-k routing as the released models route (8 of 128 experts for Qwen3-30B-A3B and OLMoE's
8 of 64, DeepSeek-V3's and GLM-4.5's 8; gpt-oss-20b's 4 of 32), over the families' tiny
configurations, which route 2 of 8: with 8 copies of every token, the MoE layer's own moments
decide the step (`vramplan.training.activations.backward.moe_backward_transient`, and the
recomputed experts' moments of `vramplan.training.activations.moe`), where 2 copies hid them
under a norm's backward. Before those were modelled (2026-12-06, ninth session) these were 6 to
37 % under the trace."""
MOE_WIDE = {"qwen3_moe": {"moe_intermediate_size": 384},
            "deepseek_v3": {"moe_intermediate_size": 384}}
"""Experts three times as wide as the hidden size, with the top-k of `MOE_TOP_K`: the experts'
own backward over every copy decides (LoRA 10 to 17 % under before)."""
MOE_TOP_K_EXCLUDED: dict[tuple[str, str, str, bool], float] = {}
"""Outside the matrix, with the analytic peak's signed gap to the trace's in percent (2 x 128
tokens): none since Qwen2-MoE's shared expert, which runs before the routed ones, is saved
before them in the recomputed layer (its LoRA under full checkpointing was -3.4 %). Not drawn:
gpt-oss's LoRA without checkpointing with experts three times the hidden size (-5.2 %: its last
block's forward peaks, the gathered gate/up biases beside the clamped activation, and the model
has no moment inside a block's forward). DeepSeek-V3's full fine-tuning with wide experts was
+2.9 and +8.8 % until the step program listed a dense first layer's tensors as a dense block's
(`vramplan.training.allocations.tensors.block_kinds`: it had listed every block as a MoE one,
and foreach AdamW's step temporaries with them)."""
MOE_TOP_K_MATRIX = [(family, method, checkpointing, wide)
                    for family in MOE_TOP_K for method in ("full", "lora")
                    for checkpointing in ("none", "full")
                    for wide in ((False, True) if family in MOE_WIDE else (False,))
                    if (family, method, checkpointing, wide) not in MOE_TOP_K_EXCLUDED]


@pytest.mark.parametrize("case", MOE_TOP_K_MATRIX,
                         ids=["-".join(map(str, case)) for case in MOE_TOP_K_MATRIX])
def test_moe_at_a_real_top_k_within_3_percent_of_trace(case: tuple[str, str, str, bool]) -> None:
    family, method, checkpointing, wide = case
    config = FAMILIES[family] | MOE_TOP_K[family] | (MOE_WIDE[family] if wide else {})
    attention = "eager" if family == "gpt_oss" else "sdpa"
    _assert_q_v_step_agrees(config, (family, method, "bf16-true", checkpointing, attention, 2, 128))


MOE_EXPERT_GRADIENT_MATRIX = [("deepseek_v2", "full"), ("deepseek_v3", "full"),
                              ("glm4_moe", "full"), ("deepseek_v3", "freeze"),
                              ("qwen3_moe", "freeze"), ("olmoe", "freeze")]
"""Trained experts over a few tokens (SGD, 1 x 64, no checkpointing): the step peaks when the
experts' grouped matmuls make their whole 3-D gradients
(`vramplan.training.estimate._experts_gradient_moment`; the model was 6 to 10 % under before).
Not here: Qwen3-MoE's and OLMoE's full fine-tuning (-5.0 %: the first block's norm backward with
its experts' gradients made; counting a block's MLP gradients at its norm's backward moved dense
families 4 to 9 % over their traces, not kept)."""


@pytest.mark.parametrize("case", MOE_EXPERT_GRADIENT_MATRIX,
                         ids=["-".join(case) for case in MOE_EXPERT_GRADIENT_MATRIX])
def test_trained_experts_gradients_within_3_percent_of_trace(case: tuple[str, str]) -> None:
    family, method = case
    traced = run_trace(make_setup(
        family, FAMILIES[family], method=method, precision="bf16-true", optimizer="sgd",
        batch=1, seq_len=64, checkpointing="none", attention="sdpa"))
    analytic = estimate_training(parse_config(FAMILIES[family]), TrainingSetup(
        method=Method(method), precision=Precision.BF16_TRUE, batch=1, seq_len=64,
        optimizer=Optimizer.SGD, framework=Framework.HF, gradient_accumulation=False,
        optimizer_impl=TRACED_OPTIMIZER_IMPL, checkpointing=Checkpointing.NONE,
        attention=Attention.SDPA))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


# --- the tiled MLP ------------------------------------------------------------------------------

WIDE_MLP_LLAMA = FAMILIES["llama"] | {"intermediate_size": 1408, "max_position_embeddings": 4096}
"""A Llama whose MLP (11 x the hidden size) is the block's largest backward, so its tiles show."""
TILED_MATRIX = [(method, checkpointing, batch, seq_len)
                for method in ("full", "lora") for checkpointing in ("none", "full")
                for batch, seq_len in ((1, 1024), (2, 512))]
"""`TrainingSetup.tiled_mlp` against `vramplan.tracer.tiled_mlp`: hidden 128, so 8 and 4 shards of
each sequence (DeepSpeed's rule, which a transformers run takes), tiles of 128 and 256 tokens."""


@pytest.mark.parametrize("case", TILED_MATRIX,
                         ids=["-".join(map(str, case)) for case in TILED_MATRIX])
def test_tiled_mlp_analytic_peak_within_3_percent_of_trace(case: tuple[Any, ...]) -> None:
    method, checkpointing, batch, seq_len = case
    lora = method == "lora"
    traced = run_trace(make_setup(
        "llama", WIDE_MLP_LLAMA, method=method, precision="bf16-true", batch=batch,
        seq_len=seq_len, lora_r=8 if lora else None, lora_targets="q;v" if lora else None,
        checkpointing=checkpointing, attention="sdpa", tiled_mlp=True))
    analytic = estimate_training(parse_config(WIDE_MLP_LLAMA), TrainingSetup(
        method=Method(method), precision=Precision.BF16_TRUE, batch=batch, seq_len=seq_len,
        framework=Framework.HF, gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing(checkpointing), attention=Attention.SDPA, tiled_mlp=True))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


# --- QLoRA: today's bitsandbytes, emulated ------------------------------------------------------

QLORA_MATRIX = [(family, precision, quant, "q;v", "none")
                for family in ("llama", "qwen2", "mistral", "phi", "opt")
                for precision in ("bf16-true", "amp") for quant in ("nf4", "nf4-dq")]
QLORA_MATRIX += [(family, precision, "nf4", "all", "none")
                 for family in ("llama", "qwen2", "mistral", "phi", "opt")
                 for precision in ("bf16-true", "amp")]
QLORA_MATRIX += [(family, precision, "nf4", targets, "full")
                 for family in ("llama", "qwen2", "mistral", "phi", "opt")
                 for precision in ("bf16-true", "amp") for targets in ("q;v", "all")
                 if (family, precision, targets) != ("phi", "bf16-true", "all")]
"""QLoRA: the 4-bit base keeps no input (bitsandbytes v0.43.2 on) and returns its output in its
input's dtype (fp32 under `amp`); the trace's adapters are fp32, as peft leaves them on
bitsandbytes' layers (`make_setup`), and without autocast each copies its input to fp32
(`peft_casts_adapter_input`, the analytic side told `no_autocast` in bf16). On q and v without
checkpointing; on every linear without checkpointing in bf16; q and v and every linear under
full checkpointing. There the recomputed block peaks at its MLP product's backward, after the
frozen down projection's backward has freed its dequantized weight
(`estimate._dequant_in_block_backward`), with fp32 intermediate tensors under `amp`
(`activations._mlp_backward_itemsize`) and no autocast cast of the quantized weights
(`estimate._recomputed_block_copies`); before that was modelled (2026-12-06, seventh session),
q and v were +3.9 to +4.0 % in bf16 and -3.0 to -3.2 % under `amp`, Phi and OPT +5.0 % and
-4.0 % in bf16, +7.3 % and -10.7 % under `amp`. The trace's adapters run peft's forward for
bitsandbytes' layers since the same day (`bnb_emulation.adapters_as_on_bitsandbytes`: the
base output cloned, no fp32 copy of the input under autocast); before, every linear under
`amp` without checkpointing was -3.4 to -3.7 %. Not here (the analytic peak's gap to the
trace's): Phi's every linear in bf16 under full checkpointing (+3.5 %). OPT's under `amp` was
-6.8 % until the tracker summed the ReLU output's two fp32 gradients in place, as a GPU does
(`StorageTracker._input_buffer_sum`): -1.5 %. Before 2026-12-06 the trace's adapters were bf16,
which peft does not make on a 4-bit base."""


@pytest.mark.parametrize("case", QLORA_MATRIX, ids=["-".join(case) for case in QLORA_MATRIX])
def test_qlora_analytic_peak_within_3_percent_of_trace(case: tuple[str, ...]) -> None:
    family, precision, quant, targets, checkpointing = case
    config = FAMILIES[family]
    traced = run_trace(make_setup(
        family, config, method="qlora", precision=precision, quant=quant, batch=2, seq_len=128,
        lora_r=8, lora_targets=targets, checkpointing=checkpointing, attention="sdpa"))
    analytic = estimate_training(parse_config(config), TrainingSetup(
        method=Method.QLORA, quant=Quant(quant), precision=Precision(precision), batch=2,
        seq_len=128, framework=Framework.HF, gradient_accumulation=False,
        optimizer_impl=TRACED_OPTIMIZER_IMPL, lora_rank=8,
        lora_targets=parse_lora_targets(targets), checkpointing=Checkpointing(checkpointing),
        attention=Attention.SDPA, no_autocast=Precision(precision) is not Precision.AMP))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


# --- optimizers: the step as the peak -----------------------------------------------------------

WIDE_LLAMA = FAMILIES["llama"] | {"hidden_size": 384, "intermediate_size": 1024}
"""A Llama whose MLP matrices (393,216 values), q and o (147,456) pass bitsandbytes' 1e5-value
paging threshold and whose k and v (73,728) do not; its largest tensors follow one another
(gate, up, down), where the small Llama's largest (its embedding and head) come first and
after the 128-value final norm."""
OPTIMIZERS = ("adamw:for-loop", "adamw:fused", "sgd", "sgd-momentum", "adafactor",
              "adamw-8bit", "paged-adamw", "paged-adamw-8bit")
OPTIMIZER_MATRIX = [(family, optimizer, precision)
                    for family in ("llama", "llama-wide") for optimizer in OPTIMIZERS
                    for precision in ("bf16-true", "fp32", "mixed")]
"""Full fine-tuning of one 16-token sequence, where the optimizer's step is the peak or near it:
its states and temporaries (`allocations.optimizer_step_temporaries`), and what a paged
optimizer leaves on the device."""


@pytest.mark.parametrize("case", OPTIMIZER_MATRIX, ids=["-".join(c) for c in OPTIMIZER_MATRIX])
def test_optimizer_steps_within_3_percent_of_trace(case: tuple[str, str, str]) -> None:
    family, optimizer, precision = case
    config = WIDE_LLAMA if family == "llama-wide" else FAMILIES[family]
    name, _, impl = optimizer.partition(":")
    traced = run_trace(make_setup(
        family, config, method="full", precision=precision, batch=1, seq_len=16,
        optimizer=name, optimizer_impl=impl or None, checkpointing="none", attention="sdpa"))
    analytic = estimate_training(parse_config(config), TrainingSetup(
        method=Method.FULL, precision=Precision(precision), batch=1, seq_len=16,
        framework=Framework.HF, gradient_accumulation=False, optimizer=Optimizer(name),
        optimizer_impl=OptimizerImpl(impl) if impl else TRACED_OPTIMIZER_IMPL,
        checkpointing=Checkpointing.NONE, attention=Attention.SDPA))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)
    # what bitsandbytes pages (`get_state_buffer`, 1e5 values or more), outside the allocator
    assert traced.paged_bytes == analytic.states.managed_optimizer_bytes


# --- several GPUs: rank 0 of a data-parallel run under the fake process group -------------------

SHARDED_RUNS = (  # scheme, FSDP version, GPUs, LoRA wrapped apart (peft's policy)
    ("ddp", "fsdp2", 2, True),
    ("fsdp", "fsdp1", 2, True),
    ("fsdp", "fsdp1", 2, False),
    ("fsdp", "fsdp2", 2, True),
    ("fsdp", "fsdp2", 4, True),
)
SHARDED_FAMILIES = ("llama", "qwen2", "phi", "llama-vocab32-6l")
FAMILIES["llama-vocab32-6l"] = FAMILIES["llama-vocab32"] | {"num_hidden_layers": 6}
"""Six blocks under a small vocabulary: the peak is in the blocks' backward, where the second
block to run last (the first prefetched), FSDP2's held reduce-scatter input and the gradient
shards made so far decide it; two blocks hide them (`sharding._first_blocks_backward`)."""
SHARDED_EXCLUDED: set[tuple[Any, ...]] = set()
"""Configurations outside 3 % (none: the five LoRA and Qwen2 full-checkpointing FSDP2 runs once
3.1 to 3.9 % off agree within 0.8 % since the FSDP buffers follow the traced ranks)."""
SHARDED_MATRIX = [
    (family, method, *run, checkpointing)
    for family, method, run, checkpointing in itertools.product(
        SHARDED_FAMILIES, ("full", "lora"), SHARDED_RUNS, ("none", "full"))
    if (method == "lora" or run[3]) and (family, method, *run, checkpointing)
    not in SHARDED_EXCLUDED]


def test_the_sharded_matrix_covers_ddp_fsdp1_and_fsdp2() -> None:
    assert len(SHARDED_MATRIX) >= 40
    assert {(run[2], run[3]) for run in SHARDED_MATRIX} == {
        ("ddp", "fsdp2"), ("fsdp", "fsdp1"), ("fsdp", "fsdp2")}


@pytest.mark.parametrize("case", SHARDED_MATRIX,
                         ids=["-".join(map(str, case)) for case in SHARDED_MATRIX])
def test_per_gpu_peak_within_3_percent_of_the_traced_rank(case: tuple[Any, ...]) -> None:
    """The per-GPU model (vramplan.distributed.per_gpu) against rank 0 of the same run traced
    under torch.distributed's fake process group (vramplan.tracer.parallel)."""
    family, method, scheme, version, gpus, peft_wrap, checkpointing = case
    lora = method == "lora"
    config = FAMILIES[family]
    traced = run_trace(make_setup(
        family, config, method=method, batch=2, seq_len=128, gpus=gpus, sharding=scheme,
        fsdp_version=version, peft_wrap=peft_wrap, checkpointing=checkpointing,
        lora_r=8 if lora else None, lora_targets="q;v" if lora else None))
    analytic = estimate_per_gpu(parse_config(config), TrainingSetup(
        method=Method(method), batch=2, seq_len=128, framework=Framework.HF,
        gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing(checkpointing)), Parallelism(
        scheme=Scheme(scheme), gpus=gpus, fsdp_version=FsdpVersion(version),
        adapters_wrapped_apart=lora and peft_wrap))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


MOE_SHARDED_MATRIX = [
    ("qwen3_moe", "full", "fsdp", "fsdp2", 2, "none"),
    ("qwen3_moe", "full", "fsdp", "fsdp2", 2, "full"),
    ("qwen3_moe", "lora", "fsdp", "fsdp2", 2, "full"),
    ("qwen3_moe", "full", "fsdp", "fsdp1", 2, "full"),
    ("gpt_oss", "full", "fsdp", "fsdp2", 2, "full"),
    ("gpt_oss", "full", "fsdp", "fsdp2", 4, "full"),
    ("gpt_oss", "lora", "fsdp", "fsdp2", 2, "full"),
    ("olmoe", "full", "ddp", "fsdp2", 2, "full")]
"""MoE families at a real top-k (`MOE_TOP_K`) on several GPUs: rank 0 of FSDP1, FSDP2 and DDP
runs under the fake process group against the per-GPU model, the MoE layer's moments included
(within 1.2 % when added, 2026-12-06). DeepSeek-V3's and GLM-4.5's are not traced: FSDP
refuses their fp32 router bias beside bf16 weights ("FSDP expects uniform original parameter
dtype")."""


@pytest.mark.parametrize("case", MOE_SHARDED_MATRIX,
                         ids=["-".join(map(str, case)) for case in MOE_SHARDED_MATRIX])
def test_moe_per_gpu_peak_within_3_percent_of_the_traced_rank(case: tuple[Any, ...]) -> None:
    family, method, scheme, version, gpus, checkpointing = case
    lora = method == "lora"
    config = FAMILIES[family] | MOE_TOP_K[family]
    attention = "eager" if family == "gpt_oss" else "sdpa"
    traced = run_trace(make_setup(
        family, config, method=method, precision="bf16-true", batch=2, seq_len=128, gpus=gpus,
        sharding=scheme, fsdp_version=version, checkpointing=checkpointing, attention=attention,
        lora_r=8 if lora else None, lora_targets="q;v" if lora else None))
    analytic = estimate_per_gpu(parse_config(config), TrainingSetup(
        method=Method(method), precision=Precision.BF16_TRUE, batch=2, seq_len=128,
        framework=Framework.HF, gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing(checkpointing), attention=Attention(attention)), Parallelism(
        scheme=Scheme(scheme), gpus=gpus, fsdp_version=FsdpVersion(version),
        adapters_wrapped_apart=lora))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


REENTRANT_RUNS = [(family, *run) for family in ("llama", "qwen2") for run in SHARDED_RUNS[:4]]
"""LoRA under reentrant full checkpointing (transformers' default before v5.0.0): with today's
`GradientCheckpointingLayer` the checkpoint runs inside each wrapped layer, so FSDP1's hook on a
unit of frozen weights sees the unit's own input and holds nothing to the end of backward
(`vramplan.distributed.per_gpu._checkpoints_held_by_fsdp1`, for the releases that checkpointed
around the layer)."""


@pytest.mark.parametrize("case", REENTRANT_RUNS,
                         ids=["-".join(map(str, case)) for case in REENTRANT_RUNS])
def test_reentrant_checkpointing_inside_the_layer_holds_nothing_more(case: tuple[Any, ...]) -> None:
    family, scheme, version, gpus, peft_wrap = case
    traced = run_trace(make_setup(
        family, FAMILIES[family], method="lora", batch=2, seq_len=128, gpus=gpus,
        sharding=scheme, fsdp_version=version, peft_wrap=peft_wrap, checkpointing="full",
        reentrant_checkpointing=True, lora_r=8, lora_targets="q;v"))
    analytic = estimate_per_gpu(parse_config(FAMILIES[family]), TrainingSetup(
        method=Method.LORA, batch=2, seq_len=128, framework=Framework.HF,
        gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL, lora_rank=8,
        lora_targets=parse_lora_targets("q;v"), checkpointing=Checkpointing.FULL,
        adapters_fp32=TRACED_ADAPTERS_FP32, reentrant_checkpointing=True), Parallelism(
        scheme=Scheme(scheme), gpus=gpus, fsdp_version=FsdpVersion(version),
        adapters_wrapped_apart=peft_wrap))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)


# --- amp under FSDP: accelerate's mixed-precision policy gathers bf16 copies --------------------

AMP_SHARDED_EXCLUDED = {
    # full fine-tuning of a tied Qwen2 under full checkpointing with FSDP2: -3.5 %. The traced
    # peak is in the first block's backward, beside the fp32 gradient shards the other units
    # have reduced (0.37 of 6.06 MB), which the model counts from the end of backward; in bf16
    # those shards weigh half and the run agrees within 0.8 %
    ("qwen2", "full", "fsdp2", "full"),
}
AMP_SHARDED_MATRIX = [
    case for case in itertools.product(("llama", "qwen2"), ("full", "lora"), ("fsdp1", "fsdp2"),
                                       ("none", "full"))
    if case not in AMP_SHARDED_EXCLUDED]


@pytest.mark.parametrize("case", AMP_SHARDED_MATRIX,
                         ids=["-".join(case) for case in AMP_SHARDED_MATRIX])
def test_amp_per_gpu_peak_within_3_percent_of_the_traced_rank(case: tuple[str, ...]) -> None:
    """`amp` (fp32 weights, bf16 autocast) on 2 GPUs under FSDP with accelerate's
    `MixedPrecision(param_dtype=bf16)`: the per-GPU model with `params_cast_for_compute` (set by
    `default_parallelism` for the transformers stack) against rank 0 traced with that policy.
    Without the cast the model is 21 to 39 % above the traced peaks."""
    family, method, version, checkpointing = case
    lora = method == "lora"
    config = FAMILIES[family]
    traced = run_trace(make_setup(
        family, config, method=method, precision="amp", batch=2, seq_len=128, gpus=2,
        sharding="fsdp", fsdp_version=version, peft_wrap=True, checkpointing=checkpointing,
        lora_r=8 if lora else None, lora_targets="q;v" if lora else None))
    setup = TrainingSetup(
        method=Method(method), precision=Precision.AMP, batch=2, seq_len=128,
        framework=Framework.HF, gradient_accumulation=False, optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing(checkpointing))
    # the tracer wraps as PyTorch's `fully_shard` does: the embeddings stay in the root
    cast = default_parallelism(setup, Scheme.FSDP, 2).params_cast_for_compute
    assert cast
    analytic = estimate_per_gpu(parse_config(config), setup, Parallelism(
        scheme=Scheme.FSDP, gpus=2, fsdp_version=FsdpVersion(version),
        adapters_wrapped_apart=lora, params_cast_for_compute=cast))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)
