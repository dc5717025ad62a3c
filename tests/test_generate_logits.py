"""The prefill's logits of transformers' `generate` by release and model type
(`TransformersCode.returns_prompt_logits`, `generate_clones_logits`), by hand."""

from __future__ import annotations

from datetime import date

import pytest

from vramplan.inference.estimate import prompt_logits_peak_bytes
from vramplan.inference.setup import inference_inputs
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format
from vramplan.vocab import ComputeDtype, Engine, KvDtype


@pytest.mark.parametrize(("model_type", "first_day"), [
    # the first release whose forward takes `logits_to_keep` (read in the wheels)
    ("llama", date(2024, 9, 25)),  # v4.45.0, when generate began to ask
    ("falcon", date(2024, 12, 5)),  # v4.47.0
    ("gpt_neox", date(2025, 2, 17)),  # v4.49.0
    ("gpt2", date(2025, 6, 26)),  # v4.53.0
    ("opt", date(2026, 1, 26)),  # v5.0.0
])
def test_the_prefill_returns_every_position_until_the_model_takes_logits_to_keep(
        model_type: str, first_day: date) -> None:
    assert transformers_code(date(2024, 9, 24)).returns_prompt_logits(model_type)
    assert transformers_code(date.fromordinal(first_day.toordinal() - 1)).returns_prompt_logits(
        model_type)
    assert not transformers_code(first_day).returns_prompt_logits(model_type)
    assert not transformers_code(None).returns_prompt_logits(model_type)


def test_generate_copied_the_whole_logits_in_v4_45_and_v4_46() -> None:
    # `outputs.logits.clone()[:, -1, :].float()` (v4.45.2, v4.46.3 wheels); v4.47.0 slices first
    assert not transformers_code(date(2024, 9, 24)).generate_clones_logits
    assert transformers_code(date(2024, 9, 25)).generate_clones_logits
    assert transformers_code(date(2024, 12, 4)).generate_clones_logits
    assert not transformers_code(date(2024, 12, 5)).generate_clones_logits


@pytest.mark.parametrize(("returned", "cloned", "bytes_per_logit"), [
    (2, False, 2),  # the 16-bit logits the model returns
    (2, True, 2 + 2),  # and generate's copy
    (4, False, 2 + 4),  # the model's upcast: its 16-bit input beside the fp32 copy
    (4, True, 4 + 4),  # the fp32 logits and their copy, once the 16-bit input is freed
])
def test_prompt_logits_peak_by_hand(returned: int, cloned: bool, bytes_per_logit: int) -> None:
    arch = architecture_of(find_model("gpt2-large"))
    inputs = inference_inputs(arch, find_format("bf16"), 612, prompt=512, batch=2,
                              kv_dtype=KvDtype.BF16, compute_dtype=ComputeDtype.BF16,
                              engine=Engine.HF, prompt_logits_bytes=returned,
                              prompt_logits_cloned=cloned)
    assert prompt_logits_peak_bytes(arch, inputs) == 2 * 512 * 50_257 * bytes_per_logit
