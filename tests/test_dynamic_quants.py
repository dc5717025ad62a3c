"""4-bit checkpoints that keep some block linears in 16 bits (`TrainingSetup.unquantized_modules`,
`vramplan.presets.dynamic_quants`): transformers' matching rule, the bytes, the case notes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vramplan.model.weight_storage import bnb_4bit_bytes
from vramplan.presets.dynamic_quants import DYNAMIC_QUANTS, dynamic_quant_named_in
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.setup import TrainingSetup
from vramplan.training.states import model_states, unquantized_linears
from vramplan.vocab import Framework, Method, Quant

PHI_4 = architecture_of(find_model("phi-4"))  # 40 layers, hidden 5,120, MLP 17,920
PHI_4_SKIPS = dynamic_quant_named_in("unsloth/phi-4-unsloth-bnb-4bit")


@pytest.mark.parametrize(("modules", "kept"), [
    # integrations/bitsandbytes.py `_replace_with_bnb_linear` (v4.47.1 to v4.56.2): an entry
    # equal to the linear's last name or its dotted name, or the entry plus a dot inside it
    (("model.layers.1.mlp",), 3),            # gate, up, down of layer 1, not of layers 10-19
    (("model.layers.37.self_attn.o_proj",), 1),
    (("language_model.model.layers.1.mlp",), 3),  # a multimodal checkpoint's name for it
    (("o_proj",), 40),                       # a last name: every layer's output projection
    (("mlp",), 3 * 40),                      # "mlp." is inside every MLP linear's name
    (("lm_head", "multi_modal_projector", "vision_tower"), 0),  # not block linears
    (("model.layers.40.mlp",), 0),           # no such layer
])
def test_which_linears_a_skip_list_keeps(modules: tuple[str, ...], kept: int) -> None:
    assert len(unquantized_linears(PHI_4, modules)) == kept


def test_phi_4_dynamic_upload_keeps_three_mlps_and_two_output_projections_in_16_bits() -> None:
    """Counted by hand: three MLPs of three 5,120 x 17,920 matrices and two 5,120 x 5,120
    output projections stay at 2 bytes a value instead of nf4 with double quantization."""
    assert PHI_4_SKIPS is not None
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, framework=Framework.UNSLOTH,
                          lora_rank=16)
    dynamic = dataclasses.replace(setup, unquantized_modules=PHI_4_SKIPS.skip_modules)
    mlp, o = 5120 * 17920, 5120 * 5120
    extra = 9 * (2 * mlp - bnb_4bit_bytes(mlp, True)) + 2 * (2 * o - bnb_4bit_bytes(o, True))
    assert model_states(PHI_4, dynamic).frozen_weight_bytes \
        - model_states(PHI_4, setup).frozen_weight_bytes == extra


def test_every_listed_checkpoint_names_its_source_and_block_linears() -> None:
    for quant in DYNAMIC_QUANTS:
        assert quant.source.startswith("https://huggingface.co/" + quant.repo + "/")
        assert any("layers." in name for name in quant.skip_modules)


def test_case_notes_naming_the_upload_set_the_skip_list() -> None:
    from vramplan.validation import SHIPPED_CASE_FILES, parse_cases, shipped_cases
    from vramplan.validation.notes import unquantized_modules

    rows = {case.id: case for name in SHIPPED_CASE_FILES
            for case in parse_cases(shipped_cases(name)).cases}
    phi = rows["unsloth-nb-phi-4-finetome-qlora-r16-b2-t4"]
    assert PHI_4_SKIPS is not None
    assert unquantized_modules(phi) == PHI_4_SKIPS.skip_modules
    # a LoRA row quantizes nothing, whatever its notes name
    assert unquantized_modules(dataclasses.replace(phi, method=Method.LORA)) == ()


def test_unsloth_qlora_of_phi_4_loads_the_dynamic_upload_from_its_mapping_on() -> None:
    """Unsloth's mapper sends `unsloth/phi-4` and `microsoft/phi-4` to the dynamic upload from
    2025-01-08 (unslothai/unsloth 6cbfca8c63); another stack quantizes the model whole."""
    from datetime import date

    from vramplan.presets.dynamic_quants import unsloth_loads

    assert unsloth_loads("phi-4", None) == PHI_4_SKIPS
    assert unsloth_loads("phi-4", date(2025, 1, 8)) == PHI_4_SKIPS
    assert unsloth_loads("phi-4", date(2025, 1, 7)) is None
    assert unsloth_loads("llama-3.1-8b", None) is None


def _fit_setup(*argv: str) -> TrainingSetup:
    from vramplan.requests.reading import read
    from vramplan.requests.training import fit_request
    from vramplan.requests.vocabulary import FIT

    names = argv[0::2]
    request = fit_request(read(FIT, dict(zip(names, argv[1::2], strict=True)), text=True))
    return request.setup.training


def test_a_fit_request_takes_the_skip_list_unsloth_loads_or_the_config_names(
        tmp_path: Path) -> None:
    import json

    unsloth = _fit_setup("model", "phi-4", "method", "qlora", "framework", "unsloth",
                         "gpu", "t4-16gb")
    assert PHI_4_SKIPS is not None and unsloth.unquantized_modules == PHI_4_SKIPS.skip_modules
    assert _fit_setup("model", "phi-4", "method", "qlora", "framework", "hf",
                      "gpu", "t4-16gb").unquantized_modules == ()
    assert _fit_setup("model", "phi-4", "method", "lora", "framework", "unsloth",
                      "gpu", "a100-80gb").unquantized_modules == ()
    # a pre-quantized checkpoint's own config.json names its list, whatever the stack
    config = dict(find_model("phi-4").config)
    config["quantization_config"] = {"load_in_4bit": True, "quant_method": "bitsandbytes",
                                     "llm_int8_skip_modules": ["lm_head", "model.layers.0.mlp"]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    listed = _fit_setup("config", str(tmp_path / "config.json"), "method", "qlora",
                        "framework", "hf", "gpu", "t4-16gb")
    assert listed.unquantized_modules == ("lm_head", "model.layers.0.mlp")


def test_the_fit_report_says_what_stays_16_bit_and_how_the_mlp_is_tiled() -> None:
    import io

    from vramplan.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["fit", "--model", "phi-4", "--method", "qlora", "--framework", "unsloth",
                 "--gpu", "t4-16gb", "--tiled-mlp"], out, err) == 0
    text = out.getvalue()
    assert "4-bit checkpoint: 11 block linears kept in 16 bits" in text
    assert "MLP run in tiles, 2,048 tokens at a time" in text
