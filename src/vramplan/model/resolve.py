"""A model named by the user, whatever the interface: a preset (its name, an alias or its repo id,
any case), any other Hugging Face repo id (`org/name[@revision]`, its config.json read through
`vramplan.model.hub`), or a local config.json. Every interface (CLI, JSON API, web page) calls
`resolve_model` and gets the same answer, or the same error.

An unknown name gets up to three close names from the registry and a hint to give a repo id or a
config.json (`UnknownModel`). Pure except for the Hub call and the local file read.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vramplan.errors import UnknownName
from vramplan.model.architecture import Architecture

MAX_SUGGESTIONS = 3
SUGGESTION_CUTOFF = 0.6
"""difflib's similarity ratio a name must reach to be suggested (its own default)."""


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """A model and the config.json it was read from."""

    name: str
    """The preset's name, the repository reference (`org/name[@revision]`) or the config path."""
    arch: Architecture
    config: Mapping[str, Any] = field(compare=False)
    """The config.json mapping the architecture was read from (a preset's stored keys)."""
    preset: Any = None
    """The `ModelPreset`, when the name is one (typed loosely: presets import the model layer)."""
    source: str = ""
    """Where the config.json is: the preset's or repository's Hub URL, or the local path."""


class UnknownModel(UnknownName):
    """A model name that is no preset and no repository id: the close names of the registry, and
    what else is accepted."""

    def __init__(self, value: str, suggestions: tuple[str, ...]) -> None:
        self.key = "error.unknown_model" if suggestions else "error.unknown_model_no_match"
        self.suggestions = suggestions
        super().__init__("model", value, suggestions)


def resolve_model(name: str) -> ResolvedModel:
    """The model called `name`: a preset first, else a Hub repository, else `UnknownModel`."""
    from vramplan.model.hub import parse_repo_ref
    from vramplan.presets.models import find_preset

    preset = find_preset(name)
    if preset is not None:
        return resolved_preset(preset)
    ref = parse_repo_ref(name)
    if ref is None:
        raise UnknownModel(name.strip(), suggest_models(name))
    return resolve_repo(ref)


def resolved_preset(preset: Any) -> ResolvedModel:
    """A registry preset as a resolved model."""
    from vramplan.presets.models import architecture_of

    return ResolvedModel(preset.name, architecture_of(preset), preset.config, preset,
                         preset.source)


def resolve_repo(ref: Any) -> ResolvedModel:
    """The model of a Hub repository (`vramplan.model.hub.RepoRef`)."""
    from vramplan.model.hf_config import parse_config
    from vramplan.model.hub import fetch_config

    config = fetch_config(ref)
    return ResolvedModel(ref.label, parse_config(config), config, None, ref.config_url)


def resolve_config_path(path: str | Path) -> ResolvedModel:
    """The model of a local config.json file, or of the model folder holding one."""
    from vramplan.model.hf_config import parse_config, read_config_file

    config = read_config_file(path)
    return ResolvedModel(str(path), parse_config(config), config, None, str(path))


def suggest_models(name: str, limit: int = MAX_SUGGESTIONS) -> tuple[str, ...]:
    """Up to `limit` preset names closest to `name`, compared with every preset's names, aliases and
    repo ids (with and without the owner), closest first. A variant suffix of the name asked for
    (`-instruct`, `-it`, `-chat`, `-base`) is also tried without it: such variants are aliases of
    the base preset when their config.json is the base's, and absent otherwise."""
    from vramplan.presets.models import preset_names

    names = preset_names()
    queries = _variants_of(name.strip().lower())
    scored: dict[str, float] = {}
    for key, preset in names.items():
        score = max(difflib.SequenceMatcher(None, query, key).ratio() for query in queries)
        if score >= SUGGESTION_CUTOFF and score > scored.get(preset, 0.0):
            scored[preset] = score
    ranked = sorted(scored, key=lambda preset: (-scored[preset], preset))
    return tuple(ranked[:limit])


_VARIANT_SUFFIXES = ("-instruct", "-it", "-chat", "-base", "-hf")


def _variants_of(query: str) -> tuple[str, ...]:
    """The query, its name without an owner, and both without a variant suffix."""
    short = query.split("/", 1)[-1]
    forms = [query, short]
    for form in (query, short):
        for suffix in _VARIANT_SUFFIXES:
            if form.endswith(suffix):
                forms.append(form[: -len(suffix)])
    return tuple(dict.fromkeys(forms))
