"""`/api/v1/lora`: LoRA's trainable parameters (exact), share of the model and adapter file, the
object `vramplan lora --json` prints (docs/lora.md)."""

from __future__ import annotations

from vramplan.requests.answers import lora_answer
from vramplan.requests.vocabulary import LORA
from vramplan.shapes import LoraOut
from vramplan.web.api.common import calculator_router

router = calculator_router(
    "/lora", LORA, lora_answer, LoraOut,
    get_doc="LoRA parameters, from query-string text (`lora_targets=q,v`).",
    post_doc="LoRA parameters from a JSON body (`lora_targets` a list of names).")
