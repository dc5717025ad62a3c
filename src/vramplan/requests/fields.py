"""The request vocabulary's building blocks: one description per field (name, type, default,
range or choices, aliases, help), read the same way from every interface.

A field reads a value from one of two sources:
- text, as a user types it on the command line, in a query string or a web form (`7,5` = 7.5,
  `true`/`false` for flags, `q,v` for a list);
- a typed value, as a JSON body or the Python API gives it (numbers are numbers, flags are
  booleans, lists are lists): no round trip through text.
Either way the value is checked against the same range or choices, and a bad one raises a
`VramplanError` naming the field. `accepted(lang)` says what is accepted, generated from the
range or the choices, so that a hint is never written twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from vramplan.bounds import NumberField
from vramplan.errors import NotAnInteger, NotANumber, NotFinite, UnknownName, VramplanError
from vramplan.i18n import Lang, translate
from vramplan.units import format_number
from vramplan.vocab import OTHER_SPELLINGS, member_named

T = TypeVar("T")
E = TypeVar("E", bound=StrEnum)


class NotAFlag(VramplanError):
    """A boolean given as anything but a recognised yes or no."""

    key = "error.not_a_flag"


class NotText(VramplanError):
    """A JSON value of the wrong type where a name or a list of names is expected."""

    key = "error.not_text"


@dataclass(frozen=True)
class Field(Generic[T]):
    """One input of a request. Subclasses say how text and typed values become `T`."""

    name: str
    """The name in every interface: the case column, the API parameter, the Python keyword;
    the CLI option is `--name-with-dashes`."""
    default: T | None = None
    """The value when the field is not given (None: no value, or one the request computes)."""
    aliases: tuple[str, ...] = ()
    """Other names the field answers to (`tp` for `tensor_parallel`)."""
    metavar: str = "VALUE"
    """The placeholder shown in the CLI's help."""
    help_name: str = field(default="", kw_only=True)
    """The message of the field's description when two forms describe one name apart (`lora_r`
    in training, whose default is the framework's, and in the LoRA calculator); empty: the
    name's."""

    @property
    def help_key(self) -> str:
        """Message key of the field's one-sentence description."""
        return f"field.{self.help_name or self.name}"

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def read_text(self, raw: str) -> T:
        raise NotImplementedError

    def read_value(self, value: object) -> T:
        """A typed value (JSON body, Python API): numbers are numbers, flags booleans; a name is
        a string, read as text."""
        if isinstance(value, str):
            return self.read_text(value)
        raise NotText(self.name, _show(value))

    def accepted(self, lang: Lang) -> str:
        """What the field accepts, in `lang` (the hint ending an error message)."""
        raise NotImplementedError

    def json_schema(self) -> dict[str, Any]:
        """The schema of a typed value (JSON bodies)."""
        return {"type": "string"}

    def default_text(self) -> str | None:
        """The default as a user would type it (None: no default to show)."""
        return None if self.default is None else str(self.default)


def _show(value: object) -> str:
    """A received value as it was written, for messages (JSON for typed values)."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True)
class IntField(Field[int]):
    """A whole number within `bounds`: `2` as text (`2.5` and `2.0` are refused), a JSON number
    with no fraction (`2` or `2.0`) as a typed value; a string is not a typed number."""

    bounds: NumberField = field(kw_only=True)

    def read_text(self, raw: str) -> int:
        return self.bounds.parse_int(raw)

    def read_value(self, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise NotAnInteger(self.name, _show(value))
        if isinstance(value, float):
            if not math.isfinite(value):
                raise NotFinite(self.name, _show(value))
            if not value.is_integer():
                raise NotAnInteger(self.name, _show(value))
            value = int(value)
        return self.bounds.check_int(value)

    def accepted(self, lang: Lang) -> str:
        return translate("accepted.whole", lang, what=translate(f"what.{self.name}", lang),
                         **_range(self.bounds, lang))

    def json_schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": int(self.bounds.minimum),
                "maximum": int(self.bounds.maximum)}


@dataclass(frozen=True)
class DecimalField(Field[float]):
    """A number within `bounds`; text may use `.` or `,` as the decimal mark."""

    bounds: NumberField = field(kw_only=True)
    examples: tuple[str, ...] = field(default=(), kw_only=True)
    """Typical values, shown in the hint (`7` or `7.5` billion parameters)."""

    def read_text(self, raw: str) -> float:
        return self.bounds.parse(raw)

    def read_value(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise NotANumber(self.name, _show(value))
        return self.bounds.check(float(value), _show(value))

    def accepted(self, lang: Lang) -> str:
        key = "accepted.decimal" if self.bounds.minimum_inclusive else "accepted.decimal_above"
        text = translate(key, lang, what=translate(f"what.{self.name}", lang),
                         **_range(self.bounds, lang))
        if self.examples:
            shown = [_example(example, lang) for example in self.examples]
            joined = translate("accepted.or", lang).join(shown)
            text += translate("accepted.example", lang, example=joined)
        return text

    def json_schema(self) -> dict[str, Any]:
        bound = "minimum" if self.bounds.minimum_inclusive else "exclusiveMinimum"
        return {"type": "number", bound: self.bounds.minimum, "maximum": self.bounds.maximum}


def _range(bounds: NumberField, lang: Lang) -> dict[str, str]:
    return {"minimum": format_number(bounds.minimum, lang.value, 2),
            "maximum": format_number(bounds.maximum, lang.value, 2)}


def _example(example: str, lang: Lang) -> str:
    return example.replace(".", ",") if lang is Lang.FR else example


@dataclass(frozen=True)
class ChoiceField(Field[E]):
    """One member of a string enum, by its value or another name of it (any case, `_` or `-`:
    `vramplan.vocab.member_named`); `excluded` members are not accepted here."""

    enum: type[E] = field(kw_only=True)
    excluded: frozenset[E] = field(default=frozenset(), kw_only=True)

    @property
    def choices(self) -> tuple[E, ...]:
        return tuple(member for member in self.enum if member not in self.excluded)

    def read_text(self, raw: str) -> E:
        """The member `raw` names: its value or another name of it
        (`vramplan.vocab.member_named`), in any case and with `_` or `-`."""
        member = member_named(self.enum, raw)
        if member is None or member in self.excluded:
            raise UnknownName(self.name, raw.strip(), [m.value for m in self.choices])
        return member

    def accepted(self, lang: Lang) -> str:
        return translate("accepted.one_of", lang,
                         choices=", ".join(member.value for member in self.choices))

    def json_schema(self) -> dict[str, Any]:
        others = [name for name, member in OTHER_SPELLINGS.get(self.enum, {}).items()
                  if member in self.choices]
        return {"type": "string",
                "enum": [*(m.value for m in self.choices), *others]}

    def default_text(self) -> str | None:
        return None if self.default is None else self.default.value


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class FlagField(Field[bool]):
    """A yes or no: `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`) as text, a JSON
    boolean as a typed value; anything else is refused, never read as false."""

    def read_text(self, raw: str) -> bool:
        text = raw.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise NotAFlag(self.name, raw.strip())

    def read_value(self, value: object) -> bool:
        if isinstance(value, bool):
            return value
        raise NotAFlag(self.name, _show(value))

    def accepted(self, lang: Lang) -> str:
        return translate("accepted.flag", lang)

    def json_schema(self) -> dict[str, Any]:
        return {"type": "boolean"}

    def default_text(self) -> str | None:
        return None if self.default is None else ("true" if self.default else "false")


@dataclass(frozen=True)
class NameField(Field[str]):
    """A name resolved later against a catalogue (a model, a GPU, a weight format, a path):
    read here as trimmed, non-empty text; `hint_key` says what is accepted."""

    hint_key: str = field(default="", kw_only=True)

    def read_text(self, raw: str) -> str:
        text = raw.strip()
        if not text:
            from vramplan.errors import MissingValue

            raise MissingValue(self.name)
        return text

    def accepted(self, lang: Lang) -> str:
        return translate(self.hint_key or f"accepted.{self.name}", lang)


@dataclass(frozen=True)
class ListField(Field[tuple[E, ...]]):
    """A non-empty list of members of `item`'s enum, without repeats: `q,v` or `q;v` as text,
    a JSON list of names (or one string) as a typed value."""

    item: ChoiceField[E] = field(kw_only=True)

    def read_text(self, raw: str) -> tuple[E, ...]:
        parts = raw.replace(";", ",").split(",")
        return self._members(parts, raw)


    def read_value(self, value: object) -> tuple[E, ...]:
        if isinstance(value, str):
            return self.read_text(value)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return self._members(list(value), ",".join(value))
        raise NotText(self.name, _show(value))

    def _members(self, parts: Sequence[str], raw: str) -> tuple[E, ...]:
        names = [part.strip() for part in parts]
        if not any(names) or (len(names) > 1 and not all(names)):
            raise EmptyListItem(self.name, raw.strip())
        members = tuple(self.item.read_text(name) for name in names)
        if len(set(members)) != len(members):
            raise RepeatedListItem(self.name, raw.strip())
        return members

    def accepted(self, lang: Lang) -> str:
        return translate("accepted.list_of", lang,
                         choices=", ".join(member.value for member in self.item.choices))

    def json_schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.json_schema(), "minItems": 1,
                "uniqueItems": True}

    def default_text(self) -> str | None:
        return None if self.default is None else ",".join(m.value for m in self.default)


class EmptyListItem(VramplanError):
    """`q,v,,` or an empty list."""

    key = "error.empty_list_item"


class RepeatedListItem(VramplanError):
    """`all,all`."""

    key = "error.repeated_list_item"


Reader = Callable[[object], Any]
