"""Trace against a real GPU: the fake count beside torch.cuda's peaks, for a few setups.

Needs a CUDA GPU (it exits 2 without one); never part of the tests. Each setup runs the fake trace
on the CPU, then the same two steps for real on the GPU with random weights, and prints the traced
peak, `torch.cuda.max_memory_allocated` and `max_memory_reserved` over step 2, and the gap
(allocated minus traced: workspaces and kernels that differ between CPU and GPU). Setups are small
enough for a 40 GB card. Run: `.venv/bin/python benchmarks/trace_gpu_check.py`.
"""

from __future__ import annotations

import sys
import time
from typing import Any

SETUPS: dict[str, dict[str, Any]] = {
    "qwen2.5-0.5b full fp32 adamw foreach": {
        "model": "qwen2.5-0.5b", "method": "full", "precision": "fp32", "optimizer": "adamw",
        "optimizer_impl": "foreach", "batch": 2, "seq_len": 1024},
    "qwen2.5-0.5b full bf16-true adamw fused": {
        "model": "qwen2.5-0.5b", "method": "full", "precision": "bf16-true",
        "optimizer": "adamw", "optimizer_impl": "fused", "batch": 2, "seq_len": 1024},
    "llama-3.2-1b lora q,v bf16-true": {
        "model": "llama-3.2-1b", "method": "lora", "lora_r": 16, "lora_targets": "q,v",
        "precision": "bf16-true", "batch": 4, "seq_len": 2048},
    "llama-3.2-1b lora checkpointing eager": {
        "model": "llama-3.2-1b", "method": "lora", "lora_targets": "all",
        "checkpointing": "full", "attention": "eager", "batch": 2, "seq_len": 2048},
    "llama-3.2-1b full mixed sgd-momentum": {
        "model": "llama-3.2-1b", "method": "full", "precision": "mixed",
        "optimizer": "sgd-momentum", "batch": 1, "seq_len": 1024},
    "llama-3.2-1b full amp adamw": {
        "model": "llama-3.2-1b", "method": "full", "precision": "amp", "batch": 1,
        "seq_len": 1024},
}


def main() -> int:
    import torch

    import vramplan

    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to compare", file=sys.stderr)
        return 2
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    print(f"{'setup':42} {'traced GB':>9} {'allocated GB':>12} {'reserved GB':>11} "
          f"{'gap GB':>7} {'s':>5}")
    for name, options in SETUPS.items():
        start = time.perf_counter()
        result = vramplan.trace(device="cuda", **options).value
        cuda = result.cuda
        if cuda is None:
            raise RuntimeError("the CUDA run returned no peaks")
        gap = cuda.max_allocated_bytes - result.peak_bytes
        print(f"{name:42} {result.peak_bytes / 1e9:9.3f} {cuda.max_allocated_bytes / 1e9:12.3f} "
              f"{cuda.max_reserved_bytes / 1e9:11.3f} {gap / 1e9:7.3f} "
              f"{time.perf_counter() - start:5.1f}", flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
