"""CLI start-up benchmark: `vramplan estimate --params 7 --json` against `python3 -c pass`.

Goal: the median wall time of the CLI within 6x that of a bare interpreter start.
Run: `.venv/bin/python benchmarks/cli_startup.py [--runs 40]`. Both commands run interleaved, so
load from other processes affects them alike; the ratio of medians is printed.

Bytecode: an installed package has its `.pyc` files (pip compiles them at install time), but an
editable checkout run with PYTHONDONTWRITEBYTECODE=1 recompiles every module at every start. The
benchmark therefore compiles the package's bytecode first, as an installation would.
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _wall_seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    script = Path(sys.executable).with_name("vramplan")
    cli = [str(script) if script.exists() else shutil.which("vramplan") or "vramplan",
           "estimate", "--params", "7", "--json"]
    bare = [sys.executable, "-c", "pass"]
    package = Path(__file__).resolve().parents[1] / "src" / "vramplan"
    compileall.compile_dir(package, quiet=1)
    for command in (bare, cli):  # warm the file cache
        _wall_seconds(command)
    bare_times, cli_times = [], []
    for _ in range(args.runs):
        bare_times.append(_wall_seconds(bare))
        cli_times.append(_wall_seconds(cli))
    bare_median = statistics.median(bare_times)
    cli_median = statistics.median(cli_times)
    print(f"python3 -c pass            median {bare_median * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"vramplan estimate --json   median {cli_median * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"ratio {cli_median / bare_median:.2f}x (goal: within 6x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
