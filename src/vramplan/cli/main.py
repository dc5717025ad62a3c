"""Entry point of the `vramplan` command."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn, TextIO

from vramplan import __version__
from vramplan.cli.options import error_text
from vramplan.errors import UnknownName, VramplanError
from vramplan.i18n import Lang, detect_lang, translate

COMMAND_MODULES = {
    "estimate": "estimate", "gpus": "gpus", "models": "models", "model": "models",
    "serve": "serve", "trace": "trace", "infer": "infer", "lora": "lora",
    "validate": "validate", "fit": "fit",
}
"""The module of `vramplan.cli` that registers each command name, with `register(subparsers,
lang, detailed)`. A run imports and builds only its own command: each command loads the part of
the core it needs, and the options' help (whose hints format numbers with Babel's locale data) is
written only when help is asked for."""

EXIT_USAGE = 2
"""Exit status for bad input, as argparse uses."""


class _Parser(argparse.ArgumentParser):
    """argparse with its own words (usage, group titles, -h) and errors in the user's language,
    and no traceback."""

    lang: Lang = Lang.EN

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self._positionals.title = translate("cli.positionals", self.lang)
        self._optionals.title = translate("cli.options", self.lang)
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                          help=translate("help.help", self.lang))

    def format_usage(self) -> str:
        return super().format_usage().replace("usage: ", translate("cli.usage", self.lang), 1)

    def format_help(self) -> str:
        return super().format_help().replace("usage: ", translate("cli.usage", self.lang), 1)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        text = _translated_argparse_error(message, self.lang)
        self.exit(EXIT_USAGE, translate("cli.error_prefix", self.lang) + text + "\n")


_ARGPARSE_ERRORS = (
    (r"unrecognized arguments: (?P<args>.*)", "cli.unrecognized"),
    (r"argument (?P<arg>\S+): expected one argument", "cli.expected_one"),
    (r"argument (?P<arg>\S+): invalid choice: (?P<value>.*) \(choose from (?P<choices>.*)\)",
     "cli.invalid_choice"),
    (r"argument (?P<arg>\S+): not allowed with argument (?P<other>\S+)", "cli.not_allowed_with"),
    (r"the following arguments are required: (?P<args>.*)", "cli.required"),
)
"""argparse's own error messages (Lib/argparse.py, Python 3.11), matched to say them in the user's
language; anything else is shown as argparse wrote it."""


def _translated_argparse_error(message: str, lang: Lang) -> str:
    import re  # already loaded by argparse

    for pattern, key in _ARGPARSE_ERRORS:
        match = re.fullmatch(pattern, message)
        if match:
            return translate(key, lang, **match.groupdict())
    return message


def _requested_lang(argv: Sequence[str]) -> Lang:
    """`--lang` if given (read before parsing, so help is in that language), else the locale."""
    for i, arg in enumerate(argv):
        value = None
        if arg == "--lang" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--lang="):
            value = arg.split("=", 1)[1]
        if value is not None:
            try:
                return Lang(value.lower())
            except ValueError:
                raise UnknownName("lang", value, [lang.value for lang in Lang]) from None
    return detect_lang(os.environ)


def command_module(name: str) -> ModuleType:
    """The CLI module that registers command `name`."""
    return importlib.import_module(f"vramplan.cli.{COMMAND_MODULES[name]}")


def build_parser(lang: Lang, only: str | None = None,
                 detailed: bool = True) -> argparse.ArgumentParser:
    """The parser, with every command, or with command `only` alone (for a run of that command);
    `detailed`: with each option's help."""
    _Parser.lang = lang
    parser = _Parser(prog="vramplan", description=translate("help.description", lang),
                     epilog=translate("help.examples", lang),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"vramplan {__version__}",
                        help=translate("help.version", lang))
    parser.add_argument("--lang", choices=[lang.value for lang in Lang],
                        help=translate("help.lang", lang))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    names = [only] if only in COMMAND_MODULES else list(dict.fromkeys(COMMAND_MODULES.values()))
    for module in dict.fromkeys(command_module(name) for name in names):
        module.register(commands, lang, detailed)
    return parser


def _requested_command(argv: Sequence[str]) -> str | None:
    """The command named in `argv` (its first known command name), None for none."""
    return next((arg for arg in argv if arg in COMMAND_MODULES), None)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        lang = _requested_lang(argv)
    except VramplanError as error:
        err.write(translate("cli.error_prefix", Lang.EN) + error_text(error, Lang.EN) + "\n")
        return EXIT_USAGE
    command = _requested_command(argv)
    wants_help = command is not None and any(arg in ("-h", "--help") for arg in argv)
    parser = build_parser(lang, command, detailed=wants_help)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(out)
        return EXIT_USAGE
    try:
        status: int = args.handler(args, lang, out)
    except VramplanError as error:
        err.write(translate("cli.error_prefix", lang) + error_text(error, lang) + "\n")
        return EXIT_USAGE
    return status
