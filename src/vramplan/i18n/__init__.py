"""Languages and message lookup. French first, English too.

Messages are data in `vramplan.i18n.catalogue` (one module per feature); this module only picks the
language and fills the placeholders. Number formatting lives in `vramplan.units`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Lang(StrEnum):
    """A language the tool speaks."""

    FR = "fr"
    """French, the seed calculator's language (the default on a French locale)."""
    EN = "en"
    """English."""


DEFAULT_LANG = Lang.EN
"""Language used when the environment names no French locale."""

_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""POSIX precedence: the first one set and non-empty decides (see locale(7))."""


def detect_lang(environ: Mapping[str, str]) -> Lang:
    """The language asked for by the environment: French for `fr*` locales, English otherwise."""
    for variable in _LOCALE_VARIABLES:
        value = environ.get(variable, "")
        if value:
            return Lang.FR if value.lower().startswith("fr") else DEFAULT_LANG
    return DEFAULT_LANG


def has_message(key: str) -> bool:
    """Whether the catalogue has a message for `key`."""
    from vramplan.i18n.catalogue import CATALOG

    return key in CATALOG


def translate(key: str, lang: Lang, /, **params: object) -> str:
    """The message `key` in `lang`, with `{placeholders}` filled from `params`."""
    from vramplan.i18n.catalogue import CATALOG

    try:
        template = CATALOG[key][lang]
    except KeyError as missing:
        raise KeyError(f"no {lang.value} message for key {key!r}") from missing
    return template.format(**params) if params else template
