"""The project's exceptions. Each renders a one-line message, in the user's language, that names the
field, the value and what is accepted.

A field is named by its canonical API/query name (`params`, `bytes_per_param`). Each interface
renders the message with the labels its users know (`--params` on the CLI) through `label`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vramplan.i18n import Lang, translate
from vramplan.text import shown


class VramplanError(Exception):
    """A bad value for one named field (or a bad combination of fields)."""

    key: str = "error.invalid"

    def __init__(self, field: str, value: str, **params: object) -> None:
        self.field = field
        self.value = shown(value)
        """The value received, as a message quotes it (printable, at most an excerpt)."""
        self.params = params
        super().__init__(self.message(Lang.EN))

    def message(self, lang: Lang, label: Callable[[str], str] | None = None) -> str:
        """The one-line message in `lang`, ending with what the field accepts (the request
        vocabulary's hint); `label` turns a field name into the interface's own (`params` ->
        `--params` on the CLI)."""
        label = label or (lambda field: field)
        params: dict[str, object] = {**self.params, "value": self.value}
        params["field"] = label(self.field)
        other = params.get("other")
        if isinstance(other, str):
            params["other"] = label(other)
        if "accepted" not in self.params:
            params["accepted"] = _vocabulary_hint(self.field, lang)
        return translate(self.key, lang, **params)


def _vocabulary_hint(field: str, lang: Lang) -> str:
    """What `field` accepts, from the request vocabulary (imported here, not at the top: the
    vocabulary's fields raise these errors)."""
    from vramplan.requests.vocabulary import hint

    return hint(field, lang)


class NotANumber(VramplanError):
    key = "error.not_a_number"


class NotFinite(VramplanError):
    key = "error.not_finite"


class OutOfRange(VramplanError):
    key = "error.out_of_range"


class NotAnInteger(VramplanError):
    key = "error.not_an_integer"


class UnknownName(VramplanError):
    """A name that no catalogue entry matches; the message lists what is accepted."""

    key = "error.unknown_name"

    def __init__(self, field: str, value: str, choices: Sequence[str]) -> None:
        self.choices = tuple(choices)
        super().__init__(field, value, choices=", ".join(self.choices))


class ConflictingOptions(VramplanError):
    """Fields that cannot be given together. With a `reason`, the message is
    `error.conflict.<reason>`, which says why and what to give instead; without one, the two
    exclude each other ("give one or the other")."""

    key = "error.conflicting"

    def __init__(self, field: str, other: str, value: str = "", reason: str = "",
                 **params: object) -> None:
        self.other = other
        if reason:
            self.key = f"error.conflict.{reason}"
        super().__init__(field, value, other=other, **params)


class MissingValue(VramplanError):
    """A required field left empty."""

    key = "error.missing"

    def __init__(self, field: str) -> None:
        super().__init__(field, "")


class UnknownField(VramplanError):
    """A field (option, query parameter, body key, column) the request does not know."""

    key = "error.unknown_field"

    def __init__(self, field: str, choices: Sequence[str]) -> None:
        super().__init__(field, field, choices=", ".join(choices))


class MissingExtra(VramplanError):
    """A command whose optional packages are not installed: the message names the extra to
    install (`pip install '.[web]'`)."""

    key = "error.missing_extra"

    def __init__(self, extra: str, missing: Sequence[str]) -> None:
        super().__init__("extra", extra, missing=", ".join(missing))


def missing_packages(names: Sequence[str]) -> list[str]:
    """Those of `names` that cannot be imported (found without importing them)."""
    from importlib.util import find_spec

    return [name for name in names if find_spec(name) is None]
