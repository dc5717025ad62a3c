"""`vramplan fit`: will a training run fit on N GPUs of a type, and what to change if not."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags, add_fields, option_label, read_options
from vramplan.cli.render import table, to_json_text
from vramplan.distributed.per_gpu import overhead_parts
from vramplan.i18n import Lang, has_message, translate
from vramplan.planner.changes import Change, settings_text
from vramplan.planner.report import FitReport, fit_report
from vramplan.planner.search import MAX_GPUS, SchemeAnswer, generates
from vramplan.requests.training import fit_request
from vramplan.requests.vocabulary import FIT, TRAINING_FIELDS
from vramplan.serialize import fit_to_json
from vramplan.training.alignment import generated_at_once, reference_kind
from vramplan.training.setup import TrainingSetup, optimizer_impl
from vramplan.training.specs import mlp_tile_tokens
from vramplan.training.states import unquantized_linears
from vramplan.units import format_gb, format_gib, format_number
from vramplan.vocab import Metric, Optimizer


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser(
        "fit", help=translate("help.fit", lang), description=translate("help.fit", lang),
        epilog=translate("help.fit_examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_fields(parser, tuple(f for f in FIT.fields if f not in TRAINING_FIELDS), lang, detailed)
    training = parser.add_argument_group(translate("help.fit_training", lang))
    add_fields(training, TRAINING_FIELDS, lang, detailed)
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    request = fit_request(read_options(args, FIT))
    result = fit_report(request.setup, request.gpu, request.usable_share)
    if args.json:
        out.write(to_json_text(fit_to_json(result)) + "\n")
    else:
        out.write(report(result, lang) + "\n")
    return 0


# --- the human-readable report --------------------------------------------------------------------


def report(result: FitReport, lang: Lang) -> str:
    """The text of `vramplan fit`."""
    sections = [
        _title(result, lang),
        _breakdown(result, lang),
        *((_phases(result, lang),) if result.setup.training.alignment is not None else ()),
        _verdict(result, lang),
        _limits(result, lang),
        _fewest(result, lang),
        _changes(result, lang),
    ]
    if result.combined:
        sections.append(_combined(result.combined, lang))
    notice = translate("fit.notice", lang)
    if result.setup.training.metric is not Metric.ALLOCATED:
        notice += "\n" + translate("fit.varying_shapes", lang)
    sections.append(notice)
    return "\n\n".join(sections)


def _gb(n_bytes: int, lang: Lang) -> str:
    return format_gb(n_bytes, lang)


def _gib(n_bytes: int, lang: Lang) -> str:
    """GPU memory is sold in GiB ("80 GB" = 80 GiB): comparisons with a card are shown in GiB."""
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
    optimizer = training.optimizer.value
    if training.optimizer is Optimizer.ADAMW:
        # the step's implementation changes its temporaries (the framework's default by date)
        optimizer += f" ({optimizer_impl(training).value})"
    line = translate("fit.setup", lang, method=training.method.value,
                     precision=training.precision.value, optimizer=optimizer,
                     batch=training.batch, seq_len=training.seq_len,
                     checkpointing=training.checkpointing.value,
                     attention=training.attention.value, framework=training.framework.value)
    kept = unquantized_linears(setup.arch, training.unquantized_modules)
    if kept:
        line += "\n" + translate("fit.unquantized", lang, count=len(kept))
    if training.tiled_mlp:
        line += "\n" + translate("fit.tiled_mlp", lang, tokens=format_number(
            mlp_tile_tokens(training, setup.arch.hidden_size), lang))
    alignment = training.alignment
    if alignment is None:
        return f"{title}\n{line}"
    return f"{title}\n{line}\n{_alignment_line(training, lang)}"


def _alignment_line(training: TrainingSetup, lang: Lang) -> str:
    """What a preference or RL method adds: its reference, its generation."""
    alignment = training.alignment
    assert alignment is not None
    line = translate("fit.alignment", lang, method=alignment.method.value,
                     policy=training.method.value,
                     reference=translate(f"fit.reference.{reference_kind(training)}", lang))
    if alignment.method.generates:
        line += translate("fit.generation", lang, generation=alignment.generation.value,
                          completion=format_number(alignment.completion_tokens, lang, 0),
                          sequences=format_number(generated_at_once(training), lang, 0))
    return line


def _phases(result: FitReport, lang: Lang) -> str:
    """Every phase's peak (allocated memory): a preference or RL step's generation, reference
    and log-probability passes beside the policy's forward, backward and optimizer step."""
    rows = [[_label(f"training_phase.{phase.phase.value}", lang),
             format_gib(phase.total_bytes, lang)] for phase in result.estimate.phases]
    return translate("fit.phases", lang) + "\n" + table(rows, right_align=frozenset({1}))


def _breakdown(result: FitReport, lang: Lang) -> str:
    estimate = result.estimate
    peak = estimate.peak
    rows = [[translate(part.kind.label_key, lang), _gb(part.memory_bytes, lang),
             format_gib(part.memory_bytes, lang)]
            for part in peak.parts if part.memory_bytes]
    for key, n_bytes in overhead_parts(estimate):
        rows.append([translate(key, lang), _gb(n_bytes, lang), format_gib(n_bytes, lang)])
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
    verdict = result.verdict
    key = ("fit.fits" if verdict.fits else
           "fit.fits_tight" if verdict.fits_at_capacity else "fit.does_not_fit")
    line = translate(key, lang, peak=format_gib(verdict.required_bytes, lang),
                     usable=format_gib(verdict.usable_bytes, lang),
                     share=format_number(verdict.usable_share * 100, lang, 1),
                     capacity=format_gib(verdict.capacity_bytes, lang, 0))
    return line + "\n" + translate("fit.margin_source", lang)


def _limits(result: FitReport, lang: Lang) -> str:
    def line(name: str, value: int | None) -> str:
        # French agrees with the noun: "aucun" micro-lot, "aucune" séquence
        shown = (format_number(value, lang, 0) if value is not None
                 else translate(f"fit.none_fits.{name}", lang))
        return translate(f"fit.{name}", lang, value=shown)

    lines = [line("max_batch", result.max_batch), line("max_seq_len", result.max_seq_len)]
    if generates(result.setup):
        lines.append(line("max_completion_len", result.max_completion_len))
    return "\n".join(lines)


def _fewest(result: FitReport, lang: Lang) -> str:
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
    return [[translate(f"change.{c.kind.value}", lang),
             settings_text(c.settings, option_label, " "), _gib(c.peak_bytes, lang),
             _gib(c.saved_bytes, lang), translate("fit.yes" if c.fits else "fit.no", lang),
             translate(f"speed.{c.cost.speed.value}", lang),
             translate(f"quality.{c.cost.quality.value}", lang)]
            for c in changes]


def _change_header(lang: Lang) -> list[str]:
    return [translate(f"fit.col_{name}", lang)
            for name in ("change", "detail", "new_peak", "saved", "fits", "speed", "quality")]


def _changes(result: FitReport, lang: Lang) -> str:
    if not result.changes:
        return translate("fit.no_changes", lang)
    text = translate("fit.changes", lang) + "\n"
    text += table(_change_rows(result.changes, lang), _change_header(lang),
                  right_align=frozenset({2, 3}))
    sources = "\n".join(f"  {translate(f'change.{c.kind.value}', lang)}: {c.cost.source}"
                        for c in result.changes)
    return text + "\n" + translate("fit.sources", lang) + "\n" + sources


def _combined(changes: tuple[Change, ...], lang: Lang) -> str:
    return (translate("fit.combined", lang) + "\n"
            + table(_change_rows(changes, lang), _change_header(lang),
                    right_align=frozenset({2, 3})))
