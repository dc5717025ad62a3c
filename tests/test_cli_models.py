"""`vramplan models`, `vramplan model` and `vramplan estimate --model/--config`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from vramplan.cli.main import main
from vramplan.presets.models import MODELS

FIXTURES = Path(__file__).parent / "fixtures" / "configs"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_models_table_lists_every_preset() -> None:
    status, out, err = run("models", "--lang", "en")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["name", "family", "parameters", "source"]
    assert len(lines) == 1 + len(MODELS)
    llama = next(line for line in lines if line.startswith("llama-2-7b "))
    assert "6.74 billion" in llama and "meta-llama/Llama-2-7b-hf" in llama


def test_models_json() -> None:
    status, out, _ = run("models", "--json")
    assert status == 0
    models = json.loads(out)["models"]
    assert len(models) == len(MODELS)
    mistral = next(model for model in models if model["name"] == "mistral-7b-v0.1")
    assert mistral["params"] == 7_241_732_096
    assert mistral["family"] == "mistral"
    assert mistral["source"].startswith("https://huggingface.co/mistralai/Mistral-7B-v0.1/")


def test_model_detail_in_french() -> None:
    status, out, _ = run("model", "meta-llama/Llama-3.2-3B", "--lang", "fr")
    assert status == 0
    assert "Modèle : Llama 3.2 3B" in out
    assert "tête liée aux embeddings         oui" in out
    assert "3\u202f212\u202f749\u202f824" in out  # French thousands: narrow no-break spaces


def test_model_detail_json_counts() -> None:
    status, out, _ = run("model", "mixtral-8x7b", "--json")
    assert status == 0
    payload = json.loads(out)
    counts = payload["counts"]
    assert counts["params"] == sum(counts["by_component"].values())
    assert payload["architecture"]["n_experts"] == 8
    assert payload["preset"]["name"] == "mixtral-8x7b"
    assert payload["safetensors_check"] is None


def test_model_from_a_config_folder_with_the_safetensors_check() -> None:
    status, out, _ = run("model", "--config", str(FIXTURES / "llama-2-7b"), "--lang", "en")
    assert status == 0
    assert "6,738,415,616" in out
    assert "they agree" in out
    status, out, _ = run("model", "--config", str(FIXTURES / "llama-2-7b-extra-tensor"), "--json")
    check = json.loads(out)["safetensors_check"]
    assert (check["matches"], check["difference"]) == (False, 131_072_000)


@pytest.mark.parametrize(("argv", "fragment"), [
    (("model", "gpt-5"), "--model: 'gpt-5' is neither a known model nor a Hugging Face repo id"),
    (("model",), "--model: a value is required"),
    (("model", "gpt2", "--config", "x"), "--model and --config cannot be used together"),
    (("model", "--config", "/no/such/dir"), "--config: '/no/such/dir' does not exist"),
    (("model", "--config", str(FIXTURES / "falcon-7b-refinedweb")),
     "model_type 'RefinedWebModel' is not supported"),
    (("estimate", "--model", "llama-2-7b", "--params", "13"),
     "--params and --model cannot be used together: give one or the other"),
    (("estimate", "--model", "llama-2-70b", "--params", "70"),
     "--params and --model cannot be used together: give one or the other"),
])
def test_bad_input_is_one_line_and_exit_2(argv: tuple[str, ...], fragment: str) -> None:
    status, out, err = run(*argv, "--lang", "en")
    assert (status, out) == (2, "")
    assert fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_estimate_with_a_model_uses_its_exact_count() -> None:
    status, out, _ = run("estimate", "--model", "llama-3.1-8b", "--json")
    assert status == 0
    payload = json.loads(out)
    assert payload["params"] == 8_030_261_248
    assert payload["model_states_bytes"] == 16 * 8_030_261_248
    assert payload["model"]["preset"]["name"] == "llama-3.1-8b"


def test_estimate_with_a_config_folder() -> None:
    status, out, _ = run("estimate", "--config", str(FIXTURES / "llama-2-7b"), "--lang", "en")
    assert status == 0
    assert out.startswith("Model: llama (6,738,415,616)")
