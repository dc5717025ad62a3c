"""The human-readable report of a seed estimate (`vramplan estimate` without `--json`)."""

from __future__ import annotations

from vramplan.cli.render import table
from vramplan.i18n import Lang, has_message, translate
from vramplan.seed import SeedEstimate
from vramplan.units import format_gb, format_gib, format_number
from vramplan.verdict import GpuVerdict


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
            [translate(item.kind.label_key, lang),
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
