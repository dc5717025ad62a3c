"""Every preset's exact count against the real transformers model, built on the meta device.

No weights are allocated and nothing is downloaded: `AutoConfig.for_model` takes the preset's
config.json keys and `from_config` builds the module tree under `torch.device("meta")`. Tied weights
are one Parameter object and are counted once.
"""

from __future__ import annotations

import functools
import warnings

import pytest

from vramplan.presets.models import MODELS, ModelPreset, architecture_of, find_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.trace


def _meta_model(preset: ModelPreset) -> object:
    return _meta_model_named(preset.name)


@functools.cache
def _meta_model_named(name: str) -> object:
    preset = find_model(name)
    config = transformers.AutoConfig.for_model(preset.family, **preset.config_kwargs())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            return transformers.AutoModelForCausalLM.from_config(config)


def _unique_numel(model: object) -> int:
    seen: set[int] = set()
    total = 0
    for parameter in model.parameters():  # type: ignore[attr-defined]
        if id(parameter) not in seen:
            seen.add(id(parameter))
            total += parameter.numel()
    return total


@pytest.mark.parametrize("preset", MODELS, ids=[preset.name for preset in MODELS])
def test_count_matches_transformers_on_meta_device(preset: ModelPreset) -> None:
    model = _meta_model(preset)
    assert architecture_of(preset).params_total == _unique_numel(model)


def _blocks(model: object, n_layers: int) -> object:
    """The ModuleList of decoder blocks (`model.layers`, `transformer.h`, `gpt_neox.layers`...)."""
    lists = [module for module in model.modules()  # type: ignore[attr-defined]
             if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers]
    return max(lists, key=lambda blocks: sum(p.numel() for p in blocks.parameters()))


@pytest.mark.parametrize("preset", MODELS, ids=[preset.name for preset in MODELS])
def test_block_and_embedding_match_transformers(preset: ModelPreset) -> None:
    arch = architecture_of(preset)
    model = _meta_model(preset)
    block = _blocks(model, arch.n_layers)[0]  # type: ignore[index]
    assert arch.params_per_block == sum(p.numel() for p in block.parameters())
    embedding = model.get_input_embeddings()  # type: ignore[attr-defined]
    assert arch.params_token_embedding == embedding.weight.numel()
    head = model.get_output_embeddings()  # type: ignore[attr-defined]
    assert (head.weight is embedding.weight) is arch.tied_embeddings
