"""Preference and RL fine-tuning (issue 17): the terms each method adds, counted by hand; the
log-probability loss's memory checked against the function TRL runs, traced; fit's CLI and API
answers with their phases; bad combinations refused with their field named."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from datetime import date
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from vramplan.cli.main import main
from vramplan.parts import PartKind
from vramplan.presets.models import architecture_of, find_model
from vramplan.tracer.result import Phase as TracePhase
from vramplan.tracer.tracker import StorageTracker
from vramplan.training.activations.head import HeadSpec, LossMemory, head_and_loss
from vramplan.training.alignment import estimate_step
from vramplan.training.result import Phase
from vramplan.training.setup import AlignmentSetup, TrainingSetup, policy_pass
from vramplan.training.specs import block_spec
from vramplan.vocab import (
    Checkpointing,
    Framework,
    Generation,
    LoraTarget,
    Method,
    Precision,
)
from vramplan.web.app import create_app

ARCH = architecture_of(find_model("qwen2.5-0.5b"))
GIB = 2**30


def setup_of(method: Method, policy: Method = Method.FULL, **alignment: Any) -> TrainingSetup:
    lora = policy.uses_lora
    return TrainingSetup(method=policy, precision=Precision.AMP, batch=2, seq_len=1024,
                         checkpointing=Checkpointing.FULL,
                         lora_rank=16 if lora else None,
                         lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}) if lora
                         else frozenset(),
                         alignment=AlignmentSetup(method, **alignment))


def part(estimate: Any, phase: Phase, kind: PartKind) -> int:
    memory = next(p for p in estimate.phases if p.phase is phase)
    return sum(p.memory_bytes for p in memory.parts if p.kind is kind)


def phases(estimate: Any) -> set[Phase]:
    return {p.phase for p in estimate.phases}


# --- the terms, by hand ----------------------------------------------------------------------

def test_dpo_keeps_a_frozen_reference_in_the_load_dtype() -> None:
    estimate = estimate_step(ARCH, setup_of(Method.DPO))
    # TRL loads the reference like the policy: fp32 by default (amp), every parameter
    assert part(estimate, Phase.OPTIMIZER_STEP, PartKind.REFERENCE_WEIGHTS) == \
        ARCH.params_total * 4
    assert Phase.REFERENCE_PASS in phases(estimate)


def test_dpo_runs_chosen_and_rejected_in_one_forward() -> None:
    setup = setup_of(Method.DPO)
    assert policy_pass(setup).batch == 2 * setup.batch
    assert policy_pass(setup_of(Method.KTO)).batch == setup.batch


def test_peft_and_precomputed_references_hold_no_copy() -> None:
    lora = estimate_step(ARCH, setup_of(Method.DPO, Method.LORA))
    assert part(lora, Phase.OPTIMIZER_STEP, PartKind.REFERENCE_WEIGHTS) == 0
    assert Phase.REFERENCE_PASS in phases(lora)  # the policy with its adapter disabled
    precomputed = estimate_step(ARCH, setup_of(Method.DPO, precompute_ref=True))
    assert part(precomputed, Phase.OPTIMIZER_STEP, PartKind.REFERENCE_WEIGHTS) == 0
    assert Phase.REFERENCE_PASS not in phases(precomputed)


def test_orpo_and_simpo_have_no_reference_but_an_nll_on_the_chosen_half() -> None:
    for method in (Method.ORPO, Method.SIMPO):
        estimate = estimate_step(ARCH, setup_of(method))
        assert Phase.REFERENCE_PASS not in phases(estimate)
        # fp32 logits (amp): the chosen half's copy and log-softmax, 2 x 4 bytes per element
        assert part(estimate, Phase.LOSS_FORWARD, PartKind.CHOSEN_NLL) == \
            8 * 2 * 1024 * ARCH.vocab_size


def test_grpo_reference_only_with_a_kl_weight() -> None:
    assert part(estimate_step(ARCH, setup_of(Method.GRPO)), Phase.OPTIMIZER_STEP,
                PartKind.REFERENCE_WEIGHTS) == 0
    with_kl = estimate_step(ARCH, setup_of(Method.GRPO, beta=0.04))
    assert part(with_kl, Phase.OPTIMIZER_STEP, PartKind.REFERENCE_WEIGHTS) == \
        ARCH.params_total * 4
    assert Phase.LOG_PROBS in phases(with_kl)


def test_grpo_logits_cover_the_completion_only() -> None:
    estimate = estimate_step(ARCH, setup_of(Method.GRPO, completion_len=256))
    # backward of fp32 log-probabilities: 16 bytes per logit element, 2 rows x 257 positions
    # (TRL asks for `logits_to_keep + 1` and drops the last by slicing, a view)
    assert part(estimate, Phase.BACKWARD_START, PartKind.LOGITS_LOSS) == \
        16 * 2 * 257 * ARCH.vocab_size


def test_colocated_vllm_holds_its_share_unless_asleep() -> None:
    capacity = 80 * GIB
    awake = estimate_step(ARCH, setup_of(Method.GRPO, generation=Generation.VLLM_COLOCATE,
                                         vllm_share=0.25, gpu_memory_bytes=capacity))
    for phase in (Phase.BACKWARD_START, Phase.GENERATION):
        assert part(awake, phase, PartKind.GENERATION_ENGINE) == 20 * GIB
    asleep = estimate_step(ARCH, setup_of(Method.GRPO, generation=Generation.VLLM_COLOCATE,
                                          vllm_share=0.25, vllm_sleep=True,
                                          gpu_memory_bytes=capacity))
    assert part(asleep, Phase.BACKWARD_START, PartKind.GENERATION_ENGINE) == 0
    assert part(asleep, Phase.GENERATION, PartKind.GENERATION_ENGINE) == 20 * GIB
    server = estimate_step(ARCH, setup_of(Method.GRPO, generation=Generation.VLLM_SERVER))
    assert part(server, Phase.GENERATION, PartKind.KV_CACHE) == 0


def test_generate_keeps_the_kv_cache_of_every_sequence() -> None:
    estimate = estimate_step(ARCH, setup_of(Method.GRPO, generation_batch=8))
    per_token = 2 * ARCH.n_layers * ARCH.n_kv_heads * ARCH.head_dim * 2  # K and V, 16-bit
    assert part(estimate, Phase.GENERATION, PartKind.KV_CACHE) == per_token * 8 * 1024
    # gradients were freed by the last optimizer step
    assert part(estimate, Phase.GENERATION, PartKind.GRADIENTS) == 0


def test_ppo_trains_a_full_value_model_beside_a_lora_policy() -> None:
    estimate = estimate_step(ARCH, setup_of(Method.PPO, Method.LORA))
    value = part(estimate, Phase.OPTIMIZER_STEP, PartKind.VALUE_MODEL)
    # amp AdamW: fp32 weights, fp32 gradients, two fp32 moments: 16 bytes per parameter
    assert value == 16 * ARCH.params_total
    assert part(estimate, Phase.OPTIMIZER_STEP, PartKind.REWARD_WEIGHTS) == ARCH.params_total * 4


def test_ms_swift_gives_the_ppo_value_model_the_policys_adapters() -> None:
    """ms-swift's `swift rlhf` passes the value model through `prepare_model` (swift/llm/train/
    rlhf.py @07bd7b463): under LoRA its frozen weights get the policy's adapters, and only these
    train (AlignmentSetup.value_adapters); TRL trains it in full."""
    trl = estimate_step(ARCH, setup_of(Method.PPO, Method.LORA))
    swift = estimate_step(ARCH, setup_of(Method.PPO, Method.LORA, value_adapters=True))
    lora_value = part(swift, Phase.OPTIMIZER_STEP, PartKind.VALUE_MODEL)
    policy_states = swift.states.total_bytes
    assert lora_value == policy_states
    assert lora_value < part(trl, Phase.OPTIMIZER_STEP, PartKind.VALUE_MODEL) / 3
    # a fully trained policy: the value model is full either way
    full = estimate_step(ARCH, setup_of(Method.PPO, Method.FULL, value_adapters=True))
    assert part(full, Phase.OPTIMIZER_STEP, PartKind.VALUE_MODEL) == 16 * ARCH.params_total


@pytest.mark.parametrize("method", [Method.PPO, Method.GRPO])
def test_zero3_gathers_the_whole_trained_model_to_generate(method: Method) -> None:
    """TRL generates inside `unwrap_model_for_generation`, which under ZeRO-3 gathers every
    parameter of the trained model (`deepspeed.zero.GatheredParameters(model.parameters())`,
    trl/models/utils.py; `ds3_gather_for_generation` True by default): the policy, and for PPO
    its value model, whole in 16 bits on every GPU while they generate. Not under FSDP, whose
    units gather one by one."""
    from vramplan.distributed.defaults import default_parallelism
    from vramplan.distributed.per_gpu import estimate_per_gpu
    from vramplan.vocab import Scheme

    setup = dataclasses.replace(setup_of(method), precision=Precision.MIXED)
    estimate = estimate_per_gpu(ARCH, setup, default_parallelism(setup, Scheme.ZERO3, 8))
    models = 2 if method is Method.PPO else 1
    assert part(estimate, Phase.GENERATION, PartKind.SHARDING_BUFFERS) == \
        models * 2 * ARCH.params_total
    fsdp = estimate_per_gpu(ARCH, setup, default_parallelism(setup, Scheme.FSDP, 8))
    assert part(fsdp, Phase.GENERATION, PartKind.SHARDING_BUFFERS) < ARCH.params_total


# --- TRL's log-probabilities, traced ------------------------------------------------------------

def _selective_log_softmax(logits: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """TRL's `selective_log_softmax` (huggingface/trl trl/trainer/utils.py @f2cd5771), as it
    computes: gather and a per-row log-sum-exp for fp32, a per-row log-softmax otherwise."""
    if logits.dtype in (torch.float32, torch.float64):
        selected = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
        lse = torch.stack([torch.logsumexp(row, dim=-1) for row in logits])
        return selected - lse
    rows = []
    for row_logits, row_labels in zip(logits, index, strict=True):
        log_probs = torch.nn.functional.log_softmax(row_logits, dim=-1)
        rows.append(log_probs.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
    return torch.stack(rows)


def _traced_loss(precision: Precision) -> tuple[float, float, float]:
    """Kept, forward peak and backward peak of the head's logits and the log-probabilities, per
    logit element, traced on CPU tensors (a hidden size small beside the vocabulary)."""
    rows, positions, vocab, hidden_size = 8, 512, 4096, 16
    dtype = torch.bfloat16 if precision is Precision.BF16_TRUE else torch.float32
    hidden = torch.randn(rows, positions, hidden_size, dtype=dtype, requires_grad=True)
    weight = torch.randn(vocab, hidden_size, dtype=dtype)
    labels = torch.randint(0, vocab, (rows, positions))
    elements = rows * positions * vocab
    tracker = StorageTracker()
    with tracker:
        tracker.start_recording()
        start = tracker.current
        tracker.start_phase(TracePhase.FORWARD)
        if precision is Precision.AMP:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits16 = hidden @ weight.t()
            logits = logits16.float()  # accelerate's convert_outputs_to_fp32
            del logits16
        else:
            logits = hidden @ weight.t()
        loss = -_selective_log_softmax(logits, labels).mean()
        del logits
        kept = tracker.current - start
        tracker.start_phase(TracePhase.BACKWARD)
        loss.backward()
    peaks = {p.phase: p.peak_bytes - start for p in tracker.phase_peaks()}
    return (kept / elements, peaks[TracePhase.FORWARD] / elements,
            peaks[TracePhase.BACKWARD] / elements)


@pytest.mark.parametrize("precision", [Precision.AMP, Precision.BF16_TRUE, Precision.FP32])
def test_log_probability_loss_matches_the_traced_function(precision: Precision) -> None:
    kept, forward, backward = _traced_loss(precision)
    spec = block_spec(ARCH, TrainingSetup(precision=precision))
    head = HeadSpec(framework=Framework.HF, chunked=False, head_trains=False, head_lora=False,
                    head_keeps_input=False, head_dequant_bytes=0, log_probs=True,
                    autocast=precision is Precision.AMP)
    loss: LossMemory = head_and_loss(ARCH, spec, head, 1, 1)
    per_element = ARCH.vocab_size
    assert loss.forward_peak_bytes / per_element == pytest.approx(forward, rel=0.03)
    assert loss.backward_peak_bytes / per_element == pytest.approx(backward, rel=0.03)
    assert kept <= loss.forward_peak_bytes / per_element * 1.03


# --- ColossalChat's ORPO, by hand and traced -----------------------------------------------------

LLAMA = architecture_of(find_model("llama-2-7b"))


def _coati_orpo(code_date: date | None) -> TrainingSetup:
    """ColossalChat's ORPO benchmark (benchmark_orpo.sh @d888c378): 4 pairs of 2,048 tokens,
    bf16 weights; transformers 4.39.3 (2024) returned fp32 logits, today's 16-bit ones."""
    return TrainingSetup(method=Method.FULL, precision=Precision.MIXED, batch=4, seq_len=2048,
                         checkpointing=Checkpointing.FULL, framework=Framework.GENERIC,
                         code_date=code_date,
                         alignment=AlignmentSetup(Method.ORPO, coati=True))


def test_coatis_orpo_loss_by_hand() -> None:
    """U = 4 x 2,048 x 32,000 x 4 bytes, one half's fp32 logits: 6U at the end of forward, 8U
    at backward's peak, 3U (the fp32 logits and the chosen copy) through the step; with logits
    the model returns in 16 bits, `.to(torch.float32)` is a copy and `actor_out` keeps the
    16-bit ones too (U more everywhere). No separate chosen NLL: it is in the loss."""
    u = 4 * 2048 * 32000 * 4
    for code_date, extra in ((date(2024, 7, 10), 0), (None, u)):
        estimate = estimate_step(LLAMA, _coati_orpo(code_date))
        assert (estimate.loss.forward_peak_bytes, estimate.loss.backward_peak_bytes,
                estimate.loss.logits_alive_bytes) == (6 * u + extra, 8 * u + extra, 3 * u + extra)
        assert part(estimate, Phase.OPTIMIZER_STEP, PartKind.LOGITS_LOSS) == 3 * u + extra
        assert part(estimate, Phase.LOSS_FORWARD, PartKind.CHOSEN_NLL) == 0
    trl = estimate_step(LLAMA, dataclasses.replace(
        _coati_orpo(None), alignment=AlignmentSetup(Method.ORPO)))
    assert part(trl, Phase.LOSS_FORWARD, PartKind.CHOSEN_NLL) > 0
    assert part(trl, Phase.OPTIMIZER_STEP, PartKind.LOGITS_LOSS) == 0


def _traced_coati_orpo() -> tuple[float, float, float]:
    """End of forward, backward peak and what stays after backward, in units of one half's fp32
    logits, of coati's loop (coati/trainer/orpo.py `_train`, models/utils.py
    `calc_masked_log_probs`, models/loss.py `OddsRatioLoss` @d888c378) on CPU tensors, with
    the fp32 logits transformers 4.39.3's forward returns (`logits.float()`)."""
    pairs, positions, vocab, hidden_size = 2, 64, 4096, 16
    u = pairs * positions * vocab * 4
    hidden = torch.randn(2 * pairs, positions, hidden_size, dtype=torch.bfloat16,
                         requires_grad=True)
    weight = torch.randn(vocab, hidden_size, dtype=torch.bfloat16, requires_grad=True)
    ids = torch.randint(0, vocab, (2 * pairs, positions))
    mask = torch.ones(pairs, positions - 1)

    def masked_log_probs(logits: torch.Tensor, sequences: torch.Tensor) -> torch.Tensor:
        log_probs = torch.nn.functional.log_softmax(logits[:, :-1, :], dim=-1)
        return log_probs.gather(dim=-1, index=sequences[:, 1:].unsqueeze(-1)).squeeze(-1) * mask

    def odds(logp: torch.Tensor) -> torch.Tensor:
        return torch.sum((logp - torch.log(-torch.exp(logp) + 1.0001)) * mask) / torch.sum(mask)

    tracker = StorageTracker()
    with tracker:
        tracker.start_recording()
        start = tracker.current
        tracker.start_phase(TracePhase.FORWARD)
        actor_out = {"logits": (hidden @ weight.t()).float()}
        actor_all_logits = actor_out["logits"].to(torch.float32)
        chosen, reject = actor_all_logits[:pairs], actor_all_logits[pairs:]
        logprob_chosen = masked_log_probs(chosen, ids[:pairs])
        logprob_reject = masked_log_probs(reject, ids[pairs:])
        chosen_logits = chosen[:, :-1, :].contiguous().view(-1, vocab)
        labels = ids[:pairs, 1:].contiguous().view(-1)
        nll = torch.nn.CrossEntropyLoss()(chosen_logits, labels).to(dtype=torch.bfloat16)
        ratio = torch.log(torch.sigmoid(odds(logprob_chosen) - odds(logprob_reject)))
        loss = nll - ratio.to(dtype=torch.bfloat16) * 0.5
        end_of_forward = tracker.current - start
        tracker.start_phase(TracePhase.BACKWARD)
        loss.backward()
        after = tracker.current - start
    peaks = {p.phase: p.peak_bytes - start for p in tracker.phase_peaks()}
    del actor_out, actor_all_logits, chosen_logits
    return end_of_forward / u, peaks[TracePhase.BACKWARD] / u, after / u


def test_coatis_orpo_loss_matches_its_loop_traced() -> None:
    """6U, 8U at backward's peak and 3U after it, as counted. Autograd sums the last branch's
    gradient into the buffer in place, as CUDA's engine does: the tracker undoes what its
    dispatch mode changes (`StorageTracker._input_buffer_sum`; before it, 9U)."""
    end_of_forward, backward, after = _traced_coati_orpo()
    assert end_of_forward == pytest.approx(6, rel=0.01)
    assert backward == pytest.approx(8, rel=0.01)
    assert after == pytest.approx(3, rel=0.05)


# --- fit on the CLI and the API ------------------------------------------------------------------

def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


GRPO = ("fit", "--model", "qwen2.5-0.5b", "--gpu", "rtx-4090-24gb", "--method", "grpo",
        "--policy", "lora", "--generation", "vllm-colocate", "--batch", "4", "--seq-len", "1024",
        "--completion-len", "512")


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_fit_prints_the_phases_and_the_method(lang: str) -> None:
    status, out, err = run(*GRPO, "--lang", lang)
    assert (status, err) == (0, "")
    assert ("Peak of each phase" if lang == "en" else "Pic de chaque phase") in out
    assert ("generation" if lang == "en" else "génération") in out
    assert "vllm-colocate" in out
    assert ("Longest completion that fits" if lang == "en"
            else "Plus longue complétion qui tient") in out


def test_fit_json_names_the_method_and_its_engine() -> None:
    status, out, _ = run(*GRPO, "--json")
    payload = json.loads(out)
    alignment = payload["setup"]["alignment"]
    assert (status, alignment["method"], payload["setup"]["method"]) == (0, "grpo", "lora")
    # its share of what CUDA hands out on the card: 23.65 GiB of the RTX 4090's 24
    assert alignment["engine_bytes"] == int(0.3 * 24_218 * 2**20)
    assert {p["phase"] for p in payload["per_gpu"]["phases"]} >= {"generation", "log_probs"}
    assert payload["max_completion_len"] is not None


def test_value_adapters_reach_the_estimate_from_the_cli_and_the_api(client: TestClient) -> None:
    """`--value-adapters` (ms-swift's PPO): the value model holds the policy's frozen weights and
    adapters, not a fully trained copy; only `ppo` takes it."""
    ppo = ("fit", "--model", "qwen2.5-0.5b", "--gpu", "h100-80gb", "--method", "ppo",
           "--policy", "lora", "--json")

    def value_bytes(payload: dict[str, Any]) -> int:
        peak = payload["per_gpu"]["peak_phase"]
        phase = next(p for p in payload["per_gpu"]["phases"] if p["phase"] == peak)
        return next(p["memory_bytes"] for p in phase["parts"] if p["part"] == "value_model")

    trl, swift = (json.loads(run(*ppo, *extra)[1]) for extra in ((), ("--value-adapters",)))
    assert swift["setup"]["alignment"]["value_adapters"] is True
    assert value_bytes(swift) < value_bytes(trl) / 3
    response = client.get("/api/v1/fit", params={
        "model": "qwen2.5-0.5b", "gpu": "h100-80gb", "method": "ppo", "policy": "lora",
        "value_adapters": "true"})
    assert response.status_code == 200
    assert response.json() == swift
    refused = client.get("/api/v1/fit", params={
        "model": "qwen2.5-0.5b", "gpu": "h100-80gb", "method": "dpo", "value_adapters": "true"})
    assert refused.status_code == 422
    assert run("fit", "--model", "qwen2.5-0.5b", "--gpu", "h100-80gb", "--method", "dpo",
               "--value-adapters")[0] == 2


def test_dpo_that_does_not_fit_is_told_to_precompute_its_reference() -> None:
    status, out, _ = run("fit", "--model", "qwen2.5-7b", "--gpu", "h100-80gb", "--method",
                         "dpo", "--json")
    changes = {c["change"]: c for c in json.loads(out)["changes"]}
    assert status == 0
    assert changes["precompute_ref"]["settings"] == {"precompute_ref": True}
    assert changes["lora"]["settings"]["policy"] == "lora"


@pytest.mark.parametrize(("argv", "named"), [
    (("--method", "grpo", "--vllm-share", "0.5"), "--vllm-share"),
    (("--method", "orpo", "--framework", "litgpt"), "--method"),
    (("--method", "grpo", "--completion-len", "4096", "--seq-len", "1024"), "completion"),
    (("--method", "full", "--policy", "lora"), "--policy"),
    (("--method", "dpo", "--beta", "0.1"), "--beta"),
    (("--method", "dpo", "--lora-r", "16"), "--policy lora"),
    (("--method", "grpo", "--generation", "sglang"), "--generation"),
])
def test_bad_combinations_exit_2_naming_the_field(argv: tuple[str, ...], named: str) -> None:
    status, out, err = run("fit", "--model", "qwen2.5-0.5b", "--gpu", "h100-80gb", *argv)
    assert (status, out) == (2, "")
    assert named in err and "Traceback" not in err


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_api_fit_answers_a_grpo_run_like_the_cli(client: TestClient) -> None:
    query = {"model": "qwen2.5-0.5b", "gpu": "rtx-4090-24gb", "method": "grpo",
             "policy": "lora", "generation": "vllm-colocate", "batch": "4", "seq_len": "1024",
             "completion_len": "512"}
    response = client.get("/api/v1/fit", params=query)
    assert response.status_code == 200
    assert response.json() == json.loads(run(*GRPO, "--json")[1])


def test_api_refuses_an_engine_share_without_the_engine(client: TestClient) -> None:
    response = client.get("/api/v1/fit", params={"model": "qwen2.5-0.5b", "gpu": "h100-80gb",
                                                 "method": "grpo", "vllm_share": "0.5"})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "vllm_share"


# --- the page ----------------------------------------------------------------------------------

GRPO_QUERY = {"model": "qwen2.5-1.5b", "method": "grpo", "policy": "lora",
              "generation": "vllm-colocate", "gpu": "rtx-4090-24gb", "batch": "4",
              "seq_len": "1024", "completion_len": "512"}


def _result(html: str, name: str) -> str:
    found = re.search(rf'data-result="{name}"[^>]*>(.*?)</(?:p|li|table)>', html, re.S)
    assert found is not None, name
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))).strip()


@pytest.mark.parametrize(("path", "words"), [
    ("/", ("GRPO (TRL), politique LoRA", "génération", "Plus longue complétion qui tient")),
    ("/en/", ("GRPO (TRL), policy LoRA", "generation", "Longest completion that fits")),
])
def test_page_shows_the_method_its_phases_and_the_longest_completion(
        client: TestClient, path: str, words: tuple[str, str, str]) -> None:
    html = client.get(path, params=GRPO_QUERY).text
    method_line, phase, completion = words
    assert method_line in _result(html, "fit_alignment")
    assert phase in _result(html, "fit_phases")
    assert completion in _result(html, "fit_max_completion_len")
    # the same report as the API's, with the page's fields as its selects show them
    page_fields = {"precision": "mixed", "checkpointing": "none"}
    api = client.get("/api/v1/fit", params={**GRPO_QUERY, **page_fields}).json()
    shown = _result(html, "fit_phases")
    for phase_json in api["per_gpu"]["phases"]:
        gib = f"{phase_json['total_gib']:.2f}".rstrip("0").rstrip(".")
        assert (gib if path == "/en/" else gib.replace(".", ",")) in shown


def test_page_without_javascript_keeps_the_policy_and_lora_settings(client: TestClient) -> None:
    html = client.get("/en/", params={**GRPO_QUERY, "lora_r": "32"}).text
    assert "rank 32" in _result(html, "fit_setup")


# --- case files ----------------------------------------------------------------------------------

CASE_HEADER = "id,model,method,policy,batch,seq_len,new_tokens,gpu,measured,unit"


def test_a_case_row_reads_its_policy_and_its_completion() -> None:
    from vramplan.validation import parse_cases, training_setup_of

    parsed = parse_cases(CASE_HEADER + "\n"
                         "g1,qwen2.5-0.5b,grpo,lora,4,1024,256,h100-80gb,20,GiB\n"
                         "g2,qwen2.5-0.5b,full,lora,4,1024,,h100-80gb,20,GiB\n"
                         "g3,qwen2.5-0.5b,ppo,,1,,53,,20,GiB\n")
    (grpo, ppo), (unread,) = parsed.cases, parsed.unread
    setup = training_setup_of(grpo)
    assert setup.method is Method.LORA and setup.alignment is not None
    assert setup.alignment.completion_tokens == 256
    assert setup.alignment.gpu_memory_bytes == 81_009 * 2**20  # CUDA's 79.11 GiB of an H100
    assert unread.id == "g2" and "policy" in unread.reason
    # no length published: the completion after a one-token prompt, a lower bound
    assert training_setup_of(ppo).seq_len == 54


# --- every preset, every method ---------------------------------------------------------------

@pytest.mark.parametrize("method", sorted(m.value for m in Method if m.is_alignment))
def test_every_preset_gets_an_alignment_estimate_with_its_parts_in_order(method: str) -> None:
    """Over every preset of the registry: the step is estimated, the peak is the largest phase,
    it holds at least the policy's weights, a method with a separate reference holds the
    reference's weights in the policy's dtype, and the online methods have a generation."""
    from vramplan.presets.models import MODELS

    for preset in MODELS:
        arch = architecture_of(preset)
        setup = TrainingSetup(precision=Precision.BF16_TRUE, batch=1, seq_len=1024,
                              checkpointing=Checkpointing.FULL,
                              alignment=AlignmentSetup(Method(method), beta=0.04))
        estimate = estimate_step(arch, setup)
        assert estimate.allocated_bytes == max(p.total_bytes for p in estimate.phases)
        assert estimate.allocated_bytes >= estimate.states.weight_bytes
        reference = part(estimate, Phase.OPTIMIZER_STEP, PartKind.REFERENCE_WEIGHTS)
        expected = 2 * arch.params_total if Method(method).has_reference else 0
        assert reference == expected, preset.name
        assert (Phase.GENERATION in phases(estimate)) == Method(method).generates
