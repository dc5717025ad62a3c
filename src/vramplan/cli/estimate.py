"""`vramplan estimate`: the seed rule M = N·B, V = M + A, with a verdict per GPU."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags, add_fields, read_options
from vramplan.cli.render import to_json_text
from vramplan.cli.seed_report import report
from vramplan.i18n import Lang, translate
from vramplan.requests.seed import seed_request
from vramplan.requests.vocabulary import SEED
from vramplan.seed import estimate_seed
from vramplan.serialize import model_to_json, seed_to_json
from vramplan.verdict import verdicts


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser(
        "estimate",
        help=translate("help.estimate", lang),
        description=translate("help.estimate", lang),
        epilog=translate("help.examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fields(parser, SEED.fields, lang, detailed)
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    request = seed_request(read_options(args, SEED))
    estimate = estimate_seed(request.inputs)
    results = verdicts(estimate.total_bytes, request.gpus)
    model = request.model
    if args.json:
        payload = seed_to_json(estimate, results)
        if model is not None:
            payload["model"] = model_to_json(model.preset, model.arch)
        out.write(to_json_text(payload) + "\n")
        return 0
    if model is not None:
        from vramplan.cli.models import model_line  # the registry's module: only for a model

        out.write(model_line(model.preset, model.arch, lang) + "\n\n")
    out.write(report(estimate, results, lang) + "\n")
    if request.activations_shape is not None and model is not None:
        batch, seq_len = request.activations_shape
        out.write("\n" + translate("report.activations_from", lang, model=model.name,
                                    batch=batch, seq_len=seq_len) + "\n")
    return 0
