"""Raw values (CLI options, a query string, a web form, a JSON body, Python keywords) to the typed
values of a form's fields.

Text sources give strings, read as users type them; typed sources (JSON, Python) give numbers,
booleans and lists, read without a round trip through text. An empty text field or a JSON null is
a field not given: its default applies. A name the form does not know, or a field given twice
(under its name and an alias), is an error that names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from vramplan.bounds import TOKENS
from vramplan.errors import ConflictingOptions, MissingValue, UnknownField, VramplanError
from vramplan.requests.fields import Field
from vramplan.requests.vocabulary import Form

T = TypeVar("T")


@dataclass(frozen=True)
class Inputs:
    """A form's fields as typed values: only the fields given are in `values`."""

    form: Form
    values: Mapping[str, Any]

    def given(self, field: Field[Any]) -> bool:
        return field.name in self.values

    def get(self, field: Field[T]) -> T | None:
        """The value given, else the field's default (None when it has none)."""
        value: T | None = self.values.get(field.name, field.default)
        return value

    def require(self, field: Field[T]) -> T:
        """The value given or defaulted, else a `MissingValue` error naming the field."""
        value = self.get(field)
        if value is None:
            raise MissingValue(field.name)
        return value

    def with_values(self, **values: Any) -> Inputs:
        """The same request with more fields given (typed values)."""
        return Inputs(self.form, {**self.values, **values})


def read(form: Form, raw: Mapping[str, object], *, text: bool) -> Inputs:
    """The typed request, or the first bad field's error raised (the CLI and the API answer one
    error at a time)."""
    request, errors = read_all(form, raw, text=text)
    if errors:
        raise next(iter(errors.values()))
    return request


def read_all(form: Form, raw: Mapping[str, object], *,
             text: bool) -> tuple[Inputs, dict[str, VramplanError]]:
    """Every good field's value, and one error per bad field (the page shows them all)."""
    values: dict[str, Any] = {}
    errors: dict[str, VramplanError] = {}
    given_as: dict[str, str] = {}
    for name, value in raw.items():
        field = form.field(name)
        if field is None:
            errors[name] = UnknownField(name, form.names)
            continue
        if _empty(value):
            continue
        if field.name in given_as:
            errors[field.name] = ConflictingOptions(name, given_as[field.name])
            continue
        given_as[field.name] = name
        try:
            values[field.name] = (field.read_text(str(value)) if text and isinstance(value, str)
                                  else field.read_value(value))
        except VramplanError as error:
            errors[field.name] = error
    return Inputs(form, values), errors


def _empty(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


class TooManyTokens(VramplanError):
    """More tokens at once than `bounds.TOKENS` allows."""

    key = "error.too_many_tokens"


def check_tokens(inputs: Inputs, batch: Field[int], length: Field[int]) -> None:
    """`batch` x `length` tokens within `bounds.TOKENS` (named by the longer field)."""
    count = inputs.require(batch) * inputs.require(length)
    if count > TOKENS.maximum:
        raise TooManyTokens(length.name, str(inputs.require(length)), batch=batch.name,
                            tokens=f"{count:,}", maximum=f"{int(TOKENS.maximum):,}")
