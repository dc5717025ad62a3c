"""transformers' `generate` on the CPU against vramplan's inference estimate for the same release:
a tiny model of each family (Llama, GPT-NeoX, GPT-2) in bf16, every storage an ATen op makes
tracked until it is freed by the project's tracer (`vramplan.tracer.tracker.StorageTracker`),
the peak beside the estimate's allocated memory less the weights, with the behaviours of the
installed release (`vramplan.presets.frameworks.transformers.transformers_code` at its wheel's date:
the two caches and the prefill's logits of the legacy cache, every prompt position's logits, the
prompt cache's views of a fused projection, the per-layer causal masks, GPT-NeoX's 16-bit softmax).

The second `generate` call is measured (the first builds what later calls reuse). The logits
of this tiny vocabulary (8,000) dominate the prefill where every prompt position's logits are
returned, so the runs at one and four sequences separate the cache and the prefill.

Measured on 2026-12-05 (torch 2.13.0+cpu; transformers v4.41.2, v4.44.2, v4.46.3, v4.51.3,
v4.55.4 and v5.25.0; 3 families x SDPA and eager x 3 shapes, 108 runs; in v4.41.2 GPT-NeoX and
GPT-2 have no SDPA path and run eager): SDPA within -1.9 to -0.5 % (Llama), -0.6 to +0.6 %
(GPT-NeoX), -3.3 to 0.0 % (GPT-2); eager within -1.0 to +9.2 % (Llama), -0.5 to +13.5 %
(GPT-NeoX), -9.5 to +4.3 % (GPT-2), the far ones at 4 x 256 tokens from v4.46 on. The same
runs before this stop's mechanisms: v4.46.3's GPT-NeoX and GPT-2 -10 to -25 % (the prompt
logits of model types that took no `logits_to_keep`, and v4.45-v4.46's copy of them), v4.51.3's
GPT-2 -11.7 %, v5.25.0's GPT-2 SDPA -33 % (the Python tanh GELU's four intermediate-wide tensors
and the learned position embeddings). Wrapped in `torch.inference_mode()` (as benchmark scripts
often do) Llama's eager prefill read about 2 bytes a score less than under `generate`'s own
`torch.no_grad()`, which is what this script runs (docs/open-leads.md).
Never part of the tests (the result depends on the installed transformers).
Run: `.venv/bin/python benchmarks/hf_generate_cpu.py` (today's transformers), or in a venv of
an older release: `python -m venv /tmp/tf && /tmp/tf/bin/pip install torch==2.13.0
transformers==4.41.2 && PYTHONPATH=src /tmp/tf/bin/python benchmarks/hf_generate_cpu.py`.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

from vramplan.inference.estimate import estimate_inference
from vramplan.inference.setup import inference_inputs, transformers_generate_settings
from vramplan.model.hf_config import parse_config
from vramplan.parts import PartKind
from vramplan.presets.frameworks.transformers import TransformersCode, transformers_code
from vramplan.presets.quant_formats import find_format
from vramplan.tracer.tracker import StorageTracker
from vramplan.vocab import Attention, ComputeDtype, Engine, KvDtype

RELEASES = {"4.41.2": date(2024, 5, 30), "4.44.2": date(2024, 8, 22),
            "4.46.3": date(2024, 11, 18), "4.51.3": date(2025, 4, 14),
            "4.55.4": date(2025, 8, 22)}
"""The releases measured, by the date of their wheel's newest file; a release not listed is
estimated as today's code."""

VOCAB, POSITIONS = 8000, 4096
FAMILIES: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
              "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 4,
              "vocab_size": VOCAB, "max_position_embeddings": POSITIONS,
              "tie_word_embeddings": False},
    "gpt_neox": {"model_type": "gpt_neox", "hidden_size": 256, "intermediate_size": 1024,
                 "num_attention_heads": 8, "num_hidden_layers": 4, "vocab_size": VOCAB,
                 "max_position_embeddings": POSITIONS, "rotary_pct": 0.25,
                 "tie_word_embeddings": False},
    "gpt2": {"model_type": "gpt2", "n_embd": 256, "n_head": 8, "n_layer": 4,
             "vocab_size": VOCAB, "n_positions": POSITIONS},
}
SHAPES = ((2, 512, 8), (1, 1024, 16), (4, 256, 32))
"""(sequences, prompt tokens, new tokens)."""


def measured_peak(keys: dict[str, Any], attention: str,
                  shape: tuple[int, int, int]) -> tuple[int, str]:
    """The peak bytes `generate`'s tensors hold beyond the model's parameters, with its buffers,
    and the attention the model runs (a release whose family has no SDPA path runs eager)."""
    settings = dict(keys)
    config = AutoConfig.for_model(settings.pop("model_type"), **settings)
    torch.manual_seed(0)
    try:
        model = AutoModelForCausalLM.from_config(config, attn_implementation=attention)
    except ValueError:  # a release whose module has no SDPA path refuses it when asked
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    model = model.to(torch.bfloat16).eval()
    batch, prompt, new = shape
    ids = torch.randint(10, VOCAB, (batch, prompt))
    generation = GenerationConfig(max_new_tokens=new, min_new_tokens=new, do_sample=False,
                                  eos_token_id=None, pad_token_id=0, use_cache=True)
    # `generate` runs under its own `torch.no_grad()`; wrapped in `torch.inference_mode()`
    # Llama's eager prefill holds 2 bytes a score fewer (CPU, v5.25.0), not what a plain call does
    model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=generation)
    tracker = StorageTracker()
    for tensor in (*model.parameters(), *model.buffers()):
        tracker.exclude(tensor)
    tracker.start_recording()
    with tracker:
        model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=generation)
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    return tracker.peak + buffers, str(model.config._attn_implementation)


def estimated_peak(keys: dict[str, Any], attention: str, shape: tuple[int, int, int],
                   code: TransformersCode) -> int:
    """The estimate's allocated memory less the weights, with `code`'s behaviours."""
    arch = parse_config({**keys, "torch_dtype": "bfloat16"})
    batch, prompt, new = shape
    estimate = estimate_inference(inference_inputs(
        arch, find_format("bf16"), prompt + new, batch=batch, prompt=prompt,
        kv_dtype=KvDtype.BF16, compute_dtype=ComputeDtype.BF16, engine=Engine.HF,
        attention=Attention.EAGER if attention == "eager" else Attention.SDPA,
        **transformers_generate_settings(arch, code, ComputeDtype.BF16).as_kwargs()))
    return estimate.allocated_bytes - estimate.bytes_of(PartKind.WEIGHTS)


def main() -> None:
    version = transformers.__version__
    code = transformers_code(RELEASES.get(version))
    print(f"transformers {version} (estimated as the code of {RELEASES.get(version, 'today')}),"
          f" torch {torch.__version__}")
    for family, keys in FAMILIES.items():
        for attention in ("sdpa", "eager"):
            for shape in SHAPES:
                measured, ran = measured_peak(keys, attention, shape)
                estimated = estimated_peak(keys, ran, shape, code)
                batch, prompt, new = shape
                print(f"  {family:9} {attention:5} (ran {ran:5}) {batch} x {prompt:4} + {new:2}:"
                      f" measured"
                      f" {measured / 1e6:7.2f} MB, estimated {estimated / 1e6:7.2f} MB"
                      f" ({(estimated - measured) / measured * 100:+6.1f} %)")


if __name__ == "__main__":
    main()
