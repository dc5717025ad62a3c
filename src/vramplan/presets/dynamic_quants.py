"""4-bit checkpoints that leave some block linears unquantized: their config.json's
`quantization_config.llm_int8_skip_modules`, read where it was published.

Unsloth's "dynamic 4-bit" uploads on the Hugging Face Hub (`unsloth/<model>-unsloth-bnb-4bit`)
keep some MLPs and projections in 16 bits; `FastLanguageModel.from_pretrained(...,
load_in_4bit=True)` loads them in place of the plain `-bnb-4bit` uploads where Unsloth's mapper
(unsloth/models/mapper.py) lists one. A run that loaded such a checkpoint holds those linears at
2 bytes a value (`vramplan.training.setup.TrainingSetup.unquantized_modules`,
`vramplan.training.states.unquantized_linears`).

Only lists read in a published file are here. Not found in the sources reachable on 2026-12-05
(a helper's search of the stored Hub pages): unsloth/Qwen3-14B-unsloth-bnb-4bit,
unsloth/gemma-3-27b-it-unsloth-bnb-4bit, unsloth/Magistral-Small-2506-unsloth-bnb-4bit,
unsloth/gpt-oss-20b-unsloth-bnb-4bit (docs/open-leads.md, Unsloth).

Data only: no file I/O at import.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from vramplan.vocab import Framework


@dataclass(frozen=True, slots=True)
class DynamicQuant:
    """One checkpoint's modules left unquantized, and where they were read."""

    repo: str
    skip_modules: tuple[str, ...]
    source: str
    model: str
    """The registry preset the upload quantizes."""
    unsloth_maps_since: date
    """From this date Unsloth's mapper sends the model's names to this upload when
    `load_in_4bit=True` (unsloth/models/mapper.py `INT_TO_FLOAT_MAPPER`)."""


DYNAMIC_QUANTS: tuple[DynamicQuant, ...] = (
    # The upload's config.json (the page's one version: config.json was only ever written by the
    # "Upload LlamaForCausalLM" commit of the weights; the repository's HEAD 26dd1bd). Unsloth
    # 2025.1.5's mapper (e42bd98706) sends `unsloth/phi-4` here; fine-tunes saved with that
    # release name it as their `_name_or_path`. Besides the head and three names that match
    # nothing in Phi-4: the MLPs of layers 1 to 3 and the output projections of layers 37 and
    # 39 (1.64 GiB in 16 bits).
    DynamicQuant(
        repo="unsloth/phi-4-unsloth-bnb-4bit",
        skip_modules=("lm_head", "multi_modal_projector", "merger", "modality_projection",
                      "model.layers.1.mlp", "model.layers.2.mlp", "model.layers.3.mlp",
                      "model.layers.37.self_attn.o_proj", "model.layers.39.self_attn.o_proj"),
        source="https://huggingface.co/unsloth/phi-4-unsloth-bnb-4bit/blob/main/config.json",
        model="phi-4",
        # unslothai/unsloth 6cbfca8c63 (2025-01-08, "Phi-4 (#1523)") adds the mapping from
        # "unsloth/phi-4" and "microsoft/phi-4"; unchanged at the mirror's HEAD
        unsloth_maps_since=date(2025, 1, 8),
    ),
)
"""The checkpoints whose skip lists were read."""


def dynamic_quant_named_in(text: str) -> DynamicQuant | None:
    """The checkpoint of `DYNAMIC_QUANTS` whose repository id `text` names (case aside)."""
    lowered = text.lower()
    return next((quant for quant in DYNAMIC_QUANTS if quant.repo.lower() in lowered), None)


def unsloth_loads(model: str, on: date | None) -> DynamicQuant | None:
    """The dynamic upload Unsloth's `from_pretrained(..., load_in_4bit=True)` loads for the
    preset `model` with its code of `on` (None: today's), where its skip list was read."""
    return next((quant for quant in DYNAMIC_QUANTS if quant.model == model
                 and (on is None or on >= quant.unsloth_maps_since)), None)


def skip_modules_loaded(model: str, framework: Framework, on: date | None) -> tuple[str, ...]:
    """The skip list a QLoRA run of `framework` loads for the preset `model` when it names no
    checkpoint of its own: Unsloth's dynamic upload (`unsloth_loads`), none elsewhere (the
    stack quantizes the checkpoint whole, the head aside)."""
    quant = unsloth_loads(model, on) if framework is Framework.UNSLOTH else None
    return quant.skip_modules if quant is not None else ()
