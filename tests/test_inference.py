"""Inference VRAM: hand-computed KV caches, engine behaviours, the inverse, and the published
LitGPT inference peaks."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from vramplan.errors import ConflictingOptions, OutOfRange
from vramplan.inference.estimate import (
    InferenceEstimate,
    eager_softmax_bytes_per_score,
    estimate_inference,
    prefill_activation_bytes,
)
from vramplan.inference.limits import inference_limits
from vramplan.inference.setup import InferenceInputs, inference_inputs
from vramplan.model.weight_storage import WeightGroup
from vramplan.parts import PartKind
from vramplan.presets.gpus import find_gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format
from vramplan.validation import estimate_inference_case
from vramplan.vocab import Attention, ComputeDtype, Engine, KvDtype

GiB = 2**30


def _inputs(model: str = "llama-2-7b", weights: str = "bf16", context: int = 4096,
            **kwargs: Any) -> InferenceInputs:
    return inference_inputs(architecture_of(find_model(model)), find_format(weights), context,
                            **kwargs)


def _estimate(model: str = "llama-2-7b", weights: str = "bf16", context: int = 4096,
              **kwargs: Any) -> InferenceEstimate:
    return estimate_inference(_inputs(model, weights, context, **kwargs))


def test_kv_cache_llama_2_7b_by_hand() -> None:
    # 2 (K, V) x 32 layers x 32 heads x 128 dims x 4096 tokens x 2 bytes = 2 GiB
    assert _estimate().bytes_of(PartKind.KV_CACHE) == 2 * 32 * 32 * 128 * 4096 * 2 == 2 * GiB


def test_kv_cache_gqa_counts_kv_heads_only() -> None:
    # Llama 3.1 8B: 8 KV heads of 128 dims, 32 layers: 128 KiB per token in fp16
    est = _estimate("llama-3.1-8b", context=8192, batch=2)
    assert est.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2
    assert est.bytes_of(PartKind.KV_CACHE) == 2 * 32 * 8 * 128 * 2 * 8192 * 2


def test_sliding_window_layers_cache_only_the_window() -> None:
    # Gemma 2 9B: 21 of 42 layers attend to a 4096-token window; 8 KV heads of 256 dims.
    hf = _estimate("gemma-2-9b", context=8192, engine=Engine.HF)
    per_token_layer = 2 * 8 * 256 * 2
    assert hf.bytes_of(PartKind.KV_CACHE) == per_token_layer * (21 * 8192 + 21 * 4096)
    litgpt = _estimate("gemma-2-9b", context=8192, engine=Engine.LITGPT)
    # LitGPT allocates every layer for the whole context, with all 16 query heads (GQA expanded)
    assert litgpt.bytes_of(PartKind.KV_CACHE) == 2 * 16 * 256 * 2 * 42 * 8192


@pytest.mark.parametrize(("kv", "ratio"), [(KvDtype.FP8, 0.5), (KvDtype.INT4, 0.25),
                                           (KvDtype.FP32, 2.0)])
def test_kv_dtype_scales_the_cache(kv: KvDtype, ratio: float) -> None:
    base = _estimate("mistral-7b-v0.1", context=2048).bytes_of(PartKind.KV_CACHE)
    other = _estimate("mistral-7b-v0.1", context=2048, kv_dtype=kv)
    assert other.bytes_of(PartKind.KV_CACHE) == base * ratio


def test_llama_cpp_q8_0_cache_is_34_bytes_per_32_values() -> None:
    est = _estimate("llama-2-7b", "q4_k_m", context=4096, kv_dtype=KvDtype.Q8_0)
    assert est.inputs.engine is Engine.LLAMA_CPP
    assert est.bytes_of(PartKind.KV_CACHE) == 2 * 32 * 32 * 128 * 4096 * 34 // 32


def test_tensor_parallel_splits_weights_and_kv_heads() -> None:
    one = _estimate("llama-3.1-70b", context=8192)
    four = _estimate("llama-3.1-70b", context=8192, tensor_parallel=4)
    assert four.bytes_of(PartKind.KV_CACHE) * 4 == one.bytes_of(PartKind.KV_CACHE)
    other = sum(p.bytes for p in one.weights.parts if p.group.value == "other")
    assert four.bytes_of(PartKind.WEIGHTS) == pytest.approx(
        (one.bytes_of(PartKind.WEIGHTS) - other) / 4 + other, abs=4)


def test_more_gpus_than_kv_heads_replicates_one_head_per_gpu() -> None:
    # Llama 3.1 8B has 8 KV heads: at TP 16 each GPU still holds one head per layer.
    est = _estimate("llama-3.1-8b", context=1024, tensor_parallel=16)
    assert est.kv_bytes_per_token == 2 * 32 * 1 * 128 * 2


@pytest.mark.parametrize("field", ["context", "batch"])
def test_memory_grows_with_context_and_batch(field: str) -> None:
    values = [1, 2, 64, 1000, 4096]
    totals = [_estimate("qwen2.5-7b", "nf4", context=4096, **{field: v}).allocated_bytes
              if field == "batch" else _estimate("qwen2.5-7b", "nf4", context=v).allocated_bytes
              for v in values]
    assert totals == sorted(totals)


def test_eager_attention_adds_the_score_matrix() -> None:
    """The bf16 scores, their fp32 copy and the fp32 softmax (transformers
    `eager_attention_forward`), 10 bytes per score of Llama-2-7B's 32 heads over 2,048 x 2,048
    positions, beside the attention phase's tensors (residual, normed input, q, output, k, v:
    6 x 4,096 values a token); without the scores the MLP phase is the larger (2 x 4,096 +
    3 x 11,008 values a token)."""
    flash = _estimate(context=2048)
    eager = _estimate(context=2048, attention=Attention.EAGER)
    scores = 1 * 32 * 2048 * 2048 * (2 + 4 + 4)
    assert eager.bytes_of(PartKind.PREFILL_ACTIVATIONS) == 6 * 4096 * 2048 * 2 + scores
    assert flash.bytes_of(PartKind.PREFILL_ACTIVATIONS) == (2 * 4096 + 3 * 11008) * 2048 * 2


def test_vllm_caps_the_card_at_gpu_memory_utilization() -> None:
    est = _estimate(context=2048, engine=Engine.VLLM)
    gpu = find_gpu("a100-80gb")
    assert est.verdict(gpu).usable_bytes == int(80 * GiB * 0.9)
    assert _estimate(context=2048).verdict(gpu).usable_bytes == 80 * GiB


def test_inverse_finds_the_edge() -> None:
    inputs = _inputs("llama-3.1-8b", "bf16", context=8192, batch=4)
    gpu = find_gpu("rtx-4090-24gb")
    limits = inference_limits(inputs, gpu)
    assert 0 < limits.max_context < limits.context_cap
    at = dataclasses.replace(inputs, context=limits.max_context)
    beyond = dataclasses.replace(inputs, context=limits.max_context + 1)
    assert estimate_inference(at).verdict(gpu).fits
    assert not estimate_inference(beyond).verdict(gpu).fits
    at_batch = dataclasses.replace(inputs, batch=limits.max_batch)
    over_batch = dataclasses.replace(inputs, batch=limits.max_batch + 1)
    assert estimate_inference(at_batch).verdict(gpu).fits
    assert not estimate_inference(over_batch).verdict(gpu).fits


def test_inverse_reports_zero_when_the_weights_alone_do_not_fit() -> None:
    limits = inference_limits(_inputs("llama-3.1-70b", "bf16", context=1024),
                              find_gpu("rtx-4090-24gb"))
    assert (limits.max_context, limits.max_batch) == (0, 0)


def test_bad_inputs_name_their_field() -> None:
    with pytest.raises(OutOfRange) as error:
        _inputs(context=0)
    assert error.value.field == "context"
    with pytest.raises(OutOfRange) as error:
        _inputs(context=100, prompt=200)
    assert error.value.field == "prompt"
    with pytest.raises(ConflictingOptions):
        _inputs(weights="q4_k_m", engine=Engine.VLLM)
    with pytest.raises(ConflictingOptions):
        _inputs(kv_dtype=KvDtype.Q4_0, engine=Engine.HF)


def test_compute_dtype_fp32_doubles_unquantized_tensors() -> None:
    bf16 = _estimate("phi-2", "nf4", context=512)
    fp32 = _estimate("phi-2", "nf4", context=512, compute_dtype=ComputeDtype.FP32)
    assert fp32.bytes_of(PartKind.WEIGHTS) > bf16.bytes_of(PartKind.WEIGHTS)


# Published peaks of `litgpt generate` (torch.cuda.max_memory_allocated, GB = 1e9 bytes):
# Lightning-AI/litgpt tutorials/resource-tables.md, "Single-GPU Inference" (lit-gpt 8641822,
# bitsandbytes 0.41.1, A100 40GB, 50 new tokens) and tutorials/quantize.md (Falcon 7B, 256 new
# tokens). The prompts' token counts are not published (UNPUBLISHED_PROMPT_TOKENS is assumed).
LITGPT_PUBLISHED = [
    ("phi-1.5", "bf16-true", "none", 50, 2.86), ("phi-1.5", "bf16-true", "nf4", 50, 1.39),
    ("phi-1.5", "bf16-true", "nf4-dq", 50, 1.33),
    ("stablelm-base-alpha-3b", "bf16-true", "none", 50, 7.30),
    ("stablelm-base-alpha-3b", "bf16-true", "nf4", 50, 3.20),
    ("llama-2-7b", "bf16-true", "none", 50, 13.52), ("llama-2-7b", "bf16-true", "nf4", 50, 4.57),
    ("llama-2-7b", "bf16-true", "nf4-dq", 50, 4.26),
    ("llama-2-13b", "bf16-true", "nf4", 50, 8.32),
    ("codellama-34b", "bf16-true", "nf4-dq", 50, 18.95),
    ("falcon-40b", "bf16-true", "nf4", 50, 26.55),
    ("llama-2-70b", "bf16-true", "nf4-dq", 50, 37.21),
    ("falcon-7b", "fp32", "none", 256, 28.95), ("falcon-7b", "bf16-true", "fp4", 256, 5.72),
    ("falcon-7b", "bf16-true", "int8", 256, 8.70),
]


@pytest.mark.parametrize(("model", "precision", "quant", "new_tokens", "published_gb"),
                         LITGPT_PUBLISHED, ids=[f"{r[0]}-{r[2]}" for r in LITGPT_PUBLISHED])
def test_litgpt_generate_published_peaks(model: str, precision: str, quant: str, new_tokens: int,
                                         published_gb: float) -> None:
    est = estimate_inference_case(model, precision, quant, batch=1, seq_len=None,
                                  new_tokens=new_tokens, framework="litgpt")
    assert est.allocated_bytes / 1e9 == pytest.approx(published_gb, rel=0.02)


def test_litgpt_bf16_34b_is_out_of_memory_on_a100_40gb() -> None:
    # Same table: CodeLlama 34B in bf16 "OOM" on one A100 40GB.
    est = estimate_inference_case("codellama-34b", "bf16-true", "none", batch=1, seq_len=None,
                                  new_tokens=50, framework="litgpt")
    assert not est.verdict(find_gpu("a100-40gb")).fits


# --- the 2025 architectures ---------------------------------------------------------------------


def test_latent_attention_caches_the_latent_on_every_gpu() -> None:
    # DeepSeek-V3: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) values per token, in
    # fp16 2 bytes; not 2 x 128 heads x 192 (what expanded keys and values would take)
    one = _estimate("deepseek-v3", "fp8-block128", context=32768)
    assert one.kv_bytes_per_token == 61 * 576 * 2 == 70_272
    assert one.bytes_of(PartKind.KV_CACHE) == 70_272 * 32768
    eight = _estimate("deepseek-v3", "fp8-block128", context=32768, tensor_parallel=8)
    assert eight.bytes_of(PartKind.KV_CACHE) == one.bytes_of(PartKind.KV_CACHE)
    assert eight.bytes_of(PartKind.WEIGHTS) < one.bytes_of(PartKind.WEIGHTS) // 7


def test_mtp_modules_add_their_weights_and_their_layer_of_cache() -> None:
    plain = _estimate("deepseek-v3", "bf16", context=4096)
    mtp = _estimate("deepseek-v3", "bf16", context=4096, mtp=True)
    arch = architecture_of(find_model("deepseek-v3"))
    assert arch.params_mtp_module == 11_610_067_968  # as transformers' MtpLayer builds it
    assert (mtp.bytes_of(PartKind.WEIGHTS) - plain.bytes_of(PartKind.WEIGHTS)
            == 2 * arch.params_mtp_module)
    assert mtp.bytes_of(PartKind.KV_CACHE) == 62 * 576 * 2 * 4096
    with pytest.raises(ConflictingOptions):
        _inputs("llama-3.1-8b", mtp=True)


def test_llama_4_chunked_layers_cache_one_chunk() -> None:
    # Scout: 12 of 48 layers attend to everything; 36 attend within chunks of 8192 tokens.
    # 8 KV heads of 128 dims, fp16: 4096 bytes per token and layer.
    est = _estimate("llama-4-scout-17b-16e-instruct", context=65536, engine=Engine.VLLM)
    assert est.bytes_of(PartKind.KV_CACHE) == 4096 * (12 * 65536 + 36 * 8192)
    short = _estimate("llama-4-scout-17b-16e-instruct", context=4096, engine=Engine.VLLM)
    assert short.bytes_of(PartKind.KV_CACHE) == 4096 * 48 * 4096


def test_gpt_oss_sliding_layers_cache_128_tokens() -> None:
    # gpt-oss-120b: 36 layers, every other one with a 128-token window; 8 KV heads of 64 dims
    est = _estimate("gpt-oss-120b", "mxfp4", context=131072, engine=Engine.HF)
    assert est.bytes_of(PartKind.KV_CACHE) == 2 * 8 * 64 * 2 * (18 * 131072 + 18 * 128)


def test_images_are_tokens_of_the_context() -> None:
    # Gemma 3 27B: 256 tokens per image (mm_tokens_per_image); 10 of 62 layers are global
    text = _estimate("gemma-3-27b", context=2048, engine=Engine.HF)
    with_images = _estimate("gemma-3-27b", context=2048, engine=Engine.HF, images=4)
    per_token_layer = 2 * 16 * 128 * 2
    assert (with_images.bytes_of(PartKind.KV_CACHE) - text.bytes_of(PartKind.KV_CACHE)
            == per_token_layer * 10 * 4 * 256)
    with pytest.raises(ConflictingOptions):
        _inputs("llama-3.1-8b", images=1)


def test_the_vision_tower_is_weighed_with_the_model() -> None:
    from vramplan.model.weight_storage import WeightGroup

    est = _estimate("gemma-3-4b", "nf4", context=1024, engine=Engine.HF)
    assert est.weights.bytes_of(WeightGroup.VISION) == 2 * (416_866_032 + 2_950_272)


def test_moe_weights_hold_every_expert() -> None:
    # Qwen3-30B-A3B in bf16: all 30.5 billion parameters are loaded, 3.3 billion run per token
    est = _estimate("qwen3-30b-a3b", context=1024)
    arch = architecture_of(find_model("qwen3-30b-a3b"))
    assert est.bytes_of(PartKind.WEIGHTS) == 2 * arch.params_total
    assert arch.params_active < arch.params_total // 9



def test_a_4bit_prefill_under_transformers_casts_the_matrix_to_fp32() -> None:
    """A prefill dequantizes each 4-bit matrix to its stored 16-bit dtype (bitsandbytes
    `MatMul4Bit.forward`); transformers' layers compute in fp32 by default (BitsAndBytesConfig's
    `bnb_4bit_compute_dtype`), so `.to(A.dtype)` adds an fp32 copy: 2 + 4 bytes per weight of
    the largest matrix, Llama-2-7B's MLP projections (4096 x 11008). A plain PyTorch loop keeps
    the 16-bit copy only, less than loading holds (the 16-bit weight, its 4-bit codes and one
    fp32 absmax per 64 values)."""
    largest = 4096 * 11008

    def transient(engine: Engine) -> int:
        estimate = _estimate("llama-2-7b", "nf4", context=64, prompt=16, engine=engine)
        return estimate.bytes_of(PartKind.QUANT_TRANSIENT) + \
            estimate.bytes_of(PartKind.PREFILL_ACTIVATIONS)

    assert transient(Engine.HF) == 6 * largest
    assert transient(Engine.GENERIC) == 2 * largest + largest // 2 + 4 * (largest // 64)
    # a run that sets `bnb_4bit_compute_dtype=torch.float16` keeps no fp32 copy: loading's
    # transient is the larger
    fp16 = _estimate("llama-2-7b", "nf4", context=64, prompt=16, engine=Engine.HF,
                     bnb_compute_16bit=True)
    assert fp16.bytes_of(PartKind.QUANT_TRANSIENT) + fp16.bytes_of(
        PartKind.PREFILL_ACTIVATIONS) == transient(Engine.GENERIC)


def test_transformers_runs_bloom_attention_eagerly_and_gpt_neo_keeps_its_mask_buffers() -> None:
    # transformers' BLOOM has no SDPA path (eager prefill scores); GPT-Neo registers a bool
    # 2048 x 2048 causal mask per layer (modeling_gpt_neo.py GPTNeoSelfAttention.bias)
    def prefill(attention: Attention, engine: Engine) -> int:
        inputs = inference_inputs(architecture_of(find_model("bloom-560m")), find_format("bf16"),
                                  1024, engine=engine, attention=attention)
        return estimate_inference(inputs).bytes_of(PartKind.PREFILL_ACTIVATIONS)

    assert prefill(Attention.SDPA, Engine.HF) == prefill(Attention.EAGER, Engine.HF)
    assert prefill(Attention.SDPA, Engine.VLLM) < prefill(Attention.EAGER, Engine.VLLM)
    neo = inference_inputs(architecture_of(find_model("gpt-neo-1.3b")), find_format("bf16"), 1024,
                           engine=Engine.HF)
    assert estimate_inference(neo).bytes_of(PartKind.ENGINE_BUFFERS) == 24 * 2048 * 2048


# --- how engines place a model on several GPUs, and caches they allocate ahead -------------------

LLAMA2_70B_VOCAB_BF16 = 32_000 * 8_192 * 2
"""Llama-2-70B's embedding (and, untied, its head) in bf16: 524,288,000 bytes each."""


def test_litgpt_tensor_parallel_keeps_embedding_and_head_whole() -> None:
    """litgpt's generate/tp.py (@51d53287) splits each block's attention and MLP linears and
    nothing else; a vocabulary-parallel engine splits the embedding and the head too."""
    split = _estimate("llama-2-70b", context=264, engine=Engine.GENERIC, tensor_parallel=8)
    whole = _estimate("llama-2-70b", context=264, engine=Engine.LITGPT, tensor_parallel=8)
    weights = whole.bytes_of(PartKind.WEIGHTS) - split.bytes_of(PartKind.WEIGHTS)
    assert weights == pytest.approx(2 * LLAMA2_70B_VOCAB_BF16 * 7 / 8, abs=8)


def test_litgpt_tensor_parallel_dequantizes_its_whole_head() -> None:
    """A quantized head kept whole on every rank is the largest matrix a prefill dequantizes
    (bitsandbytes, fp16 then a bf16 cast: 4 bytes per value of 8,192 x 32,000)."""
    est = _estimate("llama-2-70b", "nf4-dq", context=264, prompt=8, engine=Engine.LITGPT,
                    tensor_parallel=8)
    transient = est.bytes_of(PartKind.QUANT_TRANSIENT) + est.bytes_of(PartKind.PREFILL_ACTIVATIONS)
    assert transient == 4 * 32_000 * 8_192


def test_a_layer_split_puts_a_chunk_of_blocks_and_the_vocabulary_on_the_first_gpu() -> None:
    """litgpt's generate/sequentially.py: 80 blocks in 4 chunks of 20, the embedding, head and
    norms on cuda:0 with the first chunk, each chunk's cache on its GPU."""
    one = _estimate("llama-2-70b", context=264, engine=Engine.LITGPT)
    first = _estimate("llama-2-70b", context=264, engine=Engine.LITGPT, layer_split=4)
    vocab_and_rest = one.weights.gpu_bytes - one.weights.bytes_of(WeightGroup.LINEARS)
    assert first.bytes_of(PartKind.WEIGHTS) == \
        one.weights.bytes_of(WeightGroup.LINEARS) // 4 + vocab_and_rest
    assert first.bytes_of(PartKind.KV_CACHE) * 4 == one.bytes_of(PartKind.KV_CACHE)
    assert first.kv_bytes_per_token * 4 == one.kv_bytes_per_token


def test_a_layer_split_needs_equal_chunks_and_no_tensor_parallelism() -> None:
    with pytest.raises(ConflictingOptions):
        _inputs("llama-2-70b", layer_split=3)  # 80 blocks
    with pytest.raises(ConflictingOptions):
        _inputs("llama-2-70b", layer_split=2, tensor_parallel=2)
    with pytest.raises(OutOfRange):
        _inputs("llama-2-70b", layer_split=0)


def test_a_cache_allocated_ahead_for_every_query_head() -> None:
    """torchtune's generate recipe of April 2024: every layer's cache for the builder's 4,096
    tokens, keys and values repeated to the 32 query heads of Llama 3 8B (8 KV heads):
    2 x 32 layers x 32 heads x 128 x 4096 x 2 bytes = 2 GiB, and the bool mask 4096^2."""
    est = _estimate("llama-3-8b", context=214, prompt=8, cache_tokens=4096, kv_all_heads=True)
    assert est.bytes_of(PartKind.KV_CACHE) == 2 * 32 * 32 * 128 * 4096 * 2 == 2 * GiB
    today = _estimate("llama-3-8b", context=214, prompt=8)
    assert today.bytes_of(PartKind.KV_CACHE) == 2 * 32 * 8 * 128 * 214 * 2
    with pytest.raises(OutOfRange):
        _inputs("llama-3-8b", cache_tokens=0)


def test_transformers_generate_before_4_42_holds_the_previous_cache_too() -> None:
    """transformers v4.35's `generate`: each decode step `torch.cat`s every layer's grown key and
    value while the previous tuple stays in `model_kwargs` until the step returns. Llama-2-7B, 16
    sequences of 256 + 512 tokens: the cache at 768 tokens and at 767 (16 x 512 KiB per token)."""
    est = _estimate(context=768, prompt=256, batch=16, engine=Engine.HF,
                    previous_cache_alive=True)
    per_token = 2 * 32 * 32 * 128 * 2
    assert est.bytes_of(PartKind.KV_CACHE) == 16 * per_token * (768 + 767)


def test_a_growing_cache_holds_only_the_prompt_during_prefill() -> None:
    """HF's DynamicCache grows token by token: the prefill's working set sits beside the prompt's
    keys and values, not the whole context's; a static cache (generic) is there from the start.
    transformers' working set also holds the embeddings and the block's input (two bf16
    4,000 x 4,096 tensors, `test_transformers_prefill_holds_two_more_residual_tensors`)."""
    hf = _estimate(context=4096, prompt=4000, engine=Engine.HF)
    static = _estimate(context=4096, prompt=4000, engine=Engine.GENERIC)
    per_token = 2 * 32 * 32 * 128 * 2
    working = static.bytes_of(PartKind.PREFILL_ACTIVATIONS) + 2 * 4000 * 4096 * 2
    assert hf.bytes_of(PartKind.KV_CACHE) == static.bytes_of(PartKind.KV_CACHE)
    assert hf.bytes_of(PartKind.PREFILL_ACTIVATIONS) == max(0, working - 96 * per_token)


def test_transformers_prefill_holds_two_more_residual_tensors() -> None:
    """During a transformers forward the model's loop keeps the block's input referenced
    (`hidden_states = decoder_layer(hidden_states, ...)`) and its `forward` keeps the embeddings
    (`inputs_embeds`): at the MLP's peak four hidden-size tensors (embeddings, block input, the
    attention's residual sum, the normed input) beside its three intermediates, where a plain
    loop holds two. Llama-2-7B (hidden 4,096, intermediate 11,008), one sequence of 1,000 tokens
    in bf16: (4 x 4,096 + 3 x 11,008) x 1,000 x 2 bytes; the generic loop 2 x 4,096 fewer."""
    arch = architecture_of(find_model("llama-2-7b"))
    hf = prefill_activation_bytes(arch, _inputs(context=1000, engine=Engine.HF))
    generic = prefill_activation_bytes(arch, _inputs(context=1000))
    assert hf == (4 * 4096 + 3 * 11008) * 1000 * 2
    assert generic == (2 * 4096 + 3 * 11008) * 1000 * 2


def test_transformers_gpt2_prefill_holds_its_position_embeddings_and_gelu_chain() -> None:
    """GPT-2 under transformers: the learned position embeddings stay referenced beside the
    embeddings (`position_embeds`, a local of the model's forward), and NewGELUActivation,
    written out in Python, holds four intermediate-wide tensors at its peak (up, `0.5 * x`, two
    steps of the tanh chain): GPT-2 (hidden 768, intermediate 3,072), 1,000 tokens in bf16, the
    MLP phase (2 + 2 + 1) x 768 + 4 x 3,072 values a token; a plain loop and torch's GELU hold
    2 x 768 + 2 x 3,072 (CPU trace of v5.25.0's generate, benchmarks/hf_generate_cpu.py)."""
    arch = architecture_of(find_model("gpt2"))
    hf = prefill_activation_bytes(arch, _inputs("gpt2", context=1000, engine=Engine.HF))
    generic = prefill_activation_bytes(arch, _inputs("gpt2", context=1000))
    assert hf == (5 * 768 + 4 * 3072) * 1000 * 2
    assert generic == (2 * 768 + 2 * 3072) * 1000 * 2


def test_eager_softmax_bytes_follow_atens_half_to_float_rule() -> None:
    """`x = softmax(x, dtype=torch.float32).to(dtype)`: float16 on CUDA runs the half_to_float
    kernel (the 16-bit scores, the fp32 output and its 16-bit cast at the cast), bfloat16 is
    converted first (scores, fp32 copy, fp32 output), fp32 needs no copy and no cast (scores
    and output)."""
    assert eager_softmax_bytes_per_score(ComputeDtype.FP16) == 2 + 4 + 2
    assert eager_softmax_bytes_per_score(ComputeDtype.BF16) == 2 + 4 + 4
    assert eager_softmax_bytes_per_score(ComputeDtype.FP32) == 4 + 4
