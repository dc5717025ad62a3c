"""The README's console examples are real: each `$ vramplan ...` line, run now, prints what the
README shows. An example whose last line is `…` shows the beginning of the output only; one whose
first line is `…` shows its end only."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest

from vramplan.cli.main import main
from vramplan.presets.models import MODELS

README = Path(__file__).resolve().parents[1] / "README.md"
ELLIPSIS = "…"


def _examples() -> list[tuple[str, list[str]]]:
    examples: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, *output = chunk.rstrip("\n").split("\n")
            examples.append((command, output))
    return examples


EXAMPLES = _examples()


def test_the_readme_examples_are_found() -> None:
    """The parser finds the README's examples (a broken one would leave nothing to check)."""
    commands = {command for command, _ in EXAMPLES}
    assert {"vramplan estimate --params 7 --activations 20",
            "vramplan estimate --params 7 --activations 20 --lang fr"} <= commands


@pytest.mark.parametrize(("command", "expected"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_output_is_current(
    command: str, expected: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "C.UTF-8")  # the README's examples run in an English locale
    argv = shlex.split(command)
    assert argv[0] == "vramplan"
    out = io.StringIO()
    main(argv[1:], out, out)
    actual = out.getvalue().rstrip("\n").split("\n")
    if expected and expected[-1] == ELLIPSIS:
        expected = expected[:-1]
        actual = actual[: len(expected)]
    elif expected and expected[0] == ELLIPSIS:
        expected = expected[1:]
        actual = actual[len(actual) - len(expected):]
    assert actual == expected


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("block", _python_blocks())
def test_readme_python_examples_run_as_shown(block: str) -> None:
    """The README's Python sessions, run as doctests: each output is what the code prints."""
    import doctest

    test = doctest.DocTestParser().get_doctest(block, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_the_preset_count_said_is_the_registrys() -> None:
    """README's "N presets read from their published config.json" and docs/models.md's "all N
    presets" name the registry's size (it said 176 for two sessions after 14 presets were added)."""
    models_doc = README.parent / "docs" / "models.md"
    said = re.findall(r"^(\d+) presets read from", README.read_text(encoding="utf-8"), re.M)
    said += re.findall(r"all (\d+) presets", models_doc.read_text(encoding="utf-8"))
    assert [int(n) for n in said] == [len(MODELS)] * 2
