"""Which model a request names: a registry preset or any Hugging Face repo id (`model`), or a
local config.json (`config`, on the CLI and in the Python API only). Resolution is
`vramplan.model.resolve`'s, the same for every interface."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vramplan.errors import ConflictingOptions, MissingValue
from vramplan.requests.fields import Field
from vramplan.requests.reading import Inputs
from vramplan.requests.vocabulary import CONFIG, MODEL

if TYPE_CHECKING:  # the model chain (registry, config parser) loads only when a model is named
    from vramplan.model.architecture import Architecture
    from vramplan.model.resolve import ResolvedModel
    from vramplan.presets.models import ModelPreset


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model a request names, its architecture and the config.json it was read from."""

    resolved: ResolvedModel
    field: str
    """The field it was given in (`model` or `config`)."""
    text: str
    """What the user gave there."""

    @property
    def preset(self) -> ModelPreset | None:
        """None for a repo id that is not a preset, or a config.json."""
        preset: ModelPreset | None = self.resolved.preset
        return preset

    @property
    def arch(self) -> Architecture:
        return self.resolved.arch

    @property
    def config(self) -> Mapping[str, Any]:
        return self.resolved.config

    @property
    def name(self) -> str:
        """How reports name it: the preset's name, the repository (`org/name[@revision]`) or the
        config's path."""
        return self.resolved.name

    @property
    def display_name(self) -> str:
        if self.preset is not None:
            return self.preset.display_name
        return self.name if self.field == MODEL.name else self.arch.family


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
        from vramplan.model.resolve import resolve_config_path  # reads a file: only when asked

        return ModelChoice(_attributed(resolve_config_path, path, CONFIG.name), CONFIG.name, path)
    if name is None:
        return None
    from vramplan.model.resolve import resolve_model

    return ModelChoice(_attributed(resolve_model, name, MODEL.name), MODEL.name, name)


def _attributed(resolve: Callable[[str], ResolvedModel], text: str, field: str) -> ResolvedModel:
    """`resolve(text)`; a config.json it cannot read (from a file or a Hub repository) is an
    error of the field the model was given in."""
    from vramplan.model.architecture import ModelOutOfRange
    from vramplan.model.hf_common import ConfigError

    try:
        return resolve(text)
    except (ConfigError, ModelOutOfRange) as error:
        error.field = field
        raise


def tokens_for(inputs: Inputs, field: Field[int], model: ModelChoice) -> int:
    """The tokens `field` asks of `model`: given, within a learned position table, else refused;
    left out, the field's default cut to that table
    (`vramplan.model.positions.tokens_within_positions`)."""
    from vramplan.model.positions import tokens_within_positions

    return tokens_within_positions(model.arch, field.name, inputs.require(field),
                                   given=inputs.given(field))
