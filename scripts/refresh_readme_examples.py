"""Re-run every `$ vramplan ...` example of the README's console blocks and write its current output
in place (a block cut with `…` keeps as many first or last lines as it had).

Run: `.venv/bin/python scripts/refresh_readme_examples.py`; tests/test_readme.py then checks them.
"""

from __future__ import annotations

import io
import os
import re
import shlex
from pathlib import Path

from vramplan.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
ELLIPSIS = "…"


def _output(command: str) -> list[str]:
    out = io.StringIO()
    main(shlex.split(command)[1:], out, out)
    return out.getvalue().rstrip("\n").split("\n")


def _refresh_example(chunk: str) -> str:
    command, *shown = chunk.rstrip("\n").split("\n")
    actual = _output(command)
    if shown and shown[-1] == ELLIPSIS:
        actual = [*actual[: len(shown) - 1], ELLIPSIS]
    elif shown and shown[0] == ELLIPSIS:
        actual = [ELLIPSIS, *actual[len(actual) - (len(shown) - 1):]]
    return "\n".join([command, *actual]) + "\n"


def _refresh_block(match: re.Match[str]) -> str:
    chunks = re.split(r"^\$ ", match.group(1), flags=re.M)
    refreshed = chunks[0] + "".join("$ " + _refresh_example(chunk) for chunk in chunks[1:])
    return f"```console\n{refreshed}```"


def refresh() -> None:
    os.environ["LC_ALL"] = "C.UTF-8"  # the README's examples run in an English locale
    text = README.read_text(encoding="utf-8")
    README.write_text(re.sub(r"```console\n(.*?)```", _refresh_block, text, flags=re.S),
                      encoding="utf-8")


if __name__ == "__main__":
    refresh()
