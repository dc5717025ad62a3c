"""One error shape for every 4xx: `{"error": {"code", "field", "value", "message", "lang"}}`.

Our own `VramplanError`s, FastAPI's request validation errors and Starlette's 404/405 all become a
`VramplanError`, whose message comes from the catalogue in the requested language.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from vramplan.errors import (
    MissingValue,
    VramplanError,
)
from vramplan.i18n import Lang

HTTP_UNPROCESSABLE = 422


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
        super().__init__("http_method", method)


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


def from_validation(errors: Sequence[Any]) -> VramplanError:
    """The first of pydantic's errors (FastAPI's `RequestValidationError.errors()`) as ours: the
    routes read queries and bodies through the request vocabulary, so only a value of the wrong
    kind in a path or a query reaches this."""
    first = errors[0] if errors else {}
    location = [str(part) for part in first.get("loc", ())] or ["request"]
    field = location[-1]
    if first.get("type") == "missing":
        return MissingValue(field)
    return VramplanError(field, _shown(first.get("input")))


def _shown(value: object) -> str:
    """A received value as text, at most `EXCERPT_CHARACTERS` long."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return text[:EXCERPT_CHARACTERS] + ("…" if len(text) > EXCERPT_CHARACTERS else "")


EXCERPT_CHARACTERS = 80
"""An error quotes at most this much of what it received."""
