"""The shipped accuracy set is a byte-identical copy of ../shared/validation/cases.csv.

The copy lets the tests and `vramplan validate` work where ../shared does not exist; where it does
(the developers' machines and CI), this test says when the copy must be refreshed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "src" / "vramplan" / "data" / "cases.csv"
SHARED = ROOT.parent / "shared" / "validation" / "cases.csv"


def test_the_copy_is_shipped() -> None:
    assert SHIPPED.read_bytes().startswith(b"id,source,model,method,")


@pytest.mark.skipif(not SHARED.exists(), reason="../shared is not beside this checkout")
def test_the_copy_is_byte_identical_to_the_shared_file() -> None:
    assert SHIPPED.read_bytes() == SHARED.read_bytes(), (
        f"refresh it: cp {SHARED} {SHIPPED}")
