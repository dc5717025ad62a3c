"""Accuracy of the shipped case files when their rows are written with less: how much of it rests on
what only the project's own rows say, and so how a row written by someone else may score.

The held-out rows that score vramplan each turn are written in the format's vocabulary by other
hands: six frameworks (`hf`, `litgpt`, `torchtune`, `deepspeed`, `megatron`, `generic`), cells left
empty for "the framework's default", notes in their own words. Each variant below rewrites every
row of both shipped files one way and scores them as `benchmarks/accuracy.py` does:

- `as written`: the files unchanged;
- `six frameworks`: a stack the format has no word for written as its nearest word (torchtitan as
  `generic`; axolotl, LLaMA-Factory, accelerate and Unsloth as `hf`), the notes kept;
- `no optimizer_impl`, `no loss`, `no attention`, `no checkpointing`, `no precision`, `no
  optimizer`, `no sharding`, `no offload`: that cell left empty on every training row, the notes
  kept (what the notes and the stack's defaults give back);
- `no notes`: the notes emptied (what the cells alone give: model-parallel sizes, compile,
  dates and the rest that the format has no column for are lost);
- `in words`: every value the format names written as people write it in a table instead
  (`IN_WORDS`: `DeepSpeed ZeRO-3`, `FSDP (full shard)`, `activation checkpointing`,
  `flash_attention_2`, `8-bit AdamW`, `NF4 + DQ`, `torch.cuda.max_memory_allocated()`,
  `2048 tokens`, `21.3 GB` with the unit cell empty, `['q_proj', 'v_proj']`, ...): it scores
  as written when every one of them is read.

Run: `.venv/bin/python benchmarks/written_differently.py` (about 9 minutes on 2 cores).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from vramplan.validation import (
    SHIPPED_CASE_FILES,
    ValidationReport,
    parse_cases,
    score_cases,
    shipped_cases,
)

Row = dict[str, str]

FORMAT_FRAMEWORKS = {"torchtitan": "generic", "axolotl": "hf", "llamafactory": "hf",
                     "accelerate": "hf", "unsloth": "hf"}
"""The format's word for each stack it has none for (../shared/validation/FORMAT.md)."""


def _training_cell_emptied(column: str) -> Callable[[Row], None]:
    def rewrite(row: Row) -> None:
        if row["method"] != "inference":
            row[column] = ""
    return rewrite


def _six_frameworks(row: Row) -> None:
    row["framework"] = FORMAT_FRAMEWORKS.get(row["framework"], row["framework"])


def _no_notes(row: Row) -> None:
    row["notes"] = ""


IN_WORDS: dict[str, dict[str, str]] = {
    "method": {"full": "full fine-tuning", "inference": "generation"},
    "precision": {"mixed": "mixed precision", "amp": "bf16 AMP", "bf16-true": "pure bf16",
                  "fp32": "float32"},
    "optimizer": {"adamw": "torch.optim.AdamW", "adamw-8bit": "8-bit AdamW",
                  "paged-adamw": "paged_adamw_32bit", "paged-adamw-8bit": "PagedAdamW8bit",
                  "sgd": "SGD"},
    "optimizer_impl": {"for-loop": "single_tensor", "foreach": "multi_tensor",
                       "in-backward": "optimizer_in_bwd"},
    "quant": {"nf4": "4-bit NF4", "nf4-dq": "NF4 + DQ", "int8": "LLM.int8()"},
    "checkpointing": {"full": "activation checkpointing", "none": "disabled"},
    "attention": {"flash": "flash_attention_2", "sdpa": "scaled_dot_product_attention",
                  "eager": "eager (math)"},
    "loss": {"chunked": "LigerFusedLinearCrossEntropyLoss", "standard": "CrossEntropyLoss"},
    "sharding": {"zero1": "DeepSpeed ZeRO-1", "zero2": "DeepSpeed ZeRO-2",
                 "zero3": "DeepSpeed ZeRO-3", "fsdp": "FSDP (full shard)",
                 "fsdp-grad-op": "SHARD_GRAD_OP", "ddp": "DistributedDataParallel",
                 "none": "none (no sharding)"},
    "offload": {"optimizer": "ZeRO-Offload", "params-optimizer": "optimizer+params",
                "none": "no"},
    "framework": {"hf": "transformers + peft", "megatron": "Megatron-LM"},
    "metric": {"allocated": "torch.cuda.max_memory_allocated()",
               "reserved": "max_memory_reserved", "device": "nvidia-smi (used)"},
}
"""Each value of the format as people write it in a table, read by `vramplan validate`
(docs/cases-format.md)."""

_COUNTED = {"batch": "per GPU", "seq_len": "tokens", "gpus": "GPUs"}


def _in_words(row: Row) -> None:
    for column, words in IN_WORDS.items():
        row[column] = words.get(row[column], row[column])
    for column, counted in _COUNTED.items():
        if row[column]:
            row[column] = f"{row[column]} {counted}"
    if row["lora_targets"] and row["lora_targets"] not in ("all", "all;head"):
        names = [f"'{name}_proj'" if name in ("q", "k", "v", "o", "gate", "up", "down")
                 else f"'{name}'" for name in row["lora_targets"].split(";")]
        row["lora_targets"] = f"[{', '.join(names)}]"
    if row["measured"].upper() != "OOM":
        row["measured"], row["unit"] = f"{row['measured']} {row['unit']}", ""


VARIANTS: dict[str, Callable[[Row], None] | None] = {
    "as written": None,
    "six frameworks": _six_frameworks,
    "no optimizer_impl": _training_cell_emptied("optimizer_impl"),
    "no loss": _training_cell_emptied("loss"),
    "no attention": _training_cell_emptied("attention"),
    "no checkpointing": _training_cell_emptied("checkpointing"),
    "no precision": _training_cell_emptied("precision"),
    "no optimizer": _training_cell_emptied("optimizer"),
    "no sharding": _training_cell_emptied("sharding"),
    "no offload": _training_cell_emptied("offload"),
    "no notes": _no_notes,
    "in words": _in_words,
}


def rewritten(text: str, rewrite: Callable[[Row], None] | None) -> str:
    """The case file `text` with `rewrite` applied to every row."""
    if rewrite is None:
        return text
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        rewrite(row)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _line(title: str, report: ValidationReport) -> str:
    def pct(value: float | None) -> str:
        return f"{value:6.2f} %" if value is not None else "     -"

    return (f"{title:18} {report.rows_scored:4} rows  median {pct(report.median_abs_error_pct)}"
            f"  p90 {pct(report.p90_abs_error_pct)}  max {pct(report.max_abs_error_pct)}"
            f"  OOM right {report.oom_right}/{report.oom_total}")


def main() -> None:
    texts = {name: shipped_cases(name) for name in SHIPPED_CASE_FILES}
    for variant, rewrite in VARIANTS.items():
        reports = []
        for text in texts.values():
            parsed = parse_cases(rewritten(text, rewrite))
            reports.append(score_cases(parsed.cases, parsed.unread))
        print(f"== {variant}")
        for name, report in zip(texts, reports, strict=True):
            print("  " + _line(name, report))
        print("  " + _line("both files", ValidationReport(
            tuple(s for r in reports for s in r.scores),
            tuple(u for r in reports for u in r.unread))))


if __name__ == "__main__":
    main()
