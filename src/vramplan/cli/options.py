"""The CLI's side of the request vocabulary: options built from a form's fields, read back into a
typed request, and errors worded with the options' names.

Every field `name` is the option `--name-with-dashes` (and `--alias` for each alias); a flag is
an option without a value. Options keep the text the user typed (None when absent): the form's
fields read it, so the CLI accepts and refuses exactly what the JSON API and the page do.
"""

from __future__ import annotations

import argparse
from typing import Any

from vramplan.errors import VramplanError
from vramplan.i18n import Lang, translate
from vramplan.requests.fields import Field, FlagField
from vramplan.requests.reading import Inputs, read
from vramplan.requests.vocabulary import Form


def option_label(field: str) -> str:
    """The CLI option of a field name: `bytes_per_param` -> `--bytes-per-param`."""
    return "--" + field.replace("_", "-")


def error_text(error: VramplanError, lang: Lang) -> str:
    """The error's message with every field shown as its CLI option."""
    return error.message(lang, option_label)


def help_text(field: Field[Any], lang: Lang) -> str:
    """The field's description, its default when it has one, and what it accepts."""
    text = translate(field.help_key, lang)
    default = field.default_text()
    if default and not isinstance(field, FlagField):
        text += " (" + translate("field.default", lang, default=default) + ")"
    if not isinstance(field, FlagField):
        text += "; " + field.accepted(lang) if lang is Lang.EN else " ; " + field.accepted(lang)
    return text.replace("%", "%%")  # argparse formats help with %


def add_fields(parser: argparse.ArgumentParser | Any, fields: tuple[Field[Any], ...],
               lang: Lang, detailed: bool = True) -> None:
    """One option per field (a flag for a `FlagField`), storing the text the user gave; with
    `detailed`, each with its help."""
    for field in fields:
        flags = [option_label(name) for name in field.names]
        help_ = help_text(field, lang) if detailed else None
        if isinstance(field, FlagField):
            parser.add_argument(*flags, dest=field.name, action="store_const", const="true",
                                help=help_)
            if field.default:  # on unless turned off
                parser.add_argument(*(f"--no-{flag[2:]}" for flag in flags), dest=field.name,
                                    action="store_const", const="false",
                                    help=translate("help.flag_off", lang) if detailed else None)
        else:
            parser.add_argument(*flags, dest=field.name, metavar=field.metavar, help=help_)


def read_options(args: argparse.Namespace, form: Form) -> Inputs:
    """The options of `form` that were given, as a typed request."""
    given = {field.name: getattr(args, field.name) for field in form.fields
             if getattr(args, field.name, None) is not None}
    return read(form, given, text=True)


def add_common_flags(parser: argparse.ArgumentParser, lang: Lang) -> None:
    """`--json` and `--lang`, which every command takes (`--lang` is read before parsing)."""
    parser.add_argument("--json", action="store_true", help=translate("help.json", lang))
    parser.add_argument("--lang", choices=[choice.value for choice in Lang],
                        help=translate("help.lang", lang))
