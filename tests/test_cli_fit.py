"""`vramplan fit`: the JSON equals the core, both languages, every bad input exits 2 naming it."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest

from vramplan.cli.main import main
from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import LoraTarget, Method, Metric, Precision, Scheme

FULL_7B = ("fit", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--precision", "mixed",
           "--batch", "4", "--seq-len", "2048")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_json_matches_the_core() -> None:
    status, out, err = run(*FULL_7B, "--gpus", "8", "--sharding", "zero3", "--json")
    assert (status, err) == (0, "")
    payload = json.loads(out)
    setup = TrainingSetup(precision=Precision.MIXED, batch=4, seq_len=2048, metric=Metric.DEVICE,
                          gradient_accumulation=False)
    core = estimate_per_gpu(architecture_of(find_model("llama-2-7b")), setup,
                            default_parallelism(setup, Scheme.ZERO3, 8))
    per_gpu = payload["per_gpu"]
    assert per_gpu["total_bytes"] == core.total_bytes == payload["verdict"]["peak_bytes"]
    assert per_gpu["parallelism"]["sharding"] == "zero3"
    assert per_gpu["parallelism"]["shard_degree"] == 8
    assert sum(p["memory_bytes"] for p in per_gpu["peak"]["parts"]) == core.allocated_bytes
    verdict = payload["verdict"]
    assert verdict["usable_bytes"] == int(80 * 2**30 * 0.8)
    assert verdict["fits"] == (verdict["peak_bytes"] <= verdict["usable_bytes"])


def test_json_solutions_and_changes_are_consistent() -> None:
    _, out, _ = run(*FULL_7B, "--json")
    payload = json.loads(out)
    usable = payload["verdict"]["usable_bytes"]
    assert payload["verdict"]["fits"] is False
    assert payload["max_batch"] is None  # 7B full fine-tuning on one 80 GB card: not even 1
    for answer in payload["fewest_gpus"]:
        assert (answer["gpus"] is None) == (answer["peak_bytes"] is None)
        if answer["gpus"] is not None:
            assert answer["peak_bytes"] <= usable
    for change in payload["changes"]:
        assert change["saved_bytes"] > 0
        assert change["fits"] == (change["peak_bytes"] <= usable)
        assert change["source"]
    assert payload["combined"][-1]["fits"] is True
    cheapest = payload["cheapest"]
    assert cheapest["gpus"] == min(a["gpus"] for a in payload["fewest_gpus"] if a["gpus"])


def test_margin_is_adjustable() -> None:
    _, out, _ = run("fit", "--model", "tinyllama-1.1b", "--gpu", "l4", "--json", "--margin", "100")
    assert json.loads(out)["verdict"]["usable_share"] == 1.0


def test_report_in_english_and_french() -> None:
    status, out, _ = run(*FULL_7B, "--lang", "en")
    assert status == 0
    assert "It does not fit" in out and "Fujii et al. 2024" in out
    assert "Fewest NVIDIA A100 80GB GPUs per scheme" in out
    status, out, _ = run(*FULL_7B, "--lang", "fr")
    assert status == 0
    assert "Ça ne tient pas" in out and "Quoi changer" in out


@pytest.mark.parametrize(("metric", "said"), [("device", True), ("reserved", True),
                                              ("allocated", False)])
def test_the_report_says_its_cache_is_for_one_step_shape(metric: str, said: bool) -> None:
    for lang, words in (("en", "for steps of one shape"), ("fr", "pas d'une même forme")):
        status, out, _ = run(*FULL_7B, "--metric", metric, "--lang", lang)
        assert status == 0
        assert (words in out) is said
        assert ("expandable_segments:True" in out) is said


@pytest.mark.parametrize(("argv", "option"), [
    (("fit", "--model", "llama-2-7b"), "--gpu"),
    (("fit", "--gpu", "a100"), "--model"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--gpus", "0"), "--gpus"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--gpus", "two"), "--gpus"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--sharding", "zero4"), "--sharding"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--gpus", "2", "--sharding", "none"),
     "--sharding"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--gpus", "2", "--sharding", "fsdp",
      "--offload", "optimizer"), "--offload"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--margin", "150"), "--margin"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--batch", "0"), "--batch"),
    (("fit", "--model", "llama-2-7b", "--gpu", "h900"), "--gpu"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--method", "lora", "--quant", "nf4"),
     "--quant nf4 applies only with --method qlora"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--lora-targets", "abc"),
     "--lora-targets: unknown name 'abc'"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--lora-r", "16"),
     "--lora-r 16 applies only with --method lora, qlora"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "3"),
     "--tensor-parallel: 3 does not divide the model's 32 attention heads"),
    (("fit", "--model", "llama-2-7b", "--gpu", "a100", "--pp", "100"),
     "--pipeline-parallel: 100 stages for 32 layers"),
])
def test_bad_input_exits_2_naming_the_option(argv: tuple[str, ...], option: str) -> None:
    status, out, err = run(*argv, "--lang", "en")
    assert status == 2
    assert out == ""
    assert option in err
    assert "Traceback" not in err


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_help_lists_every_option(lang: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--lang", lang, "fit", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for option in ("--gpu", "--gpus", "--sharding", "--offload", "--margin", "--method",
                   "--lora-targets", "--grad-accum", "--json"):
        assert option in out


def test_fit_inputs_defaults_and_errors_are_shared_with_the_api() -> None:
    from vramplan.errors import UnknownName
    from vramplan.requests.reading import read
    from vramplan.requests.training import fit_request
    from vramplan.requests.vocabulary import FIT

    def setup(**texts: str) -> Any:
        query = {"model": "tinyllama-1.1b", "gpu": "h100", **texts}
        return fit_request(read(FIT, query, text=True)).setup

    defaulted = setup(gpus="", sharding="", batch=" ")
    assert defaulted.parallelism.scheme is Scheme.NONE and defaulted.training.batch == 1
    assert defaulted.training.metric is Metric.DEVICE
    assert setup(gpus="4").parallelism.scheme is Scheme.DDP
    with pytest.raises(UnknownName) as error:
        setup(offload="disk")
    assert error.value.field == "offload"


def test_tensor_and_pipeline_parallel_keep_their_degrees_in_the_search() -> None:
    status, out, _ = run("fit", "--model", "llama-2-70b", "--gpu", "h100-80gb", "--gpus", "64",
                         "--tp", "8", "--pp", "4", "--sharding", "zero1", "--precision", "mixed",
                         "--seq-len", "4096", "--checkpointing", "selective", "--json")
    assert status == 0
    payload = json.loads(out)
    plan = payload["per_gpu"]["parallelism"]
    assert (plan["tensor_parallel"], plan["pipeline_parallel"], plan["shard_degree"]) == (8, 4, 2)
    assert all(a["gpus"] is None or a["gpus"] % 32 == 0 for a in payload["fewest_gpus"])
    status, _, err = run("fit", "--model", "llama-2-70b", "--gpu", "h100", "--gpus", "12",
                         "--tp", "8", "--lang", "en")
    assert status == 2 and "--gpus" in err


def test_expert_parallelism_from_the_command_line_equals_the_core() -> None:
    """`--ep 4` (alias of `--expert-parallel`) on a mixture of experts: the per-GPU peak is the
    core's with `expert_parallel=4`, and smaller than without it (each GPU keeps a quarter of
    the routed experts under DDP)."""
    argv = ("fit", "--model", "qwen3-30b-a3b", "--gpu", "h200", "--gpus", "8", "--sharding",
            "ddp", "--method", "lora", "--json")
    with_ep = json.loads(run(*argv, "--ep", "4")[1])
    without = json.loads(run(*argv)[1])
    setup = TrainingSetup(method=Method.LORA, metric=Metric.DEVICE, gradient_accumulation=False,
                          lora_rank=8, lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}))
    core = estimate_per_gpu(architecture_of(find_model("qwen3-30b-a3b")), setup,
                            dataclasses.replace(default_parallelism(setup, Scheme.DDP, 8),
                                                expert_parallel=4))
    assert with_ep["per_gpu"]["total_bytes"] == core.total_bytes
    assert with_ep["per_gpu"]["total_bytes"] < without["per_gpu"]["total_bytes"]


@pytest.mark.parametrize(("extra", "needle"), [
    (("--ep", "3"), "--expert-parallel"),
    (("--ep", "0"), "--expert-parallel"),
])
def test_expert_parallelism_must_divide_the_data_parallel_gpus(extra: tuple[str, ...],
                                                               needle: str) -> None:
    status, out, err = run("fit", "--model", "qwen3-30b-a3b", "--gpu", "h200", "--gpus", "8",
                           *extra)
    assert (status, out) == (2, "")
    assert needle in err and "Traceback" not in err


@pytest.mark.parametrize(("framework", "impl"), [("hf", "fused"), ("accelerate", "foreach")])
def test_the_report_says_how_adamw_steps(framework: str, impl: str) -> None:
    """The Trainer builds the fused AdamW today (transformers v4.54.0 on PyTorch 2.8); a loop of
    one's own under accelerate gets torch's foreach: the header and the JSON say which."""
    status, out, _ = run(*FULL_7B, "--framework", framework, "--lang", "en")
    assert status == 0 and f"mixed, adamw ({impl}), batch 4" in out
    status, out, _ = run(*FULL_7B, "--framework", framework, "--json")
    assert status == 0 and json.loads(out)["setup"]["optimizer_impl"] == impl
    status, out, _ = run(*FULL_7B, "--framework", framework, "--optimizer-impl", "for-loop",
                         "--json")
    assert status == 0 and json.loads(out)["setup"]["optimizer_impl"] == "for-loop"
