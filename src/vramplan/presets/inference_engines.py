"""Inference engines: the documented behaviours that change how much memory a run takes.

Data only. Each field cites the code or documentation it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.vocab import Engine

VLLM_MEMORY_UTILIZATION = 0.9
"""vLLM's default `gpu_memory_utilization` (docs.vllm.ai configuration/optimization: "vLLM
pre-allocates GPU cache using this percentage of memory")."""


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """What an engine does that the memory estimate depends on."""

    engine: Engine
    display_name: str
    separate_head: bool = False
    """The model keeps its own output head even when the checkpoint ties it to the embedding."""
    quantizes_head: bool = False
    """A bitsandbytes loader replaces the head's Linear too."""
    bnb_quant_dtype_fp16: bool = False
    """bitsandbytes weights are quantized from an fp16 copy, so a bf16 run dequantizes to fp16 and
    then casts (two 16-bit copies of the matrix at once)."""
    bnb_4bit_compute_fp32: bool = False
    """bitsandbytes 4-bit layers compute in fp32: a prefill's dequantized 16-bit matrix is cast to
    an fp32 copy beside it."""
    kv_expands_gqa: bool = False
    """Grouped-query models cache all n_heads key/value heads (not n_kv_heads)."""
    kv_sliding_window: bool = True
    """Sliding-window layers cache only the window."""
    logits_all_prompt_tokens: bool = False
    """Prefill computes logits for every prompt token (else the last one only)."""
    logits_fp32: bool = True
    """Logits are held in fp32 (else in the compute dtype)."""
    mask_cache: bool = False
    """A boolean context x context causal mask is kept on the GPU."""
    prefill_chunk: int | None = None
    """Tokens processed per prefill step (None: the whole prompt at once)."""
    activations_fp32: bool = False
    """Intermediate activations in fp32 (ggml computes in f32)."""
    memory_utilization: float | None = None
    """Share of the card the engine takes for itself (weights, activations and KV cache)."""
    kv_grows: bool = False
    """The KV cache grows token by token (a `torch.cat` per step) instead of being allocated for
    the whole context: the prefill holds only the prompt's keys and values beside its working
    set, and the full cache exists only at the end of decoding."""
    tp_splits_vocab: bool = True
    """Tensor parallelism splits the embedding and the head over the vocabulary (Megatron-LM,
    vLLM `VocabParallelEmbedding`, `ParallelLMHead`); False: each GPU keeps both whole."""
    source: str = ""


ENGINES: dict[Engine, EngineProfile] = {p.engine: p for p in (
    EngineProfile(
        Engine.GENERIC, "PyTorch (generic)",
        source="static KV cache sized for the whole context; last-token logits in fp32"),
    EngineProfile(
        Engine.HF, "Hugging Face transformers",
        bnb_4bit_compute_fp32=True, kv_grows=True,
        # generate's default cache, DynamicCache (the legacy tuples before v4.42), grows each
        # layer with `torch.cat` at every step (cache_utils.py `DynamicCache.update`);
        # BitsAndBytesConfig's bnb_4bit_compute_dtype defaults to float32
        # (utils/quantization_config.py; bitsandbytes warns "Input type into Linear4bit is
        # torch.bfloat16, but bnb_4bit_compute_dtype=torch.float32 (default)"): Linear4bit casts
        # its input to it, and MatMul4Bit dequantizes the weight to its stored dtype then
        # `.to(A.dtype)`, an fp32 copy; a run that sets a 16-bit compute dtype holds less.
        # generate() keeps only the last position's logits (logits_to_keep / num_logits_to_keep,
        # transformers >= 4.45) and copies them to fp32 (`.to(copy=True, dtype=torch.float32)` in
        # generation/utils.py); Gemma 2/3 HybridCache sizes sliding layers to the window.
        source="transformers generation/utils.py; the bitsandbytes integration keeps lm_head in "
               "16 bits (integrations/bitsandbytes.py get_keys_to_not_convert); "
               "utils/quantization_config.py (bnb_4bit_compute_dtype float32 by default)"),
    EngineProfile(
        Engine.LITGPT, "LitGPT",
        separate_head=True, quantizes_head=True, bnb_quant_dtype_fp16=True, kv_expands_gqa=True,
        kv_sliding_window=False, logits_all_prompt_tokens=True, logits_fp32=False,
        mask_cache=True, tp_splits_vocab=False,
        # generate/tp.py (@51d53287, adapted from gpt-fast) splits each block's attention and
        # MLP linears (`tensor_parallel`: colwise qkv/fc, rowwise proj) and nothing else: the
        # token embedding, final norm and lm_head stay whole on every rank.
        # GPT.__init__ always builds its own lm_head (no weight tying); Fabric's
        # BitsandbytesPrecision replaces every torch.nn.Linear and quantizes
        # `weight.contiguous().to(device, dtype=torch.half)`; build_kv_cache caches
        # `heads = 1 if n_query_groups == 1 else n_head` (lit-gpt 2023, the version of the
        # published resource tables); set_kv_cache builds a bool mask of max_seq_length^2;
        # the forward returns logits for every position (B, T, padded_vocab_size).
        source="Lightning-AI/litgpt litgpt/model.py, litgpt/generate/base.py, generate/tp.py; "
               "lightning fabric/plugins/precision/bitsandbytes.py"),
    EngineProfile(
        Engine.VLLM, "vLLM",
        prefill_chunk=2048, memory_utilization=VLLM_MEMORY_UTILIZATION,
        # gpu_memory_utilization defaults to 0.9 (docs.vllm.ai configuration/optimization:
        # "vLLM pre-allocates GPU cache using this percentage of memory"); the profiling run uses
        # max_num_batched_tokens tokens: SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048
        # (vllm/config/scheduler.py); EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py)
        # raises it by usage context and GPU, so 2048 is the smallest default, not every
        # server's. The sampler sees one logits row per sequence, in fp32.
        source="docs.vllm.ai configuration/optimization and conserving_memory"),
    EngineProfile(
        Engine.LLAMA_CPP, "llama.cpp",
        separate_head=False, prefill_chunk=512, activations_fp32=True,
        # n_ubatch defaults to 512 (common/common.h, `int32_t n_ubatch = 512`; also
        # llama_context_default_params); ggml activations are f32; the token embedding
        # stays in host memory (src/llama-model.cpp).
        source="ggml-org/llama.cpp common/common.h, src/llama-model.cpp"),
)}

