"""Units, locale formatting (Babel) and number reading."""

from __future__ import annotations

import pytest
from babel.numbers import format_decimal
from hypothesis import given, settings
from hypothesis import strategies as st

from vramplan.bounds import PARAMS_BILLION, NumberField
from vramplan.errors import NotAnInteger, NotANumber, NotFinite, OutOfRange
from vramplan.i18n import Lang, detect_lang
from vramplan.units import (
    BYTES_PER_GB,
    BYTES_PER_GIB,
    bytes_to_gib,
    ceil_div,
    format_gb,
    format_gib,
    format_number,
)

NNBSP = "\u202f"  # narrow no-break space, CLDR's French grouping separator
NBSP = "\u00a0"


def test_units_are_decimal_and_binary() -> None:
    assert BYTES_PER_GB == 1_000_000_000
    assert BYTES_PER_GIB == 1_073_741_824
    assert bytes_to_gib(80 * BYTES_PER_GIB) == 80
    assert ceil_div(7, 2) == 4
    assert ceil_div(8, 2) == 4


def test_french_formatting() -> None:
    assert format_gb(112 * BYTES_PER_GB, Lang.FR) == f"112{NBSP}Go"
    assert format_number(7.5, Lang.FR) == "7,5"
    assert format_number(1234.5, Lang.FR) == f"1{NNBSP}234,5"
    assert format_gib(112 * BYTES_PER_GB, Lang.FR) == f"104,31{NBSP}Gio"


def test_english_formatting() -> None:
    assert format_gb(132 * BYTES_PER_GB, Lang.EN) == f"132{NBSP}GB"
    assert format_number(1234.5, Lang.EN) == "1,234.5"
    assert format_gib(132 * BYTES_PER_GB, Lang.EN) == f"122.93{NBSP}GiB"


@settings(max_examples=300, deadline=None)
@given(value=st.floats(min_value=-1e12, max_value=1e12, allow_nan=False),
       lang=st.sampled_from(list(Lang)), max_decimals=st.integers(min_value=0, max_value=4))
def test_formatting_is_babels_format_decimal(value: float, lang: Lang, max_decimals: int) -> None:
    # format_number keeps Babel's parsed pattern and locale between calls; the text must stay
    # exactly what babel.numbers.format_decimal gives for the same pattern and locale.
    pattern = "#,##0" + ("." + "#" * max_decimals if max_decimals else "")
    locale = {Lang.FR: "fr_FR", Lang.EN: "en_US"}[lang]
    expected = format_decimal(value, format=pattern, locale=locale)
    assert format_number(value, lang, max_decimals) == expected


@pytest.mark.parametrize(("text", "value"), [("7", 7.0), ("7.5", 7.5), ("7,5", 7.5), (" 70 ", 70.0),
                                             ("1e3", 1000.0), (",5", 0.5)])
def test_numbers_with_either_decimal_mark(text: str, value: float) -> None:
    assert PARAMS_BILLION.parse(text) == value


@pytest.mark.parametrize(("text", "error"), [
    ("abc", NotANumber), ("", NotANumber), ("1_000", NotANumber), ("1,000.5", NotANumber),
    ("7 5", NotANumber), ("nan", NotFinite), ("-inf", NotFinite), ("Infinity", NotFinite),
    ("0", OutOfRange), ("-3", OutOfRange), ("100001", OutOfRange),
])
def test_bad_numbers(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        PARAMS_BILLION.parse(text)


def test_integers() -> None:
    batch = NumberField("batch", minimum=1, maximum=100_000, minimum_inclusive=True)
    assert batch.parse_int("4") == 4
    with pytest.raises(NotAnInteger):
        batch.parse_int("2.5")
    with pytest.raises(NotANumber):
        batch.parse_int("two")
    with pytest.raises(OutOfRange):
        batch.parse_int("0")


@pytest.mark.parametrize(("environ", "lang"), [
    ({"LANG": "fr_FR.UTF-8"}, Lang.FR),
    ({"LANG": "en_US.UTF-8"}, Lang.EN),
    ({"LC_ALL": "fr_CA.UTF-8", "LANG": "en_US.UTF-8"}, Lang.FR),
    ({"LC_ALL": "C", "LANG": "fr_FR.UTF-8"}, Lang.EN),
    ({}, Lang.EN),
])
def test_language_from_the_environment(environ: dict[str, str], lang: Lang) -> None:
    assert detect_lang(environ) is lang


@pytest.mark.parametrize("text", ["7", "7.5", "7,5", ",5", "5.", "+7", "-7", "1e3", "1,5E-2",
                                  "7.5e", "1,000.5", "+-1", "e5", ".", "1e5.5", "١٢", "1 000",
                                  "0x10", "7.5.", ""])
def test_the_published_pattern_accepts_exactly_what_parse_decimal_reads(text: str) -> None:
    """API schemas publish NUMBER_PATTERN; parse_decimal must read the same language."""
    import re

    from vramplan.bounds import NUMBER_PATTERN, parse_decimal

    matches = re.fullmatch(NUMBER_PATTERN, text) is not None
    try:
        parse_decimal("params", text)
        reads = True
    except NotANumber:
        reads = False
    assert matches == reads
