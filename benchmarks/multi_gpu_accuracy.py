"""Accuracy of the per-GPU estimate on the multi-GPU rows of the measured cases.

Run: `.venv/bin/python benchmarks/multi_gpu_accuracy.py [CASES.csv]` (default: the copy of
../shared/validation/cases.csv shipped in src/vramplan/data). Scores every row with `gpus > 1` or a
sharding scheme through `vramplan.validate` (the same code as `vramplan validate`), prints each row
and the summary of that subset: median and 90th percentile of the absolute error, OOM rows.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from vramplan.validation import read_cases, score_cases
from vramplan.vocab import Scheme

DEFAULT_CASES = Path(__file__).resolve().parents[1] / "src" / "vramplan" / "data" / "cases.csv"


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CASES
    cases = [c for c in read_cases(path.read_text(encoding="utf-8"))
             if c.gpus > 1 or c.sharding is not Scheme.NONE]
    report = score_cases(cases)
    print(f"{'case':<48} {'gpus':>4} {'sharding':<9} {'estimate':>9} {'measured':>9} {'error':>8}")
    for score in report.scores:
        case = score.case
        estimate = f"{score.estimate_bytes / 1e9:.2f}" if score.estimate_bytes else "-"
        measured = f"{case.measured_bytes / 1e9:.2f}" if case.measured_bytes else "OOM"
        error = (f"{score.error_pct:+.1f}%" if score.error_pct is not None
                 else ("OOM ok" if score.oom_right else "OOM missed"))
        print(f"{case.id:<48} {case.gpus:>4} {case.sharding.value:<9} {estimate:>9} "
              f"{measured:>9} {error:>8}")
    errors = sorted(abs(s.error_pct) for s in report.scores if s.error_pct is not None)
    print(f"\nrows scored: {len(errors)}; median |error| {statistics.median(errors):.1f}%; "
          f"90th percentile {report.p90_abs_error_pct:.1f}%; max {errors[-1]:.1f}%; "
          f"OOM rows right: {report.oom_right} of {report.oom_total} (GB = 10^9 bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
