"""Trace against published measurements: every single-GPU training row of the case file that the
trace can run, its measured peak beside the traced one.

This is information, not a score to tune: the trace runs transformers' model code, peft and the
current bitsandbytes storage, while most published rows come from other stacks (litgpt has its own
model code, LoRA layers and chunked loss). Differences say where stacks differ.
Run: `.venv/bin/python benchmarks/trace_cases.py [--cases src/vramplan/data/cases.csv]`.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from vramplan.errors import VramplanError
from vramplan.requests.reading import read
from vramplan.requests.trace import trace_setup
from vramplan.requests.vocabulary import TRACE
from vramplan.tracer.run import run_trace
from vramplan.tracer.setup import TraceSetup

UNIT_BYTES = {"GB": 10**9, "GiB": 2**30, "MiB": 2**20}
DEFAULT_CASES = Path(__file__).resolve().parent.parent / "src" / "vramplan" / "data" / "cases.csv"


def traceable(row: dict[str, str]) -> bool:
    """Single-GPU training rows with a measured number (no sharding, no offload)."""
    return (row["method"] != "inference" and row["gpus"] == "1" and row["measured"] != "OOM"
            and row["sharding"] in ("", "none") and row["offload"] in ("", "none"))


def setup_of(row: dict[str, str]) -> TraceSetup:
    """The row's run read as `vramplan trace` reads its options (empty cells: the defaults)."""
    lora = row["method"] in ("lora", "qlora")
    values = {"model": row["model"], "method": row["method"], "precision": row["precision"],
              "optimizer": row["optimizer"], "optimizer_impl": row["optimizer_impl"],
              "quant": row["quant"] if row["method"] == "qlora" else "",
              "lora_r": row["lora_r"] if lora else "",
              "lora_targets": row["lora_targets"] if lora else "",
              "batch": row["batch"], "seq_len": row["seq_len"],
              "checkpointing": row["checkpointing"],
              "attention": row["attention"] if row["attention"] in ("eager", "sdpa") else "sdpa"}
    return trace_setup(read(TRACE, values, text=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    args = parser.parse_args()
    with args.cases.open(encoding="utf-8") as file:
        rows = [row for row in csv.DictReader(file) if traceable(row)]
    print(f"{'case':50} {'framework':9} {'measured GB':>11} {'traced GB':>9} {'ratio':>6} {'s':>5}")
    for row in rows:
        start = time.perf_counter()
        try:
            result = run_trace(setup_of(row))
        except VramplanError as error:
            print(f"{row['id']:50} skipped: {error}")
            continue
        measured = float(row["measured"]) * UNIT_BYTES[row["unit"]]
        print(f"{row['id']:50} {row['framework']:9} {measured / 1e9:11.2f} "
              f"{result.peak_bytes / 1e9:9.2f} {result.peak_bytes / measured:6.2f} "
              f"{time.perf_counter() - start:5.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
