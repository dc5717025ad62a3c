"""The text table of `vramplan validate`: one line per row, then the summary."""

from __future__ import annotations

from vramplan.cli.render import table
from vramplan.i18n import Lang, translate
from vramplan.units import format_gb, format_number
from vramplan.validation.scoring import CaseScore, Outcome, ValidationReport


def render(report: ValidationReport, file_name: str, lang: Lang) -> str:
    header = [translate(f"validate.col_{name}", lang)
              for name in ("id", "model", "kind", "estimate", "measured", "error")]
    rows = [_row(score, lang) for score in report.scores]
    return "\n\n".join((
        translate("validate.title", lang, n=report.rows_total, file=file_name),
        table(rows, header, right_align=frozenset({3, 4, 5}), indent=""),
        _summary(report, lang),
    ))


def _row(score: CaseScore, lang: Lang) -> list[str]:
    case = score.case
    kind = translate(f"validate.kind_{score.model_kind}", lang) if score.model_kind else ""
    estimate = format_gb(score.estimate_bytes, lang) if score.estimate_bytes is not None else ""
    if score.outcome is Outcome.SKIPPED:
        return [case.id, case.model, kind, "", "", translate("validate.skipped", lang)]
    if score.outcome is Outcome.OOM:
        verdict = "validate.oom_right" if score.oom_right else "validate.oom_wrong"
        return [case.id, case.model, kind, estimate, translate("validate.oom", lang),
                translate(verdict, lang)]
    error = round(score.error_pct or 0.0, 1)  # signed as shown: -0.002 % is "0 %", not "-0 %"
    sign = "+" if error > 0 else "-" if error < 0 else ""
    measured = format_gb(case.measured_bytes or 0, lang)
    return [case.id, case.model, kind, estimate, measured,
            f"{sign}{format_number(abs(error), lang, 1)} %"]


def _summary(report: ValidationReport, lang: Lang) -> str:
    def pct(value: float | None) -> str:
        return format_number(value, lang, 2) if value is not None else "-"

    share = report.within_10pct_share
    lines = [
        translate("validate.summary", lang),
        translate("validate.rows_scored", lang, n=report.rows_scored),
        translate("validate.median", lang, value=pct(report.median_abs_error_pct)),
        translate("validate.p90", lang, value=pct(report.p90_abs_error_pct)),
        translate("validate.max", lang, value=pct(report.max_abs_error_pct)),
        translate("validate.within", lang, value=pct(share * 100 if share is not None else None)),
        translate("validate.oom_summary", lang, right=report.oom_right, total=report.oom_total),
        translate("validate.skipped_summary", lang, n=len(report.skipped)),
    ]
    lines += [f"  {s.case.id}: {_reason(s, lang)}" for s in report.skipped]
    if report.unread:
        lines.append(translate("validate.unread_summary", lang, n=len(report.unread)))
        lines += [f"  {row.error.message(lang)}" for row in report.unread]
    assumed = [score.case for score in report.scores if score.case.readings]
    if assumed:
        separator = " ; " if lang is Lang.FR else "; "
        lines.append(translate("validate.readings_summary", lang, n=len(assumed)))
        lines += [f"  {case.id}: " + separator.join(translate(f"reading.{reading.value}", lang)
                                                   for reading in case.readings)
                  for case in assumed]
    return "\n".join(lines)


def _reason(score: CaseScore, lang: Lang) -> str:
    return score.skip_error.message(lang) if score.skip_error is not None else ""
