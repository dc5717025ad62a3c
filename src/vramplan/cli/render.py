"""Plain-text rendering helpers shared by the CLI commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(rows: Sequence[Sequence[str]], header: Sequence[str] | None = None,
          right_align: frozenset[int] = frozenset(), indent: str = "  ") -> str:
    """Rows as aligned columns; columns in `right_align` (by index) are right-aligned."""
    all_rows = [list(header)] if header else []
    all_rows += [list(row) for row in rows]
    widths = [max(len(row[i]) for row in all_rows) for i in range(len(all_rows[0]))]
    lines = []
    for row in all_rows:
        cells = [
            cell.rjust(width) if i in right_align else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append((indent + "  ".join(cells)).rstrip())
    return "\n".join(lines)


def to_json_text(payload: Any) -> str:
    """JSON as printed by every `--json` flag: UTF-8, indented, keys in insertion order."""
    import json

    return json.dumps(payload, ensure_ascii=False, indent=2)
