"""Inference VRAM: weights in their storage format, KV cache, prefill activations and logits, the
engine's transients and reserve, per GPU; and the inverse (longest context, most sequences).

Pure: typed inputs, typed result, no I/O. Bytes are integers.

The model of one run, per GPU (tensor parallelism over `tensor_parallel` GPUs):
    allocated peak = weights + KV cache + max(prefill working set, quantization transient)
                     + engine buffers
    device total   = allocated peak + CUDA context
- KV cache: 2 (K and V) x layers x kv_heads x head_dim x bytes x batch x cached tokens, where a
  local layer caches min(context, window) tokens when the engine supports it: a sliding window
  (Gemma 2 and 3, Mistral 7B v0.1, gpt-oss, Command R7B) or Llama 4's chunks. Multi-head latent
  attention (DeepSeek-V3, Kimi K2) caches its compressed latent instead: kv_lora_rank +
  qk_rope_head_dim values per token and layer, one copy on every tensor-parallel GPU. Image tokens
  (vision-language models) are cached like text; loaded MTP modules add their layers.
- Prefill working set: the live tensors of one block while a chunk of the prompt goes through it
  (residual, normed input, q/k/v and attention output, or the MLP's intermediates), plus the
  attention scores with an eager kernel, plus the logits the engine keeps.
- bitsandbytes transients: a prefill (more than one token) dequantizes each 4-bit matrix to 16 bits
  before the matmul (bitsandbytes `MatMul4Bit.forward`: `dequantize_4bit(B, quant_state)
  .to(A.dtype)`), one matrix at a time, so the largest matrix sets the peak; loading quantizes one
  matrix at a time from a 16-bit copy on the GPU (for LLM.int8, `int8_double_quant` also makes the
  row- and column-major int8 copies).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from vramplan.inference.setup import InferenceInputs
from vramplan.model.architecture import PYTHON_TANH_GELUS, Architecture, MlpKind, PositionKind
from vramplan.model.weight_storage import WeightGroup, WeightsLayout, weights_layout
from vramplan.parts import PartKind
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.presets.frameworks.torchtune import torchtune_rope_cache_bytes
from vramplan.presets.gpus import Gpu
from vramplan.presets.inference_engines import EngineProfile
from vramplan.presets.quant_formats import FormatFamily
from vramplan.units import ceil_div
from vramplan.verdict import GpuVerdict
from vramplan.vocab import Attention, ComputeDtype, Engine


@dataclass(frozen=True, slots=True)
class InferenceItem:
    part: PartKind
    """One of the inference parts (weights, KV cache, prefill activations, logits, ...)."""
    bytes: int
    """Per GPU."""


@dataclass(frozen=True, slots=True)
class InferenceEstimate:
    """The memory of one inference setup, per GPU."""

    inputs: InferenceInputs
    weights: WeightsLayout
    """The whole model's weights (before the tensor-parallel split)."""
    items: tuple[InferenceItem, ...]
    kv_bytes_per_token: int
    """KV cache of one more token of one sequence, per GPU (full-attention layers only)."""
    cuda_context_bytes: int = CUDA_CONTEXT_BYTES

    def bytes_of(self, part: PartKind) -> int:
        return sum(item.bytes for item in self.items if item.part is part)

    @property
    def allocated_bytes(self) -> int:
        """The peak of the PyTorch allocator (`torch.cuda.max_memory_allocated`), per GPU."""
        return sum(item.bytes for item in self.items)

    @property
    def device_bytes(self) -> int:
        """What the device shows used (nvidia-smi): the allocated peak plus the CUDA context."""
        return self.allocated_bytes + self.cuda_context_bytes

    @property
    def engine_reserve_share(self) -> float | None:
        """The engine's own cap on the card (vLLM `gpu_memory_utilization`), if any."""
        return self.inputs.profile.memory_utilization

    def verdict(self, gpu: Gpu) -> GpuVerdict:
        """The device total against `gpu`, under the engine's own cap when it has one."""
        share = self.engine_reserve_share
        return GpuVerdict(gpu, self.device_bytes, 1.0 if share is None else share)


# --- the parts ----------------------------------------------------------------------------------

def estimate_inference(inputs: InferenceInputs) -> InferenceEstimate:
    """The per-GPU memory of `inputs`."""
    profile = inputs.profile
    arch = _as_loaded(inputs.arch, profile, inputs.mtp)
    layout = weights_layout(arch, inputs.weights, _stored_bytes(inputs), profile.quantizes_head)
    # the prefill's peak: a block's working set, or the head's logits for every prompt position
    prefill = max(prefill_activation_bytes(arch, inputs), prompt_logits_peak_bytes(arch, inputs))
    kept = prompt_logits_kept_bytes(arch, inputs)
    kv = kv_cache_held_bytes(arch, inputs)
    if profile.kv_grows:
        # the prefill beside the prompt's keys and values only, and the first decode step beside
        # the prefill's kept logits: what they need beyond the cache the end of decoding holds
        prompt_kv = prompt_cache_held_bytes(arch, inputs)
        prefill = max(0, prompt_kv + prefill - kv)
        if kept:
            first_step_kv = kv_cache_bytes(arch, _cached_up_to(inputs, inputs.prompt_tokens + 1))
            if inputs.previous_cache_alive:
                first_step_kv += prompt_kv
            prefill = max(prefill, first_step_kv + kept - kv)
    else:
        prefill = max(prefill, kept)
    transient = _quant_transient_bytes(layout, inputs)
    items = (
        InferenceItem(PartKind.WEIGHTS, _weights_per_gpu(layout, inputs)),
        InferenceItem(PartKind.KV_CACHE, kv),
        InferenceItem(PartKind.PREFILL_ACTIVATIONS, prefill),
        InferenceItem(PartKind.LOGITS, _logits_bytes(arch, inputs)),
        InferenceItem(PartKind.QUANT_TRANSIENT, max(0, transient - prefill)),
        InferenceItem(PartKind.ENGINE_BUFFERS, _engine_buffer_bytes(arch, inputs)),
    )
    return InferenceEstimate(inputs, layout, items, kv_bytes_per_token(arch, inputs))


def _cached_up_to(inputs: InferenceInputs, tokens: int) -> InferenceInputs:
    """`inputs` with its cache at `tokens` per sequence (images included), as it stands during
    prefill or a decode step of a cache that grows."""
    return dataclasses.replace(inputs, context=tokens - inputs.image_tokens, prompt=None,
                               cache_tokens=None, previous_cache_alive=False)


def _as_loaded(arch: Architecture, profile: EngineProfile, mtp: bool) -> Architecture:
    """The architecture as the engine builds it (LitGPT unties the head; MTP modules loaded for
    speculative decoding)."""
    if profile.separate_head and arch.tied_embeddings:
        arch = dataclasses.replace(arch, tied_embeddings=False)
    if mtp:
        arch = dataclasses.replace(arch, mtp_loaded=True)
    return arch


def _stored_bytes(inputs: InferenceInputs) -> int:
    """Bytes of a weight the format leaves unquantized: the compute dtype."""
    return inputs.compute_dtype.bytes


def _weights_per_gpu(layout: WeightsLayout, inputs: InferenceInputs) -> int:
    """Tensor parallelism splits the matrices, the head and the embedding (vocabulary-parallel)
    across GPUs and replicates norms and biases (Megatron-LM, Shoeybi et al. 2019,
    arXiv:1909.08053; vLLM VocabParallelEmbedding); an engine that does not split the vocabulary
    (`EngineProfile.tp_splits_vocab`) keeps the embedding and head whole on every GPU. A layer
    split gives the first GPU its chunk of the blocks' matrices beside the whole embedding, head,
    vision tower and the other tensors (norms, biases: counted whole, a few MB)."""
    linears, vision = layout.bytes_of(WeightGroup.LINEARS), layout.bytes_of(WeightGroup.VISION)
    vocab = layout.bytes_of(WeightGroup.HEAD) + layout.bytes_of(WeightGroup.EMBEDDING)
    other = layout.bytes_of(WeightGroup.OTHER)
    if inputs.layer_split > 1:  # never with tensor parallelism (`inference_inputs`)
        return ceil_div(linears, inputs.layer_split) + vision + vocab + other
    if inputs.profile.tp_splits_vocab:
        return ceil_div(linears + vocab + vision, inputs.tensor_parallel) + other
    return ceil_div(linears + vision, inputs.tensor_parallel) + vocab + other


def _kv_heads_per_gpu(arch: Architecture, inputs: InferenceInputs) -> int:
    all_heads = inputs.kv_all_heads if inputs.kv_all_heads is not None \
        else inputs.profile.kv_expands_gqa and arch.n_kv_heads > 1
    heads = arch.n_heads if all_heads else arch.n_kv_heads
    # Fewer KV heads than GPUs: each GPU keeps one replica (vLLM replicates KV heads).
    return max(1, heads // inputs.tensor_parallel)


def kv_values_per_layer_token(arch: Architecture, inputs: InferenceInputs) -> int:
    """Values one token leaves in one layer's cache, per GPU: a key and a value per KV head, or
    multi-head latent attention's latent and rotary key. The latent has no heads to split: vLLM's
    MLA backends keep one KV head of kv_lora_rank + qk_rope_head_dim on every tensor-parallel rank
    (vllm/model_executor/layers/mla.py, `MLAAttentionSpec`), and transformers caches it before
    `expand_kv` (modeling_deepseek_v3.py: "Cache read / write is performed while latent KV is
    still compressed")."""
    if arch.latent_attention is not None:
        return arch.latent_attention.cached_values_per_token
    return _kv_heads_per_gpu(arch, inputs) * (arch.head_dim + arch.v_head_dim)


def _cache_layers(arch: Architecture, inputs: InferenceInputs) -> tuple[int, int]:
    """(full layers, local layers) of the cache: local layers cache at most the window (or chunk)
    when the engine does; loaded MTP modules are full-attention layers."""
    window = arch.sliding_window
    local = arch.sliding_window_layers if window and inputs.profile.kv_sliding_window else 0
    mtp = arch.mtp_layers if inputs.mtp else 0
    return arch.n_layers - local + mtp, local


def cache_layer_tensors(arch: Architecture,
                        inputs: InferenceInputs) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The cache as tensors, layer by layer on this GPU (full-attention layers first, then the
    local ones): (values per token of one sequence in each of the layer's tensors, the most
    tokens the layer holds). A key and a value tensor per layer (transformers' `DynamicCache`
    keeps `keys` and `values` apart), or multi-head latent attention's one latent."""
    if arch.latent_attention is not None:
        tensors: tuple[int, ...] = (arch.latent_attention.cached_values_per_token,)
    else:
        heads = _kv_heads_per_gpu(arch, inputs)
        tensors = (heads * arch.head_dim, heads * arch.v_head_dim)
    full, local = _cache_layers(arch, inputs)
    cached = inputs.allocated_cache_tokens
    window = min(cached, arch.sliding_window or cached)
    layers = [(tensors, cached)] * full + [(tensors, window)] * local
    return tuple(layers[:ceil_div(len(layers), inputs.layer_split)])


def kv_bytes_per_token(arch: Architecture, inputs: InferenceInputs) -> int:
    """KV bytes of one token of one sequence over all layers, per GPU (local layers included:
    before the window fills they grow too)."""
    full, local = _cache_layers(arch, inputs)
    values = (full + local) * kv_values_per_layer_token(arch, inputs)
    return _ceil_fraction(values * inputs.kv_dtype.bytes_per_value / inputs.layer_split)


def kv_cache_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """Values per layer and token x bytes x batch x cached tokens, per GPU; local layers cache
    min(cached tokens, window) tokens when the engine supports it (a sliding window; Llama 4's
    chunked layers attend within one chunk of `attention_chunk_size` tokens, so one chunk
    suffices: vLLM `ChunkedLocalAttentionSpec`, transformers' chunked cache layers)."""
    full, local = _cache_layers(arch, inputs)
    cached = inputs.allocated_cache_tokens
    tokens = full * cached + local * min(cached, arch.sliding_window or cached)
    values = kv_values_per_layer_token(arch, inputs) * tokens * inputs.batch
    # a layer split: the first GPU's chunk of layers (counted as their share of every layer)
    return _ceil_fraction(values * inputs.kv_dtype.bytes_per_value / inputs.layer_split)


def prompt_cache_held_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """What the prompt's cache holds from the prefill until a decode step replaces it: its keys
    and values, or, where they are views of each layer's fused q/k/v projection output
    (`InferenceInputs.fused_qkv_cache_views`), that whole output, beside the key where a rotary
    embedding made the key a tensor of its own (GPT-NeoX, Phi-3)."""
    cache = kv_cache_bytes(arch, _cached_up_to(inputs, inputs.prompt_tokens))
    if not inputs.fused_qkv_cache_views:
        return cache
    projection = arch.q_dim + arch.kv_dim + arch.v_dim
    own_key = arch.kv_dim if arch.position is PositionKind.ROPE else 0
    return ceil_div(cache * (projection + own_key), arch.kv_dim + arch.v_dim)


def kv_cache_held_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """The KV cache at the peak: the cache, and, where a decode step builds the grown cache beside
    the previous one (`InferenceInputs.previous_cache_alive`) and a decode step runs, that
    previous cache, one token shorter."""
    cache = kv_cache_bytes(arch, inputs)
    if not (inputs.previous_cache_alive and inputs.decode_steps):
        return cache
    return 2 * cache - inputs.batch * kv_bytes_per_token(arch, inputs)


def _chunk(inputs: InferenceInputs) -> int:
    chunk = inputs.profile.prefill_chunk
    prompt = inputs.prompt_tokens
    return prompt if chunk is None else min(prompt, chunk)


def prefill_activation_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """Live tensors of one block during prefill: the larger of the attention phase (residual,
    normed input, q, k, v, attention output) and the MLP phase (residual, normed input and the
    MLP intermediates: gate, up and their product, or up and its activation), for batch x chunk
    tokens, split over tensor-parallel GPUs except the residual stream; plus the fp32 scores of an
    eager attention kernel."""
    tp = inputs.tensor_parallel
    h = arch.hidden_size
    attention = 2 * h + (arch.q_dim + arch.attn_out_dim + arch.kv_dim + arch.v_dim) // tp
    width = mlp_width(arch)
    mlp = 2 * h + _mlp_tensors(arch, inputs) * width // tp
    if inputs.profile.engine is Engine.HF:
        # transformers' Python keeps two more residual-stream tensors referenced beside the
        # block's: the embeddings (`inputs_embeds`, a local of the model's `forward` until it
        # returns) and the block's input (the caller's `hidden_states` while
        # `hidden_states = decoder_layer(hidden_states, ...)` runs, `layer_outputs = ...` in
        # older releases; LlamaModel/Qwen2Model `forward`, read in the v5.25.0 wheel). The
        # input is the attention phase's residual already. A no-grad Qwen2 forward of that
        # wheel, its live tensors tracked op by op, peaks at the MLP's product with exactly
        # these four hidden-size tensors beside the three intermediates (docs/inference.md).
        # The same two tensors beside a TRL reference forward: `training.alignment`.
        attention += h
        mlp += 2 * h
        if arch.position is PositionKind.LEARNED:
            # and the learned position embeddings, a local beside `inputs_embeds` until the
            # model's forward returns (GPT-2's `position_embeds`, OPT's `pos_embeds`; in the
            # same CPU trace of GPT-2's `generate`, benchmarks/hf_generate_cpu.py)
            attention += h
            mlp += h
    act_bytes = 4 if inputs.profile.activations_fp32 else inputs.compute_dtype.bytes
    tokens = inputs.batch * _chunk(inputs)
    attention_bytes = tokens * attention * act_bytes
    if eager_attention(arch, inputs):
        # the score matrix beside the attention phase's tensors, while the MLP's are not yet
        heads = max(1, arch.n_heads // tp)
        scores = inputs.batch * heads * _chunk(inputs) * inputs.cached_tokens
        attention_bytes += scores * _eager_bytes_per_score(arch, inputs)
        if inputs.profile.engine is Engine.HF:
            # transformers' 4D mask, batch x 1 x queries x keys in the compute dtype, made once
            # per forward for eager attention (`_prepare_4d_causal_attention_mask`, then the
            # `create_causal_mask` of later releases)
            attention_bytes += (inputs.batch * _chunk(inputs) * inputs.cached_tokens
                                * inputs.compute_dtype.bytes)
    return max(attention_bytes, tokens * mlp * act_bytes)


def _eager_bytes_per_score(arch: Architecture, inputs: InferenceInputs) -> int:
    """Bytes per score at the eager softmax: two 16-bit tensors, the masked scores and their
    softmax, where it runs in the scores' dtype (GPT-2; GPT-NeoX before transformers v4.49.0,
    whose v4.41.2 forward, traced on the CPU, peaks with exactly those two), else
    `eager_softmax_bytes_per_score`."""
    dtype = inputs.compute_dtype
    if dtype is not ComputeDtype.FP32 and (inputs.eager_softmax_16bit
                                           or not arch.eager_softmax_fp32):
        return 2 * dtype.bytes
    return eager_softmax_bytes_per_score(dtype)


def _mlp_tensors(arch: Architecture, inputs: InferenceInputs) -> int:
    """Intermediate-wide tensors alive at the MLP's peak: gate, up and their product; up and its
    activation; or, for transformers' tanh GELU written out in Python (`PYTHON_TANH_GELUS`), up,
    `0.5 * x` and two steps of the tanh chain (a CPU trace of v5.25.0's GPT-2 `generate` peaks
    with these four: benchmarks/hf_generate_cpu.py)."""
    if arch.mlp is MlpKind.GATED:
        return 3
    if inputs.profile.engine is Engine.HF and arch.activation in PYTHON_TANH_GELUS:
        return 4
    return 2


def eager_softmax_bytes_per_score(dtype: ComputeDtype) -> int:
    """Bytes per score at an eager attention's softmax (transformers `eager_attention_forward`:
    `attn_weights = softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)`, the
    input scores referenced until the name is rebound). ATen's `softmax`
    (aten/src/ATen/native/SoftMax.cpp) runs the `half_to_float` kernel only for float16 on
    CUDA: there the 16-bit scores, the fp32 output and its 16-bit cast are alive at the cast, 8
    bytes; bfloat16 is first converted (`input_.toType(dtype)`), so its scores, their fp32 copy
    and the fp32 output are alive at the softmax, 10 bytes (8 at the cast); fp32 scores and
    their output, 8 (the cast returns its input)."""
    if dtype is ComputeDtype.BF16:
        return 2 + 4 + 4
    return dtype.bytes + 4 + (0 if dtype is ComputeDtype.FP32 else dtype.bytes)


def eager_attention(arch: Architecture, inputs: InferenceInputs) -> bool:
    """Eager attention runs: asked for, or transformers' module has no path for the kernel asked
    (`Architecture.sdpa_attention`, `flash_attention`: BLOOM, GPT-Neo fall back to eager)."""
    if inputs.attention is Attention.EAGER:
        return True
    missing = (not arch.sdpa_attention if inputs.attention is Attention.SDPA
               else not arch.flash_attention)
    return inputs.profile.engine is Engine.HF and missing


def mlp_width(arch: Architecture) -> int:
    """Intermediate width one token goes through: the dense MLP, or the experts it is routed to
    and the shared experts, whichever layer kind is wider."""
    if not arch.is_moe:
        return arch.intermediate_size
    return max(arch.token_mlp_width, arch.intermediate_size if arch.n_dense_layers else 0)


def prompt_logit_values(arch: Architecture, inputs: InferenceInputs) -> int:
    """Logits of every prompt position, in values: batch x prompt tokens x vocabulary."""
    return inputs.batch * inputs.prompt_tokens * arch.vocab_size


def prompt_logits_peak_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """The head's output for every prompt position where the model returns them all
    (`InferenceInputs.prompt_logits_bytes`): the compute-dtype logits, and, where the model
    upcasts them (`logits = logits.float()`), their fp32 copy beside them during the cast, or
    `generate`'s copy of the returned logits (`InferenceInputs.prompt_logits_cloned`)."""
    if not inputs.prompt_logits_bytes:
        return 0
    compute, returned = inputs.compute_dtype.bytes, inputs.prompt_logits_bytes
    at_cast = compute + (returned if returned != compute else 0)
    # `generate`'s copy of the returned logits (`InferenceInputs.prompt_logits_cloned`) beside
    # them, once the cast's 16-bit input is freed
    held = returned * (2 if inputs.prompt_logits_cloned else 1)
    return prompt_logit_values(arch, inputs) * max(at_cast, held)


def prompt_logits_kept_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """The prefill's logits for every prompt position still referenced during the first decode
    step (`InferenceInputs.prompt_logits_kept`); 0 without a decode step."""
    if not (inputs.prompt_logits_bytes and inputs.prompt_logits_kept and inputs.decode_steps):
        return 0
    return prompt_logit_values(arch, inputs) * inputs.prompt_logits_bytes


def _logits_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """Logits kept after prefill: every prompt position (LitGPT) or the last one per sequence."""
    profile = inputs.profile
    positions = _chunk(inputs) if profile.logits_all_prompt_tokens else 1
    size = 4 if profile.logits_fp32 else inputs.compute_dtype.bytes
    return inputs.batch * positions * arch.vocab_size * size


def _quant_transient_bytes(layout: WeightsLayout, inputs: InferenceInputs) -> int:
    """The largest bitsandbytes matrix in 16 bits while it is used or loaded.

    - 4-bit, prefill: `dequantize_4bit` gives a copy in the dtype the weight was quantized from,
      then `.to(A.dtype)` a second one when that differs from the compute dtype (LitGPT quantizes
      from fp16 and computes in bf16; transformers' bitsandbytes layers compute in fp32 unless
      told otherwise, `InferenceInputs.bnb_compute_16bit`): 2, 4 or 6 bytes per weight.
    - 4-bit, loading: the 16-bit weight on the GPU (2 bytes) and its new packed copy.
    - int8, loading: an fp16 copy (2 bytes) plus `int8_double_quant`'s row- and column-major
      int8 copies (1 + 1 bytes).
    """
    n = _largest_quantized_on_gpu(layout, inputs)
    family = inputs.weights.family
    if not n:
        return 0
    if family is FormatFamily.BNB_INT8:
        return 4 * n
    load = 2 * n + ceil_div(n, 2) + 4 * ceil_div(n, 64)
    prefill = bnb_dequantized_bytes_per_weight(inputs) * n if inputs.prompt_tokens > 1 else 0
    return max(load, prefill)


def bnb_dequantized_bytes_per_weight(inputs: InferenceInputs) -> int:
    """Bytes per weight of a bitsandbytes 4-bit matrix while a matmul of more than one row uses
    it (`_quant_transient_bytes`: its 16-bit copy, and the cast to the compute dtype where
    that differs); 0 for other weights. A single row takes `gemv_4bit` instead, which
    dequantizes nothing (bitsandbytes autograd/_functions.py `matmul_4bit`: `if A.numel() ==
    A.shape[-1]`)."""
    if inputs.weights.family is not FormatFamily.BNB_4BIT:
        return 0
    cast = 4 if inputs.profile.bnb_4bit_compute_fp32 and not inputs.bnb_compute_16bit else \
        2 if inputs.profile.bnb_quant_dtype_fp16 and inputs.compute_dtype is not ComputeDtype.FP16 \
        else 0
    return 2 + cast


def _largest_quantized_on_gpu(layout: WeightsLayout, inputs: InferenceInputs) -> int:
    """Elements of the largest quantized matrix one GPU holds: the blocks' split over tensor
    parallelism, and a quantized head, split with them unless the engine keeps it whole
    (`EngineProfile.tp_splits_vocab`); a layer split's first GPU holds whole matrices."""
    tp = inputs.tensor_parallel
    head = layout.quantized_head_elements
    return max(ceil_div(layout.largest_quantized_block_linear, tp),
               ceil_div(head, tp) if inputs.profile.tp_splits_vocab else head)


def _engine_buffer_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """The model's own buffers (`Architecture.buffer_bytes`: GPT-Neo's per-layer causal masks;
    the causal masks of older transformers code, `InferenceInputs.mask_buffer_bytes`;
    the per-layer rotary tables of older transformers code, `InferenceInputs.rope_tables`;
    torchtune's rotary caches, `InferenceInputs.torchtune_rope_modules`);
    LitGPT's bool causal mask (context^2 bytes) and its fp32 cos/sin tables (2 x context x
    rotary dims x 4 bytes)."""
    own = arch.buffer_bytes + inputs.mask_buffer_bytes \
        + inputs.torchtune_rope_modules * torchtune_rope_cache_bytes(arch)
    if inputs.rope_tables:
        own += arch.rope_table_bytes(inputs.compute_dtype.bytes)
    if not inputs.profile.mask_cache:
        return own
    tokens = inputs.allocated_cache_tokens
    return own + tokens ** 2 + 2 * tokens * arch.rotary_dim * 4


def _ceil_fraction(value: Fraction) -> int:
    return ceil_div(value.numerator, value.denominator)
