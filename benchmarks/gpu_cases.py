"""Measured cases of our own, for a machine with a CUDA GPU: a matrix of real training steps
(full, LoRA, QLoRA; SDPA and eager attention; with and without checkpointing; a few shapes) on
registry models built with random weights (nothing is downloaded), each run in a fresh process,
written as rows of the case format with their allocated, reserved and device peaks.

    .venv/bin/python benchmarks/gpu_cases.py --out measured.csv            # the quick matrix
    .venv/bin/python benchmarks/gpu_cases.py --matrix full --out all.csv   # every combination
    .venv/bin/python benchmarks/gpu_cases.py --dry-run                     # no GPU: the plan

Then `vramplan validate measured.csv` scores the model on them. Never run in CI: nothing in the
tests depends on a GPU. QLoRA needs bitsandbytes (`pip install bitsandbytes`).

What one run does (`_measure`, in a child process): builds the transformers model from the
preset's config.json on the GPU in bf16, applies the method (peft LoRA on q,v with r 16; QLoRA
also replaces every block linear by a bitsandbytes `Linear4bit` nf4 storing bf16 compute, as
transformers' loader does), enables transformers' checkpointing when asked, and runs three
steps of a plain loop (forward with labels, backward, torch AdamW foreach step,
`zero_grad(set_to_none=True)`). Peaks are reset after the first step (the optimizer states
exist), as `vramplan trace` reports its second step: `max_memory_allocated`,
`max_memory_reserved` over steps 2 and 3, and the device-wide used memory (`mem_get_info`: total
less free, the CUDA context included) sampled after each phase of those steps (a lower bound of
its peak, as the samples miss transient moments).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

COLUMNS = ("id", "source", "model", "method", "precision", "optimizer", "optimizer_impl",
           "quant", "lora_r", "lora_targets", "batch", "seq_len", "new_tokens", "checkpointing",
           "attention", "loss", "gpus", "gpu", "sharding", "offload", "framework", "metric",
           "measured", "unit", "notes")
LORA_R = 16
LORA_TARGETS = "q;v"
STEPS = 3


@dataclass(frozen=True)
class Run:
    """One training step configuration, as the case format names it."""

    model: str
    method: str
    attention: str
    checkpointing: str
    batch: int
    seq_len: int

    @property
    def case_id(self) -> str:
        return (f"vramplan-gpu-{self.model}-{self.method}-{self.attention}-"
                f"{self.checkpointing}-b{self.batch}-s{self.seq_len}")


QUICK = [Run(model, method, "sdpa", checkpointing, batch, seq_len)
         for model, method, (checkpointing, batch, seq_len) in itertools.product(
             ("qwen2.5-0.5b", "llama-3.2-1b"), ("full", "lora", "qlora"),
             (("none", 2, 512), ("full", 4, 2048)))]
"""12 runs, about 5 minutes on an H100 or H200."""
FULL = [Run(model, method, attention, checkpointing, batch, seq_len)
        for model, method, attention, checkpointing, (batch, seq_len) in itertools.product(
            ("qwen2.5-0.5b", "llama-3.2-1b"), ("full", "lora", "qlora"), ("sdpa", "eager"),
            ("none", "full"), ((1, 512), (4, 512), (2, 2048)))]
"""72 runs."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matrix", choices=("quick", "full"), default="quick")
    parser.add_argument("--out", type=Path, default=Path("gpu_cases.csv"))
    parser.add_argument("--dry-run", action="store_true",
                        help="print the runs and the rows' shape; needs no GPU")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one run, as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_measure(Run(**json.loads(args.one)))))
        return
    runs = QUICK if args.matrix == "quick" else FULL
    if args.dry_run:
        for run in runs:
            print(run.case_id)
        print(f"{len(runs)} runs; rows per run: allocated, reserved, device; columns: "
              f"{','.join(COLUMNS)}")
        return
    _require_cuda()
    rows: list[dict[str, str]] = []
    for run in runs:
        result = _child(run)
        print(f"{run.case_id}: {result}", flush=True)
        rows += _rows(run, result)
        _write(args.out, rows)
    print(f"{len(rows)} rows written to {args.out}")


def _require_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        sys.exit("gpu_cases.py measures real GPU steps: no CUDA device here "
                 "(--dry-run prints the plan)")


def _child(run: Run) -> dict[str, Any]:
    """One run in a fresh process: its own CUDA context and caching allocator."""
    done = subprocess.run([sys.executable, __file__, "--one", json.dumps(asdict(run))],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"error": tail[0]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _measure(run: Run) -> dict[str, Any]:
    import torch

    from vramplan.presets.models import find_model

    torch.manual_seed(0)
    model = _model(dict(find_model(run.model).config), run)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-5, foreach=True)
    vocab = int(model.config.vocab_size)
    device_used = 0
    for step in range(STEPS):
        if step == 1:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        ids = torch.randint(0, vocab, (run.batch, run.seq_len), device="cuda")
        loss = model(input_ids=ids, labels=ids).loss
        device_used = max(device_used, _device_used()) if step else device_used
        loss.backward()
        del loss
        device_used = max(device_used, _device_used()) if step else device_used
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        device_used = max(device_used, _device_used()) if step else device_used
    torch.cuda.synchronize()
    return {"allocated": torch.cuda.max_memory_allocated(),
            "reserved": torch.cuda.max_memory_reserved(), "device": device_used,
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "capacity": torch.cuda.get_device_properties(0).total_memory}


def _device_used() -> int:
    import torch

    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return int(total - free)


def _model(config: dict[str, Any], run: Run) -> Any:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    model_type = config.pop("model_type")
    for key in ("torch_dtype", "dtype", "architectures", "transformers_version"):
        config.pop(key, None)
    hf_config = AutoConfig.for_model(model_type, **config)
    hf_config.use_cache = False
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(  # type: ignore[no-untyped-call]
            hf_config, dtype=torch.bfloat16, attn_implementation=run.attention)
    model.train()
    if run.method == "full":
        model.requires_grad_(True)
    else:
        if run.method == "qlora":
            _quantize_blocks(model)
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(
            r=LORA_R, lora_alpha=2 * LORA_R, lora_dropout=0.0,
            target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
            autocast_adapter_dtype=False)
    if run.checkpointing == "full":
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if run.method != "full":
            base.enable_input_require_grads()
    return model


def _quantize_blocks(model: Any) -> None:
    """Every linear of the blocks as a bitsandbytes nf4 `Linear4bit` (the head stays bf16, as
    transformers' loader keeps it: `get_keys_to_not_convert`)."""
    import bitsandbytes as bnb
    import torch

    blocks = model.model.layers
    for block in blocks:
        for name, module in list(block.named_modules()):
            if not isinstance(module, torch.nn.Linear):
                continue
            parent = block.get_submodule(name.rsplit(".", 1)[0]) if "." in name else block
            quantized = bnb.nn.Linear4bit(module.in_features, module.out_features,
                                          bias=module.bias is not None,
                                          compute_dtype=torch.bfloat16, quant_type="nf4")
            quantized.weight = bnb.nn.Params4bit(module.weight.data.cpu(), requires_grad=False,
                                                 quant_type="nf4")
            if module.bias is not None:
                quantized.bias = module.bias
            quantized = quantized.cuda()
            setattr(parent, name.rsplit(".", 1)[-1], quantized)
            del module
    torch.cuda.empty_cache()


def _rows(run: Run, result: dict[str, Any]) -> list[dict[str, str]]:
    if "error" in result:
        return []
    gpu_name = _catalogue_name(result["gpu"], result["capacity"])
    rows = []
    for metric in ("allocated", "reserved", "device"):
        rows.append({
            "id": f"{run.case_id}-{metric}",
            "source": f"vramplan benchmarks/gpu_cases.py on {result['gpu']}, torch "
                      f"{result['torch']}",
            "model": run.model, "method": run.method, "precision": "bf16-true",
            "optimizer": "adamw", "optimizer_impl": "foreach",
            "quant": "nf4" if run.method == "qlora" else "none",
            "lora_r": str(LORA_R) if run.method != "full" else "",
            "lora_targets": LORA_TARGETS if run.method != "full" else "",
            "batch": str(run.batch), "seq_len": str(run.seq_len), "new_tokens": "",
            "checkpointing": run.checkpointing, "attention": run.attention,
            "loss": "standard", "gpus": "1", "gpu": gpu_name, "sharding": "none",
            "offload": "none", "framework": "generic", "metric": metric,
            "measured": f"{result[metric] / 2**30:.4f}", "unit": "GiB",
            "notes": f"random weights; {STEPS} steps, peaks over steps 2-{STEPS} (after "
                     f"reset_peak_memory_stats); no gradient accumulation"
                     + ("; device: mem_get_info samples after forward, backward and step, "
                        "a lower bound" if metric == "device" else ""),
        })
    return rows


def _catalogue_name(device_name: str, capacity_bytes: int) -> str:
    """The catalogue's card for this device (by its name), else a name ending in its size."""
    from vramplan.presets.gpus import GPUS

    for gpu in GPUS:
        label = gpu.display_name.lower()
        if label in device_name.lower() or device_name.lower() in label:
            return str(gpu.name)
    return f"cuda-{round(capacity_bytes / 2**30)}gb"


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
