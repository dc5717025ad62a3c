"""Activations saved for backward: the autograd rules the model rests on, one block tallied by hand,
and invariants (more tokens never less memory, training more never saves less)."""

from __future__ import annotations

import dataclasses

import pytest

from vramplan.activations import (
    BlockSpec,
    block_saved,
    checkpointed,
    quantized_base_inputs,
    total_per_token,
)
from vramplan.lora import LoraTarget
from vramplan.presets.models import architecture_of, find_model
from vramplan.setup import Attention, Checkpointing, Framework

LLAMA = architecture_of(find_model("llama-2-7b"))
Q_V = frozenset({LoraTarget.Q, LoraTarget.V})


def lora_spec(**changes: object) -> BlockSpec:
    spec = BlockSpec(framework=Framework.LITGPT, residual_bytes=2, compute_bytes=2,
                     autocast=False, weights_train=False, base_keeps_input=False,
                     lora_targets=Q_V, lora_rank=8, lora_dropout=True, attention=Attention.SDPA)
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def test_litgpt_lora_block_tallied_by_hand() -> None:
    h, f, r, heads = 4096, 11008, 8, 32
    expected = (
        4 * h + 4          # norm_1: fp32 copy of the input (x.float()) and rstd
        + h + 2 * h        # LoRA dropout: bool mask, output kept by lora_A
        + 2 * r            # lora_A output kept by lora_B (conv1d)
        + 2 * (h + h)      # zero_pad's index_copy keeps its source (q and v widths)
        + 2 * h + 2 * h    # q and k after RoPE
        + 2 * 3 * h        # v is a view of the fused qkv output: all of it stays
        + 2 * h + 4 * heads  # attention output and log-sum-exp (SDPA flash)
        + 4 * h + 4        # norm_2
        + 3 * 2 * f        # silu input, silu output and up output (act * up)
    )
    assert total_per_token(block_saved(LLAMA, lora_spec(), seq_len=1304)) == expected


def test_first_block_under_lora_saves_less() -> None:
    inner = total_per_token(block_saved(LLAMA, lora_spec(), 512))
    first = total_per_token(block_saved(LLAMA, lora_spec(), 512, input_needs_grad=False))
    # no fp32 copy in norm_1 and no dropout mask: its input needs no gradient
    assert inner - first == 4 * 4096 + 4 + 4096


def test_frozen_matmul_keeps_no_input_but_trained_and_quantized_ones_do() -> None:
    frozen = total_per_token(block_saved(LLAMA, lora_spec(), 512))
    quantized = total_per_token(block_saved(LLAMA, lora_spec(base_keeps_input=True), 512))
    trained = total_per_token(block_saved(LLAMA, lora_spec(weights_train=True), 512))
    assert frozen < quantized <= trained
    # bitsandbytes keeps the inputs of qkv, o, gate/up (one tensor) and down
    assert quantized_base_inputs(LLAMA, lora_spec(base_keeps_input=True)) == (
        2 * 4096 + 2 * 4096 + 2 * 4096 + 2 * 11008)


def test_eager_attention_saves_scores_growing_with_sequence() -> None:
    eager = lora_spec(attention=Attention.EAGER, framework=Framework.HF)
    at_512 = total_per_token(block_saved(LLAMA, eager, 512))
    at_1024 = total_per_token(block_saved(LLAMA, eager, 1024))
    # fp32 softmax output plus its 16-bit cast: 6 bytes x heads x seq_len per token
    assert at_1024 - at_512 == 6 * 32 * 512
    flash = total_per_token(block_saved(LLAMA, lora_spec(framework=Framework.HF), 1024))
    assert flash < at_1024


def test_selective_checkpointing_drops_only_the_scores() -> None:
    eager = lora_spec(attention=Attention.EAGER, framework=Framework.HF)
    saved = block_saved(LLAMA, eager, 2048)
    kept = checkpointed(saved, Checkpointing.SELECTIVE)
    assert {s.name for s in saved} - {s.name for s in kept} == {"attn_probs", "attn_probs_fp32"}


@pytest.mark.parametrize("model", ["phi-2", "falcon-7b", "gemma-2b", "tinyllama-1.1b",
                                   "stablelm-base-alpha-3b", "mixtral-8x7b"])
def test_every_family_saves_something_and_full_training_saves_more(model: str) -> None:
    arch = architecture_of(find_model(model))
    lora = total_per_token(block_saved(arch, lora_spec(lora_dropout=False), 256))
    full = total_per_token(block_saved(
        arch, lora_spec(weights_train=True, lora_targets=frozenset(), lora_dropout=False), 256))
    assert lora > 0
    assert full > lora


def test_autograd_keeps_no_input_for_a_frozen_linear() -> None:
    """The rule behind `weights_train=False`: a frozen weight's matmul saves the weight only."""
    torch = pytest.importorskip("torch")
    saved: list[tuple[int, ...]] = []

    def pack(tensor: object) -> object:
        saved.append(tuple(tensor.shape))  # type: ignore[attr-defined]
        return tensor

    x = torch.randn(3, 5, requires_grad=True)
    frozen = torch.randn(7, 5)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        torch.nn.functional.linear(x, frozen)
    assert sorted(saved) == [(5, 7)]  # the weight (transposed view), never the (3, 5) input


def test_relu_keeps_its_output_which_fc2_keeps_too() -> None:
    """OPT's fc1 -> ReLU -> fc2: ReLU's backward reads its result (derivatives.yaml `relu:
    threshold_backward(grad, result, 0)`), the tensor fc2 saves as its input; GELU keeps its input
    besides. Full training: one intermediate-wide tensor less with ReLU; frozen MLP: the same."""
    opt = architecture_of(find_model("opt-6.7b"))
    gelu = dataclasses.replace(opt, activation="gelu")
    full = lora_spec(weights_train=True, lora_targets=frozenset(), lora_dropout=False)
    lora = lora_spec(lora_dropout=False)
    width = full.compute_bytes * opt.intermediate_size
    saved = {s.name for s in block_saved(opt, full, 256)}
    assert "act_out" in saved and "up_out" not in saved
    assert total_per_token(block_saved(gelu, full, 256)) - total_per_token(
        block_saved(opt, full, 256)) == width
    assert total_per_token(block_saved(gelu, lora, 256)) == total_per_token(
        block_saved(opt, lora, 256))


def test_autograd_relu_saves_its_output_and_gelu_its_input() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)  # negatives: relu(x) != x
    for module, keeps in ((torch.nn.ReLU(), "output"), (torch.nn.GELU(), "input")):
        saved: list[object] = []
        with torch.autograd.graph.saved_tensors_hooks(saved.append, lambda t: t):
            y = module(x)
        assert len(saved) == 1
        assert torch.equal(saved[0], y if keeps == "output" else x), module
