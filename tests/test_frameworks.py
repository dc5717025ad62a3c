"""Each framework's defaults (vramplan.presets.frameworks) and how `vramplan validate` reads a row
that leaves something to them: an unknown framework name, an empty `quant` on a QLoRA row, an empty
`seq_len` on a training row."""

from __future__ import annotations

from importlib.resources import files

import pytest

from vramplan.i18n import Lang, translate
from vramplan.presets.frameworks import (
    DEFAULTS,
    default_gradient_accumulation,
    framework_defaults,
    read_framework,
)
from vramplan.validate import Outcome, Reading, read_cases, score_cases, training_setup_of
from vramplan.vocab import Framework, Method, OptimizerImpl, Quant

HEADER = files("vramplan").joinpath("data/cases.csv").read_text(encoding="utf-8").splitlines()[0]
ROW = ("t1,src,llama-2-7b,lora,bf16-true,adamw,,none,8,q;v,1,1304,,none,sdpa,,1,a100-40gb,none,"
       "none,litgpt,allocated,21.30,GB,")


def _read(row: str) -> tuple[object, ...]:
    return read_cases("\n".join((HEADER, row)))


def test_every_framework_has_its_defaults_with_a_source() -> None:
    assert set(DEFAULTS) == set(Framework)
    for framework, defaults in DEFAULTS.items():
        assert defaults.framework is framework
        assert defaults.source


def test_an_unknown_framework_is_read_as_generic_and_said() -> None:
    reading = read_framework(" Unsloth ")
    assert (reading.framework, reading.unknown_name) == (Framework.GENERIC, "Unsloth")
    assert read_framework("torchtitan").unknown_name is None
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",litgpt,", ",unsloth,"))))
    assert case.framework is Framework.GENERIC
    assert case.readings == (Reading.UNKNOWN_FRAMEWORK,)
    (score,) = score_cases((case,)).scores
    assert score.outcome is Outcome.SCORED


@pytest.mark.parametrize(("framework", "quant"), [
    ("hf", Quant.FP4),  # BitsAndBytesConfig: bnb_4bit_quant_type='fp4', no double quant
    ("axolotl", Quant.NF4_DQ),  # axolotl's loader: nf4, bnb_4bit_use_double_quant True
    ("llamafactory", Quant.NF4_DQ),  # QuantizationArguments: nf4, double_quantization True
    ("torchtune", Quant.NF4_DQ),  # torchao NF4Tensor: int8 scalers, one scale per 256
])
def test_an_empty_quant_on_a_qlora_row_is_the_frameworks_storage(framework: str,
                                                                 quant: Quant) -> None:
    row = ROW.replace(",lora,bf16-true,adamw,,none,", ",qlora,bf16-true,adamw,,,")
    (case,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", f",{framework},"))))
    assert case.quant is quant
    assert Reading.QUANT_DEFAULT in case.readings


def test_an_empty_seq_len_is_a_lower_bound_at_one_token() -> None:
    row = ROW.replace(",1,1304,,", ",1,,,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.seq_len is None and Reading.SEQ_LEN_UNKNOWN in case.readings
    (short,) = score_cases((case,)).scores
    (long,) = score_cases(read_cases("\n".join((HEADER, ROW)))).scores
    assert short.estimate_bytes is not None and long.estimate_bytes is not None
    assert short.estimate_bytes < long.estimate_bytes
    assert training_setup_of(case).seq_len == 1


def test_accumulation_defaults_follow_the_recipes() -> None:
    # litgpt's recipes always accumulate; the transformers Trainer's default is 1 micro-batch
    assert default_gradient_accumulation(Framework.LITGPT, Method.FULL)
    assert not default_gradient_accumulation(Framework.HF, Method.FULL)
    assert not default_gradient_accumulation(Framework.TORCHTUNE, Method.FULL)
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",litgpt,", ",hf,"))))
    assert not training_setup_of(case).gradient_accumulation


def test_torchtune_steps_adamw_fused_by_default() -> None:
    assert framework_defaults(Framework.TORCHTUNE).optimizer_impl is OptimizerImpl.FUSED
    assert framework_defaults(Framework.HF).optimizer_impl is OptimizerImpl.FOREACH


@pytest.mark.parametrize("reading", list(Reading))
def test_every_reading_is_said_in_both_languages(reading: Reading) -> None:
    for lang in Lang:
        assert translate(f"reading.{reading.value}", lang)
