"""Each serializer's output is exactly its shape of `vramplan.shapes`, the one declaration the
OpenAPI document is generated from. mypy checks the dict literals; this checks what mypy cannot:
values typed `Any` in the core (a config mapping, an architecture's fields), an integer where a
float is declared (mypy takes one for the other, the JSON text differs), an enum's value that is
not in the enum the shape names, keys added after the literal, and the declared order."""

from __future__ import annotations

import inspect
import io
import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typing_extensions import is_typeddict

import vramplan
from tests.helpers import conform
from vramplan import api, serialize, shapes
from vramplan.cli.main import main
from vramplan.errors import VramplanError
from vramplan.i18n import Lang
from vramplan.model.hf_config import SafetensorsCheck
from vramplan.model.resolve import resolve_model
from vramplan.parts import PartKind
from vramplan.presets.gpus import GPUS
from vramplan.presets.models import MODELS, architecture_of, find_model
from vramplan.requests.reading import read
from vramplan.requests.seed import simple_activations
from vramplan.requests.vocabulary import ACTIVATIONS_FORM
from vramplan.shapes import (
    ActivationsOut,
    ErrorOut,
    EstimateOut,
    FitOut,
    GpusOut,
    InferenceOut,
    LoraOut,
    ModelDetailOut,
    ModelsOut,
    SafetensorsCheckOut,
    ShippedValidationOut,
    TraceOut,
    TrainingEstimateOut,
    ValidationOut,
)
from vramplan.tracer.result import Breakdown, CudaPeaks, Phase, PhasePeak, TraceResult
from vramplan.tracer.setup import TraceSetup
from vramplan.training.estimate import estimate_training
from vramplan.training.setup import TrainingSetup
from vramplan.validation import parse_cases, score_cases
from vramplan.vocab import Method
from vramplan.web.errors import error_json

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
ESTIMATES = {
    "seed-example": {"params": 7, "activations": 20},
    "8bit-h100": {"params": 7.5, "optimizer": "adam-8bit", "gpu": "h100-80gb"},
    "custom-bytes": {"params": 13, "bytes_per_param": 10},
    "from-a-model": {"model": "llama-3.2-1b", "batch": 2, "seq_len": 1024},
}
FITS = {
    "lora-tp2": {"model": "llama-3.1-8b", "gpu": "h100-80gb", "method": "lora",
                 "tensor_parallel": 2},
    "full-70b-one-gpu": {"model": "llama-2-70b", "gpu": "a100-80gb", "method": "full"},
    "zero3-offload": {"model": "llama-2-13b", "gpu": "a100-40gb", "gpus": 8,
                      "sharding": "zero3", "offload": "optimizer", "batch": 4},
    "qlora-moe": {"model": "mixtral-8x7b", "gpu": "rtx-4090", "method": "qlora", "quant": "nf4"},
}
INFERENCES = {
    "bf16": {"model": "llama-3.1-8b"},
    "nf4-limits": {"model": "llama-3.1-8b", "weights": "nf4", "context": 8192, "limits": True},
    "vllm-tp2": {"model": "llama-2-70b", "weights": "awq-4bit-g128", "engine": "vllm",
                 "tensor_parallel": 2, "gpu": "a100-80gb"},
    "gguf-llama.cpp": {"model": "llama-3.1-8b", "weights": "gguf-q4_k_m",
                       "engine": "llama.cpp", "kv_dtype": "q8_0"},
    "beyond-context": {"model": "llama-2-7b", "context": 8192},
}
LORAS = {
    "q-v": {"model": "llama-3.1-8b", "lora_r": 8, "lora_targets": "q,v"},
    "dora-all": {"model": "mixtral-8x7b", "lora_r": 64, "lora_targets": "all", "dora": True,
                 "rslora": True},
}


@pytest.mark.parametrize("fields", ESTIMATES.values(), ids=ESTIMATES)
def test_estimate(fields: dict[str, object]) -> None:
    conform(EstimateOut, vramplan.estimate(**fields).to_json())


@pytest.mark.parametrize("fields", FITS.values(), ids=FITS)
def test_fit(fields: dict[str, object]) -> None:
    payload = vramplan.fit(**fields).to_json()
    conform(FitOut, payload)


def test_fit_examples_cover_changes_and_unanswered_schemes() -> None:
    """The examples above reach the optional parts: changes, a scheme with no answer."""
    payloads = [vramplan.fit(**fields).to_json() for fields in FITS.values()]
    assert any(p["changes"] and p["combined"] for p in payloads)
    assert any(a["gpus"] is None for p in payloads for a in p["fewest_gpus"])
    assert any(p["cheapest"] is not None for p in payloads)


@pytest.mark.parametrize("fields", INFERENCES.values(), ids=INFERENCES)
def test_inference(fields: dict[str, object]) -> None:
    conform(InferenceOut, vramplan.infer(**fields).to_json())


@pytest.mark.parametrize("fields", LORAS.values(), ids=LORAS)
def test_lora(fields: dict[str, object]) -> None:
    conform(LoraOut, vramplan.lora(**fields).to_json())


def test_activations() -> None:
    inputs = read(ACTIVATIONS_FORM, {"model": "llama-3.2-1b", "batch": 2, "seq_len": 1024},
                  text=False)
    conform(ActivationsOut, serialize.activations_to_json(simple_activations(inputs)))


def test_catalogues() -> None:
    conform(GpusOut, serialize.gpus_to_json(GPUS))
    conform(ModelsOut, serialize.models_to_json((p, architecture_of(p)) for p in MODELS))


@pytest.mark.parametrize("name", ["llama-3.1-8b", "deepseek-v3", "gemma-3-4b", "mixtral-8x7b"])
def test_model_detail(name: str) -> None:
    resolved = resolve_model(name)
    conform(ModelDetailOut, serialize.model_to_json(find_model(name), resolved.arch))
    payload = serialize.model_to_json(resolved.preset, resolved.arch, resolved)
    payload["safetensors_check"] = serialize.safetensors_check_to_json(None)
    conform(ModelDetailOut, payload)


def test_model_detail_of_a_config_file_with_its_checkpoint_index() -> None:
    """`vramplan model --config DIR --json`: the config.json read, its path, and the count checked
    against model.safetensors.index.json, as the CLI adds them."""
    out, err = io.StringIO(), io.StringIO()
    assert main(["model", "--config", str(CONFIGS / "llama-2-7b"), "--json"], out, err) == 0
    payload = json.loads(out.getvalue())
    assert payload["config"] and payload["safetensors_check"]["matches"]
    conform(ModelDetailOut, payload)


def test_safetensors_check() -> None:
    check = SafetensorsCheck(total_size_bytes=16_060_522_496, dtype_bytes=2,
                             params_from_index=8_030_261_248.0, params_from_config=8_030_261_248)
    conform(SafetensorsCheckOut, serialize.safetensors_check_to_json(check))


def _traced(**bytes_by_part: int) -> Breakdown:
    return Breakdown(tuple((PartKind(name), n) for name, n in bytes_by_part.items()))


@pytest.mark.parametrize("cuda", [None, CudaPeaks("NVIDIA H100", 10_000_000_000, 12_000_000_000)],
                         ids=["fake-tensors", "cuda"])
def test_trace(cuda: CudaPeaks | None) -> None:
    """A trace result built by hand (no torch): the serializer alone is under test."""
    peak = _traced(trainable_weights=4096, activations=8192)
    result = TraceResult(
        setup=TraceSetup("llama-tiny", {}, lora_r=8, lora_targets=("q_proj", "v_proj")),
        params_total=1024, params_trainable=1024, peak_bytes=12_288, peak_phase=Phase.BACKWARD,
        breakdown=peak, phases=tuple(PhasePeak(phase, 12_288, peak) for phase in Phase),
        paged_bytes=0, emulated=("bitsandbytes",), versions=(("torch", "2.13.0"),),
        cuda=cuda)
    conform(TraceOut, serialize.trace_to_json(result))


def test_detailed_training_estimate() -> None:
    arch = architecture_of(find_model("llama-3.1-8b"))
    for setup in (TrainingSetup(), TrainingSetup(method=Method.LORA, batch=4, seq_len=4096)):
        conform(TrainingEstimateOut, serialize.training_to_json(estimate_training(arch, setup)))


def test_validation_of_the_shipped_cases() -> None:
    conform(ValidationOut, api.validate().to_json())  # `vramplan.validate` is the module here


def test_validation_with_skipped_and_unread_rows() -> None:
    from tests.test_validate import HEADER, ROW

    skipped = ROW.replace("llama-2-7b", "llama-9").replace("t1,", "t2,", 1)
    unread = ROW.replace("bf16-true", "bf17").replace("t1,", "t3,", 1)
    parsed = parse_cases("\n".join((HEADER, ROW, skipped, unread)))
    report = score_cases(parsed.cases, parsed.unread)
    payload = serialize.validation_to_json(report, "mine.csv")
    assert payload["summary"]["skipped"] and payload["summary"]["unread"]
    conform(ValidationOut, payload)


def test_validation_of_the_shipped_files_with_readings() -> None:
    """`vramplan validate --json` without a file: each shipped file, rows with their readings."""
    out = io.StringIO()
    assert main(["validate", "--json"], out, out) == 0
    payload = json.loads(out.getvalue())
    conform(ShippedValidationOut, payload)
    assert [f["file"] for f in payload["files"]] == ["cases.csv", "cases_vramplan.csv"]
    readings = {r["id"]: r["readings"] for r in payload["files"][0]["rows"] if r["readings"]}
    assert readings["lf-t4-llama-2-7b-qlora"] == ["quant_default"]


@pytest.mark.parametrize("lang", list(Lang))
def test_error(lang: Lang) -> None:
    with pytest.raises(VramplanError) as caught:
        vramplan.estimate(params=0)
    conform(ErrorOut, error_json(caught.value, lang))


# --- the check itself can fail ------------------------------------------------------------------


@pytest.mark.parametrize("change", [
    {"schema_version": 1, "extra": 1},   # a key the shape does not declare
    {"total_gb": 132},                   # an integer where a float is declared
    {"params": 7e9},                     # a float where an integer is declared
    {"optimizer": "adam"},               # not a value of OptimizerPreset
    {"verdicts": [{"gpu": "h100-80gb"}]},  # a nested object missing its keys
], ids=["extra-key", "int-for-float", "float-for-int", "not-an-enum-value", "nested-missing"])
def test_a_payload_unlike_its_shape_is_refused(change: dict[str, object]) -> None:
    payload = {**vramplan.estimate(params=7, activations=20).to_json(), **change}
    with pytest.raises((ValidationError, AssertionError)):
        conform(EstimateOut, payload)


def test_keys_in_another_order_are_refused() -> None:
    payload = dict(reversed(vramplan.estimate(params=7, activations=20).to_json().items()))
    with pytest.raises(AssertionError):
        conform(EstimateOut, payload)


def test_a_missing_key_is_refused() -> None:
    payload = dict(vramplan.estimate(params=7, activations=20).to_json())
    del payload["total_gib"]
    with pytest.raises(ValidationError):
        conform(EstimateOut, payload)


# --- every serializer has a shape ---------------------------------------------------------------


def test_every_serializer_returns_a_shape() -> None:
    """Each public `*_to_json` of `vramplan.serialize` names a TypedDict of `vramplan.shapes` as
    its return type (the architecture alone is a mapping: its keys are `Architecture`'s)."""
    typed_dicts = {name for name, value in vars(shapes).items() if is_typeddict(value)}
    for name, function in vars(serialize).items():
        if not name.endswith("_to_json") or name.startswith("_"):
            continue
        returned = inspect.signature(function).return_annotation
        if name == "architecture_to_json":
            assert returned == "dict[str, Any]"
            continue
        assert returned.removesuffix(" | None") in typed_dicts, (name, returned)
