"""`vramplan estimate` and `vramplan gpus`: output, JSON schema, both languages, every bad input."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from vramplan import __version__
from vramplan.cli.main import main

NBSP = "\u00a0"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_seed_example_in_english() -> None:
    status, out, err = run("estimate", "--params", "7", "--activations", "20", "--lang", "en")
    assert (status, err) == (0, "")
    assert f"112{NBSP}GB" in out
    assert f"132{NBSP}GB" in out
    assert f"122.93{NBSP}GiB" in out
    # the verdict: 132 GB (122.93 GiB) is more than one 80 GB (80 GiB) H100 holds
    h100 = next(line for line in out.splitlines() if "H100" in line)
    assert " no " in h100
    assert h100.rstrip().endswith("2")


def test_seed_example_in_french() -> None:
    status, out, _ = run("estimate", "--params", "7,5", "--lang", "fr")
    assert status == 0
    assert "7,5 milliards" in out
    assert f"120{NBSP}Go" in out
    assert "copie maîtresse fp32" in out
    assert "Vérifiez sur une vraie étape d'entraînement" in out


def test_language_follows_the_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "fr_FR.UTF-8")
    assert "États du modèle" in run("estimate", "--params", "7")[1]
    assert "Model states" in run("estimate", "--params", "7", "--lang", "en")[1]


def test_json_schema() -> None:
    status, out, _ = run("estimate", "--params", "7", "--activations", "20", "--json")
    assert status == 0
    payload = json.loads(out)
    expected = {
        "schema_version": 1, "mode": "simple", "params_billion": 7.0, "params": 7_000_000_000,
        "optimizer": "adam-mixed", "bytes_per_param": 16.0,
        "model_states_bytes": 112_000_000_000, "model_states_gb": 112.0,
        "activations_bytes": 20_000_000_000, "activations_gb": 20.0,
        "total_bytes": 132_000_000_000, "total_gb": 132.0,
    }
    assert {key: payload[key] for key in expected} == expected
    assert payload["total_gib"] == pytest.approx(122.934, abs=1e-3)
    assert [part["bytes_per_param"] for part in payload["breakdown"]] == [2, 2, 4, 4, 4]
    assert {part["component"] for part in payload["breakdown"]} == {
        "weights", "gradients", "master_weights", "optimizer_states"}
    verdict = {v["gpu"]: v for v in payload["verdicts"]}["h100-80gb"]
    assert verdict["capacity_bytes"] == 80 * 2**30
    assert verdict["fits"] is False
    assert verdict["min_gpus_lower_bound"] == 2


def test_chosen_gpu_by_alias() -> None:
    payload = json.loads(run("estimate", "--params", "7", "--optimizer", "sgd-momentum",
                             "--gpu", "H100", "--json")[1])
    assert [v["gpu"] for v in payload["verdicts"]] == ["h100-80gb"]
    assert payload["verdicts"][0]["fits"] is True
    assert payload["breakdown"][-1]["part"] == "sgd_momentum_fp32"


def test_custom_bytes_per_param() -> None:
    payload = json.loads(run("estimate", "--params", "7", "--bytes-per-param", "10,5",
                             "--json")[1])
    assert payload["optimizer"] is None
    assert payload["model_states_gb"] == 73.5
    assert payload["breakdown"] == []


def test_gpus_command() -> None:
    status, out, _ = run("gpus", "--json")
    names = [gpu["name"] for gpu in json.loads(out)["gpus"]]
    for required in ("rtx-3090-24gb", "rtx-4090-24gb", "rtx-5090-32gb", "l4-24gb", "a10g-24gb",
                     "l40s-48gb", "rtx-a6000-48gb", "a100-40gb", "a100-80gb", "h100-80gb",
                     "h200-141gb", "b200-180gb", "mi300x-192gb", "a10-24gb", "a30-24gb",
                     "rtx-4080-16gb", "rtx-6000-ada-48gb", "h100-nvl-94gb", "h20-96gb",
                     "h800-80gb", "a800-80gb", "a800-40gb",
                     "gh200-96gb", "gh200-144gb", "b300-288gb", "mi250x-gcd-64gb",
                     "mi325x-256gb", "mi355x-288gb"):
        assert required in names
    status, out, _ = run("gpus", "--lang", "fr")
    assert status == 0
    assert f"80{NBSP}Gio" in out


def test_gpus_say_what_cuda_hands_out_where_it_is_published() -> None:
    """A T4 sold as 16 GB gives a process 14.75 GiB (PyTorch's "total capacity" of a Colab T4);
    a card without a published figure says so rather than repeat the memory sold."""
    status, out, _ = run("gpus", "--json")
    by_name = {gpu["name"]: gpu for gpu in json.loads(out)["gpus"]}
    assert status == 0
    assert by_name["t4-16gb"]["capacity_bytes"] == 16 * 2**30
    assert by_name["t4-16gb"]["cuda_total_bytes"] == 15_104 * 2**20
    assert by_name["rtx-4080-16gb"]["cuda_total_bytes"] is None
    status, out, _ = run("gpus", "--lang", "en")
    (t4,) = (line for line in out.splitlines() if line.startswith("t4-16gb "))
    assert f"16{NBSP}GiB" in t4 and f"14.75{NBSP}GiB" in t4


BAD_INPUTS = [
    (["--params", "0"], "--params", "0"),
    (["--params", "-7"], "--params", "-7"),
    (["--params", "nan"], "--params", "nan"),
    (["--params", "inf"], "--params", "inf"),
    (["--params", "seven"], "--params", "seven"),
    (["--params", "200000"], "--params", "200000"),
    (["--params", "7", "--bytes-per-param", "1001"], "--bytes-per-param", "1001"),
    (["--params", "7", "--bytes-per-param", "0"], "--bytes-per-param", "0"),
    (["--params", "7", "--bytes-per-param", "x"], "--bytes-per-param", "x"),
    (["--params", "7", "--activations", "-1"], "--activations", "-1"),
    (["--params", "7", "--activations", "NaN"], "--activations", "NaN"),
    (["--params", "7", "--optimizer", "lion"], "--optimizer", "lion"),
    (["--params", "7", "--gpu", "tpu-v5"], "--gpu", "tpu-v5"),
    (["--params", "7", "--optimizer", "adam-8bit", "--bytes-per-param", "12"], "--optimizer",
     "--bytes-per-param"),
    ([], "--params", "--params"),
]


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize(("args", "field", "value"), BAD_INPUTS,
                         ids=[" ".join(a) or "missing" for a, _, _ in BAD_INPUTS])
def test_bad_input_is_one_line_naming_field_and_value(
    args: list[str], field: str, value: str, lang: str
) -> None:
    status, out, err = run("estimate", *args, "--lang", lang)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert field in err
    assert value in err
    assert "Traceback" not in err
    assert err.startswith("vramplan : erreur" if lang == "fr" else "vramplan: error")


def test_messages_say_what_is_accepted() -> None:
    err = run("estimate", "--params", "0", "--lang", "fr")[2]
    assert "plus de 0 et au plus 100\u202f000" in err
    err = run("estimate", "--params", "7", "--optimizer", "lion", "--lang", "en")[2]
    assert "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd-momentum, sgd, adafactor" in err


def test_unknown_language_is_refused() -> None:
    status, _, err = run("estimate", "--params", "7", "--lang", "de")
    assert status == 2
    assert "--lang" in err
    assert "de" in err


def test_console_script_exit_code_and_no_traceback() -> None:
    env = {**os.environ, "LANG": "C"}
    done = subprocess.run([sys.executable, "-m", "vramplan", "estimate", "--params", "abc"],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--params" in done.stderr
    version = subprocess.run([sys.executable, "-m", "vramplan", "--version"],
                             capture_output=True, text=True, check=False)
    assert version.stdout.strip() == f"vramplan {__version__}"


def test_help_has_examples_in_both_languages() -> None:
    for lang, word in (("en", "examples"), ("fr", "exemples")):
        done = subprocess.run([sys.executable, "-m", "vramplan", "estimate", "--help",
                               "--lang", lang], capture_output=True, text=True, check=False)
        assert done.returncode == 0
        assert word in done.stdout
        assert "--activations" in done.stdout


@pytest.mark.parametrize(("args", "french"), [
    (["estimate", "--foo"], "arguments non reconnus : --foo"),
    (["estimate", "--params"], "--params attend une valeur"),
    (["nosuch"], "COMMAND : choix invalide : 'nosuch' ; valeurs acceptées : 'estimate'"),
])
def test_argparse_own_errors_speak_french(args: list[str], french: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*args, "--lang", "fr"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("utilisation : vramplan")
    assert "vramplan : erreur : " + french in err


def test_help_words_are_french() -> None:
    done = subprocess.run([sys.executable, "-m", "vramplan", "estimate", "--help", "--lang", "fr"],
                          capture_output=True, text=True, check=False)
    assert done.stdout.startswith("utilisation : vramplan estimate")
    assert "affiche cette aide et quitte" in done.stdout


def test_serve_without_the_web_extra_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import vramplan.cli.serve as command

    monkeypatch.setattr(command, "missing_packages", lambda names: ["fastapi", "uvicorn"])
    status, out, err = run("serve", "--lang", "en")
    assert (status, out) == (2, "")
    assert err == ("vramplan: error: this command needs the [web] extra (fastapi, uvicorn "
                   "missing): pip install '.[web]' in vramplan's folder\n")


def _help_example_commands() -> list[str]:
    from vramplan.i18n.catalogue import CATALOG

    return sorted({line.strip() for key, texts in CATALOG.items() if key.endswith("examples")
                   for text in texts.values() for line in text.splitlines()
                   if line.strip().startswith("vramplan ")})


@pytest.mark.parametrize("command", _help_example_commands())
def test_every_help_example_parses(command: str) -> None:
    """The examples `--help` shows name options the commands have (parsed, not run)."""
    import shlex

    from vramplan.cli.main import build_parser
    from vramplan.i18n import Lang

    argv = shlex.split(command, comments=True)[1:]
    args = build_parser(Lang.EN).parse_args(argv)
    assert args.command == argv[0]
