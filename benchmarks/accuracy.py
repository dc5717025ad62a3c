"""Accuracy against published measurements: every row of a case file, then the summary, overall
and by the model that estimated it (single-GPU training, multi-GPU, inference).

Goal (issue 6): median absolute error <= 5 %, 90th percentile <= 12 %, every OOM row classified
right. Run: `.venv/bin/python benchmarks/accuracy.py [FILE.csv]` (default: the shipped
src/vramplan/data/cases.csv, a byte-identical copy of ../shared/validation/cases.csv).
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from pathlib import Path

from vramplan.validate import CaseScore, Outcome, ValidationReport, read_cases, score_cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", nargs="?", help="a CSV file in the case format")
    args = parser.parse_args()
    text = (Path(args.file).read_text(encoding="utf-8") if args.file
            else files("vramplan").joinpath("data/cases.csv").read_text(encoding="utf-8"))
    report = score_cases(read_cases(text))
    print(f"{'case':52} {'by':9} {'phase':15} {'estimate':>9} {'measured':>9} {'error':>8}")
    for score in report.scores:
        print(_row(score))
    print()
    print(_summary("all rows", report))
    for kind in ("training", "per_gpu", "inference"):
        part = ValidationReport(tuple(s for s in report.scores if s.model_kind == kind))
        if part.rows_total:
            print(_summary(kind, part))


def _row(score: CaseScore) -> str:
    case = score.case
    estimate = f"{score.estimate_bytes / 1e9:9.2f}" if score.estimate_bytes is not None else ""
    if score.outcome is Outcome.OOM:
        cap = case.gpu.capacity_bytes / 1e9 if case.gpu else float("nan")
        verdict = "right" if score.oom_right else "WRONG"
        device = (score.device_bytes or 0) / 1e9
        return (f"{case.id:52} {score.model_kind:9} {score.peak_phase:15} {estimate} "
                f"{'OOM':>9} {verdict:>8}  (device {device:.2f} GB vs {cap:.2f} GB)")
    error = score.error_pct or 0.0
    measured = (case.measured_bytes or 0) / 1e9
    return (f"{case.id:52} {score.model_kind:9} {score.peak_phase:15} {estimate} "
            f"{measured:9.2f} {error:+7.1f}%")


def _summary(title: str, report: ValidationReport) -> str:
    def pct(value: float | None) -> str:
        return f"{value:.2f} %" if value is not None else "-"

    share = report.within_10pct_share
    return (f"{title}: {report.rows_scored} rows scored, median |error| "
            f"{pct(report.median_abs_error_pct)}, p90 {pct(report.p90_abs_error_pct)}, max "
            f"{pct(report.max_abs_error_pct)}, within 10 %: "
            f"{pct(share * 100 if share is not None else None)}, OOM right "
            f"{report.oom_right}/{report.oom_total}, skipped {len(report.skipped)}")


if __name__ == "__main__":
    main()
