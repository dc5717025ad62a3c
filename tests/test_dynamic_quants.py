"""4-bit checkpoints that keep some block linears in 16 bits (`TrainingSetup.unquantized_modules`,
`vramplan.presets.dynamic_quants`): transformers' matching rule, the bytes, the case notes."""

from __future__ import annotations

import dataclasses

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
