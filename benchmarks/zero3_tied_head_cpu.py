"""Does a tied head built inside `zero.Init` keep its own partition alive? Checked on the CPU.

transformers builds a model inside DeepSpeed's `zero.Init` when ZeRO-3 is configured
(`from_pretrained` under `HfDeepSpeedConfig`). A head tied to the input embedding is first made
as its own `nn.Linear`, whose weight `zero.Init` converts and partitions like any other (its
"finished initializing model with N parameters" counts it: llm-action's bloomz-560m log prints
0.82B for a 0.56B model); `post_init()` then ties the head to the embedding, and the first
weight is dropped. `_convert_to_deepspeed_param` gives each parameter closures that refer to it
(`param.all_gather`, ...), so the dropped weight, with its partition, lives in a reference cycle
until Python's cyclic garbage collector runs. This script loads a small tied-embedding BLOOM
(250,880 x 64 embedding, 2 blocks) that way on one rank over gloo, then lists the ZeRO
parameters alive outside the model (their `ds_id`, shape and partition size) after the load,
after `deepspeed.initialize`, and after each of a few steps, with the number of full (generation
2) collections Python ran in between (`gc.callbacks`).

Measured on 2026-12-06 (torch 2.13.0+cpu, transformers 5.25.0, DeepSpeed 0.19.8, Python 3.11):
after the load the dropped head's parameter is alive with its whole partition (16,056,320
values, one rank); `deepspeed.initialize` runs a full collection and it is gone before the first
step, and no step brings it back. DeepSpeed up to the v0.16 line (read at v0.10.0 and v0.16.0)
also calls `gc.collect()` at the start of its stage-3 optimizer (`see_memory_usage("Stage 3
initialize beginning", force=True)`); 0.19.8 no longer forces it. So on these versions the copy
does not reach the training step, and it is not what llm-action-peft-bloomz-560m-lora-r8-zero3-
fp32-1gpu-b8-s64 (DeepSpeed 0.10.0, torch 1.13.1) holds beyond the estimate before its optimizer
exists (docs/open-leads.md, DeepSpeed): that log's figure is read after the forced collection.
Never part of the tests (DeepSpeed is not a dependency).
Run: `python -m venv /tmp/ds && /tmp/ds/bin/pip install torch==2.13.0 transformers==5.25.0
deepspeed==0.19.8 && PYTHONPATH=src /tmp/ds/bin/python benchmarks/zero3_tied_head_cpu.py
[--steps 3]`.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
from typing import Any

import torch

VOCAB = 250_880
"""BLOOM's vocabulary (bigscience/bloom-560m config.json), so the head is the largest weight."""

DS_CONFIG: dict[str, Any] = {
    "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3},
    "zero_allow_untested_optimizer": True, "zero_force_ds_cpu_optimizer": False,
}


def orphans(model: torch.nn.Module) -> list[tuple[int, tuple[int, ...], int]]:
    """ZeRO parameters alive outside `model` that still hold a partition: (ds_id, whole shape,
    partition values)."""
    mine = {id(p) for p in model.parameters()}
    return [(o.ds_id, tuple(o.ds_shape), o.ds_tensor.numel()) for o in gc.get_objects()
            if isinstance(o, torch.nn.Parameter) and hasattr(o, "ds_id") and id(o) not in mine
            and o.ds_tensor is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    for name, value in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29541"), ("RANK", "0"),
                        ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0")):
        os.environ.setdefault(name, value)
    import deepspeed
    from transformers import AutoModelForCausalLM, BloomConfig, BloomForCausalLM
    from transformers.integrations import HfDeepSpeedConfig

    deepspeed.init_distributed(dist_backend="gloo")
    full_collections = [0]

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full_collections[0] += 1

    gc.callbacks.append(count)

    def report(moment: str) -> None:
        print(f"{moment:>22}: full collections so far {full_collections[0]}, "
              f"orphan ZeRO parameters {orphans(model)}")

    with tempfile.TemporaryDirectory() as folder:
        BloomForCausalLM(BloomConfig(vocab_size=VOCAB, hidden_size=64, n_layer=2,
                                     n_head=4)).save_pretrained(folder)
        zero3 = HfDeepSpeedConfig(DS_CONFIG)  # noqa: F841 (from_pretrained reads it while alive)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    print("head tied to the embedding:",
          model.lm_head.weight is model.transformer.word_embeddings.weight)
    report("after from_pretrained")
    engine, *_ = deepspeed.initialize(model=model, config=DS_CONFIG,
                                      optimizer=torch.optim.AdamW(model.parameters()))
    report("after initialize")
    ids = torch.randint(0, 1_000, (1, 16))
    for step in range(args.steps):
        engine.backward(engine(ids, labels=ids).loss)
        engine.step()
        report(f"after step {step + 1}")


if __name__ == "__main__":
    main()
