"""The page's words for the request vocabulary's values: the options its selects offer and the
settings a change names ("Checkpointing des activations : complet"), never the raw codes of the
CLI and the JSON (`checkpointing=full`)."""

from __future__ import annotations

from enum import StrEnum

from vramplan.i18n import Lang, translate
from vramplan.planner.changes import Setting
from vramplan.training.alignment import generated_at_once, reference_kind
from vramplan.training.setup import TrainingSetup
from vramplan.units import format_number
from vramplan.web.view import typeset

OPTION_KEYS = {
    "method": "web_fit.method.",
    "precision": "web_fit.precision.",
    "sharding": "web_fit.sharding.",
    "offload": "web_fit.offload.",
    "checkpointing": "web_fit.checkpointing.",
    "attention": "web_fit.attention.",
    "loss": "web_fit.loss.",
    "optimizer": "web_fit.optimizer.",
    "quant": "web_fit.quant.",
    "metric": "web_fit.metric.",
    "framework": "web_fit.framework.",
    "lora_targets": "sister.lora.target.",
    "policy": "web_fit.method.",
    "generation": "web_fit.generation.",
}
"""The message prefix of each field whose values are names: `prefix + value` is the option's
label (`tests/test_catalogue.py` checks that every member of each enum has one)."""

FIELD_KEYS = {
    "gpu": "web_fit.gpu", "gpus": "web_fit.gpus", "sharding": "web_fit.sharding",
    "offload": "web_fit.offload", "precision": "web_fit.precision",
    "checkpointing": "web_fit.checkpointing", "margin": "web_fit.margin",
    "batch": "web_fit.batch", "seq_len": "web_fit.seq_len", "method": "web_fit.method",
    "lora_r": "web_fit.lora_r", "lora_targets": "web_fit.lora_targets",
    "grad_accum": "web_fit.grad_accum", "quant": "web_fit.quant", "loss": "web_fit.loss",
    "attention": "web_fit.attention", "optimizer": "web_fit.optimizer",
    "model": "web.model",
    "policy": "web_fit.policy", "generation": "web_fit.generation",
    "completion_len": "web_fit.completion_len", "vllm_share": "web_fit.vllm_share",
    "precompute_ref": "web_fit.precompute_ref", "vllm_sleep": "web_fit.vllm_sleep",
    "value_adapters": "web_fit.value_adapters",
    "beta": "web_fit.beta",
}
"""The label of each field the detailed model reads, as the page names it."""


def field_label(name: str, lang: Lang) -> str:
    key = FIELD_KEYS.get(name)
    return translate(key, lang) if key else name


def option_label(field: str, value: str | StrEnum, lang: Lang) -> str:
    """The words for `value` of `field` (`sharding`, `zero3` -> "ZeRO-3 (+ poids partagés)")."""
    code = value.value if isinstance(value, StrEnum) else value
    prefix = OPTION_KEYS.get(field)
    return typeset(translate(prefix + code, lang), lang) if prefix else code


def setting_text(settings: tuple[Setting, ...], lang: Lang) -> str:
    """A change's settings in words: "Micro-lot (séquences) : 2 ; Accumulation… : 4"."""
    words = []
    for name, value in settings:
        if isinstance(value, StrEnum):
            shown = option_label(name, value, lang)
        elif isinstance(value, bool):
            shown = translate("web_fit.yes" if value else "web_fit.no", lang)
        else:
            shown = format_number(value, lang.value, 0 if isinstance(value, int) else 2)
        words.append(translate("web_fit.setting", lang, field=field_label(name, lang),
                               value=shown))
    return typeset("; ".join(words) if lang is Lang.EN else " ; ".join(words), lang)


def alignment_line(training: TrainingSetup, lang: Lang) -> str:
    """A preference or RL method's summary: the method, its policy, its reference, its
    generation (the same words as `vramplan fit`'s)."""
    alignment = training.alignment
    assert alignment is not None
    line = translate("web_fit.alignment", lang,
                     method=option_label("method", alignment.method, lang),
                     policy=option_label("method", training.method, lang),
                     reference=translate(f"fit.reference.{reference_kind(training)}", lang))
    if alignment.method.generates:
        line += translate("fit.generation", lang,
                          generation=option_label("generation", alignment.generation, lang),
                          completion=format_number(alignment.completion_tokens, lang.value, 0),
                          sequences=format_number(generated_at_once(training), lang.value, 0))
    return typeset(line, lang)
