"""The CLI stays fast to start: building its parser imports no heavy package and no core data.

This is a structural check, not a timing (timings are in benchmarks/cli_startup.py): it lists the
modules that `import vramplan.cli.main` and a `--json` estimate load, in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = frozenset({"torch", "transformers", "peft", "numpy", "fastapi", "starlette", "uvicorn",
                   "pydantic", "jinja2", "babel", "hypothesis", "httpx"})


def _modules_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nimport json as _j\nprint(_j.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_parser_imports_nothing_heavy() -> None:
    """Every command's parser; with the options' help, Babel formats the hints' numbers."""
    brief = _modules_after(
        "import vramplan.cli.main as m; m.build_parser(m.Lang.EN, detailed=False)")
    assert not {name for name in brief if name.split(".")[0] in HEAVY}
    full = _modules_after("import vramplan.cli.main as m; m.build_parser(m.Lang.EN)")
    assert not {name for name in full if name.split(".")[0] in HEAVY - {"babel"}}


def test_json_estimate_imports_nothing_heavy() -> None:
    loaded = _modules_after(
        "import io, vramplan.cli.main as m\n"
        "m.main(['estimate', '--params', '7', '--json'], io.StringIO())"
    )
    assert not {name for name in loaded if name.split(".")[0] in HEAVY}
    # a parameter count names no model: the registry and the config parser stay unloaded
    assert not loaded & {"vramplan.presets.models", "vramplan.model.hf_config",
                         "vramplan.model.resolve", "vramplan.cli.models"}


def test_every_command_name_has_its_module() -> None:
    """A run registers only its own command, so `COMMAND_MODULES` must know every name."""
    import argparse

    from vramplan.cli import main

    for name in main.COMMAND_MODULES:
        module = main.command_module(name)
        parser = argparse.ArgumentParser()
        commands = parser.add_subparsers()
        module.register(commands, main.Lang.EN, detailed=False)
        assert name in commands.choices
        for registered in commands.choices:
            assert main.command_module(registered) is module
