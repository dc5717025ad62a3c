"""Inference VRAM: weights in their storage format, KV cache, prefill activations and logits, the
engine's transients and reserve, per GPU; and the inverse (longest context, most sequences).

Pure: typed inputs, typed result, no I/O. Bytes are integers.

The model of one run, per GPU (tensor parallelism over `tensor_parallel` GPUs):
    allocated peak = weights + KV cache + max(prefill working set, quantization transient)
                     + engine buffers
    device total   = allocated peak + CUDA context
- KV cache: 2 (K and V) x layers x kv_heads x head_dim x bytes x batch x cached tokens, where a
  sliding-window layer caches min(context, window) tokens (Gemma 2, Mistral 7B v0.1) when the
  engine supports it.
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
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from vramplan.bounds import NumberField
from vramplan.errors import ConflictingOptions, OutOfRange, UnknownName
from vramplan.model.architecture import Architecture, MlpKind
from vramplan.model.weight_storage import WeightGroup, WeightsLayout, weights_layout
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.presets.gpus import Gpu
from vramplan.presets.inference_engines import ENGINES, Engine, EngineProfile
from vramplan.presets.quant_formats import FormatFamily, QuantFormat


class ComputeDtype(StrEnum):
    """Dtype of activations and of the tensors a format leaves unquantized."""

    BF16 = "bf16"
    """bfloat16 (2 bytes)."""
    FP16 = "fp16"
    """float16 (2 bytes)."""
    FP32 = "fp32"
    """float32 (4 bytes)."""

    @property
    def bytes(self) -> int:
        return 4 if self is ComputeDtype.FP32 else 2


class KvDtype(StrEnum):
    """Storage of the KV cache."""

    FP32 = "fp32"
    """4 bytes per value."""
    FP16 = "fp16"
    """2 bytes per value (the default of every engine)."""
    BF16 = "bf16"
    """2 bytes per value."""
    FP8 = "fp8"
    """1 byte per value (vLLM `kv_cache_dtype="fp8"`, e4m3/e5m2; per-tensor scales only)."""
    INT8 = "int8"
    """1 byte per value; per-group scales not counted (under 2% at group 64 in fp16)."""
    INT4 = "int4"
    """Half a byte per value; per-group scales not counted (HF QuantizedCache, quanto/HQQ)."""
    Q8_0 = "q8_0"
    """llama.cpp `--cache-type-k q8_0`: blocks of 32 int8 plus an fp16 scale, 34 bytes per 32."""
    Q4_0 = "q4_0"
    """llama.cpp `--cache-type-k q4_0`: 18 bytes per 32 values."""

    @property
    def bytes_per_value(self) -> Fraction:
        return _KV_BYTES[self]


_KV_BYTES = {
    KvDtype.FP32: Fraction(4), KvDtype.FP16: Fraction(2), KvDtype.BF16: Fraction(2),
    KvDtype.FP8: Fraction(1), KvDtype.INT8: Fraction(1), KvDtype.INT4: Fraction(1, 2),
    KvDtype.Q8_0: Fraction(34, 32), KvDtype.Q4_0: Fraction(18, 32),  # ggml-common.h block_q8_0/q4_0
}


class AttentionKernel(StrEnum):
    """How attention is computed during prefill."""

    FLASH = "flash"
    """FlashAttention / SDPA memory-efficient kernels: no score matrix is stored."""
    EAGER = "eager"
    """Explicit softmax(QK^T): a batch x heads x chunk x context score matrix in fp32."""


class InferencePart(StrEnum):
    """Parts of the inference estimate, in the order the page stacks them."""

    WEIGHTS = "weights"
    """Model weights in their storage format (GPU part only)."""
    KV_CACHE = "kv_cache"
    """Keys and values of every cached token."""
    ACTIVATIONS = "activations"
    """Live tensors of one block during prefill (and eager attention scores)."""
    LOGITS = "logits"
    """Output logits the engine keeps."""
    QUANT_TRANSIENT = "quant_transient"
    """Temporary 16-bit copy of the largest quantized matrix (bitsandbytes), beyond the
    activations."""
    ENGINE_BUFFERS = "engine_buffers"
    """Fixed engine tensors: LitGPT's causal mask and rotary tables."""


CONTEXT = NumberField("context", minimum=1, maximum=10_000_000, minimum_inclusive=True)
BATCH = NumberField("batch", minimum=1, maximum=1_000_000, minimum_inclusive=True)
PROMPT = NumberField("prompt", minimum=1, maximum=10_000_000, minimum_inclusive=True)
TENSOR_PARALLEL = NumberField("tensor_parallel", minimum=1, maximum=1024, minimum_inclusive=True)


@dataclass(frozen=True, slots=True)
class InferenceInputs:
    """One inference setup. Build it with `inference_inputs` (validated)."""

    arch: Architecture
    weights: QuantFormat
    context: int
    """Tokens cached per sequence: prompt plus generated tokens."""
    batch: int = 1
    """Concurrent sequences."""
    prompt: int | None = None
    """Prompt tokens processed in prefill (None: the whole context, the worst case)."""
    kv_dtype: KvDtype = KvDtype.FP16
    compute_dtype: ComputeDtype = ComputeDtype.BF16
    engine: Engine = Engine.GENERIC
    tensor_parallel: int = 1
    attention: AttentionKernel = AttentionKernel.FLASH
    model_name: str = ""

    @property
    def prompt_tokens(self) -> int:
        return self.context if self.prompt is None else self.prompt

    @property
    def profile(self) -> EngineProfile:
        return ENGINES[self.engine]


def inference_inputs(arch: Architecture, weights: QuantFormat, context: int, *, batch: int = 1,
                     prompt: int | None = None, kv_dtype: KvDtype = KvDtype.FP16,
                     compute_dtype: ComputeDtype = ComputeDtype.BF16,
                     engine: Engine = Engine.GENERIC, tensor_parallel: int = 1,
                     attention: AttentionKernel = AttentionKernel.FLASH,
                     model_name: str = "") -> InferenceInputs:
    """Validated inputs: counts in range, prompt within the context, a GGUF file only on
    llama.cpp and llama.cpp only with GGUF."""
    CONTEXT.check_int(context)
    BATCH.check_int(batch)
    TENSOR_PARALLEL.check_int(tensor_parallel)
    if prompt is not None:
        PROMPT.check_int(prompt)
        if prompt > context:
            raise OutOfRange("prompt", str(prompt))
    is_gguf = weights.family is FormatFamily.GGUF
    if is_gguf != (engine is Engine.LLAMA_CPP) and engine is not Engine.GENERIC:
        raise ConflictingOptions("weights", "engine", weights.name)
    if is_gguf and engine is Engine.GENERIC:
        engine = Engine.LLAMA_CPP
    if kv_dtype in (KvDtype.Q8_0, KvDtype.Q4_0) and engine is not Engine.LLAMA_CPP:
        raise ConflictingOptions("kv_dtype", "engine", kv_dtype.value)
    return InferenceInputs(arch, weights, context, batch, prompt, kv_dtype, compute_dtype, engine,
                           tensor_parallel, attention, model_name)


@dataclass(frozen=True, slots=True)
class InferenceItem:
    part: InferencePart
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

    def bytes_of(self, part: InferencePart) -> int:
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

    def usable_bytes(self, gpu: Gpu) -> int:
        """What this engine lets the run use on `gpu`: the card's capacity, times the engine's
        utilization share when it has one."""
        share = self.engine_reserve_share
        return gpu.capacity_bytes if share is None else int(gpu.capacity_bytes * share)

    def fits(self, gpu: Gpu) -> bool:
        return self.device_bytes <= self.usable_bytes(gpu)


# --- the parts ----------------------------------------------------------------------------------

def estimate_inference(inputs: InferenceInputs) -> InferenceEstimate:
    """The per-GPU memory of `inputs`."""
    profile = inputs.profile
    arch = _as_loaded(inputs.arch, profile)
    layout = weights_layout(arch, inputs.weights, _stored_bytes(inputs), profile.quantizes_head)
    tp = inputs.tensor_parallel
    prefill = _activations_bytes(arch, inputs)
    transient = _quant_transient_bytes(layout, inputs) // tp
    items = (
        InferenceItem(InferencePart.WEIGHTS, _weights_per_gpu(layout, tp)),
        InferenceItem(InferencePart.KV_CACHE, kv_cache_bytes(arch, inputs)),
        InferenceItem(InferencePart.ACTIVATIONS, prefill),
        InferenceItem(InferencePart.LOGITS, _logits_bytes(arch, inputs)),
        InferenceItem(InferencePart.QUANT_TRANSIENT, max(0, transient - prefill)),
        InferenceItem(InferencePart.ENGINE_BUFFERS, _engine_buffer_bytes(arch, inputs)),
    )
    return InferenceEstimate(inputs, layout, items, kv_bytes_per_token(arch, inputs))


def _as_loaded(arch: Architecture, profile: EngineProfile) -> Architecture:
    """The architecture as the engine builds it (LitGPT unties the head)."""
    if profile.separate_head and arch.tied_embeddings:
        return dataclasses.replace(arch, tied_embeddings=False)
    return arch


def _stored_bytes(inputs: InferenceInputs) -> int:
    """Bytes of a weight the format leaves unquantized: the compute dtype."""
    return inputs.compute_dtype.bytes


def _weights_per_gpu(layout: WeightsLayout, tp: int) -> int:
    """Tensor parallelism splits the matrices, the head and the embedding (vocabulary-parallel)
    across GPUs and replicates norms and biases (Megatron-LM, Shoeybi et al. 2019,
    arXiv:1909.08053; vLLM VocabParallelEmbedding)."""
    split = sum(layout.bytes_of(group) for group in
                (WeightGroup.LINEARS, WeightGroup.HEAD, WeightGroup.EMBEDDING))
    return -(-split // tp) + layout.bytes_of(WeightGroup.OTHER)


def _kv_heads_per_gpu(arch: Architecture, inputs: InferenceInputs) -> int:
    heads = arch.n_heads if inputs.profile.kv_expands_gqa and arch.n_kv_heads > 1 else \
        arch.n_kv_heads
    # Fewer KV heads than GPUs: each GPU keeps one replica (vLLM replicates KV heads).
    return max(1, heads // inputs.tensor_parallel)


def kv_bytes_per_token(arch: Architecture, inputs: InferenceInputs) -> int:
    """KV bytes of one token of one sequence over all layers, per GPU (sliding layers included:
    before the window fills they grow too)."""
    values = 2 * arch.n_layers * _kv_heads_per_gpu(arch, inputs) * arch.head_dim
    return _ceil_fraction(values * inputs.kv_dtype.bytes_per_value)


def kv_cache_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """2 x layers x kv_heads x head_dim x bytes x batch x cached tokens, per GPU; sliding-window
    layers cache min(context, window) tokens when the engine supports it."""
    per_layer_token = 2 * _kv_heads_per_gpu(arch, inputs) * arch.head_dim
    window = arch.sliding_window
    sliding = arch.sliding_window_layers if window and inputs.profile.kv_sliding_window else 0
    full = arch.n_layers - sliding
    tokens = full * inputs.context + sliding * min(inputs.context, window or inputs.context)
    values = per_layer_token * tokens * inputs.batch
    return _ceil_fraction(values * inputs.kv_dtype.bytes_per_value)


def _chunk(inputs: InferenceInputs) -> int:
    chunk = inputs.profile.prefill_chunk
    prompt = inputs.prompt_tokens
    return prompt if chunk is None else min(prompt, chunk)


def _activations_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """Live tensors of one block during prefill: the larger of the attention phase (residual,
    normed input, q, k, v, attention output) and the MLP phase (residual, normed input and the
    MLP intermediates: gate, up and their product, or up and its activation), for batch x chunk
    tokens, split over tensor-parallel GPUs except the residual stream; plus the fp32 scores of an
    eager attention kernel."""
    tp = inputs.tensor_parallel
    h = arch.hidden_size
    attention = 2 * h + (2 * arch.q_dim + 2 * arch.kv_dim) // tp
    width = arch.expert_intermediate_size * (arch.experts_per_token + arch.n_shared_experts)
    mlp = 2 * h + (3 if arch.mlp is MlpKind.GATED else 2) * width // tp
    act_bytes = 4 if inputs.profile.activations_fp32 else inputs.compute_dtype.bytes
    tokens = inputs.batch * _chunk(inputs)
    working = tokens * max(attention, mlp) * act_bytes
    if inputs.attention is AttentionKernel.EAGER:
        heads = max(1, arch.n_heads // tp)
        working += inputs.batch * heads * _chunk(inputs) * inputs.context * 4
    return working


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
      from fp16 and computes in bf16): 2 or 4 bytes per weight.
    - 4-bit, loading: the 16-bit weight on the GPU (2 bytes) and its new packed copy.
    - int8, loading: an fp16 copy (2 bytes) plus `int8_double_quant`'s row- and column-major
      int8 copies (1 + 1 bytes).
    """
    n = layout.largest_quantized_linear
    family = inputs.weights.family
    if not n:
        return 0
    if family is FormatFamily.BNB_INT8:
        return 4 * n
    load = 2 * n + (n + 1) // 2 + 4 * (-(-n // 64))
    casts = inputs.profile.bnb_quant_dtype_fp16 and inputs.compute_dtype is not ComputeDtype.FP16
    prefill = (4 if casts else 2) * n if inputs.prompt_tokens > 1 else 0
    return max(load, prefill)


def _engine_buffer_bytes(arch: Architecture, inputs: InferenceInputs) -> int:
    """LitGPT's bool causal mask (context^2 bytes) and its fp32 cos/sin tables (2 x context x
    rotary dims x 4 bytes)."""
    if not inputs.profile.mask_cache:
        return 0
    return inputs.context ** 2 + 2 * inputs.context * arch.rotary_dim * 4


def _ceil_fraction(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


# --- inverse ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class InferenceLimits:
    """The largest setups that fit one GPU model (per GPU, with the CUDA context and the engine's
    cap)."""

    gpu: Gpu
    max_context: int
    """Longest context for the given batch (0: not even one token; capped at the model's
    max_position_embeddings)."""
    max_batch: int
    """Most concurrent sequences at the given context (0: not even one)."""
    context_cap: int


def _fits_with(inputs: InferenceInputs, gpu: Gpu, context: int, batch: int,
               prompt: int | None) -> bool:
    changed = dataclasses.replace(inputs, context=context, batch=batch, prompt=prompt)
    return estimate_inference(changed).fits(gpu)


def _largest(fits: Callable[[int], bool], high: int) -> int:
    """Largest k in [1, high] with fits(k), assuming monotonicity; 0 if none."""
    if not fits(1):
        return 0
    low = 1
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


MAX_BATCH_SEARCH = 1_000_000
"""Upper end of the concurrent-sequence search."""


def inference_limits(inputs: InferenceInputs, gpu: Gpu) -> InferenceLimits:
    """Longest context at `inputs.batch` and most sequences at `inputs.context` that fit `gpu`
    (memory grows with both, so a bisection finds the edge). The prompt follows the context when it
    was left to default; a fixed prompt longer than the context searched is cut to it."""
    cap = inputs.arch.max_position_embeddings

    def with_context(context: int) -> bool:
        prompt = None if inputs.prompt is None else min(inputs.prompt, context)
        return _fits_with(inputs, gpu, context, inputs.batch, prompt)

    def with_batch(batch: int) -> bool:
        return _fits_with(inputs, gpu, inputs.context, batch, inputs.prompt)

    return InferenceLimits(gpu, _largest(with_context, cap), _largest(with_batch, MAX_BATCH_SEARCH),
                           cap)


def resolve_engine(name: str) -> Engine:
    try:
        return Engine(name.strip().lower())
    except ValueError:
        raise UnknownName("engine", name, [e.value for e in Engine]) from None


def resolve_kv_dtype(name: str) -> KvDtype:
    try:
        return KvDtype(name.strip().lower())
    except ValueError:
        raise UnknownName("kv_dtype", name, [k.value for k in KvDtype]) from None


def resolve_compute_dtype(name: str) -> ComputeDtype:
    try:
        return ComputeDtype(name.strip().lower())
    except ValueError:
        raise UnknownName("dtype", name, [d.value for d in ComputeDtype]) from None


# --- measured cases -----------------------------------------------------------------------------

UNPUBLISHED_PROMPT_TOKENS = 8
"""Prompt length assumed when a measured case does not publish it: the published runs used short
prompts ('Hello, my name is', 'What food do llamas eat?'), 5 to 8 tokens with their tokenizers."""

_CASE_DTYPES = {"bf16-true": ComputeDtype.BF16, "mixed": ComputeDtype.BF16,
                "fp16-true": ComputeDtype.FP16, "16-true": ComputeDtype.FP16,
                "fp32": ComputeDtype.FP32, "amp": ComputeDtype.FP32}
_CASE_ENGINES = {"litgpt": Engine.LITGPT, "hf": Engine.HF, "vllm": Engine.VLLM,
                 "llama.cpp": Engine.LLAMA_CPP, "generic": Engine.GENERIC}


def estimate_inference_case(model: str, precision: str, quant: str, *, batch: int,
                            seq_len: int | None, new_tokens: int | None, framework: str = "",
                            gpus: int = 1, attention: str = "") -> InferenceEstimate:
    """Estimate one `method=inference` row of a cases file (columns as in docs/cases-format.md):
    `seq_len` is the prompt length (UNPUBLISHED_PROMPT_TOKENS when empty), the cache holds prompt
    plus `new_tokens`, the KV cache and activations are in the precision's dtype, `quant` picks the
    weight format (`none` keeps the precision's dtype), `gpus` is the tensor-parallel degree.
    Compare `allocated_bytes` with metric `allocated`/`reserved`, `device_bytes` with `device`."""
    from vramplan.presets.models import architecture_of, find_model
    from vramplan.presets.quant_formats import find_format

    if precision not in _CASE_DTYPES:
        raise UnknownName("precision", precision, list(_CASE_DTYPES))
    dtype = _CASE_DTYPES[precision]
    weights = find_format(dtype.value if quant in ("", "none") else quant)
    engine = _CASE_ENGINES.get(framework or "generic", Engine.GENERIC)
    prompt = seq_len or UNPUBLISHED_PROMPT_TOKENS
    kv = {ComputeDtype.FP32: KvDtype.FP32, ComputeDtype.BF16: KvDtype.BF16}.get(dtype, KvDtype.FP16)
    kernel = AttentionKernel.EAGER if attention == "eager" else AttentionKernel.FLASH
    return estimate_inference(inference_inputs(
        architecture_of(find_model(model)), weights, context=prompt + (new_tokens or 0),
        batch=batch, prompt=prompt, kv_dtype=kv, compute_dtype=dtype, engine=engine,
        tensor_parallel=gpus, attention=kernel, model_name=model))


# --- verdicts -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class InferenceVerdict:
    """How one estimate compares with one GPU model (per GPU of a tensor-parallel group)."""

    gpu: Gpu
    required_bytes: int
    """The device total (allocated peak plus CUDA context)."""
    usable_bytes: int
    """The card's capacity, or the engine's share of it (vLLM gpu_memory_utilization)."""
    limits: InferenceLimits | None = None

    @property
    def fits(self) -> bool:
        return self.required_bytes <= self.usable_bytes

    @property
    def headroom_bytes(self) -> int:
        return self.usable_bytes - self.required_bytes


def inference_verdicts(estimate: InferenceEstimate, gpus: tuple[Gpu, ...],
                       with_limits: bool = False) -> tuple[InferenceVerdict, ...]:
    """One verdict per GPU; with `with_limits`, also the longest context and most sequences."""
    return tuple(
        InferenceVerdict(gpu, estimate.device_bytes, estimate.usable_bytes(gpu),
                         inference_limits(estimate.inputs, gpu) if with_limits else None)
        for gpu in gpus)
