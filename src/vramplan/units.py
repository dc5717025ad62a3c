"""Units: bytes are integers until display.

GB is the decimal gigabyte, 10**9 bytes (the seed calculator's "Go"); GiB is the binary gibibyte,
2**30 bytes. GPU makers sell an "80 GB" card that holds 80 GiB, so the GPU catalogue stores GiB and
every comparison happens in bytes.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from babel import Locale
    from babel.numbers import NumberPattern

BYTES_PER_GB = 10**9
"""Decimal gigabyte (SI prefix giga-, powers of 1000)."""
BYTES_PER_GIB = 2**30
"""Binary gibibyte (IEC prefix gibi-, powers of 1024)."""
BYTES_PER_MIB = 2**20
PARAMS_PER_BILLION = 10**9


def gb_to_bytes(gb: float) -> int:
    """Decimal gigabytes to a whole number of bytes (rounded half to even)."""
    return round(gb * BYTES_PER_GB)


def gib_to_bytes(gib: float) -> int:
    """Binary gibibytes to a whole number of bytes."""
    return round(gib * BYTES_PER_GIB)


def bytes_to_gb(n_bytes: int) -> float:
    """Bytes to decimal gigabytes (10**9)."""
    return n_bytes / BYTES_PER_GB


def bytes_to_gib(n_bytes: int) -> float:
    """Bytes to binary gibibytes (2**30)."""
    return n_bytes / BYTES_PER_GIB


def ceil_div(numerator: int, denominator: int) -> int:
    """Smallest integer k with k * denominator >= numerator (both positive integers)."""
    return -(-numerator // denominator)




# --- Display (the only place that turns bytes into text) -------------------------------------

_BABEL_LOCALES = {"fr": "fr_FR", "en": "en_US"}
_NBSP = "\u00a0"
"""No-break space between a number and its unit ("112 Go"), as French typography wants."""
_UNIT_LABELS = {
    "fr": {"GB": "Go", "GiB": "Gio", "bytes": "octets"},
    "en": {"GB": "GB", "GiB": "GiB", "bytes": "bytes"},
}


def format_number(value: float, lang: str, max_decimals: int = 2) -> str:
    """`value` in the locale's style: "1 234,5" (narrow no-break space) in French, "1,234.5" in
    English; at most `max_decimals` decimals, trailing zeros dropped. Babel reads CLDR data."""
    pattern, locale = _number_format(lang, max_decimals)
    return str(pattern.apply(value, locale))


@cache
def _number_format(lang: str, max_decimals: int) -> tuple[NumberPattern, Locale]:
    """Babel's parsed pattern and locale, built once: `format_decimal` parses both at every call,
    about half of its time, and the page formats about a hundred numbers per render."""
    from babel import Locale  # lazy: keeps `--json` runs fast to start
    from babel.numbers import parse_pattern

    pattern = "#,##0" + ("." + "#" * max_decimals if max_decimals else "")
    return parse_pattern(pattern), Locale.parse(_BABEL_LOCALES[lang])


def unit_label(unit: str, lang: str) -> str:
    """The unit's symbol in `lang` (GB -> "Go" in French)."""
    return _UNIT_LABELS[lang][unit]


def format_gb(n_bytes: int, lang: str, max_decimals: int = 2) -> str:
    """Bytes as decimal gigabytes: "112 Go" / "112 GB"."""
    value = format_number(bytes_to_gb(n_bytes), lang, max_decimals)
    return f"{value}{_NBSP}{unit_label('GB', lang)}"


def format_gib(n_bytes: int, lang: str, max_decimals: int = 2) -> str:
    """Bytes as binary gibibytes: "104,31 Gio" / "104.31 GiB"."""
    value = format_number(bytes_to_gib(n_bytes), lang, max_decimals)
    return f"{value}{_NBSP}{unit_label('GiB', lang)}"
