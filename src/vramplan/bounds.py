"""Reading user numbers: `7.5` and `7,5` alike, never NaN, infinite or out of range.

Every interface (CLI, JSON API, web form) validates through these functions, so a value is accepted
or refused the same way everywhere, with the same message.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from vramplan.errors import NotAnInteger, NotANumber, NotFinite, OutOfRange

NUMBER_PATTERN = r"[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)(?:[eE][+-]?[0-9]+)?"
"""The numbers users may type, as a regular expression (for API schemas): a plain decimal number
with `.` or `,` as the decimal mark and ASCII digits; no thousands separators, no `_`. Python's
float() reads exactly these once `,` becomes `.` and the text holds only these characters, which
is how `parse_decimal` checks them (no regex to compile on the CLI's start path)."""
_NUMBER_CHARACTERS = frozenset("0123456789+-.,eE")
_NON_FINITE_WORDS = frozenset({"nan", "inf", "infinity"})


# Records on the CLI's start path are NamedTuples, not dataclasses: importing dataclasses
# (and inspect) and building frozen dataclasses took ~10 ms of a ~46 ms start
# (benchmarks/cli_startup.py). They are immutable and typed all the same.
class NumberField(NamedTuple):
    """A numeric input and its accepted range. `name` is the API/query name of the field."""

    name: str
    minimum: float
    maximum: float
    minimum_inclusive: bool = False

    def check(self, value: float, raw: str | None = None) -> float:
        """`value` if finite and in range; otherwise an error naming the field and `raw`."""
        shown = raw if raw is not None else _show(value)
        if math.isnan(value) or math.isinf(value):
            raise NotFinite(self.name, shown)
        too_low = value < self.minimum or (value == self.minimum and not self.minimum_inclusive)
        if too_low or value > self.maximum:
            raise OutOfRange(self.name, shown)
        return value

    def parse(self, raw: str) -> float:
        """Parse text typed by a user (`7.5` or `7,5`) and check it."""
        return self.check(parse_decimal(self.name, raw), raw.strip())

    def parse_int(self, raw: str) -> int:
        """Parse a whole number (`2`, `2.0` is refused) and check it."""
        text = raw.strip()
        digits = text[1:] if text[:1] in ("+", "-") else text
        if not (digits.isascii() and digits.isdigit()):
            parse_decimal(self.name, text)  # the clearer error for text that is no number at all
            raise NotAnInteger(self.name, text)
        return int(self.check(int(text), text))

    def check_int(self, value: int) -> int:
        return int(self.check(value))


def parse_decimal(field: str, raw: str) -> float:
    """A float from `7.5`, `7,5`, `1e3`; refuses text, NaN and infinities with a named error."""
    text = raw.strip()
    if text.lower().lstrip("+-") in _NON_FINITE_WORDS:
        raise NotFinite(field, text)
    if not text or not _NUMBER_CHARACTERS.issuperset(text):
        raise NotANumber(field, text)
    try:
        return float(text.replace(",", "."))
    except ValueError:  # the right characters in a wrong order: "1,000.5", "7.5e", "+-1"
        raise NotANumber(field, text) from None


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e16 else repr(value)


# Ranges of the seed calculator's fields. The upper limits only catch typing slips: the largest
# published dense models are under 2,000 billion parameters, and no format uses 1,000 bytes/param.
PARAMS_BILLION = NumberField("params", minimum=0, maximum=100_000)
BYTES_PER_PARAM = NumberField("bytes_per_param", minimum=0, maximum=1_000)
ACTIVATIONS_GB = NumberField("activations", minimum=0, maximum=1_000_000, minimum_inclusive=True)
