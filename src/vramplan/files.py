"""Reading a file a user names (a config.json, a case file) without trusting it: a regular file
only (reading a FIFO or a device could wait forever), at most `limit` bytes, UTF-8 with or
without a byte order mark. Each problem is an error of the caller's kind, by reason:
`not_found`, `not_regular`, `unreadable` (with the system's `cause`), `too_large` (with the
`limit`), `not_utf8`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vramplan.errors import VramplanError
from vramplan.units import BYTES_PER_MIB

Problem = Callable[..., VramplanError]
"""Builds the caller's error from a reason and its parameters: `problem("too_large", limit=...)`."""


def read_text_file(path: Path, limit: int, problem: Problem) -> str:
    """The text of the regular file `path`, of at most `limit` bytes."""
    try:
        if not path.is_file():
            raise problem("not_regular" if path.exists() else "not_found")
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:  # a name too long, a loop of links, no permission...
        raise problem("unreadable", cause=error.strerror or type(error).__name__) from None
    if len(data) > limit:
        raise problem("too_large", limit=f"{limit // BYTES_PER_MIB} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise problem("not_utf8") from None
