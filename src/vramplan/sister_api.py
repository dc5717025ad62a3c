"""The sister calculators' request layer: query fields (strings, as a form or URL sends them) to the
JSON the CLI's `--json` prints. The JSON API routes and the pages call these; errors are
`VramplanError`s naming the query field.

Inference fields: model (required), weights (bf16), context (4096), prompt (= context), batch (1),
kv_dtype (fp16), dtype (bf16), engine (generic; llama.cpp for GGUF), tensor_parallel (1),
attention (flash), gpu (common cards), limits (`1` adds max_context and max_batch per GPU),
images (0), mtp (`1` loads the MTP modules).
LoRA fields: model (required), lora_r (16), lora_targets (q,v), dora, rslora (`1`/`true`/`on`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vramplan.inference.estimate import InferenceEstimate
    from vramplan.inference.limits import InferenceVerdict
    from vramplan.model.architecture import Architecture

_TRUE = frozenset({"1", "true", "on", "yes"})


def _flag(query: Mapping[str, str], name: str) -> bool:
    return query.get(name, "").strip().lower() in _TRUE


def _value(query: Mapping[str, str], name: str, default: str) -> str:
    raw = query.get(name, "")
    return raw if raw.strip() else default


def _model(query: Mapping[str, str]) -> tuple[str, Any]:
    from vramplan.errors import MissingValue
    from vramplan.model.resolve import resolve_model

    name = query.get("model", "").strip()
    if not name:
        raise MissingValue("model")
    resolved = resolve_model(name)
    return resolved.name, resolved.arch


def inference_payload(query: Mapping[str, str]) -> dict[str, Any]:
    """`vramplan infer --json` for these query fields."""
    from vramplan.serialize import inference_to_json

    name, arch = _model(query)
    return inference_to_json(*inference_request(query, arch, name))


def inference_request(query: Mapping[str, str], arch: Architecture,
                      model_name: str) -> tuple[InferenceEstimate, tuple[InferenceVerdict, ...]]:
    """The estimate and the GPU verdicts for the inference fields of `query` (text, defaults as
    listed above) and a model already resolved; the CLI calls it with its options' values."""
    from vramplan.inference.estimate import estimate_inference
    from vramplan.inference.limits import inference_verdicts
    from vramplan.inference.setup import (
        BATCH,
        CONTEXT,
        IMAGES,
        PROMPT,
        TENSOR_PARALLEL,
        AttentionKernel,
        inference_inputs,
        resolve_compute_dtype,
        resolve_engine,
        resolve_kv_dtype,
    )
    from vramplan.presets.gpus import COMMON_GPUS, find_gpu
    from vramplan.presets.quant_formats import find_format

    prompt = query.get("prompt", "").strip()
    engine = query.get("engine", "").strip()
    attention = _value(query, "attention", "flash").strip().lower()
    if attention not in ("flash", "eager"):
        from vramplan.errors import UnknownName

        raise UnknownName("attention", attention, ["flash", "eager"])
    inputs = inference_inputs(
        arch, find_format(_value(query, "weights", "bf16")),
        CONTEXT.parse_int(_value(query, "context", "4096")),
        batch=BATCH.parse_int(_value(query, "batch", "1")),
        prompt=PROMPT.parse_int(prompt) if prompt else None,
        kv_dtype=resolve_kv_dtype(_value(query, "kv_dtype", "fp16")),
        compute_dtype=resolve_compute_dtype(_value(query, "dtype", "bf16")),
        **({"engine": resolve_engine(engine)} if engine else {}),
        tensor_parallel=TENSOR_PARALLEL.parse_int(_value(query, "tensor_parallel", "1")),
        attention=AttentionKernel(attention), model_name=model_name,
        images=IMAGES.parse_int(_value(query, "images", "0")), mtp=_flag(query, "mtp"))
    gpu = query.get("gpu", "").strip()
    gpus = (find_gpu(gpu),) if gpu else COMMON_GPUS
    estimate = estimate_inference(inputs)
    return estimate, inference_verdicts(estimate, gpus, _flag(query, "limits"))


def lora_payload(query: Mapping[str, str]) -> dict[str, Any]:
    """`vramplan lora --json` for these query fields."""
    from vramplan.lora_calculator import estimate_lora, lora_inputs
    from vramplan.model.lora_targets import LORA_RANK, parse_lora_targets
    from vramplan.serialize import lora_to_json

    name, arch = _model(query)
    result = estimate_lora(lora_inputs(
        arch, LORA_RANK.parse_int(_value(query, "lora_r", "16")),
        parse_lora_targets(_value(query, "lora_targets", "q,v")),
        dora=_flag(query, "dora"), rslora=_flag(query, "rslora"), model_name=name))
    return lora_to_json(result)
