"""The LoRA calculator's request: a model, the rank, the adapted modules, DoRA and rsLoRA."""

from __future__ import annotations

from vramplan.lora_calculator import LoraInputs, lora_inputs
from vramplan.model.lora_targets import expand_targets
from vramplan.requests.models import model_choice
from vramplan.requests.reading import Inputs
from vramplan.requests.vocabulary import DORA, LORA_R, LORA_TARGETS, RSLORA
from vramplan.vocab import LoraTarget


def lora_request(inputs: Inputs) -> LoraInputs:
    model = model_choice(inputs)
    targets: tuple[LoraTarget, ...] = inputs.require(LORA_TARGETS)
    dora: bool = inputs.require(DORA)
    rslora: bool = inputs.require(RSLORA)
    return lora_inputs(model.arch, inputs.require(LORA_R), expand_targets(targets), dora=dora,
                       rslora=rslora, model_name=model.name)
