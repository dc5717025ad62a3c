"""The inference request: a model, its weights' format, the context and batch, the KV cache's and
activations' dtypes, the engine, tensor parallelism, the GPUs to compare with."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.errors import VramplanError
from vramplan.inference.setup import InferenceInputs, inference_inputs
from vramplan.presets.gpus import COMMON_GPUS, Gpu, find_gpu
from vramplan.presets.quant_formats import find_format
from vramplan.requests.models import ModelChoice, model_choice, tokens_for
from vramplan.requests.reading import Inputs, check_tokens
from vramplan.requests.vocabulary import (
    ATTENTION,
    BATCH,
    CONTEXT,
    DTYPE,
    ENGINE,
    GPU,
    IMAGES,
    KV_DTYPE,
    LIMITS,
    MTP,
    PROMPT,
    TENSOR_PARALLEL,
    WEIGHTS,
)
from vramplan.vocab import Engine


class SplitsKvHeads(VramplanError):
    """A tensor-parallel size that splits neither the attention heads nor whole KV heads."""

    key = "error.tp_heads"


@dataclass(frozen=True, slots=True)
class InferenceRequest:
    inputs: InferenceInputs
    model: ModelChoice
    gpus: tuple[Gpu, ...]
    limits: bool
    """Also the longest context and the largest batch that fit each GPU."""

    @property
    def beyond_context(self) -> bool:
        """The context exceeds the model's `max_position_embeddings`: the model was not trained
        for it (the estimate still counts the memory)."""
        return self.inputs.context > self.model.arch.max_position_embeddings


def inference_request(inputs: Inputs) -> InferenceRequest:
    """The inputs, checked. `attention`: eager keeps the score matrix; sdpa and flash run a fused
    kernel that does not. `tensor_parallel` must divide the attention heads (vLLM:
    `ModelConfig.verify_with_parallel_config`, "Total number of attention heads must be
    divisible by tensor parallel size")."""
    model = model_choice(inputs)
    check_tokens(inputs, BATCH, CONTEXT)
    context = tokens_for(inputs, CONTEXT, model)
    tp = inputs.require(TENSOR_PARALLEL)
    if model.arch.n_heads % tp:
        raise SplitsKvHeads(TENSOR_PARALLEL.name, str(tp), heads=model.arch.n_heads)
    engine = inputs.get(ENGINE)
    setup = inference_inputs(
        model.arch, find_format(inputs.require(WEIGHTS)), context,
        batch=inputs.require(BATCH), prompt=inputs.get(PROMPT),
        kv_dtype=inputs.require(KV_DTYPE), compute_dtype=inputs.require(DTYPE),
        engine=Engine.GENERIC if engine is None else engine,
        tensor_parallel=tp, attention=inputs.require(ATTENTION), model_name=model.name,
        images=inputs.require(IMAGES), mtp=inputs.require(MTP))
    gpu = inputs.get(GPU)
    limits: bool = inputs.require(LIMITS)
    return InferenceRequest(setup, model, (find_gpu(gpu),) if gpu is not None else COMMON_GPUS,
                            limits)
