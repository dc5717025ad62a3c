"""Every dotted `vramplan.…` name that the docs, the README and the code's docstrings give
resolves to a module or an attribute of one: a moved or renamed function cannot leave its old
address behind."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOTTED = re.compile(r"(?<![\w/])vramplan(?:\.\w+)+")
WRAPPED = re.compile(r"`(vramplan(?:\.\w+)*(?:\.[ \t]*\n\s*|[ \t]*\n\s*\.)\w+(?:\.\w+)*)`")
"""A dotted name inside backquotes that a docstring wraps over two lines (`vramplan.a.b` then
`.c` on the next line): read with its whitespace removed."""
NOT_NAMES = {"vramplan.csv"}
"""`cases_vramplan.csv`'s tail, which the pattern also finds."""


def _texts() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "src" / "vramplan").rglob("*.py"))]


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def _references(text: str) -> set[str]:
    """The dotted names `text` gives, wrapped ones joined."""
    return ({match.group(0).rstrip(".") for match in DOTTED.finditer(text)}
            | {re.sub(r"\s+", "", match.group(1)) for match in WRAPPED.finditer(text)}) - NOT_NAMES


def test_every_dotted_name_resolves() -> None:
    references = {(str(path.relative_to(ROOT)), dotted) for path in _texts()
                  for dotted in _references(path.read_text(encoding="utf-8"))}
    assert len(references) > 1000  # the docs do name things
    unresolved = sorted((path, dotted) for path, dotted in references if not _resolves(dotted))
    assert unresolved == []
