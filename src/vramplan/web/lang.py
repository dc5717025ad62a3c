"""Which language a request wants: the `lang` query parameter, then Accept-Language."""

from __future__ import annotations

from vramplan.errors import UnknownName
from vramplan.i18n import Lang

_CODES = frozenset(lang.value for lang in Lang)


def parse_lang(value: str) -> Lang:
    """`fr` or `en` (any case), or an error listing them."""
    try:
        return Lang(value.strip().lower())
    except ValueError:
        raise UnknownName("lang", value, [lang.value for lang in Lang]) from None


def from_accept_language(header: str | None, default: Lang) -> Lang:
    """The supported language the Accept-Language header prefers (RFC 9110, section 12.5.4)."""
    best: tuple[float, Lang] | None = None
    for item in (header or "").split(","):
        tag, _, weight = item.strip().partition(";")
        try:
            quality = float(weight.strip().removeprefix("q=")) if weight else 1.0
        except ValueError:
            continue
        primary = tag.strip().lower().split("-")[0]
        if primary in _CODES and quality > 0:
            lang = Lang(primary)
            if best is None or quality > best[0]:
                best = (quality, lang)
    return best[1] if best else default


def request_lang(query_lang: str | None, accept_language: str | None, default: Lang) -> Lang:
    """`lang` if given (an unknown one is an error), else Accept-Language, else `default`."""
    if query_lang:
        return parse_lang(query_lang)
    return from_accept_language(accept_language, default)
