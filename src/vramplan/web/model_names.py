"""An unknown model name on the pages: one line with up to three close names (the core's
suggestions, `vramplan.model.resolve.suggest_models`) and what else to do, instead of the
registry's whole list."""

from __future__ import annotations

from vramplan.errors import UnknownName
from vramplan.i18n import Lang, translate
from vramplan.model.resolve import UnknownModel


def unknown_model_text(error: UnknownName, lang: Lang, label: str, *, config_hint: bool) -> str:
    """One line: the name is unknown, the closest names if any, and what else to do (paste a
    config.json where the page takes one)."""
    close = error.suggestions if isinstance(error, UnknownModel) else ()
    hint = translate("web.model_paste_config" if config_hint else "web.model_pick_list", lang)
    if close:
        return translate("web.model_unknown_close", lang, field=label, value=error.value,
                         names=", ".join(close), hint=hint)
    return translate("web.model_unknown", lang, field=label, value=error.value, hint=hint)
