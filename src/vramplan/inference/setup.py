"""One inference setup, as typed, validated data: the weights' format, the context and batch, the
KV cache's dtype, the engine and its tensor parallelism."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from vramplan.bounds import NumberField
from vramplan.errors import ConflictingOptions, OutOfRange, UnknownName
from vramplan.model.architecture import Architecture
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


CONTEXT = NumberField("context", minimum=1, maximum=10_000_000, minimum_inclusive=True)
BATCH = NumberField("batch", minimum=1, maximum=1_000_000, minimum_inclusive=True)
PROMPT = NumberField("prompt", minimum=1, maximum=10_000_000, minimum_inclusive=True)
TENSOR_PARALLEL = NumberField("tensor_parallel", minimum=1, maximum=1024, minimum_inclusive=True)
IMAGES = NumberField("images", minimum=0, maximum=10_000, minimum_inclusive=True)


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
    images: int = 0
    """Images per sequence (vision-language models): each adds the tower's tokens per image to
    the context and the prompt."""
    mtp: bool = False
    """The multi-token-prediction modules are loaded (speculative decoding with them, vLLM's and
    SGLang's MTP drafts): their weights and their layers' KV cache."""

    @property
    def image_tokens(self) -> int:
        """Tokens the images add to each sequence."""
        vision = self.arch.vision
        return self.images * vision.tokens_per_image if vision is not None else 0

    @property
    def cached_tokens(self) -> int:
        """Tokens cached per sequence: the context and the image tokens."""
        return self.context + self.image_tokens

    @property
    def prompt_tokens(self) -> int:
        """Tokens of the prefill: the prompt (the whole context by default) and the images."""
        return (self.context if self.prompt is None else self.prompt) + self.image_tokens

    @property
    def profile(self) -> EngineProfile:
        return ENGINES[self.engine]


def inference_inputs(arch: Architecture, weights: QuantFormat, context: int, *, batch: int = 1,
                     prompt: int | None = None, kv_dtype: KvDtype = KvDtype.FP16,
                     compute_dtype: ComputeDtype = ComputeDtype.BF16,
                     engine: Engine = Engine.GENERIC, tensor_parallel: int = 1,
                     attention: AttentionKernel = AttentionKernel.FLASH,
                     model_name: str = "", images: int = 0, mtp: bool = False
                     ) -> InferenceInputs:
    """Validated inputs: counts in range, prompt within the context, a GGUF file only on
    llama.cpp and llama.cpp only with GGUF, images only for a model with a vision tower, MTP
    modules only for a checkpoint that has some."""
    CONTEXT.check_int(context)
    IMAGES.check_int(images)
    if images and arch.vision is None:
        raise ConflictingOptions("images", "model", str(images))
    if mtp and not arch.mtp_layers:
        raise ConflictingOptions("mtp", "model", "true")
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
                           tensor_parallel, attention, model_name, images, mtp)


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
