"""One error shape for every 4xx: `{"error": {"code", "field", "value", "message", "lang"}}`.

Our own `VramplanError`s, FastAPI's request validation errors and Starlette's 404/405 all become a
`VramplanError`, whose message comes from the catalogue in the requested language.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vramplan.errors import (
    MissingValue,
    VramplanError,
)
from vramplan.i18n import Lang
from vramplan.text import excerpt

if TYPE_CHECKING:
    from vramplan.shapes import ErrorOut

HTTP_UNPROCESSABLE = 422


class NotJson(VramplanError):
    """A request body that is not a JSON object."""

    key = "error.not_json"

    def __init__(self, value: str = "") -> None:
        super().__init__("body", value)


class BodyTooLarge(VramplanError):
    """A request body over the app's limit."""

    key = "error.body_too_large"
    status = 413

    def __init__(self, limit: int) -> None:
        super().__init__("body", "", limit=f"{limit // 1024} KiB")


class InternalError(VramplanError):
    """An error the server did not expect (logged there)."""

    key = "error.internal"
    status = 500

    def __init__(self) -> None:
        super().__init__("request", "")


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


def error_json(error: VramplanError, lang: Lang) -> ErrorOut:
    """The error shape (`vramplan.shapes.ErrorOut`): the value received is quoted as a short
    excerpt, and any text in it that is not valid Unicode is replaced."""
    return {
        "error": {
            "code": error.key.removeprefix("error."),
            "field": _clean(error.field),
            "value": _clean(error.value),
            "message": _clean(error.message(lang)),
            "lang": lang.value,
        }
    }


def _clean(text: str) -> str:
    """`text` with lone surrogates (`"\\ud800"` in a JSON string) replaced: UTF-8 cannot hold
    them."""
    return text.encode("utf-8", "replace").decode("utf-8")


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
    return excerpt(text)


