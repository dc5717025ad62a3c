"""`vramplan lora`: report, JSON, both languages, bad inputs."""

from __future__ import annotations

import io
import json

import pytest

from vramplan.cli.main import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_json() -> None:
    status, out, err = run("lora", "--model", "llama-2-7b", "--lora-r", "8", "--lora-targets",
                           "q;v",
                           "--json")
    assert (status, err) == (0, "")
    payload = json.loads(out)
    assert payload["mode"] == "lora"
    assert payload["trainable_params"] == 4_194_304  # litgpt resource-tables.md, Llama 2 7B
    assert payload["targets"] == ["q", "v"]
    assert [f["dtype"] for f in payload["adapter_files"]] == ["fp32", "bf16", "fp16"]
    assert payload["training_bytes"] == 16 * 4_194_304
    assert payload["training_setup"]["lora_targets"] == "q;v"


def test_dora_and_rslora_in_both_languages() -> None:
    status, out, _ = run("lora", "--model", "llama-3.1-8b", "--lora-targets", "all", "--dora",
                         "--rslora", "--lang", "en")
    assert status == 0
    assert "DoRA magnitude vectors" in out and "same memory" in out
    status, out, _ = run("lora", "--model", "llama-3.1-8b", "--lang", "fr")
    assert status == 0
    assert "Paramètres entraînables" in out and "Part du modèle" in out


@pytest.mark.parametrize(("argv", "needle"), [
    (("--model", "llama-2-7b", "--lora-r", "0"), "--lora-r"),
    (("--model", "llama-2-7b", "--lora-r", "1.5"), "--lora-r"),
    (("--model", "llama-2-7b", "--lora-targets", "qq"), "--lora-targets"),
    (("--model", "llama-2-7b", "--lora-targets", "q,q"), "--lora-targets"),
    (("--model", "llama-2-7b", "--lora-targets", "q,v,,"), "--lora-targets"),
    (("--lora-r", "8"), "--model"),
])
def test_bad_input_exits_2(argv: tuple[str, ...], needle: str) -> None:
    status, out, err = run("lora", *argv, "--lang", "en")
    assert (status, out) == (2, "")
    assert needle in err
