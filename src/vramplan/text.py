"""Text that came from a user or a file, made safe to show: terminal control characters escaped
(an id holding an ANSI escape must not recolour a terminal) and long values cut to an excerpt."""

from __future__ import annotations

import unicodedata

EXCERPT_CHARACTERS = 80
"""The most of a received value a message quotes."""


def printable(text: str) -> str:
    """`text` with control characters (C0, C1, DEL; not tab or newline) written as `\\x1b`."""
    if all(char.isprintable() or char in "\t\n" for char in text):
        return text
    return "".join(char if char.isprintable() or char in "\t\n"
                   or unicodedata.category(char) not in ("Cc", "Cf", "Cs")
                   else ascii(char)[1:-1] for char in text)


def excerpt(text: str, limit: int = EXCERPT_CHARACTERS) -> str:
    """The first `limit` characters of `text`, with `…` when it was longer."""
    return text if len(text) <= limit else text[:limit] + "…"


def shown(text: str) -> str:
    """A received value as a message quotes it: printable, and cut to an excerpt."""
    return printable(excerpt(text))
