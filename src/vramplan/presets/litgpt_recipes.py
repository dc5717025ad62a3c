"""litgpt's finetuning recipes (config_hub/finetune/<model>/<method>.yaml): what a run of one of
them used where a measured row leaves a cell empty.

Read at Lightning-AI/litgpt fd71063c (2024-07-24); the same values at 5895df10, e5493986 and
916a84ca, the commits that added the config_hub README's memory table. Keys are this project's
model names; the recipes' directories are `gemma2-9b`, `mistral-7b` (v0.1; `mistral-7b-v0.2`'s
recipes are identical), `phi-3` (Phi-3-mini-4k) and `tiny-llama`.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.vocab import Method


@dataclass(frozen=True, slots=True)
class LitgptRecipe:
    """One recipe's `devices`, `train.global_batch_size`, `train.micro_batch_size` and
    `lora_r` (None for full fine-tuning)."""

    devices: int
    global_batch_size: int
    micro_batch_size: int
    lora_r: int | None

    @property
    def accumulates(self) -> bool:
        """litgpt accumulates `global_batch_size // devices // micro_batch_size` micro-batches per
        optimizer step (litgpt/args.py `TrainArgs.gradient_accumulation_iters`): none when that
        is 1 (phi-2's full recipe on 2 devices, tiny-llama's LoRA and QLoRA)."""
        return self.global_batch_size // self.devices // self.micro_batch_size > 1


LITGPT_HUB_SOURCE = "config_hub/finetune"
"""How a row's source names one of these recipes (the config_hub README's table cites them)."""

LITGPT_HUB_RECIPES: dict[tuple[str, Method], LitgptRecipe] = {
    ("falcon-7b", Method.LORA): LitgptRecipe(1, 8, 1, 32),
    ("falcon-7b", Method.QLORA): LitgptRecipe(1, 8, 1, 32),
    ("gemma-2b", Method.FULL): LitgptRecipe(4, 16, 1, None),
    ("gemma-2b", Method.LORA): LitgptRecipe(1, 6, 2, 8),
    ("gemma-2b", Method.QLORA): LitgptRecipe(1, 6, 2, 16),
    ("gemma-7b", Method.LORA): LitgptRecipe(1, 6, 1, 16),
    ("gemma-7b", Method.QLORA): LitgptRecipe(1, 6, 1, 16),
    ("gemma-2-9b", Method.LORA): LitgptRecipe(1, 6, 1, 16),
    ("gemma-2-9b", Method.QLORA): LitgptRecipe(1, 6, 1, 16),
    ("llama-2-7b", Method.FULL): LitgptRecipe(4, 64, 4, None),
    ("llama-2-7b", Method.LORA): LitgptRecipe(1, 8, 2, 32),
    ("llama-2-7b", Method.QLORA): LitgptRecipe(1, 8, 2, 32),
    ("llama-3-8b", Method.FULL): LitgptRecipe(4, 64, 4, None),
    ("llama-3-8b", Method.LORA): LitgptRecipe(1, 8, 1, 32),
    ("llama-3-8b", Method.QLORA): LitgptRecipe(1, 8, 2, 32),
    ("llama-3.1-8b", Method.FULL): LitgptRecipe(4, 64, 4, None),
    ("llama-3.1-8b", Method.LORA): LitgptRecipe(1, 8, 1, 32),
    ("llama-3.1-8b", Method.QLORA): LitgptRecipe(1, 8, 2, 32),
    ("mistral-7b-v0.1", Method.LORA): LitgptRecipe(1, 8, 2, 32),
    ("mistral-7b-v0.1", Method.QLORA): LitgptRecipe(1, 8, 2, 32),
    ("phi-2", Method.FULL): LitgptRecipe(2, 8, 4, None),
    ("phi-2", Method.LORA): LitgptRecipe(1, 8, 4, 8),
    ("phi-2", Method.QLORA): LitgptRecipe(1, 8, 4, 8),
    ("phi-3-mini-4k", Method.FULL): LitgptRecipe(1, 8, 4, None),
    ("phi-3-mini-4k", Method.LORA): LitgptRecipe(1, 8, 4, 8),
    ("phi-3-mini-4k", Method.QLORA): LitgptRecipe(1, 8, 4, 8),
    ("stablelm-base-alpha-3b", Method.FULL): LitgptRecipe(2, 8, 1, None),
    ("stablelm-base-alpha-3b", Method.LORA): LitgptRecipe(1, 8, 1, 32),
    ("stablelm-base-alpha-3b", Method.QLORA): LitgptRecipe(1, 8, 1, 32),
    ("tinyllama-1.1b", Method.FULL): LitgptRecipe(1, 32, 4, None),
    ("tinyllama-1.1b", Method.LORA): LitgptRecipe(1, 8, 8, 32),
    ("tinyllama-1.1b", Method.QLORA): LitgptRecipe(1, 8, 8, 32),
}
