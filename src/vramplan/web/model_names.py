"""An unknown model name on the pages: one line with up to three close names and what else to do,
instead of the registry's whole list.

`close_model_names` is the page's own small matcher (difflib over the registry's names, aliases
and Hugging Face repos); a suggestion from the core can replace it without touching the rest.
"""

from __future__ import annotations

import difflib
from functools import cache

from vramplan.errors import UnknownName
from vramplan.i18n import Lang, translate
from vramplan.presets.models import MODELS

MAX_SUGGESTIONS = 3
CUTOFF = 0.6
"""difflib's similarity floor (its default): "lama-3.1-8b" is close to "llama-3.1-8b", "foo" to
nothing."""


@cache
def _names() -> dict[str, str]:
    """Every name a preset answers to (lowercase) -> the preset's name."""
    names: dict[str, str] = {}
    for preset in MODELS:
        for name in (preset.name, preset.hf_repo, preset.hf_repo.split("/")[-1], *preset.aliases):
            names.setdefault(name.lower(), preset.name)
    return names


def close_model_names(value: str, limit: int = MAX_SUGGESTIONS) -> tuple[str, ...]:
    """Up to `limit` preset names close to `value`: those it starts, then difflib's closest."""
    typed = value.strip().lower()
    if not typed:
        return ()
    names = _names()
    found: list[str] = [names[n] for n in names if len(typed) >= 3 and n.startswith(typed)]
    found += [names[n] for n in difflib.get_close_matches(typed, names, n=limit * 3,
                                                          cutoff=CUTOFF)]
    return tuple(dict.fromkeys(found))[:limit]


def unknown_model_text(error: UnknownName, lang: Lang, label: str, *, config_hint: bool) -> str:
    """One line: the name is unknown, the closest names if any, and what else to do (paste a
    config.json where the page takes one)."""
    close = close_model_names(error.value)
    hint = translate("web.model_paste_config" if config_hint else "web.model_pick_list", lang)
    if close:
        return translate("web.model_unknown_close", lang, field=label, value=error.value,
                         names=", ".join(close), hint=hint)
    return translate("web.model_unknown", lang, field=label, value=error.value, hint=hint)
