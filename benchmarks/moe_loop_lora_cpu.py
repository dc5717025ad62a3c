"""What transformers 4's per-expert Mixtral loop saves for backward under peft's LoRA, on the CPU.

A 2-layer Mixtral (8 experts, top-2, hidden 128, expert width 352, bf16 weights, SDPA) runs one
forward of 2 x 128 tokens under `torch.autograd.graph.saved_tensors_hooks`, which records the
storage of every tensor autograd saves (parameters left out). The model is adapted by peft's LoRA
(r 8, no dropout) on q and v alone, then on q, v and the experts' w1, w2 and w3; with bf16
adapters (`autocast_adapter_dtype=False`) and with peft's default fp32 ones. No autocast: a
plain loop. What adapting the experts adds is what
`vramplan.training.activations.moe._loop_expert_adapters` counts (tests/test_activations.py
`test_peft_adapters_on_the_per_expert_loop_keep_the_experts_rows`).

Measured on 2026-12-06 (torch 2.13.0+cpu, transformers 4.48.3, peft 0.14.0): 3,960,832 and
4,993,024 bytes with bf16 adapters (+1,032,192: 2,016 a token a layer), 4,370,432 and 6,959,104
with fp32 adapters (+2,588,672: 5,056 a token a layer). Never part of the tests (transformers 4
is not the project's).
Run: `python -m venv /tmp/tf4 && /tmp/tf4/bin/pip install torch==2.13.0 transformers==4.48.3
peft==0.14.0 accelerate==1.3.0 && /tmp/tf4/bin/python benchmarks/moe_loop_lora_cpu.py`.
"""

from __future__ import annotations

import torch
from peft import LoraConfig, get_peft_model
from transformers import MixtralConfig, MixtralForCausalLM

CONFIG = MixtralConfig(vocab_size=512, hidden_size=128, intermediate_size=352,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       num_local_experts=8, num_experts_per_tok=2, max_position_embeddings=1024,
                       sliding_window=None, attn_implementation="sdpa")


def saved_bytes(targets: list[str], fp32_adapters: bool) -> int:
    """Bytes of the storages autograd saves in one forward, parameters left out."""
    torch.manual_seed(0)
    model = MixtralForCausalLM(CONFIG).to(torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=targets, task_type="CAUSAL_LM"),
                           autocast_adapter_dtype=fp32_adapters)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in params:
            seen[storage.data_ptr()] = max(seen.get(storage.data_ptr(), 0), storage.nbytes())
        return tensor

    ids = torch.randint(0, CONFIG.vocab_size, (2, 128))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(input_ids=ids)
    return sum(seen.values())


def main() -> None:
    tokens_layers = 2 * 128 * CONFIG.num_hidden_layers
    for fp32 in (False, True):
        attention = saved_bytes(["q_proj", "v_proj"], fp32)
        experts = saved_bytes(["q_proj", "v_proj", "w1", "w2", "w3"], fp32)
        print(f"{'fp32' if fp32 else 'bf16'} adapters: q,v {attention:,} B; q,v,w1,w2,w3 "
              f"{experts:,} B; +{experts - attention:,} B, "
              f"{(experts - attention) // tokens_layers:,} a token a layer")


if __name__ == "__main__":
    main()
