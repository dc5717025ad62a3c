"""`vramplan validate FILE.csv`: estimate every measured run of a case file and score the errors."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from vramplan.cli.options import add_common_flags
from vramplan.cli.render import to_json_text
from vramplan.cli.validate_report import render
from vramplan.i18n import Lang, translate
from vramplan.serialize import validation_to_json

if TYPE_CHECKING:
    from vramplan.shapes import ShippedValidationOut
from vramplan.validation.cases import (
    SHIPPED_CASE_FILES,
    parse_cases,
    read_case_file,
    shipped_cases,
)
from vramplan.validation.scoring import score_cases


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser("validate", help=translate("help.validate", lang),
                                 description=translate("help.validate", lang))
    parser.add_argument("file", metavar="FILE.csv", nargs="?",
                        help=translate("help.validate_file", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    """One case file, or without one each file shipped with vramplan (`SHIPPED_CASE_FILES`)."""
    if args.file is not None:
        files = [(Path(args.file).name, read_case_file(args.file))]
    else:
        files = [(name, shipped_cases(name)) for name in SHIPPED_CASE_FILES]
    reports = []
    for name, text in files:
        parsed = parse_cases(text)
        reports.append((name, score_cases(parsed.cases, parsed.unread)))
    if not args.json:
        out.write("\n\n".join(render(report, name, lang) for name, report in reports) + "\n")
    elif args.file is not None:
        out.write(to_json_text(validation_to_json(reports[0][1], reports[0][0])) + "\n")
    else:
        payload: ShippedValidationOut = {
            "files": [validation_to_json(report, name) for name, report in reports]}
        out.write(to_json_text(payload) + "\n")
    return 0
