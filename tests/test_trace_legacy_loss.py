"""transformers' causal-LM loss before v4.49, traced: the analytic model
(`vramplan.presets.frameworks.transformers.TransformersCode`) agrees with a real step whose loss is
computed as `LlamaForCausalLM.forward` computed it in v4.45.2 (fp32 logits, `logits[..., :-1,
:].contiguous()`, `CrossEntropyLoss`) and as `ForCausalLMLoss` computed it in v4.46-v4.48
(16-bit logits returned, the loss's own fp32 upcast and shifted copy), within 3 % of the peak.

A large vocabulary (8192 for a 128-wide model) makes the logits and the loss the step's peak."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

import torch

from vramplan.model.hf_config import parse_config
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.tracer import make_setup
from vramplan.tracer import run as trace_run
from vramplan.tracer.result import Phase
from vramplan.tracer.run import run_trace
from vramplan.tracer.setup import TRACED_ADAPTERS_FP32
from vramplan.training.estimate import estimate_training
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import Checkpointing, Framework, Method, Precision

pytestmark = pytest.mark.trace

TOLERANCE = 0.03
CONFIG: dict[str, Any] = {
    "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 352,
    "vocab_size": 8192, "max_position_embeddings": 1024, "tie_word_embeddings": False}
# v4.39, the loss of LlamaFactory's and Answer.AI's runs; after v4.38's mask buffer
# (`TransformersCode.causal_mask_buffer_itemsize`), which the traced model does not build
V4_45 = date(2024, 4, 1)
V4_46 = date(2024, 12, 1)


def _shifted_cross_entropy(logits: Any, labels: Any, vocab_size: int) -> Any:
    # huggingface/transformers v4.45.2 models/llama/modeling_llama.py LlamaForCausalLM.forward,
    # v4.46.0 loss/loss_utils.py ForCausalLMLoss
    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return torch.nn.CrossEntropyLoss()(shift_logits.view(-1, vocab_size), shift_labels.view(-1))


def _v4_45_loss(model: Any, setup: Any, tracker: Any, device: str,
                vocab_size: int) -> tuple[Any, Any]:
    """The model returns fp32 logits (its 16-bit head output is freed by the cast); the loss
    is computed from them; the caller keeps the loss alone, as the Trainer does."""
    tracker.start_phase(Phase.FORWARD)
    input_ids = torch.randint(0, vocab_size, (setup.batch, setup.seq_len))
    labels = input_ids.clone()
    with trace_run._autocast(setup, device):
        logits = model(input_ids=input_ids).logits.float()
        tracker.start_phase(Phase.LOSS)
        loss = _shifted_cross_entropy(logits, labels, vocab_size)
    return loss, (input_ids, labels)


def _v4_46_loss(model: Any, setup: Any, tracker: Any, device: str,
                vocab_size: int) -> tuple[Any, Any]:
    """The model returns its 16-bit logits, alive while the loss upcasts and shifts them."""
    tracker.start_phase(Phase.FORWARD)
    input_ids = torch.randint(0, vocab_size, (setup.batch, setup.seq_len))
    labels = input_ids.clone()
    with trace_run._autocast(setup, device):
        logits = model(input_ids=input_ids).logits
        tracker.start_phase(Phase.LOSS)
        loss = _shifted_cross_entropy(logits, labels, vocab_size)
    return loss, (input_ids, labels)


def _v4_30_loss(model: Any, setup: Any, tracker: Any, device: str,
                vocab_size: int) -> tuple[Any, Any]:
    """No upcast anywhere: `LlamaForCausalLM.forward` up to v4.30.2 (and OPT, GPT-2, BLOOM,
    GPT-NeoX... up to v4.48) shifted its 16-bit logits and ran `CrossEntropyLoss` on them."""
    tracker.start_phase(Phase.FORWARD)
    input_ids = torch.randint(0, vocab_size, (setup.batch, setup.seq_len))
    labels = input_ids.clone()
    logits = model(input_ids=input_ids).logits
    tracker.start_phase(Phase.LOSS)
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    loss = torch.nn.CrossEntropyLoss()(shift_logits.view(-1, vocab_size), shift_labels.view(-1))
    return loss, (input_ids, labels)


V4_30 = date(2023, 7, 1)  # after Llama's unclamped scores (v4.30.0), before its fp32 logits
LEGACY = {"v4.45": (_v4_45_loss, V4_45), "v4.46": (_v4_46_loss, V4_46),
          "v4.30": (_v4_30_loss, V4_30)}
MATRIX = [(version, method, precision) for version in LEGACY for method in ("full", "lora")
          for precision in ("bf16-true", "amp") if (version, precision) != ("v4.30", "amp")]


@pytest.mark.parametrize("case", MATRIX, ids=["-".join(case) for case in MATRIX])
def test_legacy_loss_within_3_percent_of_trace(case: tuple[str, str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    version, method, precision = case
    loss_function, on = LEGACY[version]
    monkeypatch.setattr(trace_run, "_supervised_loss", loss_function)
    lora = method == "lora"
    traced = run_trace(make_setup(
        "llama", CONFIG, method=method, precision=precision, batch=2, seq_len=128,
        lora_r=8 if lora else None, lora_targets="q;v" if lora else None,
        checkpointing="none", attention="sdpa"))
    analytic = estimate_training(parse_config(CONFIG), TrainingSetup(
        method=Method(method), precision=Precision(precision), batch=2, seq_len=128,
        framework=Framework.HF, gradient_accumulation=False,
        lora_rank=8 if lora else None,
        lora_targets=parse_lora_targets("q;v") if lora else frozenset(),
        adapters_fp32=TRACED_ADAPTERS_FP32 if lora else None,
        checkpointing=Checkpointing.NONE, code_date=on,
        # the trace runs a plain step: no autocast over bf16 weights, as the Trainer's would
        no_autocast=precision == "bf16-true"))
    assert analytic.allocated_bytes == pytest.approx(traced.peak_bytes, rel=TOLERANCE)
