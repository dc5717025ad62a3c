"""The sister calculators' request layer: query strings in, the CLI's JSON out, named errors."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import inference_json, lora_json
from vramplan.cli.main import main
from vramplan.errors import MissingValue, NotANumber, UnknownName
from vramplan.inference.estimate import estimate_inference
from vramplan.inference.setup import inference_inputs
from vramplan.parts import PartKind
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format


def _cli_json(*argv: str) -> dict[str, object]:
    out = io.StringIO()
    assert main([*argv, "--json"], out, io.StringIO()) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_inference_payload_equals_the_cli() -> None:
    query = {"model": "qwen2.5-7b", "weights": "gptq-4bit-g128", "context": "16384",
             "batch": "3", "kv_dtype": "fp8", "engine": "vllm", "gpu": "l40s", "limits": "1"}
    assert inference_json(query) == _cli_json(
        "infer", "--model", "qwen2.5-7b", "--weights", "gptq-4bit-g128", "--context", "16384",
        "--batch", "3", "--kv-dtype", "fp8", "--engine", "vllm", "--gpu", "l40s", "--limits")


def test_lora_payload_equals_the_cli() -> None:
    query = {"model": "gemma-2-9b", "lora_r": "32", "lora_targets": "all;head", "dora": "on"}
    assert lora_json(query) == _cli_json("lora", "--model", "gemma-2-9b", "--lora-r", "32",
                                            "--lora-targets", "all;head", "--dora")


def test_empty_fields_take_the_defaults() -> None:
    payload = inference_json({"model": "llama-2-7b", "weights": "", "context": " "})
    assert (payload["weights"], payload["context"], payload["batch"]) == ("bf16", 4096, 1)


@pytest.mark.parametrize(("query", "error", "field"), [
    ({}, MissingValue, "model"),
    ({"model": "llama-2-7b", "context": "lots"}, NotANumber, "context"),
    ({"model": "llama-2-7b", "attention": "sparse"}, UnknownName, "attention"),
    ({"model": "llama-2-7b", "engine": "tgi"}, UnknownName, "engine"),
    ({"model": "llama-2-7b", "gpu": "rtx-9090"}, UnknownName, "gpu"),
])
def test_errors_name_the_query_field(query: dict[str, str], error: type[Exception],
                                     field: str) -> None:
    with pytest.raises(error) as raised:
        inference_json(query)
    assert raised.value.field == field  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(context=st.integers(1, 32_768), more=st.integers(1, 4096), batch=st.integers(1, 64),
       weights=st.sampled_from(["bf16", "nf4-dq", "int8", "awq-4bit-g128", "q4_k_m"]))
def test_more_context_never_needs_less_memory(context: int, more: int, batch: int,
                                              weights: str) -> None:
    arch = architecture_of(find_model("gemma-2-9b"))
    fmt = find_format(weights)
    small = estimate_inference(inference_inputs(arch, fmt, context, batch=batch))
    large = estimate_inference(inference_inputs(arch, fmt, context + more, batch=batch))
    assert large.allocated_bytes >= small.allocated_bytes
    assert large.bytes_of(PartKind.KV_CACHE) >= small.bytes_of(PartKind.KV_CACHE)
    assert large.bytes_of(PartKind.WEIGHTS) == small.bytes_of(PartKind.WEIGHTS)
