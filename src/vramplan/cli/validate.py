"""`vramplan validate FILE.csv`: estimate every measured run of a case file and score the errors."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from vramplan.cli.options import add_common_flags
from vramplan.cli.render import to_json_text
from vramplan.cli.validate_report import render
from vramplan.i18n import Lang, translate
from vramplan.serialize import validation_to_json
from vramplan.validation import parse_cases, read_case_file, score_cases


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser("validate", help=translate("help.validate", lang),
                                 description=translate("help.validate", lang))
    parser.add_argument("file", metavar="FILE.csv", help=translate("help.validate_file", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    path = Path(args.file)
    parsed = parse_cases(read_case_file(path))
    report = score_cases(parsed.cases, parsed.unread)
    if args.json:
        out.write(to_json_text(validation_to_json(report)) + "\n")
    else:
        out.write(render(report, path.name, lang) + "\n")
    return 0
