"""One inference setup, as typed, validated data: the weights' format, the context and batch, the
KV cache's dtype, the engine and its tensor parallelism."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.bounds import BATCH, CONTEXT, PROMPT, TENSOR_PARALLEL
from vramplan.errors import ConflictingOptions, OutOfRange, UnknownName
from vramplan.model.architecture import Architecture
from vramplan.presets.inference_engines import ENGINES, EngineProfile
from vramplan.presets.quant_formats import FormatFamily, QuantFormat
from vramplan.vocab import Attention, ComputeDtype, Engine, KvDtype


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
    attention: Attention = Attention.SDPA
    """`eager` keeps the score matrix (fp32, batch x heads x chunk x context) during prefill;
    `sdpa` and `flash` run fused kernels that keep none."""
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
                     attention: Attention = Attention.SDPA,
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
