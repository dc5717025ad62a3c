"""Small helpers shared by tests: the JSON answers of the calculators for query-string text, and
the check of an answer against its shape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vramplan.requests.answers import inference_answer, lora_answer
from vramplan.requests.reading import read
from vramplan.requests.vocabulary import INFERENCE, LORA
from vramplan.shapes import InferenceOut, LoraOut


def inference_json(query: Mapping[str, str]) -> InferenceOut:
    """What `/api/v1/inference` answers for `query` (text, as a URL carries it)."""
    return inference_answer(read(INFERENCE, query, text=True))


def lora_json(query: Mapping[str, str]) -> LoraOut:
    """What `/api/v1/lora` answers for `query`."""
    return lora_answer(read(LORA, query, text=True))


def conform(shape: type[object], payload: Any) -> None:
    """`payload` is exactly `shape` of `vramplan.shapes`, as the API's document says: each key
    declared and no other, in the declared order, each value of its declared type (strict: an
    integer where a float is declared, as `16` for `16.0`, is refused too, since its JSON differs)
    and an enum's value where one is declared. Raises pydantic's ValidationError, or
    AssertionError for the order and the floats."""
    from vramplan.web.api.schemas import adapter

    checked = adapter(shape).validate_python(payload, strict=True)
    assert json.dumps(checked) == json.dumps(payload), f"{shape.__name__}: order or int/float"
