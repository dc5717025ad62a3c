"""Trace benchmark: wall time and peak RSS of `vramplan trace` on Llama-3.1-8B and 70B.

Goal: tracing Llama-3.1-8B at batch 1 x 2048 tokens takes under 30 s and under 2 GB of
resident memory on the 2-core development machine. Each case runs `vramplan trace --json` in a
fresh process (interpreter start and imports included); the peak RSS is the child's ru_maxrss.
Run: `.venv/bin/python benchmarks/trace_bench.py [--cases 8b-lora,8b-full,70b-lora]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMON = ["--batch", "1", "--seq-len", "2048", "--precision", "bf16-true", "--optimizer", "adamw",
          "--json"]
CASES = {
    "8b-lora": ["--model", "llama-3.1-8b", "--method", "lora", "--lora-r", "16",
                "--lora-targets", "q,v"],
    "8b-full": ["--model", "llama-3.1-8b", "--method", "full"],
    "70b-lora": ["--model", "llama-3.1-70b", "--method", "lora", "--lora-r", "16",
                 "--lora-targets", "q,v"],
    "70b-full": ["--model", "llama-3.1-70b", "--method", "full"],
}
GOAL_SECONDS = 30.0
GOAL_RSS_BYTES = 2 * 10**9


def _vramplan() -> str:
    script = Path(sys.executable).with_name("vramplan")
    return str(script) if script.exists() else shutil.which("vramplan") or "vramplan"


def run_case(arguments: list[str]) -> tuple[float, int, dict[str, object]]:
    """(wall seconds, this child's peak RSS in bytes, the JSON result) of one traced case."""
    with tempfile.TemporaryFile("w+") as output:
        start = time.perf_counter()
        child = subprocess.Popen([_vramplan(), "trace", *arguments, *COMMON], stdout=output,
                                 stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise RuntimeError(f"vramplan trace {' '.join(arguments)} exited {child.returncode}")
        output.seek(0)
        return seconds, usage.ru_maxrss * 1024, json.loads(output.read())  # Linux: KiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="8b-lora,8b-full,70b-lora")
    args = parser.parse_args()
    names = [name.strip() for name in args.cases.split(",") if name.strip()]
    print(f"{'case':10} {'wall s':>7} {'peak RSS GB':>12} {'traced peak GB':>15}  phase")
    failures = 0
    for name in names:
        seconds, rss, result = run_case(CASES[name])
        print(f"{name:10} {seconds:7.1f} {rss / 1e9:12.2f} {result['peak_gb']:15.2f}  "
              f"{result['peak_phase']}")
        if name.startswith("8b-") and (seconds >= GOAL_SECONDS or rss >= GOAL_RSS_BYTES):
            failures += 1
    print(f"goal for 8B: < {GOAL_SECONDS:.0f} s and < {GOAL_RSS_BYTES / 1e9:.0f} GB RSS: "
          + ("met" if failures == 0 else f"missed by {failures} case(s)"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
