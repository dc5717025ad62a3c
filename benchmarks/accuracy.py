"""Accuracy against published measurements: every row of the shipped case files (or of FILE.csv),
then the summary overall, by the model that estimated it (single-GPU training, multi-GPU,
inference), by framework and by metric.

Run: `.venv/bin/python benchmarks/accuracy.py [FILE.csv ...]` (default: the shipped
src/vramplan/data/cases.csv, a byte-identical copy of ../shared/validation/cases.csv, and
src/vramplan/data/cases_vramplan.csv, the project's own published runs; each file is scored on
its own, then both together).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from vramplan.validation import (
    SHIPPED_CASE_FILES,
    CaseScore,
    Outcome,
    ValidationReport,
    parse_cases,
    score_cases,
    shipped_cases,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="*", help="CSV files in the case format")
    parser.add_argument("--quiet", action="store_true", help="summaries only")
    args = parser.parse_args()
    named = ([(Path(f).name, Path(f).read_text(encoding="utf-8")) for f in args.files]
             or [(name, shipped_cases(name)) for name in SHIPPED_CASE_FILES])
    reports = []
    for name, text in named:
        parsed = parse_cases(text)
        report = score_cases(parsed.cases, parsed.unread)
        reports.append(report)
        print(f"== {name}")
        if not args.quiet:
            print(f"{'case':52} {'by':9} {'phase':17} {'estimate':>9} {'measured':>9} "
                  f"{'error':>8}")
            for score in report.scores:
                print(_row(score))
            print()
        _summaries(report)
        print()
    if len(reports) > 1:
        print("== all files")
        _summaries(ValidationReport(tuple(s for r in reports for s in r.scores),
                                    tuple(u for r in reports for u in r.unread)))


def _summaries(report: ValidationReport) -> None:
    print(_summary("all rows", report))
    groups: list[tuple[str, Callable[[CaseScore], str]]] = [
        ("by model", lambda s: s.model_kind or "-"),
        ("by framework", lambda s: s.case.framework.value),
        ("by metric", lambda s: s.case.metric.value),
    ]
    for title, key in groups:
        print(f"  {title}:")
        for value in sorted({key(s) for s in report.scores}):
            part = ValidationReport(tuple(s for s in report.scores if key(s) == value))
            print("    " + _summary(value, part))


def _row(score: CaseScore) -> str:
    case = score.case
    estimate = f"{score.estimate_bytes / 1e9:9.2f}" if score.estimate_bytes is not None else ""
    if score.outcome is Outcome.SKIPPED:
        return f"{case.id:52} skipped: {score.skip_reason}"
    if score.outcome is Outcome.OOM:
        cap = score.card_bytes / 1e9 if score.card_bytes is not None else float("nan")
        verdict = "right" if score.oom_right else "WRONG"
        device = (score.device_bytes or 0) / 1e9
        return (f"{case.id:52} {score.model_kind:9} {score.peak_phase:17} {estimate} "
                f"{'OOM':>9} {verdict:>8}  (device {device:.2f} GB vs {cap:.2f} GB)")
    error = score.error_pct or 0.0
    measured = (case.measured_bytes or 0) / 1e9
    readings = f"  [{', '.join(r.value for r in case.readings)}]" if case.readings else ""
    return (f"{case.id:52} {score.model_kind:9} {score.peak_phase:17} {estimate} "
            f"{measured:9.2f} {error:+7.1f}%{readings}")


def _summary(title: str, report: ValidationReport) -> str:
    def pct(value: float | None) -> str:
        return f"{value:.2f} %" if value is not None else "-"

    share = report.within_10pct_share
    return (f"{title}: {report.rows_scored} rows scored, median |error| "
            f"{pct(report.median_abs_error_pct)}, p90 {pct(report.p90_abs_error_pct)}, max "
            f"{pct(report.max_abs_error_pct)}, within 10 %: "
            f"{pct(share * 100 if share is not None else None)}, OOM right "
            f"{report.oom_right}/{report.oom_total}, skipped {len(report.skipped)}, "
            f"unread {len(report.unread)}")


if __name__ == "__main__":
    main()
