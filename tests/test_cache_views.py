"""transformers' prompt cache holding views of the fused q/k/v projection
(`TransformersCode.fused_qkv_cache_views`): the releases, the bytes by hand, and the published
Pythia-410m generate peak that showed it."""

from __future__ import annotations

from datetime import date

import pytest

from vramplan.inference.estimate import kv_cache_bytes, prompt_cache_held_bytes
from vramplan.inference.setup import inference_inputs
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format
from vramplan.validation import estimate_inference_case
from vramplan.vocab import Engine, KvDtype

VIEW_TYPES = {"gpt2", "gpt_neox", "gpt_bigcode", "phi3", "mpt"}


@pytest.mark.parametrize(("on", "expected"), [
    (date(2023, 7, 18), VIEW_TYPES),  # v4.31.0
    (date(2024, 8, 5), VIEW_TYPES),  # v4.43.x: BLOOM's reshapes copied
    (date(2024, 8, 6), VIEW_TYPES | {"bloom"}),  # v4.44.0
    (date(2025, 8, 28), VIEW_TYPES | {"bloom"}),  # v4.55.x
    (date(2025, 8, 29), set()),  # v4.56.0: the first entry is copied
    (None, set()),  # today's release
])
def test_the_releases_whose_cache_holds_views(on: date | None, expected: set[str]) -> None:
    # measured on the CPU in v4.31.0 to v4.55.4 and v4.56.0 to v5.25.0
    # (benchmarks/hf_cache_views_cpu.py)
    assert transformers_code(on).fused_qkv_cache_views == expected


@pytest.mark.parametrize(("model", "ratio"), [
    # GPT-NeoX: the value a view of q, k and v (3 units), the key its own (rotary): 4 for 2
    ("pythia-410m", (3 + 1) / 2),
    # GPT-2 and MPT: key and value both views of the 3-unit output, no rotary
    ("gpt2-large", 3 / 2),
    ("mpt-7b", 3 / 2),
    # Phi-3-mini: 32 query and 32 key-value heads, rotary: as GPT-NeoX
    ("phi-3-mini-4k", (3 + 1) / 2),
    # StarCoder, multi-query: `key_value` views the 48 query heads' output and one key and value
    ("starcoder", (48 + 2) / 2),
])
def test_the_prompt_cache_holds_the_fused_projection(model: str, ratio: float) -> None:
    arch = architecture_of(find_model(model))
    inputs = inference_inputs(arch, find_format("fp16"), 612, prompt=512, batch=2,
                              kv_dtype=KvDtype.FP16, engine=Engine.HF,
                              fused_qkv_cache_views=True)
    prompt_cache = 2 * 512 * arch.n_layers * (arch.kv_dim + arch.v_dim) * 2
    assert prompt_cache_held_bytes(arch, inputs) == pytest.approx(ratio * prompt_cache, abs=1)
    # without views the prompt's cache is its keys and values, a part of the whole cache
    plain = inference_inputs(arch, find_format("fp16"), 612, prompt=512, batch=2,
                             kv_dtype=KvDtype.FP16, engine=Engine.HF)
    assert prompt_cache_held_bytes(arch, plain) == prompt_cache
    assert kv_cache_bytes(arch, plain) == prompt_cache * 612 // 512


def _pythia_sdpa_row(*, views: bool) -> int:
    # transformers PR #31031's table (docs/source/en/model_doc/gpt_neox.md until the model docs
    # were rewritten): Pythia-410m-deduped, fp16, batch 4, 2,048 prompt tokens, SDPA, peak
    # `max_memory_allocated` 4,165.26 MB (10^6 bytes) on a 16 GB RTX 3080 Ti, transformers of
    # 2024-05-25; the new tokens are not stated, the script's default is 100
    return estimate_inference_case(
        "pythia-410m", "bf16-true", "none", batch=4, seq_len=2048, new_tokens=100,
        framework="hf", attention="sdpa", previous_cache_alive=True, prompt_logits_bytes=2,
        prompt_logits_kept=True, fused_qkv_cache_views=views).allocated_bytes


def test_pythias_published_generate_peak() -> None:
    measured = 4_165.26e6
    # the first decode step: the prefill's cache (twice its keys and values), its logits and
    # the new cache
    assert _pythia_sdpa_row(views=True) == pytest.approx(measured, rel=0.05)
    # the keys and values alone left a fifth of the peak out
    assert _pythia_sdpa_row(views=False) < 0.8 * measured


@pytest.mark.parametrize(("model", "on", "expected"), [
    # one bool mask of max_position_embeddings^2 a layer: GPT-2 large, 36 x 1,024^2
    ("gpt2-large", date(2026, 2, 15), 36 * 1024**2),
    ("gpt2-large", date(2026, 2, 16), 0),  # v5.2.0
    # Pythia-410m, 24 x 2,048^2 until v4.49.0
    ("pythia-410m", date(2025, 2, 16), 24 * 2048**2),
    ("pythia-410m", date(2025, 2, 17), 0),
    # GPT-BigCode: one mask for the model, in every release (StarCoder: 8,192 positions)
    ("starcoder", None, 8192**2),
    ("llama-2-7b", date(2024, 6, 1), 0),
])
def test_causal_mask_buffers_by_release(model: str, on: date | None, expected: int) -> None:
    arch = architecture_of(find_model(model))
    assert transformers_code(on).causal_mask_buffer_bytes(
        arch.family, arch.max_position_embeddings, arch.n_layers) == expected


def _pythia_row(attention: str) -> int:
    code = transformers_code(date(2024, 5, 25))
    arch = architecture_of(find_model("pythia-410m"))
    return estimate_inference_case(
        "pythia-410m", "bf16-true", "none", batch=4, seq_len=2048, new_tokens=100,
        framework="hf", attention=attention, previous_cache_alive=True, prompt_logits_bytes=2,
        prompt_logits_kept=True, fused_qkv_cache_views=True,
        eager_softmax_16bit="gpt_neox" in code.softmax_16bit,
        mask_buffer_bytes=code.causal_mask_buffer_bytes(
            arch.family, arch.max_position_embeddings, arch.n_layers)).allocated_bytes


def test_pythias_published_eager_generate_peak() -> None:
    # the same table's eager column: 4,175.5 MB. GPT-NeoX's eager softmax of that release ran
    # in fp16 (`nn.functional.softmax(attn_scores, dim=-1)`): its prefill (two fp16 score
    # tensors) stays under the first decode step, as the equal eager and SDPA peaks say
    assert _pythia_row("eager") == pytest.approx(4_175.5e6, rel=0.03)
    assert _pythia_row("eager") == _pythia_row("sdpa")
