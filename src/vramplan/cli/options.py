"""Conventions shared by the CLI commands: option names and argument reading."""

from __future__ import annotations

import argparse

from vramplan.errors import VramplanError
from vramplan.i18n import Lang


def option_label(field: str) -> str:
    """The CLI option of a canonical field name: `bytes_per_param` -> `--bytes-per-param`."""
    return "--" + field.replace("_", "-")


def error_text(error: VramplanError, lang: Lang) -> str:
    """The error's message with every field shown as its CLI option."""
    return error.message(lang, option_label)


def add_common_flags(parser: argparse.ArgumentParser, lang: Lang) -> None:
    """`--json` and `--lang`, which every command takes (`--lang` is read before parsing)."""
    from vramplan.i18n import translate

    parser.add_argument("--json", action="store_true", help=translate("help.json", lang))
    parser.add_argument("--lang", choices=[choice.value for choice in Lang],
                        help=translate("help.lang", lang))
