"""Small helpers shared by tests: the JSON answers of the calculators for query-string text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramplan.requests.answers import inference_answer, lora_answer
from vramplan.requests.reading import read
from vramplan.requests.vocabulary import INFERENCE, LORA


def inference_json(query: Mapping[str, str]) -> dict[str, Any]:
    """What `/api/v1/inference` answers for `query` (text, as a URL carries it)."""
    return inference_answer(read(INFERENCE, query, text=True))


def lora_json(query: Mapping[str, str]) -> dict[str, Any]:
    """What `/api/v1/lora` answers for `query`."""
    return lora_answer(read(LORA, query, text=True))
