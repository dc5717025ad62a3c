"""`/api/v1/inference`: inference VRAM (weights, KV cache, prefill, CUDA context) and GPU
verdicts, the object `vramplan infer --json` prints (docs/inference.md)."""

from __future__ import annotations

from vramplan.requests.answers import inference_answer
from vramplan.requests.vocabulary import INFERENCE
from vramplan.shapes import InferenceOut
from vramplan.web.api.common import calculator_router

router = calculator_router(
    "/inference", INFERENCE, inference_answer, InferenceOut,
    get_doc="Inference VRAM and GPU verdicts, from query-string text.",
    post_doc="Inference VRAM from a JSON body (JSON integers and booleans, known fields).")
