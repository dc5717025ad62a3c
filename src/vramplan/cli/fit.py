"""`vramplan fit`: will a training run fit on N GPUs of a type, and what to change if not.

Like every command module, it imports only argparse and the message catalogue at module level; the
core is imported inside `run` (see tests/test_cli_startup.py).
"""

from __future__ import annotations

import argparse

from vramplan.cli.options import add_common_flags
from vramplan.i18n import Lang, has_message, translate

TYPE_CHECKING = False  # as typing.TYPE_CHECKING; importing typing costs ~2 ms of CLI start-up
if TYPE_CHECKING:
    from typing import TextIO

    from vramplan.planner.changes import Change
    from vramplan.planner.report import FitReport
    from vramplan.planner.search import SchemeAnswer
    from vramplan.planner.setup import FitSetup

_TRAINING_OPTIONS = (
    # (option, default, metavar)
    ("--method", "full", "METHOD"), ("--precision", "bf16-true", "PRECISION"),
    ("--optimizer", "adamw", "OPTIMIZER"), ("--optimizer-impl", None, "IMPL"),
    ("--quant", "none", "QUANT"), ("--lora-r", None, "R"), ("--lora-targets", None, "LIST"),
    ("--batch", "1", "N"), ("--seq-len", "2048", "TOKENS"),
    ("--checkpointing", "none", "MODE"), ("--attention", "sdpa", "KERNEL"),
    ("--loss", None, "LOSS"), ("--framework", "hf", "NAME"), ("--metric", "device", "METRIC"),
    ("--grad-accum", None, "STEPS"),
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang) -> None:
    parser = commands.add_parser(
        "fit", help=translate("help.fit", lang), description=translate("help.fit", lang),
        epilog=translate("help.fit_examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", metavar="NAME", help=translate("help.model_option", lang))
    parser.add_argument("--config", metavar="PATH", help=translate("help.config_option", lang))
    parser.add_argument("--gpu", metavar="NAME", help=translate("help.fit_gpu", lang))
    parser.add_argument("--gpus", default="1", metavar="N", help=translate("help.fit_gpus", lang))
    parser.add_argument("--gpus-per-node", default="8", metavar="N",
                        help=translate("help.fit_gpus_per_node", lang))
    parser.add_argument("--sharding", metavar="SCHEME", help=translate("help.fit_sharding", lang))
    parser.add_argument("--offload", default="none", metavar="WHAT",
                        help=translate("help.fit_offload", lang))
    parser.add_argument("--margin", default="80", metavar="PERCENT",
                        help=translate("help.fit_margin", lang))
    parser.add_argument("--tp", "--tensor-parallel", dest="tensor_parallel", default="1",
                        metavar="N", help=translate("help.fit_tp", lang))
    parser.add_argument("--pp", "--pipeline-parallel", dest="pipeline_parallel", default="1",
                        metavar="N", help=translate("help.fit_pp", lang))
    parser.add_argument("--ep", "--expert-parallel", dest="expert_parallel", default="1",
                        metavar="N", help=translate("help.fit_ep", lang))
    training = parser.add_argument_group(translate("help.fit_training", lang))
    for option, default, metavar in _TRAINING_OPTIONS:
        name = option.removeprefix("--").replace("-", "_")
        help_key = "help.fit_grad_accum" if name == "grad_accum" else f"help.fit_opt.{name}"
        training.add_argument(option, default=default, metavar=metavar,
                              help=translate(help_key, lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    from vramplan.errors import MissingValue
    from vramplan.planner.report import fit_report
    from vramplan.planner.verdict import usable_share_from_percent
    from vramplan.presets.gpus import find_gpu

    if args.gpu is None:
        raise MissingValue("gpu")
    setup = fit_setup_from_args(args)
    share = usable_share_from_percent(_percent(args.margin))
    report_ = fit_report(setup, find_gpu(args.gpu), share)
    if args.json:
        from vramplan.cli.render import to_json_text
        from vramplan.serialize import fit_to_json

        out.write(to_json_text(fit_to_json(report_)) + "\n")
    else:
        out.write(report(report_, lang) + "\n")
    return 0


def _percent(raw: str) -> float:
    from vramplan.bounds import parse_decimal

    return parse_decimal("margin", raw)


def fit_setup_from_args(args: argparse.Namespace) -> FitSetup:
    """The typed setup named by the command line, checked by `vramplan.requests.training`."""
    from dataclasses import fields

    from vramplan.cli.models import model_for_estimate
    from vramplan.errors import MissingValue
    from vramplan.requests.training import FitFields, fit_setup

    model = model_for_estimate(args.model, args.config)
    if model is None:
        raise MissingValue("model")
    preset, arch = model
    texts = FitFields(**{f.name: getattr(args, f.name) for f in fields(FitFields)})
    return fit_setup(arch, preset.name if preset is not None else (args.config or args.model or ""),
                     texts)


# --- the human-readable report --------------------------------------------------------------------


def report(result: FitReport, lang: Lang) -> str:
    """The text of `vramplan fit`."""
    sections = [
        _title(result, lang),
        _breakdown(result, lang),
        _verdict(result, lang),
        _limits(result, lang),
        _fewest(result, lang),
        _changes(result, lang),
    ]
    if result.combined:
        sections.append(_combined(result.combined, lang))
    sections.append(translate("fit.notice", lang))
    return "\n\n".join(sections)


def _gb(n_bytes: int, lang: Lang) -> str:
    from vramplan.units import format_gb

    return format_gb(n_bytes, lang)


def _gib(n_bytes: int, lang: Lang) -> str:
    """GPU memory is sold in GiB ("80 GB" = 80 GiB): comparisons with a card are shown in GiB."""
    from vramplan.units import format_gib

    return format_gib(n_bytes, lang)


def _label(key: str, lang: Lang) -> str:
    """A part's label, or its bare name when no message exists for it."""
    return translate(key, lang) if has_message(key) else key.removeprefix("part.")


def _title(result: FitReport, lang: Lang) -> str:
    setup, plan = result.setup, result.setup.parallelism
    training = setup.training
    scheme = plan.scheme.value
    if plan.offload.value != "none":
        scheme += f" + offload {plan.offload.value}"
    title = translate("fit.title", lang, model=setup.model or "?", gpus=plan.gpus,
                      gpu=result.verdict.gpu.display_name, sharding=scheme)
    line = translate("fit.setup", lang, method=training.method.value,
                     precision=training.precision.value, optimizer=training.optimizer.value,
                     batch=training.batch, seq_len=training.seq_len,
                     checkpointing=training.checkpointing.value,
                     attention=training.attention.value, framework=training.framework.value)
    return f"{title}\n{line}"


def _breakdown(result: FitReport, lang: Lang) -> str:
    from vramplan.cli.render import table
    from vramplan.units import format_gib

    estimate = result.estimate
    peak = estimate.peak
    rows = [[translate(part.kind.label_key, lang), _gb(part.memory_bytes, lang),
             format_gib(part.memory_bytes, lang)]
            for part in peak.parts if part.memory_bytes]
    overhead = estimate.total_bytes - estimate.allocated_bytes
    if overhead:
        rows.append([translate("fit.allocator", lang), _gb(overhead, lang),
                     format_gib(overhead, lang)])
    rows.append([translate("fit.total", lang), _gb(estimate.total_bytes, lang),
                 format_gib(estimate.total_bytes, lang)])
    phase_key = f"training_phase.{peak.phase.value}"
    text = translate("fit.per_gpu", lang, phase=_label(phase_key, lang),
                     metric=result.setup.training.metric.value)
    text += "\n" + table(rows, right_align=frozenset({1, 2}))
    if estimate.host_bytes_per_node:
        text += "\n" + translate("fit.host", lang, host=_gb(estimate.host_bytes_per_node, lang),
                                 pinned=_gb(estimate.sharded.pinned_host_bytes_per_node, lang))
    return text


def _verdict(result: FitReport, lang: Lang) -> str:
    from vramplan.units import format_gib, format_number

    verdict = result.verdict
    key = ("fit.fits" if verdict.fits else
           "fit.fits_tight" if verdict.fits_at_capacity else "fit.does_not_fit")
    line = translate(key, lang, peak=format_gib(verdict.required_bytes, lang),
                     usable=format_gib(verdict.usable_bytes, lang),
                     share=format_number(verdict.usable_share * 100, lang, 1),
                     capacity=format_gib(verdict.capacity_bytes, lang, 0))
    return line + "\n" + translate("fit.margin_source", lang)


def _limits(result: FitReport, lang: Lang) -> str:
    from vramplan.units import format_number

    def shown(value: int | None) -> str:
        return format_number(value, lang, 0) if value is not None else translate(
            "fit.none_fits", lang)

    return "\n".join((translate("fit.max_batch", lang, value=shown(result.max_batch)),
                      translate("fit.max_seq_len", lang, value=shown(result.max_seq_len))))


def _fewest(result: FitReport, lang: Lang) -> str:
    from vramplan.cli.render import table
    from vramplan.planner.search import MAX_GPUS

    header = [translate(f"fit.col_{name}", lang)
              for name in ("sharding", "offload", "gpus", "peak")]
    rows = [[a.scheme.value, a.offload.value,
             str(a.gpus) if a.gpus is not None else translate(
                 "fit.more_than", lang, n=MAX_GPUS if a.scheme.value != "none" else 1),
             _gib(a.peak_bytes, lang) if a.peak_bytes is not None else "—"]
            for a in result.fewest_gpus]
    text = translate("fit.fewest_gpus", lang, gpu=result.verdict.gpu.display_name)
    text += "\n" + table(rows, header, right_align=frozenset({2, 3}))
    return text + "\n" + _cheapest(result.cheapest, result, lang)


def _cheapest(answer: SchemeAnswer | None, result: FitReport, lang: Lang) -> str:
    if answer is None:
        return translate("fit.no_cheapest", lang)
    return translate("fit.cheapest", lang, gpus=answer.gpus,
                     gpu=result.verdict.gpu.display_name, sharding=answer.scheme.value,
                     offload=answer.offload.value)


def _change_rows(changes: tuple[Change, ...], lang: Lang) -> list[list[str]]:
    return [[translate(f"change.{c.kind.value}", lang), c.detail, _gib(c.peak_bytes, lang),
             _gib(c.saved_bytes, lang), translate("fit.yes" if c.fits else "fit.no", lang),
             translate(f"speed.{c.cost.speed.value}", lang),
             translate(f"quality.{c.cost.quality.value}", lang)]
            for c in changes]


def _change_header(lang: Lang) -> list[str]:
    return [translate(f"fit.col_{name}", lang)
            for name in ("change", "detail", "new_peak", "saved", "fits", "speed", "quality")]


def _changes(result: FitReport, lang: Lang) -> str:
    from vramplan.cli.render import table

    if not result.changes:
        return translate("fit.no_changes", lang)
    text = translate("fit.changes", lang) + "\n"
    text += table(_change_rows(result.changes, lang), _change_header(lang),
                  right_align=frozenset({2, 3}))
    sources = "\n".join(f"  {translate(f'change.{c.kind.value}', lang)}: {c.cost.source}"
                        for c in result.changes)
    return text + "\n" + translate("fit.sources", lang) + "\n" + sources


def _combined(changes: tuple[Change, ...], lang: Lang) -> str:
    from vramplan.cli.render import table

    return (translate("fit.combined", lang) + "\n"
            + table(_change_rows(changes, lang), _change_header(lang),
                    right_align=frozenset({2, 3})))
