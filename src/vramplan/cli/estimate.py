"""`vramplan estimate`: the seed rule M = N·B, V = M + A, with a verdict per GPU."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags
from vramplan.cli.render import table, to_json_text
from vramplan.errors import MissingValue
from vramplan.fit import GpuVerdict, verdicts
from vramplan.i18n import Lang, has_message, translate
from vramplan.inputs import ACTIVATIONS_GB, BYTES_PER_PARAM, PARAMS_BILLION
from vramplan.presets.gpus import COMMON_GPUS, find_gpu
from vramplan.seed import SeedEstimate, estimate_seed, resolve_optimizer, seed_inputs
from vramplan.serialize import seed_to_json
from vramplan.units import format_gb, format_gib, format_number


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang) -> None:
    parser = commands.add_parser(
        "estimate",
        help=translate("help.estimate", lang),
        description=translate("help.estimate", lang),
        epilog=translate("help.examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--params", metavar="N", help=translate("help.params", lang))
    parser.add_argument("--optimizer", metavar="PRESET", help=translate("help.optimizer", lang)
                        + " : adam-mixed, adam-8bit, sgd-momentum")
    parser.add_argument("--bytes-per-param", metavar="B",
                        help=translate("help.bytes_per_param", lang))
    parser.add_argument("--activations", metavar="A", help=translate("help.activations", lang))
    parser.add_argument("--gpu", metavar="NAME", help=translate("help.gpu", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    if args.params is None:
        raise MissingValue("params")
    inputs = seed_inputs(
        params_billion=PARAMS_BILLION.parse(args.params),
        optimizer=resolve_optimizer(args.optimizer) if args.optimizer is not None else None,
        bytes_per_param=(
            BYTES_PER_PARAM.parse(args.bytes_per_param) if args.bytes_per_param is not None
            else None
        ),
        activations_gb=ACTIVATIONS_GB.parse(args.activations) if args.activations else 0.0,
    )
    gpus = (find_gpu(args.gpu),) if args.gpu is not None else COMMON_GPUS
    estimate = estimate_seed(inputs)
    results = verdicts(estimate.total_bytes, gpus)
    if args.json:
        out.write(to_json_text(seed_to_json(estimate, results)) + "\n")
    else:
        out.write(report(estimate, results, lang) + "\n")
    return 0


def report(estimate: SeedEstimate, results: tuple[GpuVerdict, ...], lang: Lang) -> str:
    """The human-readable table of one estimate."""
    return "\n\n".join((
        translate("report.title", lang),
        _inputs_table(estimate, lang),
        _totals_table(estimate, lang),
        _verdict_table(results, lang),
        translate("report.lower_bound", lang) + "\n" + translate("report.notice", lang),
    ))


def _inputs_table(estimate: SeedEstimate, lang: Lang) -> str:
    inputs = estimate.inputs
    preset = (translate(f"optimizer.{inputs.optimizer.value}", lang) if inputs.optimizer
              else translate("optimizer.custom", lang))
    rows = [
        [translate("report.params", lang),
         translate("report.billion", lang, n=format_number(inputs.params_billion, lang, 4)), ""],
        [translate("report.bytes_per_param", lang),
         translate("report.bytes_value", lang, n=format_number(estimate.bytes_per_param, lang, 4)),
         preset],
    ]
    lines = table(rows, indent="")
    if estimate.breakdown:
        parts = [
            [translate(item.key, lang),
             translate("report.bytes_value", lang, n=format_number(item.bytes_per_param, lang, 4)),
             format_gb(item.memory_bytes, lang)]
            for item in estimate.breakdown
        ]
        lines += "\n" + translate("report.breakdown", lang) + "\n"
        lines += table(parts, right_align=frozenset({1, 2}))
    if inputs.optimizer is not None and has_message(f"note.{inputs.optimizer.value}"):
        lines += "\n" + translate(f"note.{inputs.optimizer.value}", lang)
    return lines


def _totals_table(estimate: SeedEstimate, lang: Lang) -> str:
    rows = [
        [translate(key, lang), format_gb(n_bytes, lang), format_gib(n_bytes, lang)]
        for key, n_bytes in (
            ("report.model_states", estimate.model_states_bytes),
            ("report.activations", estimate.activations_bytes),
            ("report.total", estimate.total_bytes),
        )
    ]
    return table(rows, right_align=frozenset({1, 2}), indent="")


def _verdict_table(results: tuple[GpuVerdict, ...], lang: Lang) -> str:
    header = [translate(f"report.col_{name}", lang)
              for name in ("gpu", "capacity", "fits", "headroom", "min_gpus")]
    rows = [
        [v.gpu.display_name,
         format_gib(v.gpu.capacity_bytes, lang, 0),
         translate("report.yes" if v.fits else "report.no", lang),
         format_gib(v.headroom_bytes, lang),
         format_number(v.min_gpus_lower_bound, lang, 0)]
        for v in results
    ]
    return (translate("report.verdict", lang) + "\n"
            + table(rows, header, right_align=frozenset({1, 3, 4})))
