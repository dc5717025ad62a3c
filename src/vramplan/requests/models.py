"""Which model a request names: a registry preset (`model`), or a local config.json (`config`,
on the CLI and in the Python API only)."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.errors import ConflictingOptions, MissingValue
from vramplan.model.architecture import Architecture
from vramplan.presets.models import ModelPreset, architecture_of, find_model
from vramplan.requests.reading import Inputs
from vramplan.requests.vocabulary import CONFIG, MODEL


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model a request names, and its architecture."""

    preset: ModelPreset | None
    """None for a config.json."""
    arch: Architecture
    field: str
    """The field it was given in (`model` or `config`)."""
    text: str
    """What the user gave there."""

    @property
    def name(self) -> str:
        """How reports name it: the preset's name, or the config's path."""
        return self.preset.name if self.preset is not None else self.text

    @property
    def display_name(self) -> str:
        return self.preset.display_name if self.preset is not None else self.arch.family


def model_choice(inputs: Inputs) -> ModelChoice:
    """The model named by `model` or `config` (never both, one of them required)."""
    choice = optional_model(inputs)
    if choice is None:
        raise MissingValue(MODEL.name)
    return choice


def optional_model(inputs: Inputs) -> ModelChoice | None:
    """The model named by `model` or `config` (never both), None when neither is given."""
    name = inputs.get(MODEL)
    path = inputs.get(CONFIG) if inputs.form.field(CONFIG.name) else None
    if name is not None and path is not None:
        raise ConflictingOptions(MODEL.name, CONFIG.name)
    if path is not None:
        from vramplan.model.hf_config import load_config  # reads a file: only when asked

        return ModelChoice(None, load_config(path), CONFIG.name, path)
    if name is None:
        return None
    preset = find_model(name)
    return ModelChoice(preset, architecture_of(preset), MODEL.name, name)
