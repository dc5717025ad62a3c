"""DPO and GRPO: the analytic model (`vramplan.training.alignment.estimate_step`) agrees within
3 % with `vramplan trace` running the training micro-step as TRL computes it
(`vramplan.tracer.alignment`: DPO's concatenated forward, its reference pass and loss; GRPO's
reference log-probabilities, its policy's log-probabilities and entropy over the completion, its
loss), over full and LoRA policies, precision regimes, checkpointing, GRPO's `beta`, DPO's
precomputed reference, two batch shapes and two model families.

As in test_trace_agreement.py, the trace runs one step without gradient accumulation, so the
analytic side is asked for `framework=hf, gradient_accumulation=False`, metric allocated.
Generation is not traced: the analytic `generation` phase is left out of the comparison, which
takes the largest of the other phases.

Not in the grid, with the reason:
- QLoRA policies: the trace emulates bitsandbytes storage without MatMul4Bit's saved input, which
  the analytic model follows (as in test_trace_agreement.py).
- Several GPUs: a trace of DPO or GRPO runs on one (`make_setup` refuses `gpus` above 1).
(LoRA policies under full checkpointing were 8.9 to 11.5 % above the trace under `amp` and 3.2
to 3.6 % below it in bf16-true and mixed until autocast's casts under full checkpointing and the
RMSNorms' fp32 backward were modelled; GRPO with a LoRA policy on 1 x 64 tokens was -4.5 %. All
are in the grid now.)
"""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from vramplan.cli.main import main
from vramplan.model.hf_config import parse_config
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.parts import PartKind
from vramplan.tracer import make_setup
from vramplan.tracer.result import Phase as TracePhase
from vramplan.tracer.run import run_trace
from vramplan.tracer.setup import TRACED_ADAPTERS_FP32, TRACED_OPTIMIZER_IMPL
from vramplan.training.alignment import estimate_step
from vramplan.training.result import Phase
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import Checkpointing, Framework, Method, Precision

pytestmark = pytest.mark.trace

TOLERANCE = 0.03

_COMMON = {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
           "vocab_size": 512, "max_position_embeddings": 1024, "intermediate_size": 352,
           "num_key_value_heads": 2}
FAMILIES: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", **_COMMON, "tie_word_embeddings": False},
    "qwen2": {"model_type": "qwen2", **_COMMON, "tie_word_embeddings": True},
}
REGIMES = tuple(itertools.product(("full", "lora"), ("amp", "bf16-true", "mixed"),
                                  ("none", "full")))
"""Policy, precision, checkpointing."""
DPO_CASES = [  # family, policy, precision, checkpointing, batch, seq_len, precompute_ref
    *((family, *regime, 2, 128, False) for family, regime in itertools.product(FAMILIES, REGIMES)),
    *(("llama", policy, "amp", checkpointing, 2, 128, True)
      for policy, checkpointing in (("full", "full"), ("lora", "none"))),
    *(("llama", policy, "bf16-true", "none", 1, 64, False) for policy in ("full", "lora")),
]
GRPO_CASES = [  # family, policy, precision, checkpointing, batch, seq_len, completion, beta
    *((family, *regime, 2, 128, 64, beta) for family, regime, beta
      in itertools.product(FAMILIES, REGIMES, (0.0, 0.04))),
    *(("llama", policy, precision, "none", 1, 64, 16, 0.04) for policy, precision
      in itertools.product(("full", "lora"), ("amp", "bf16-true"))),
]


def _peaks(regime: tuple[Any, ...], **alignment: Any) -> tuple[int, int]:
    """(analytic, traced) peaks of the same setup, allocated bytes; `regime` is family, policy,
    precision, checkpointing, batch and sequence length."""
    family, policy, precision, checkpointing, batch, seq_len = regime
    config = FAMILIES[family]
    lora = policy == "lora"
    traced_setup = make_setup(
        family, config, policy=policy, precision=precision, batch=batch, seq_len=seq_len,
        checkpointing=checkpointing, lora_r=8 if lora else None,
        lora_targets="q;v" if lora else None, **alignment)
    traced = run_trace(traced_setup)
    estimate = estimate_step(parse_config(config), TrainingSetup(
        method=Method(policy), precision=Precision(precision), batch=batch, seq_len=seq_len,
        framework=Framework.HF, gradient_accumulation=False,
        optimizer_impl=TRACED_OPTIMIZER_IMPL,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing(checkpointing), alignment=traced_setup.alignment))
    analytic = max(p.total_bytes for p in estimate.phases if p.phase is not Phase.GENERATION)
    return analytic, traced.peak_bytes


@pytest.mark.parametrize("case", DPO_CASES, ids=["-".join(map(str, c)) for c in DPO_CASES])
def test_dpo_within_3_percent_of_trace(case: tuple[Any, ...]) -> None:
    *regime, precompute_ref = case
    analytic, traced = _peaks(tuple(regime), method="dpo", precompute_ref=precompute_ref)
    assert analytic == pytest.approx(traced, rel=TOLERANCE)


@pytest.mark.parametrize("case", GRPO_CASES, ids=["-".join(map(str, c)) for c in GRPO_CASES])
def test_grpo_within_3_percent_of_trace(case: tuple[Any, ...]) -> None:
    *regime, completion, beta = case
    analytic, traced = _peaks(tuple(regime), method="grpo", completion_len=completion,
                              beta=beta)
    assert analytic == pytest.approx(traced, rel=TOLERANCE)


# --- what the trace runs, and what it refuses -------------------------------------------------

def test_dpo_traces_a_reference_copy_and_its_pass() -> None:
    full = run_trace(make_setup("llama", FAMILIES["llama"], method="dpo", batch=1, seq_len=64))
    assert TracePhase.REFERENCE_PASS in {p.phase for p in full.phases}
    parts = dict(full.breakdown.bytes_by_part)
    # the policy's copy: its weights and buffers (the RoPE table)
    assert parts[PartKind.REFERENCE_WEIGHTS] == \
        parts[PartKind.TRAINABLE_WEIGHTS] + parts[PartKind.FROZEN_WEIGHTS]
    lora = run_trace(make_setup("llama", FAMILIES["llama"], method="dpo", policy="lora",
                                batch=1, seq_len=64))
    assert PartKind.REFERENCE_WEIGHTS not in dict(lora.breakdown.bytes_by_part)
    precomputed = run_trace(make_setup("llama", FAMILIES["llama"], method="dpo",
                                       precompute_ref=True, batch=1, seq_len=64))
    assert TracePhase.REFERENCE_PASS not in {p.phase for p in precomputed.phases}


def test_grpo_says_generation_is_not_traced() -> None:
    result = run_trace(make_setup("llama", FAMILIES["llama"], method="grpo", beta=0.04,
                                  completion_len=16, batch=1, seq_len=64))
    assert result.phases[0].phase is TracePhase.LOG_PROBS
    assert any("generating" in what for what in result.not_traced)


def _cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(FAMILIES["llama"]), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--lang", "en", "trace", "--config", str(config), *args], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("method", ["orpo", "simpo", "kto", "ppo"])
def test_methods_not_traced_are_refused_with_what_is_accepted(method: str,
                                                              tmp_path: Path) -> None:
    code, _, error = _cli(tmp_path, "--method", method)
    assert code == 2
    assert error.count("\n") == 1 and "Traceback" not in error
    assert "--method" in error and f"'{method}'" in error and "dpo, grpo" in error


def test_cli_traces_grpo_with_its_settings_in_the_json(tmp_path: Path) -> None:
    code, text, _ = _cli(tmp_path, "--method", "grpo", "--policy", "lora", "--beta", "0.04",
                         "--completion-len", "16", "--seq-len", "64", "--json")
    assert code == 0
    setup = json.loads(text)["setup"]
    assert (setup["method"], setup["policy"]) == ("grpo", "lora")
    assert (setup["completion_len"], setup["beta"]) == (16, 0.04)
    # TRL's defaults, as fit takes them: fp32 weights under autocast, every layer checkpointed
    assert (setup["precision"], setup["checkpointing"]) == ("amp", "full")
    assert json.loads(text)["not_traced"]
