"""transformers' prefill, measured: a no-grad forward of a small Qwen2 on the CPU, every tensor an
ATen op makes tracked until its storage is freed (the tracer's `StorageTracker`), peaks where
`prefill_activation_bytes` says, byte for byte, bar the forward's own small tensors (rotary cos
and sin, cache positions).

At the peak (the last block's MLP product) the live tensors are the three intermediates, four
hidden-size tensors (the embeddings `inputs_embeds` keeps, the block's input the model's loop
keeps, the attention's residual sum and the normed input) and every layer's keys and values: a
plain loop would hold two hidden-size tensors, which the test would see as 2 x 4,096 x 512 x 2
bytes too few."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from vramplan.inference.estimate import kv_cache_bytes, prefill_activation_bytes
from vramplan.inference.setup import inference_inputs
from vramplan.model.hf_config import parse_config
from vramplan.presets.quant_formats import find_format
from vramplan.tracer.tracker import StorageTracker
from vramplan.vocab import Attention, Engine

pytestmark = pytest.mark.trace

TOKENS = 4096
CONFIG: dict[str, Any] = {
    "model_type": "qwen2", "hidden_size": 512, "intermediate_size": 2816,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
    "vocab_size": 1000, "max_position_embeddings": TOKENS, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16"}


def _measured_peak(config_dict: dict[str, Any], attention: str, batch: int, tokens: int) -> int:
    """The live-tensor peak of a no-grad forward over `batch` x `tokens` random ids, the last
    position's logits only (`generate`'s prefill)."""
    config = AutoConfig.for_model(**config_dict)
    config._attn_implementation = attention
    model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, config_dict["vocab_size"], (batch, tokens))
    tracker = StorageTracker()
    for tensor in [*model.parameters(), *model.buffers()]:
        tracker.exclude(tensor)  # what existed before the forward is not counted
    with torch.no_grad(), tracker:
        tracker.start_recording()
        model(ids, use_cache=True, logits_to_keep=1)
    return tracker.peak


def test_transformers_prefill_peak_is_the_working_set_and_the_cache() -> None:
    peak = _measured_peak(CONFIG, "sdpa", 1, TOKENS)
    arch = parse_config(CONFIG)
    inputs = inference_inputs(arch, find_format("bf16"), TOKENS, engine=Engine.HF)
    head_dim = CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
    # the rotary tables (cos, sin) in bf16 and the int64 cache positions
    small = 2 * TOKENS * head_dim * 2 + TOKENS * 8
    assert peak == prefill_activation_bytes(arch, inputs) + kv_cache_bytes(arch, inputs) + small


def test_transformers_eager_prefill_peaks_at_the_softmax() -> None:
    """Eager attention in bfloat16: the peak is the softmax of the first block, where the 16-bit
    scores (the mask added), their fp32 copy (ATen's `softmax` converts bfloat16 first) and the
    fp32 output sit beside the 4D mask and the attention phase's tensors: 10 bytes a score. The
    estimate leaves out the rotary tables and counts the attention's own tensors roughly (the
    keys and values `repeat_kv` expands, the output projection's): within 1.5 %."""
    tokens, batch = 1024, 2
    config_dict = {**CONFIG, "max_position_embeddings": tokens}
    peak = _measured_peak(config_dict, "eager", batch, tokens)
    arch = parse_config(config_dict)
    inputs = inference_inputs(arch, find_format("bf16"), tokens, batch=batch, engine=Engine.HF,
                              attention=Attention.EAGER)
    estimate = prefill_activation_bytes(arch, inputs) + kv_cache_bytes(arch, inputs)
    assert abs(peak / estimate - 1) < 0.015
