"""What the KV cache of a transformers prefill keeps alive: the bytes of the storages behind its
keys and values against the bytes of the keys and values themselves, for a tiny model of each
family with a fused q/k/v projection (Llama, with separate projections, as the control).
Measured on the CPU with whatever transformers the interpreter has; a ratio above 1 means the
cache entries are views of a larger tensor, each layer's fused projection output, which they
keep alive until a decode step replaces them
(`vramplan.presets.frameworks.transformers.TransformersCode.fused_qkv_cache_views`).

Why: transformers' own SDPA benchmark of Pythia-410m (PR #31031's table, 4 sequences of 2,048
prompt tokens) measured the same `generate` peak with eager and SDPA attention, about one prompt
cache above the estimate: the peak is the first decode step, where the prefill's cache, the
prefill's logits and the new cache are alive, and the prefill's cache held twice its keys and
values.

Measured on 2026-12-05 (torch 2.13.0+cpu; hidden 256, 8 heads, 2 layers, 2 x 16 tokens, eager):
v4.31.0, v4.35.2, v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.2, v4.48.3, v4.51.3, v4.53.3 and
v4.55.4: GPT-2 x1.50 (key and value are views of `c_attn`'s output), MPT x1.50 (from v4.35.2,
its first release here), GPT-NeoX x2.00 (the value a view, the key rebuilt by the rotary
embedding), GPT-BigCode with multi-query attention x5.00 (`key_value`, a view of `c_attn`'s
output of 8 query heads and one key and value), Phi-3 with 2 of 8 key-value heads x3.50 (from
v4.41.2; not in v4.35.2), BLOOM x1.50 from v4.44.2 (x1.00 in v4.43.4 and before), Llama and
Falcon (multi-query and the new decoder architecture) x1.00. v4.56.0, v4.56.2, v5.0.0 and
v5.25.0: x1.00 for every family (`DynamicLayer.update` concatenates onto an empty tensor).
Never part of the tests (the result depends on the installed transformers).
Run: `.venv/bin/python benchmarks/hf_cache_views_cpu.py` (today's transformers), or in a venv
of an older release: `python -m venv /tmp/tf && /tmp/tf/bin/pip install torch==2.13.0
transformers==4.41.2 && /tmp/tf/bin/python benchmarks/hf_cache_views_cpu.py`.
"""

from __future__ import annotations

from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

HIDDEN, HEADS, LAYERS, VOCAB = 256, 8, 2, 512
BATCH, TOKENS = 2, 16

FAMILIES: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN,
              "num_attention_heads": HEADS, "num_key_value_heads": 2,
              "num_hidden_layers": LAYERS},
    "gpt2": {"model_type": "gpt2", "n_embd": HIDDEN, "n_head": HEADS, "n_positions": 128,
             "n_layer": LAYERS},
    "gpt_neox": {"model_type": "gpt_neox", "hidden_size": HIDDEN,
                 "intermediate_size": 4 * HIDDEN, "num_attention_heads": HEADS,
                 "rotary_pct": 0.25, "num_hidden_layers": LAYERS},
    "gpt_bigcode": {"model_type": "gpt_bigcode", "n_embd": HIDDEN, "n_head": HEADS,
                    "n_positions": 128, "multi_query": True, "n_layer": LAYERS},
    "phi3": {"model_type": "phi3", "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN,
             "num_attention_heads": HEADS, "num_key_value_heads": 2, "pad_token_id": 0,
             "num_hidden_layers": LAYERS},
    "falcon-mqa": {"model_type": "falcon", "hidden_size": HIDDEN, "num_attention_heads": HEADS,
                   "multi_query": True, "new_decoder_architecture": False,
                   "num_hidden_layers": LAYERS},
    "falcon-new": {"model_type": "falcon", "hidden_size": HIDDEN, "num_attention_heads": HEADS,
                   "num_kv_heads": 2, "new_decoder_architecture": True,
                   "num_hidden_layers": LAYERS},
    "bloom": {"model_type": "bloom", "hidden_size": HIDDEN, "n_head": HEADS, "n_layer": LAYERS},
    "mpt": {"model_type": "mpt", "d_model": HIDDEN, "n_heads": HEADS, "max_seq_len": 128,
            "expansion_ratio": 2, "n_layers": LAYERS},
}


def cache_layers(cache: Any) -> list[tuple[torch.Tensor, ...]]:
    """Each layer's cached tensors: a legacy tuple of (key, value) pairs (GPT-BigCode's one
    `key_value` tensor a layer), a `DynamicCache` of v4.3x-v4.5x (`key_cache`, `value_cache`),
    or of v4.56 on (`layers`, inside an `EncoderDecoderCache` for GPT-BigCode)."""
    if isinstance(cache, (tuple, list)):
        return [(layer,) if isinstance(layer, torch.Tensor) else tuple(layer) for layer in cache]
    cache = getattr(cache, "self_attention_cache", cache)
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache, strict=True))


def held_and_cached(settings: dict[str, Any]) -> tuple[int, int]:
    """(bytes of the storages the prefill's cache keeps alive, bytes of its keys and values)."""
    settings = dict(settings)
    config = AutoConfig.for_model(settings.pop("model_type"), vocab_size=VOCAB, **settings)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        out = model(torch.randint(0, VOCAB, (BATCH, TOKENS)), use_cache=True)
    held = cached = 0
    for tensors in cache_layers(out.past_key_values):
        storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
        held += sum(storages.values())
        cached += sum(t.numel() * t.element_size() for t in tensors)
    return held, cached


def main() -> None:
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    for name, settings in FAMILIES.items():
        try:
            held, cached = held_and_cached(settings)
        except (ValueError, KeyError) as error:  # a family this release does not have
            print(f"  {name:12} not in this release ({type(error).__name__})")
            continue
        print(f"  {name:12} the cache keeps {held:7,d} bytes alive for {cached:7,d} bytes of"
              f" keys and values: x{held / cached:.2f}")


if __name__ == "__main__":
    main()
