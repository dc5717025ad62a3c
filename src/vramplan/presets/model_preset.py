"""One preset of the model registry: a model's name, its repository, and the config.json keys it was
read from, with where they were read (`vramplan.presets.models` holds the registry).

Data only: no file I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing on the CLI path
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True, slots=True)
class ModelPreset:
    """A model of the registry."""

    name: str
    """Lowercase kebab-case (`llama-3.1-8b`)."""
    hf_repo: str
    """The Hugging Face repository id (`meta-llama/Llama-3.1-8B`), accepted as an alias."""
    source: str
    """URL of the official config.json."""
    config: Mapping[str, Any] = field(compare=False)
    """The architecture keys of that config.json, verbatim (read-only; left out of equality and
    hashing, so that presets can be set members and cache keys: the name identifies a preset)."""
    aliases: tuple[str, ...] = ()
    read_from: str = ""
    """Where the values were read when not from `source` itself (see the module docstring)."""
    display_name: str = field(default="")

    @property
    def family(self) -> str:
        return str(self.config["model_type"])

    @property
    def transformers_type(self) -> str:
        """The transformers `model_type` that builds this config (`kimi_k2` is built as
        `deepseek_v3`: `vramplan.model.hf_moe_families.TRANSFORMERS_MODEL_TYPE`)."""
        from vramplan.model.hf_moe_families import TRANSFORMERS_MODEL_TYPE

        return TRANSFORMERS_MODEL_TYPE.get(self.family, self.family)

    def config_kwargs(self) -> dict[str, Any]:
        """The config keys without `model_type`, for `AutoConfig.for_model(preset.family,
        **preset.config_kwargs())` (for_model takes model_type positionally: passing it again in
        the keywords is a TypeError)."""
        return {key: value for key, value in self.config.items() if key != "model_type"}


def hub_config_url(repo: str, revision: str = "main") -> str:
    """The URL of a repository's config.json on the Hugging Face Hub."""
    return f"https://huggingface.co/{repo}/blob/{revision}/config.json"


def copy_on_hub(repo: str, revision: str = "main") -> str:
    """`read_from` for a copy of the official file on the Hub (a fine-tune or quantization whose
    `_name_or_path` is the official repo, with the same architecture keys)."""
    return f"copy on the Hub, same architecture keys: {hub_config_url(repo, revision)}"


def make_preset(
    name: str,
    repo: str,
    display: str,
    config: dict[str, Any],
    *,
    aliases: tuple[str, ...] = (),
    read_from: str = "",
) -> ModelPreset:
    """A preset whose `source` is `repo`'s config.json on the Hub."""
    return ModelPreset(
        name=name,
        hf_repo=repo,
        source=hub_config_url(repo),
        config=MappingProxyType(config),
        aliases=aliases,
        read_from=read_from,
        display_name=display,
    )
