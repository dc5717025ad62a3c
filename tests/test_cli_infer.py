"""`vramplan infer`: report, JSON schema, limits, both languages, bad inputs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from vramplan.cli.main import main
from vramplan.inference.estimate import estimate_inference
from vramplan.inference.setup import inference_inputs
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format
from vramplan.vocab import KvDtype


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_json_matches_the_core() -> None:
    status, out, err = run("infer", "--model", "llama-3.1-8b", "--weights", "nf4",
                           "--context", "8192", "--batch", "2", "--kv-dtype", "fp8", "--json")
    assert (status, err) == (0, "")
    payload = json.loads(out)
    core = estimate_inference(inference_inputs(
        architecture_of(find_model("llama-3.1-8b")), find_format("nf4"), 8192, batch=2,
        kv_dtype=KvDtype.FP8))
    assert payload["mode"] == "inference"
    assert payload["allocated_bytes"] == core.allocated_bytes
    assert payload["device_bytes"] == core.allocated_bytes + payload["cuda_context_bytes"]
    parts = {p["part"]: p["memory_bytes"] for p in payload["parts"]}
    assert parts["kv_cache"] == 2 * 32 * 8 * 128 * 8192 * 2 * 1  # fp8: one byte per value
    assert sum(parts.values()) == payload["allocated_bytes"]
    assert payload["params"] == architecture_of(find_model("llama-3.1-8b")).params_total
    assert {v["gpu"] for v in payload["verdicts"]} >= {"h100-80gb", "rtx-4090-24gb"}
    assert all(v["max_context"] is None for v in payload["verdicts"])


def test_max_context_and_max_batch_in_json() -> None:
    _, out, _ = run("infer", "--model", "mistral-7b-v0.1", "--weights", "awq-4bit-g128",
                    "--engine", "vllm", "--gpu", "l4", "--limits", "--json")
    verdict = json.loads(out)["verdicts"][0]
    assert verdict["gpu"] == "l4-24gb"
    assert verdict["usable_bytes"] == int(24 * 2**30 * 0.9)
    assert verdict["max_batch"] > 1
    assert verdict["max_context"] > 0


def test_report_in_english_and_french() -> None:
    status, out, _ = run("infer", "--model", "llama-2-7b", "--weights", "q4_k_m",
                         "--gpu", "rtx-4090", "--limits", "--lang", "en")
    assert status == 0
    assert "llama.cpp" in out
    assert "Q6_K" in out and "host (CPU) memory" in out
    assert "max. context" in out
    status, out, _ = run("infer", "--model", "llama-2-7b", "--lang", "fr")
    assert status == 0
    assert "cache KV" in out and "Verdict par GPU" in out


@pytest.mark.parametrize(("argv", "needle"), [
    (("--model", "llama-2-7b", "--context", "0"), "--context"),
    (("--model", "llama-2-7b", "--context", "4k"), "--context"),
    (("--model", "llama-2-7b", "--weights", "q9_k"), "--weights"),
    (("--model", "llama-2-7b", "--kv-dtype", "fp7"), "--kv-dtype"),
    (("--model", "llama-2-7b", "--weights", "q4_k_m", "--engine", "vllm"), "--engine"),
    (("--model", "llama-2-7b", "--context", "100", "--prompt", "200"), "--prompt"),
    (("--model", "no-such-model",), "--model"),
    ((), "--model"),
])
def test_bad_input_exits_2_with_the_option_named(argv: tuple[str, ...], needle: str) -> None:
    status, out, err = run("infer", *argv, "--lang", "en")
    assert status == 2
    assert out == ""
    assert needle in err
    assert "Traceback" not in err


def test_a_context_beyond_the_trained_one_is_counted_with_a_warning() -> None:
    status, out, _ = run("infer", "--model", "llama-2-7b", "--context", "8192", "--json")
    assert status == 0 and json.loads(out)["beyond_trained_context"] is True
    _, text, _ = run("infer", "--model", "llama-2-7b", "--context", "8192", "--lang", "en")
    assert text.startswith("warning: a context of 8192 tokens exceeds the 4096 tokens")
    status, out, _ = run("infer", "--model", "llama-2-7b", "--context", "4096", "--json")
    assert json.loads(out)["beyond_trained_context"] is False


def test_tensor_parallel_must_divide_the_heads() -> None:
    status, _, err = run("infer", "--model", "llama-2-7b", "--tp", "3", "--lang", "en")
    assert status == 2 and "--tensor-parallel: 3 does not divide the model's 32" in err


def test_config_json_gives_the_same_estimate_as_the_preset(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(dict(find_model("qwen2.5-1.5b").config)))
    _, by_config, _ = run("infer", "--config", str(config), "--weights", "q8_0", "--json")
    _, by_name, _ = run("infer", "--model", "qwen2.5-1.5b", "--weights", "q8_0", "--json")
    assert json.loads(by_config)["device_bytes"] == json.loads(by_name)["device_bytes"]
