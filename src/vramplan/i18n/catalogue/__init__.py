"""The message catalogue: every human-readable string, in French and English.

Each feature keeps its messages in its own module, as data: `{key: {Lang.FR: ..., Lang.EN: ...}}`.
"""

from __future__ import annotations

from collections.abc import Mapping

from vramplan.i18n import Lang
from vramplan.i18n.catalogue import (
    accuracy,
    core,
    fields,
    fit,
    inference,
    models,
    models_hub,
    trace,
    training,
    web,
    web_fit,
    web_seed,
    web_sister,
)

Messages = Mapping[str, Mapping[Lang, str]]


def _merge(*parts: Messages) -> dict[str, Mapping[Lang, str]]:
    merged: dict[str, Mapping[Lang, str]] = {}
    for part in parts:
        duplicated = merged.keys() & part.keys()
        if duplicated:
            raise ValueError(f"message keys defined twice: {sorted(duplicated)}")
        merged.update(part)
    return merged


CATALOG: Mapping[str, Mapping[Lang, str]] = _merge(
    core.MESSAGES, fields.MESSAGES, web.MESSAGES, models.MESSAGES, models_hub.MESSAGES,
    trace.MESSAGES, inference.MESSAGES, training.MESSAGES, fit.MESSAGES, web_sister.MESSAGES,
    web_fit.MESSAGES, web_seed.MESSAGES, accuracy.MESSAGES)
