"""The page's words for the request vocabulary's values: the options its selects offer and the
settings a change names ("Checkpointing des activations : complet"), never the raw codes of the
CLI and the JSON (`checkpointing=full`)."""

from __future__ import annotations

from enum import StrEnum

from vramplan.i18n import Lang, translate
from vramplan.planner.changes import Setting
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
        shown = (option_label(name, value, lang) if isinstance(value, StrEnum)
                 else format_number(value, lang.value, 0))
        words.append(translate("web_fit.setting", lang, field=field_label(name, lang),
                               value=shown))
    return typeset("; ".join(words) if lang is Lang.EN else " ; ".join(words), lang)
