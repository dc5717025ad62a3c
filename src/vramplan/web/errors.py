"""One error shape for every 4xx: `{"error": {"code", "field", "value", "message", "lang"}}`.

Our own `VramplanError`s, FastAPI's request validation errors and Starlette's 404/405 all become a
`VramplanError`, whose message comes from the catalogue in the requested language.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vramplan.errors import (
    MissingValue,
    NotANumber,
    NotFinite,
    OutOfRange,
    UnknownName,
    VramplanError,
)
from vramplan.i18n import Lang
from vramplan.presets.optimizers import OptimizerPreset

HTTP_UNPROCESSABLE = 422


class UnknownField(VramplanError):
    """A body field or query parameter the API does not know."""

    key = "error.unknown_field"

    def __init__(self, field: str, choices: Sequence[str]) -> None:
        super().__init__(field, field, choices=", ".join(choices))


class NotJson(VramplanError):
    """A request body that is not a JSON object."""

    key = "error.not_json"

    def __init__(self, value: str = "") -> None:
        super().__init__("body", value)


class NotFound(VramplanError):
    key = "error.not_found"
    status = 404

    def __init__(self, path: str) -> None:
        super().__init__("path", path)


class MethodNotAllowed(VramplanError):
    key = "error.method_not_allowed"
    status = 405

    def __init__(self, method: str) -> None:
        super().__init__("method", method)


def status_of(error: VramplanError) -> int:
    status = getattr(error, "status", HTTP_UNPROCESSABLE)
    return int(status)


def error_json(error: VramplanError, lang: Lang) -> dict[str, Any]:
    """The error shape (`vramplan.web.schemas.ErrorOut`)."""
    return {
        "error": {
            "code": error.key.removeprefix("error."),
            "field": error.field,
            "value": error.value,
            "message": error.message(lang),
            "lang": lang.value,
        }
    }


_CHOICES = {"optimizer": [preset.value for preset in OptimizerPreset]}
_NUMBER_ERRORS = ("float_type", "float_parsing", "int_type", "int_parsing")
_RANGE_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")
_BY_KIND: dict[str, Callable[[str, str], VramplanError]] = {
    "missing": lambda field, value: MissingValue(field),
    "json_invalid": lambda field, value: NotJson(value),
    "finite_number": NotFinite,
    **{kind: NotANumber for kind in _NUMBER_ERRORS},
    **{kind: OutOfRange for kind in _RANGE_ERRORS},
}


def from_validation(errors: Sequence[Any], fields: Mapping[str, Sequence[str]]) -> VramplanError:
    """The first of pydantic's errors (FastAPI's `RequestValidationError.errors()`) as ours.

    `fields` maps a location (`body`, `query`) to the names it accepts, listed when an unknown
    name is sent.
    """
    first = errors[0]
    kind = str(first.get("type", ""))
    location = [str(part) for part in first.get("loc", ())] or ["body"]
    field = location[1] if len(location) > 1 else location[0]
    value = _shown(first.get("input"), in_body=location[0] == "body")
    if kind in _BY_KIND:
        return _BY_KIND[kind](field, value)
    if field == "body":
        return NotJson(value)
    if kind == "extra_forbidden":
        return UnknownField(field, fields.get(location[0], ()))
    if kind == "enum" and field in _CHOICES:
        return UnknownName(field, value, _CHOICES[field])
    return VramplanError(field, value)


def _shown(value: object, in_body: bool) -> str:
    """A received value as the user wrote it: query text as it is, body values as JSON (so the
    string `"7"` shows its quotes)."""
    if isinstance(value, str) and not in_body:
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
