"""The detailed training model: model states by component, quantized storage, phases and the peak,
anchored to published numbers where they exist."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vramplan.errors import ConflictingOptions, MissingValue, OutOfRange
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.parts import PartKind
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.estimate import activation_bytes, estimate_training
from vramplan.training.result import Phase, TrainingEstimate
from vramplan.training.setup import TrainingSetup, residual_itemsize
from vramplan.training.states import model_states, trainable_tensors
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    LoraTarget,
    Method,
    Metric,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
)

LLAMA = architecture_of(find_model("llama-2-7b"))
Q_V = frozenset({LoraTarget.Q, LoraTarget.V})
LITGPT_LORA = TrainingSetup(method=Method.LORA, lora_rank=8, lora_targets=Q_V, batch=1,
                            seq_len=1304, framework=Framework.LITGPT)


def test_mixed_precision_adam_is_the_seed_16_bytes_per_param() -> None:
    # the seed calculator: 2 (fp16 weights) + 2 (grads) + 4 (fp32 master) + 4 + 4 (Adam moments)
    states = model_states(LLAMA, TrainingSetup(precision=Precision.MIXED))
    assert states.total_bytes == 16 * LLAMA.params_total


def test_bf16_true_adam_keeps_bf16_states_and_no_master() -> None:
    states = model_states(LLAMA, TrainingSetup(precision=Precision.BF16_TRUE))
    n = LLAMA.params_total
    assert (states.trainable_weight_bytes, states.gradient_bytes, states.master_weight_bytes,
            states.optimizer_state_bytes) == (2 * n, 2 * n, 0, 4 * n)


def test_sgd_and_8bit_adam_states() -> None:
    n = LLAMA.params_total
    sgd = model_states(LLAMA, TrainingSetup(precision=Precision.FP32,
                                            optimizer=Optimizer.SGD_MOMENTUM))
    assert sgd.optimizer_state_bytes == 4 * n
    eight = model_states(LLAMA, TrainingSetup(optimizer=Optimizer.ADAMW_8BIT))
    # two uint8 moments plus one fp32 absmax per 256 values (small tensors stay 32-bit)
    assert 2 * n < eight.optimizer_state_bytes < 2.1 * n


def test_paged_optimizer_pages_only_large_states() -> None:
    # LoRA r=8 matrices (8 x 4096) are under bitsandbytes' 1e5-value paging threshold: their
    # two fp32 moments stay on the device
    lora = model_states(LLAMA, dataclasses.replace(LITGPT_LORA, optimizer=Optimizer.PAGED_ADAMW))
    assert (lora.optimizer_state_bytes, lora.managed_optimizer_bytes) == (2 * 4 * 4_194_304, 0)
    full = model_states(LLAMA, TrainingSetup(optimizer=Optimizer.PAGED_ADAMW))
    assert full.managed_optimizer_bytes > 0.99 * 8 * LLAMA.params_total
    assert full.optimizer_state_bytes < 0.01 * 8 * LLAMA.params_total


def test_paged_8bit_optimizer_keeps_its_absmax_on_the_device() -> None:
    # bitsandbytes optim/optimizer.py `Optimizer2State.init_state`: `state1`/`state2` come from
    # `get_state_buffer` (paged), `absmax1`/`absmax2` are `torch.zeros(..., device=p.device)`
    full = model_states(LLAMA, TrainingSetup(optimizer=Optimizer.PAGED_ADAMW_8BIT))
    large = [g for g in trainable_tensors(LLAMA, TrainingSetup()) if g.elements >= 100_000]
    assert full.managed_optimizer_bytes == sum(2 * g.elements * g.count for g in large)
    absmax = sum(2 * 4 * -(-g.elements // 256) * g.count for g in large)
    assert full.optimizer_state_bytes >= absmax


def test_adafactor_states_are_fp32_row_and_column_statistics() -> None:
    # transformers `Adafactor.step`: `grad = grad.float()`, states made `.to(grad)`; a matrix
    # keeps `exp_avg_sq_row` and `exp_avg_sq_col`, a vector `exp_avg_sq`
    tensors = trainable_tensors(LLAMA, TrainingSetup())
    factored = sum((g.rows + g.cols if g.cols > 1 else g.rows) * g.count for g in tensors)
    for precision in (Precision.BF16_TRUE, Precision.FP32):
        states = model_states(LLAMA, TrainingSetup(precision=precision,
                                                   optimizer=Optimizer.ADAFACTOR))
        assert states.optimizer_state_bytes == 4 * factored


def step_temporaries(estimate: TrainingEstimate) -> int:
    step = next(p for p in estimate.phases if p.phase is Phase.OPTIMIZER_STEP)
    return sum(p.memory_bytes for p in step.parts if p.kind is PartKind.STEP_TEMPORARIES)


def test_adafactor_and_for_loop_steps_hold_what_their_loops_bind() -> None:
    # Llama 2 7B's largest tensors are its 32,000 x 4,096 embedding (first) and head (last, after
    # the 4,096-value final norm)
    v = 32_000 * 4096
    norm = 4096
    bf16 = estimate_training(LLAMA, TrainingSetup(precision=Precision.BF16_TRUE,
                                                  optimizer=Optimizer.ADAFACTOR))
    # fp32 copies of the gradient and the parameter, two fp32 updates, the norm's update
    assert step_temporaries(bf16) == 4 * (4 * v + norm)
    fp32 = estimate_training(LLAMA, TrainingSetup(precision=Precision.FP32,
                                                  optimizer=Optimizer.ADAFACTOR))
    assert step_temporaries(fp32) == 4 * (2 * v + norm)
    # an optimizer in backward calls `step()` for one parameter at a time: nothing of the
    # previous one is left
    inbwd = estimate_training(LLAMA, TrainingSetup(precision=Precision.BF16_TRUE,
                                                   optimizer=Optimizer.ADAFACTOR,
                                                   optimizer_impl=OptimizerImpl.IN_BACKWARD))
    assert step_temporaries(inbwd) == 4 * 4 * v
    loop = estimate_training(LLAMA, TrainingSetup(precision=Precision.BF16_TRUE,
                                                  optimizer_impl=OptimizerImpl.FOR_LOOP))
    # `exp_avg_sq.sqrt()` and its quotient, beside the norm's `denom`
    assert step_temporaries(loop) == 2 * (2 * v + norm)
    # transformers' own AdamW, the Trainer's default before v4.32.0 (2023-08-21): `denom =
    # exp_avg_sq.sqrt().add_(eps)`, one tensor: the first block's q (4,096 x 4,096) beside the
    # embedding's
    hf_2023 = estimate_training(LLAMA, TrainingSetup(precision=Precision.BF16_TRUE,
                                                     framework=Framework.HF,
                                                     code_date=date(2023, 5, 1)))
    assert step_temporaries(hf_2023) == 2 * (4096 * 4096 + v)
    stated = dataclasses.replace(hf_2023.setup, optimizer_impl=OptimizerImpl.FOR_LOOP)
    assert step_temporaries(estimate_training(LLAMA, stated)) == 2 * (2 * v + norm)


def test_nf4_double_quantization_saves_what_litgpt_measured() -> None:
    # resource-tables.md: Llama 2 7B QLoRA 14.14 GB with bnb.nf4, 13.84 GB with bnb.nf4-dq
    qlora = dataclasses.replace(LITGPT_LORA, method=Method.QLORA, quant=Quant.NF4,
                                optimizer=Optimizer.PAGED_ADAMW)
    nf4 = model_states(LLAMA, qlora).frozen_weight_bytes
    dq = model_states(LLAMA, dataclasses.replace(qlora, quant=Quant.NF4_DQ)).frozen_weight_bytes
    assert (nf4 - dq) / 1e9 == pytest.approx(14.14 - 13.84, abs=0.02)


def test_litgpt_stores_a_tied_head_twice_transformers_once() -> None:
    gemma = architecture_of(find_model("gemma-2b"))
    assert gemma.tied_embeddings
    hf = model_states(gemma, TrainingSetup(method=Method.LORA, framework=Framework.HF))
    lit = model_states(gemma, TrainingSetup(method=Method.LORA, framework=Framework.LITGPT))
    assert lit.frozen_weight_bytes - hf.frozen_weight_bytes == 2 * 256_000 * 2048


@pytest.mark.parametrize(("batch", "measured_gb"), [(1, 21.30), (2, 29.07)])
def test_litgpt_lora_llama_2_7b_matches_the_published_peak(batch: int, measured_gb: float) -> None:
    # Lightning-AI/litgpt tutorials/resource-tables.md (0cc02afa): Llama 2 7B, LoRA, A100
    estimate = estimate_training(LLAMA, dataclasses.replace(LITGPT_LORA, batch=batch))
    assert estimate.allocated_bytes / 1e9 == pytest.approx(measured_gb, rel=0.02)


def test_peak_is_the_largest_phase_and_metrics_add_documented_overheads() -> None:
    estimate = estimate_training(LLAMA, LITGPT_LORA)
    assert estimate.allocated_bytes == max(p.total_bytes for p in estimate.phases)
    # a later micro-batch and a unit's reduce are phases of the multi-GPU estimate
    # (vramplan.distributed.per_gpu) only; generation and the reference and log-probability
    # passes, of preference and RL methods (vramplan.training.alignment); the embedding's
    # backward where the embedding trains (not under LoRA); the first micro-batch where
    # Unsloth's first pass keeps the checkpointed inputs
    assert {p.phase for p in estimate.phases} == set(Phase) - {
        Phase.LATER_MICRO_BATCH, Phase.UNIT_REDUCE, Phase.GENERATION, Phase.LOG_PROBS,
        Phase.REFERENCE_PASS, Phase.EMBEDDING_BACKWARD, Phase.FIRST_MICRO_BATCH}
    assert estimate.reserved_bytes > estimate.allocated_bytes
    assert estimate.device_bytes == estimate.reserved_bytes + CUDA_CONTEXT_BYTES
    assert estimate.metric_bytes(Metric.DEVICE) == estimate.device_bytes


def test_full_checkpointing_keeps_far_less_than_none() -> None:
    full = TrainingSetup(batch=4, seq_len=2048)
    none = activation_bytes(LLAMA, full)
    ckpt = activation_bytes(LLAMA, dataclasses.replace(full, checkpointing=Checkpointing.FULL))
    assert ckpt < none / 5


def test_amp_keeps_16_bit_copies_of_the_weights() -> None:
    amp = estimate_training(LLAMA, dataclasses.replace(LITGPT_LORA, precision=Precision.AMP))
    copies = sum(p.memory_bytes for p in amp.peak.parts if p.kind is PartKind.AUTOCAST_COPIES)
    assert copies > 2 * 6e9


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 8), seq=st.integers(16, 4096), more=st.integers(1, 512))
def test_more_tokens_never_need_less_memory(batch: int, seq: int, more: int) -> None:
    setup = dataclasses.replace(LITGPT_LORA, batch=batch, seq_len=seq)
    base = estimate_training(LLAMA, setup).allocated_bytes
    assert estimate_training(LLAMA, dataclasses.replace(setup, seq_len=seq + more)
                             ).allocated_bytes >= base
    assert estimate_training(LLAMA, dataclasses.replace(setup, batch=batch + 1)
                             ).allocated_bytes >= base


def test_bad_setups_name_the_field() -> None:
    with pytest.raises(MissingValue):
        estimate_training(LLAMA, TrainingSetup(method=Method.QLORA))
    with pytest.raises(ConflictingOptions):
        estimate_training(LLAMA, TrainingSetup(method=Method.FULL, lora_rank=8))
    with pytest.raises(OutOfRange):
        estimate_training(LLAMA, TrainingSetup(batch=0))
    with pytest.raises(ConflictingOptions):
        estimate_training(LLAMA, TrainingSetup(method=Method.INFERENCE))


def test_simple_mode_activations_from_batch_and_sequence() -> None:
    from vramplan.training.estimate import activations_for_simple_mode

    arch = architecture_of(find_model("llama-3.1-8b"))
    one = activations_for_simple_mode(arch, 1, 2048)
    assert activations_for_simple_mode(arch, 2, 2048) > 1.9 * one
    assert activations_for_simple_mode(arch, 1, 2048, Method.LORA) < one


def test_estimate_cli_fills_a_from_the_model_and_shape() -> None:
    import io
    import json

    from vramplan.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    status = main(["estimate", "--model", "llama-3.1-8b", "--batch", "1", "--seq-len", "2048",
                   "--json"], out, err)
    assert (status, err.getvalue()) == (0, "")
    payload = json.loads(out.getvalue())
    from vramplan.training.estimate import activations_for_simple_mode

    expected = activations_for_simple_mode(architecture_of(find_model("llama-3.1-8b")), 1, 2048)
    assert payload["activations_bytes"] == expected
    out, err = io.StringIO(), io.StringIO()
    assert main(["estimate", "--model", "llama-3.1-8b", "--seq-len", "2048",
                 "--activations", "3"], out, err) == 2
    assert "--seq-len" in err.getvalue()


def test_fused_chunked_loss_never_holds_all_logits() -> None:
    from vramplan.vocab import Loss

    llama3 = architecture_of(find_model("llama-3-8b"))
    standard = TrainingSetup(method=Method.LORA, batch=4, seq_len=4096)
    fused = dataclasses.replace(standard, loss=Loss.CHUNKED)
    a = estimate_training(llama3, standard)
    b = estimate_training(llama3, fused)
    logits_fp32 = 4 * 128_256 * 4 * 4096
    assert a.loss.forward_peak_bytes >= 2 * logits_fp32
    assert b.loss.forward_peak_bytes < logits_fp32 / 4


def test_fused_linear_cross_entropy_as_liger_runs_it() -> None:
    """Liger-Kernel's fused linear cross-entropy (ops/fused_linear_cross_entropy.py): chunks of
    `next_power_of_2(cdiv(BT, cdiv(V, H)))` rows, the logits of one chunk in bf16 with the
    chunk's hidden gradient, the hidden states' gradient and, when the head trains, the head
    weight's gradient made in forward. Qwen2.5-3B (V 151,936, H 2,048) on 8,192 tokens: 75
    chunks of 110 rows would do, Liger takes 64 of 128."""
    from vramplan.training.activations.head import fused_loss_rows
    from vramplan.vocab import Loss

    assert fused_loss_rows(8192, 151_936, 2048) == 128
    assert fused_loss_rows(16384, 152_064, 3584) == 512
    assert fused_loss_rows(3, 151_936, 2048) == 1  # never more rows than tokens
    qwen = architecture_of(find_model("qwen2.5-3b"))
    full = TrainingSetup(method=Method.FULL, batch=1, seq_len=8192, loss=Loss.CHUNKED,
                         checkpointing=Checkpointing.FULL)
    grad_input, head_grad = 2 * 2048 * 8192, 2 * 151_936 * 2048
    chunk = 2 * (151_936 + 2048) * 128
    assert estimate_training(qwen, full).loss.forward_peak_bytes == \
        grad_input + head_grad + chunk
    lora = dataclasses.replace(full, method=Method.LORA)
    assert estimate_training(qwen, lora).loss.forward_peak_bytes == grad_input + chunk
    # the step program (what `reserved` replays) holds one chunk's logits at a time
    from vramplan.allocator import EventKind
    from vramplan.training.allocations.step import step_program
    from vramplan.training.result import step_shape

    made_in_loss: dict[int, int] = {}
    in_loss, most = False, 0
    for event in step_program(qwen, full, step_shape(qwen, full), steps=1):
        if event.kind is EventKind.MARK:
            in_loss = event.name == "loss"
        elif event.kind is EventKind.ALLOC and in_loss:
            made_in_loss[event.tensor] = event.n_bytes
        elif event.kind is EventKind.FREE:
            made_in_loss.pop(event.tensor, None)
        most = max(most, sum(made_in_loss.values()))
    assert most == grad_input + head_grad + chunk + 4 * 8192  # and the per-token losses


def test_torchtunes_2024_qlora_built_its_model_on_the_gpu_as_traced() -> None:
    """torchtune's QLoRA before June 2024 ran torchao v0.1 and built its model on the GPU: a
    template layer quantized at once, 32 deep copies that each dequantize and quantize again
    (torchtune's `clone` override), the checkpoint quantized again as it is copied in (its
    `copy_` override), each `to_nf4` holding 16 bf16 entries per value twice. torchtune's
    tutorial (docs/source/tutorials/qlora_finetune.rst @0914d5cfb) logged 9.13 GB reserved
    "after model init". Today's torchao quantizes by chunks: nothing of the sort."""
    import datetime

    from vramplan.allocator import replay
    from vramplan.training.allocations.load import load_parameters
    from vramplan.training.allocations.program import WHOLE, StepProgram
    from vramplan.training.allocations.tensors import parameter_tensors
    from vramplan.vocab import Framework, Metric, Quant

    llama = architecture_of(find_model("llama-2-7b"))
    today = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=2,
                          seq_len=512, checkpointing=Checkpointing.FULL,
                          framework=Framework.TORCHTUNE, metric=Metric.RESERVED)
    april = dataclasses.replace(today, code_date=datetime.date(2024, 4, 15))
    new, old = estimate_training(llama, today), estimate_training(llama, april)
    # the allocated peaks differ by the fp32 logits April's recipe kept through backward
    # (`TORCHTUNE_DELETES_LOGITS_SINCE`): 2 x 512 x 32,000 x 4 bytes, and by the quantization
    # factor's whole storage torchao v0.1 kept: one bf16 value per 64 of the 32 x 202,375,168
    # quantized weights, and by the rotary caches of every layer but one (one per layer before
    # 2024-09-12, `torchtune_rope_modules`: 4,096 positions x 64 frequencies x cos, sin x 4 B)
    assert old.allocated_bytes - new.allocated_bytes == 2 * 512 * 32000 * 4 \
        + 32 * 202_375_168 * 2 // 64 + 31 * 4096 * 64 * 2 * 4
    program = StepProgram()
    load_parameters(program, parameter_tensors(llama, april), WHOLE, april, llama)
    reserved = replay(program.events).peak_reserved_bytes
    assert reserved == pytest.approx(9.13e9, rel=0.01)
    assert old.reserved_bytes > reserved > new.reserved_bytes


def test_training_json_names_units_and_sums_parts() -> None:
    import json

    from vramplan.serialize import training_to_json

    estimate = estimate_training(LLAMA, LITGPT_LORA)
    payload = training_to_json(estimate)
    json.dumps(payload)  # JSON-ready
    assert payload["peak_phase"] == estimate.peak.phase.value
    assert payload["allocated_bytes"] == estimate.allocated_bytes
    assert payload["allocated_gb"] == payload["allocated_bytes"] / 1e9
    for phase in payload["phases"]:
        assert phase["total_bytes"] == sum(p["memory_bytes"] for p in phase["parts"])
    assert {"tensor": "qkv", "bytes_per_token": 2 * 3 * 4096} in payload["block_saved_per_token"]


@pytest.mark.parametrize(("model", "precision", "in_flight"), [
    ("qwen2.5-0.5b", Precision.BF16_TRUE, 3),  # tied: head's view + embedding's + their sum
    ("qwen2.5-0.5b", Precision.AMP, 2),        # tied: summed into the head's fp32 cast gradient
    ("llama-2-7b", Precision.BF16_TRUE, 1),    # untied: the embedding's own gradient
])
def test_the_embeddings_backward_holds_every_other_gradient_and_its_own_in_flight(
        model: str, precision: Precision, in_flight: int) -> None:
    arch = architecture_of(find_model(model))
    setup = TrainingSetup(precision=precision, optimizer=Optimizer.SGD, batch=1, seq_len=256,
                          framework=Framework.HF, gradient_accumulation=False)
    estimate = estimate_training(arch, setup)
    phase = {p.phase: p for p in estimate.phases}[Phase.EMBEDDING_BACKWARD]
    parts = {p.kind: p.memory_bytes for p in phase.parts}
    itemsize = 4 if precision is Precision.AMP else 2
    embedding = arch.params_token_embedding * itemsize
    assert parts[PartKind.GRADIENTS] == estimate.states.gradient_bytes - embedding
    d_output = itemsize * arch.hidden_size * 256  # the gradient of the embedding's output
    assert parts[PartKind.BACKWARD_TEMPORARIES] == in_flight * embedding + d_output
    # SGD without momentum adds nothing at its step, which holds every gradient once
    step = {p.phase: p for p in estimate.phases}[Phase.OPTIMIZER_STEP]
    assert phase.total_bytes - step.total_bytes == (in_flight - 1) * embedding + d_output
    assert estimate.peak.phase is Phase.EMBEDDING_BACKWARD


# --- peft's adapters on a bitsandbytes 4-bit base ------------------------------------------------

Q_V_ADAPTERS = 32 * 2 * (8 * 4096 + 4096 * 8)
"""r8 on q and v of Llama-2-7B: A (8 x 4096) and B (4096 x 8) per matrix, 32 blocks."""
HF_QLORA = TrainingSetup(method=Method.QLORA, quant=Quant.NF4, lora_rank=8, lora_targets=Q_V,
                         seq_len=512)
BEFORE_PEFT_UPCAST = date(2024, 7, 1)
"""A run before peft v0.12.0, which made `get_peft_model` upcast 16-bit adapters to fp32."""


@pytest.mark.parametrize(("setup", "adapter_bytes", "state_bytes"), [
    # peft builds the adapters in fp32 and keeps them so on a uint8-stored base (layer.py
    # update_layer @v0.10.0): fp32 weight and gradient, AdamW's fp32 `zeros_like` moments
    (HF_QLORA, 4, 8),
    # a float storage (`bnb_4bit_quant_storage`): the adapters take the base's bf16 before
    # peft v0.12.0, and are upcast to fp32 since (tuners_utils.py `_cast_adapter_dtype`)
    (dataclasses.replace(HF_QLORA, float_quant_storage=True, code_date=BEFORE_PEFT_UPCAST), 2, 4),
    (dataclasses.replace(HF_QLORA, float_quant_storage=True), 4, 8),
    # LLaMA-Factory stores the 4-bit base in the compute dtype
    (dataclasses.replace(HF_QLORA, framework=Framework.LLAMAFACTORY,
                         code_date=BEFORE_PEFT_UPCAST), 2, 4),
    # litgpt's adapters are in the model's dtype
    (dataclasses.replace(HF_QLORA, framework=Framework.LITGPT), 2, 4),
    # plain LoRA on a bf16 base: bf16 adapters from peft v0.6 to v0.11, fp32 since; fp32 before
    # v0.6.0 too (`update_layer` moved them to the base's device only: lora.py @v0.5.0)
    (dataclasses.replace(HF_QLORA, method=Method.LORA, quant=Quant.NONE,
                         code_date=BEFORE_PEFT_UPCAST), 2, 4),
    (dataclasses.replace(HF_QLORA, method=Method.LORA, quant=Quant.NONE,
                         code_date=date(2023, 11, 2)), 2, 4),
    (dataclasses.replace(HF_QLORA, method=Method.LORA, quant=Quant.NONE,
                         code_date=date(2023, 11, 1)), 4, 8),
    (dataclasses.replace(HF_QLORA, method=Method.LORA, quant=Quant.NONE), 4, 8),
    # a pure-bf16 LLaMA-Factory run turns peft's upcast off since bc4b42ce
    (dataclasses.replace(HF_QLORA, method=Method.LORA, quant=Quant.NONE,
                         framework=Framework.LLAMAFACTORY), 2, 4),
    # a run that says its adapters are in the model's dtype (`vramplan trace`, DeepSpeed)
    (dataclasses.replace(HF_QLORA, adapters_fp32=False), 2, 4),
])
def test_peft_adapters_on_a_uint8_stored_base_are_fp32(setup: TrainingSetup, adapter_bytes: int,
                                                       state_bytes: int) -> None:
    states = model_states(LLAMA, setup)
    assert states.trainable_params == Q_V_ADAPTERS
    assert states.trainable_weight_bytes == adapter_bytes * Q_V_ADAPTERS
    assert states.gradient_bytes == adapter_bytes * Q_V_ADAPTERS
    assert states.gradient_itemsize == adapter_bytes
    assert states.optimizer_state_bytes == state_bytes * Q_V_ADAPTERS
    assert states.master_weight_bytes == 0


def test_fp32_adapters_are_their_own_master_copy() -> None:
    mixed = model_states(LLAMA, dataclasses.replace(HF_QLORA, precision=Precision.MIXED))
    assert (mixed.trainable_weight_bytes, mixed.master_weight_bytes) == (4 * Q_V_ADAPTERS, 0)
    lora = model_states(LLAMA, dataclasses.replace(HF_QLORA, precision=Precision.MIXED,
                                                   method=Method.LORA, quant=Quant.NONE,
                                                   code_date=BEFORE_PEFT_UPCAST))
    assert (lora.trainable_weight_bytes, lora.master_weight_bytes) == (2 * Q_V_ADAPTERS,
                                                                       4 * Q_V_ADAPTERS)


def test_the_allocation_program_holds_the_adapters_as_the_states_do() -> None:
    from vramplan.training.allocations.tensors import parameter_tensors

    for setup in (HF_QLORA, dataclasses.replace(HF_QLORA, float_quant_storage=True)):
        tensors = parameter_tensors(LLAMA, setup)
        held = sum(t.n_bytes for t in tensors if t.trainable)
        assert held == model_states(LLAMA, setup).trainable_weight_bytes


def test_fsdp_and_zero3_store_the_4bit_base_in_the_weights_dtype() -> None:
    from vramplan.distributed.defaults import default_parallelism
    from vramplan.distributed.per_gpu import estimate_per_gpu
    from vramplan.vocab import Offload, Scheme

    # before peft upcast adapters: the base's bf16 on a float storage, fp32 on uint8 (DDP)
    early = dataclasses.replace(HF_QLORA, code_date=BEFORE_PEFT_UPCAST)
    for scheme, adapter_bytes in ((Scheme.FSDP, 2), (Scheme.ZERO3, 2), (Scheme.DDP, 4)):
        plan = default_parallelism(early, scheme, 2, Offload.NONE)
        single = estimate_per_gpu(LLAMA, early, plan).single
        assert single.states.trainable_weight_bytes == adapter_bytes * Q_V_ADAPTERS
    # today's peft upcasts them, but DeepSpeed's engine casts them back to bf16
    for scheme, adapter_bytes in ((Scheme.FSDP, 4), (Scheme.ZERO3, 2)):
        plan = default_parallelism(HF_QLORA, scheme, 2, Offload.NONE)
        single = estimate_per_gpu(LLAMA, HF_QLORA, plan).single
        assert single.states.trainable_weight_bytes == adapter_bytes * Q_V_ADAPTERS


def test_megatron_cross_entropy_saves_one_fp32_softmax_made_in_place() -> None:
    """Megatron-LM's vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py
    @d98e8a64): the bf16 logits and their fp32 copy, turned into the softmax in place and saved
    (2 + 4 bytes per logit in forward); backward makes the gradient in place and autograd casts
    it to bf16 (4 + 2). transformers' loss adds an fp32 log-softmax to the fp32 copy and, in
    backward, two fp32 gradients (10 and 12 bytes per logit)."""
    from vramplan.training.activations.head import HeadSpec, head_and_loss
    from vramplan.training.specs import block_spec

    arch = architecture_of(find_model("tinyllama-1.1b"))
    logits = arch.vocab_size * 2 * 512

    def loss(framework: Framework) -> tuple[int, int]:
        setup = TrainingSetup(precision=Precision.MIXED, batch=2, seq_len=512,
                              framework=framework)
        head = HeadSpec(framework=framework, chunked=False, head_trains=True, head_lora=False,
                        head_keeps_input=False, head_dequant_bytes=0)
        memory = head_and_loss(arch, block_spec(arch, setup), head, 2, 512)
        return memory.forward_peak_bytes, memory.backward_peak_bytes

    assert loss(Framework.MEGATRON) == (6 * logits, 6 * logits)
    assert loss(Framework.GENERIC) == (10 * logits, 12 * logits)


def test_megatrons_native_fused_cross_entropy_updates_the_softmax_through_a_fresh_buffer(
        ) -> None:
    """`--cross-entropy-loss-fusion` (native): the same steps compiled by `torch.compile`, whose
    in-place updates of the fp32 logits inductor computes in a fresh buffer and copies back:
    4 more bytes per logit in the loss's forward and backward, in the analytic loss and in the
    step program alike (mbridge's Llama 3.2 1B log: 0.528 GB above the unfused estimate, one
    fp32 copy of its logits 0.525 GB)."""
    from vramplan.training.allocations.step import reserved_memory
    from vramplan.training.result import step_shape

    arch = architecture_of(find_model("tinyllama-1.1b"))
    logits = arch.vocab_size * 4 * 2048
    unfused = TrainingSetup(precision=Precision.MIXED, batch=4, seq_len=2048,
                            checkpointing=Checkpointing.FULL, framework=Framework.MEGATRON)
    fused = dataclasses.replace(unfused, native_fused_cross_entropy=True)
    beside_te = dataclasses.replace(fused, te_cross_entropy=True)
    losses = [estimate_training(arch, s).loss for s in (unfused, fused, beside_te)]
    assert losses[1].forward_peak_bytes - losses[0].forward_peak_bytes == 4 * logits
    assert losses[1].backward_peak_bytes - losses[0].backward_peak_bytes == 4 * logits
    assert losses[2].forward_peak_bytes == 2 * logits  # Transformer Engine's kernel ran
    replayed = [reserved_memory(arch, s, step_shape(arch, s)).replay.peak_allocated_bytes
                for s in (unfused, fused, beside_te)]
    assert replayed[1] - replayed[0] == 4 * logits
    assert replayed[2] < replayed[0]  # no fp32 softmax at all (the peak moves off the loss)


def test_a_lora_adapter_on_the_head_keeps_the_final_norms_output() -> None:
    """A frozen head's matmul keeps nothing, its adapter's `lora_A` keeps its input: without
    dropout, the final norm's bf16 output (hidden x tokens x 2 bytes); with dropout, its mask
    and output instead (1 + 2 bytes); and `lora_A`'s rank-wide output either way."""
    from vramplan.training.activations.head import HeadSpec, head_and_loss
    from vramplan.training.specs import block_spec

    arch = architecture_of(find_model("tinyllama-1.1b"))
    tokens, rank = 2 * 512, 8

    def saved(head_lora: bool, dropout: float) -> int:
        setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=2,
                              seq_len=512, lora_rank=rank, lora_dropout=dropout,
                              lora_targets=parse_lora_targets("all;head"),
                              framework=Framework.TORCHTUNE)
        head = HeadSpec(framework=Framework.TORCHTUNE, chunked=False, head_trains=False,
                        head_lora=head_lora, head_keeps_input=False, head_dequant_bytes=0)
        return head_and_loss(arch, block_spec(arch, setup), head, 2, 512).saved_bytes

    assert saved(True, 0.0) - saved(False, 0.0) == (2 * arch.hidden_size + 2 * rank) * tokens
    assert saved(True, 0.1) - saved(False, 0.1) == (3 * arch.hidden_size + 2 * rank) * tokens


@pytest.mark.parametrize(("day", "extra"), [
    (date(2024, 2, 26), 4),  # core_r0.5.0: the max subtracted into an fp32 copy
    (date(2024, 6, 13), 0),  # 9634c0e4: in place
    (None, 0),
])
def test_megatrons_cross_entropy_subtracted_its_max_out_of_place_until_june_2024(
        day: date | None, extra: int) -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    logits = arch.vocab_size * 2 * 512
    dated = TrainingSetup(precision=Precision.MIXED, batch=2, seq_len=512,
                          framework=Framework.MEGATRON, code_date=day)
    today = dataclasses.replace(dated, code_date=None)
    assert estimate_training(arch, dated).loss.forward_peak_bytes \
        - estimate_training(arch, today).loss.forward_peak_bytes == extra * logits


# --- Unsloth (unslothai/unsloth: kernels/, models/llama.py) -------------------------------------
def _unsloth(day: date | None = None, *, attention: Attention = Attention.SDPA,
             checkpointing: Checkpointing = Checkpointing.FULL) -> TrainingSetup:
    return TrainingSetup(method=Method.QLORA, precision=Precision.BF16_TRUE, quant=Quant.NF4_DQ,
                         lora_rank=16, lora_targets=parse_lora_targets("all"), batch=2,
                         seq_len=1024, checkpointing=checkpointing, attention=attention,
                         framework=Framework.UNSLOTH, code_date=day)


def test_unsloth_lora_block_keeps_what_its_kernels_save() -> None:
    """Fast_RMS_Layernorm keeps X and r; LoRA_QKV keeps X; the attention kernel q, k, v, its
    output and log-sum-exp (k and v expanded to every query head unless flash-attn runs);
    LoRA_W keeps its input (the attention output); LoRA_MLP keeps X, e and g."""
    from vramplan.training.activations.block import block_saved
    from vramplan.training.activations.spec import total_per_token
    from vramplan.training.specs import block_spec

    arch = architecture_of(find_model("llama-3.1-8b"))
    h, q, kv, f, a = (arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size,
                      arch.n_heads)
    for attention, width in ((Attention.FLASH, kv), (Attention.SDPA, q)):
        setup = _unsloth(attention=attention, checkpointing=Checkpointing.NONE)
        per_token = total_per_token(block_saved(arch, block_spec(arch, setup), 1024))
        assert per_token == (2 * h + 4) * 2 + 2 * h * 2 + 2 * q + 2 * 2 * width + 2 * q \
            + 4 * a + 2 * 2 * f


def test_unsloth_cross_entropy_writes_the_gradient_over_its_16_bit_logits() -> None:
    """fast_cross_entropy_loss (before Cut Cross-Entropy, 2024-11-21) keeps the 16-bit logits
    and returns them as their gradient: 2 bytes per logit in backward; in forward the model
    also returns them, and the Trainer's mixed precision (accelerate's
    `convert_outputs_to_fp32`) copies them to fp32 until it drops the outputs: 2 + 4 bytes.
    Since then the loss is fused: Cut Cross-Entropy's chunks are small; `unsloth_fused_ce_loss`
    (2025-08-13) takes 2048 * 128256 * 4 bytes of fp32 logits over a 1 GiB target = 0.245,
    rounded to 0 chunks, so one (today's code, without a card: a 4 GiB target, one chunk too):
    the hidden states' gradient, then the 16-bit logits of every row, which their gradient
    overwrites, and the chunk's hidden gradient."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    logits = 2 * arch.vocab_size * 2 * 1024
    loss = estimate_training(arch, _unsloth(day=date(2024, 5, 1))).loss
    assert (loss.forward_peak_bytes, loss.backward_peak_bytes) == (3 * logits, logits)
    fused = estimate_training(arch, _unsloth(day=date(2024, 11, 21))).loss
    assert fused.forward_peak_bytes < logits / 10
    hidden = 2 * arch.hidden_size * 2 * 1024
    for day in (date(2025, 9, 1), None):
        fused = estimate_training(arch, _unsloth(day=day)).loss
        assert fused.forward_peak_bytes == hidden + logits + hidden
    before = estimate_training(arch, _unsloth(day=date(2024, 11, 20))).loss
    assert before.forward_peak_bytes == 3 * logits


@pytest.mark.parametrize(("day", "tokens", "fused"), [
    (date(2024, 12, 9), 1024, True),  # Cut Cross-Entropy whatever the size
    (date(2024, 12, 10), 1024, False),  # b9fe2588: "< 1024 Normal Unsloth uses less VRAM!"
    (date(2024, 12, 10), 1025, True),
    (date(2025, 10, 25), 512, False),
    (date(2025, 10, 26), 512, True),  # 0528b4ce: every size takes the fused loss
])
def test_unsloth_small_micro_batches_took_the_logits_path_for_a_while(
        day: date, tokens: int, fused: bool) -> None:
    from vramplan.training.setup import unsloth_fuses_loss

    setup = dataclasses.replace(_unsloth(day=day), batch=1, seq_len=tokens)
    assert unsloth_fuses_loss(setup) is fused


def test_unsloth_sets_expandable_segments_when_imported() -> None:
    """unsloth/__init__.py (c599ae0f, 2024-03-17) overwrites PYTORCH_CUDA_ALLOC_CONF with
    `expandable_segments:True`; the setup's own settings stand for any other framework."""
    from vramplan.training.setup import allocator_config

    assert not allocator_config(_unsloth(day=date(2024, 3, 16))).expandable_segments
    assert allocator_config(_unsloth(day=date(2024, 3, 17))).expandable_segments
    assert allocator_config(_unsloth()).expandable_segments
    hf = dataclasses.replace(_unsloth(), framework=Framework.HF)
    assert allocator_config(hf) == hf.alloc_conf


def test_torchtitans_launcher_sets_expandable_segments() -> None:
    """torchtitan's run_llama_train.sh exports `expandable_segments:True` since a5e57e4a9 (#643,
    2024-10-22), as run_train.sh does today."""
    from vramplan.training.setup import allocator_config

    def titan(day: date | None) -> TrainingSetup:
        return TrainingSetup(precision=Precision.AMP, batch=1, seq_len=8192,
                             framework=Framework.TORCHTITAN, code_date=day)

    assert not allocator_config(titan(date(2024, 10, 21))).expandable_segments
    assert allocator_config(titan(date(2024, 10, 22))).expandable_segments
    assert allocator_config(titan(None)).expandable_segments


@pytest.mark.parametrize(("day", "offloaded"), [
    (date(2024, 4, 5), False), (date(2024, 4, 6), True), (date(2025, 3, 4), True)])
def test_unsloth_checkpointing_keeps_block_inputs_in_host_memory_since_april_2024(
        day: date | None, offloaded: bool) -> None:
    """`use_gradient_checkpointing="unsloth"` (920f0ae6, 2024-04-06) sends each block's input
    to the CPU; before, transformers' checkpointing kept it on the GPU."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    setup = _unsloth(day=day)
    inputs = 2 * arch.hidden_size * 2 * 1024 * arch.n_layers
    estimate = estimate_training(arch, setup)
    assert estimate.activations_bytes - estimate.loss.saved_bytes == (0 if offloaded else inputs)


@pytest.mark.parametrize(("day", "on_gpu", "first_pass_kept"), [
    # unsloth's own checkpointer: every input offloaded, each brought back into a fresh tensor
    (date(2025, 3, 4), 0, False),
    # 3e5f0611 (release 2025.3.5), unsloth_zoo's UnslothCheckpointFunction: the last block's
    # input stays, the others come back into one buffer; the first pass offloads nothing
    (date(2025, 3, 5), 2, True),
    (date(2025, 11, 24), 2, True),
    (date(2025, 11, 25), 2, False),  # zoo df5fe407 (`or FIRST_PASS`), required by 2025.11.4
    (date(2026, 5, 4), 3, False),  # zoo 510d987f: a second reload buffer
    (None, 3, False),
])
def test_unsloths_smart_checkpointing_keeps_the_last_input_and_its_reload_buffers(
        day: date | None, on_gpu: int, first_pass_kept: bool) -> None:
    arch = architecture_of(find_model("llama-3.1-8b"))
    estimate = estimate_training(arch, _unsloth(day=day))
    one_input = 2 * arch.hidden_size * 2 * 1024
    assert estimate.activations_bytes - estimate.loss.saved_bytes == on_gpu * one_input
    phases = {phase.phase for phase in estimate.phases}
    assert (Phase.FIRST_MICRO_BATCH in phases) is first_pass_kept


def test_the_releases_that_brought_and_ended_unsloths_kept_first_pass() -> None:
    """2025.3.5 is the first version string after unsloth 3e5f0611; 2025.11.4 (7af84b49) the
    first to require unsloth_zoo>=2025.11.5, which has df5fe407."""
    from vramplan.presets.frameworks.unsloth import unsloth_code, unsloth_release_date

    def code(*version: int) -> tuple[bool, bool]:
        on = unsloth_code(unsloth_release_date(version))
        return on.smart_checkpointing, on.first_pass_kept

    assert code(2025, 3, 4) == (False, False)
    assert code(2025, 3, 5) == (True, True)
    assert code(2025, 11, 3) == (True, True)
    assert code(2025, 11, 4) == (True, False)


def test_unsloths_first_pass_holds_every_input_before_any_gradient_or_state() -> None:
    """unsloth_zoo 5572cc46 to df5fe407: while `FIRST_PASS`, `LAST_GC_INDEX` grows with
    `CURRENT_GC_INDEX`, so no input is offloaded before the first backward; gradients come with
    that backward and AdamW's states with the first step. By hand for Llama 3.1 8B at 2 x 1,024
    tokens: 32 inputs of 16 MiB where later passes keep the last one and a reload buffer."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    estimate = estimate_training(arch, _unsloth(day=date(2025, 6, 1)))
    one_input = 2 * 4096 * 2 * 1024
    later_only = estimate.states.gradient_bytes + estimate.states.optimizer_state_bytes
    largest = max(_phase_bytes(estimate, moment) for moment in
                  (Phase.LOSS_FORWARD, Phase.BACKWARD_START, Phase.BACKWARD_BLOCKS))
    assert _phase_bytes(estimate, Phase.FIRST_MICRO_BATCH) - largest \
        == (32 - 2) * one_input - later_only


def test_unsloths_first_pass_is_in_the_replayed_program_read_from_the_run_start() -> None:
    """The step program keeps the first micro-batch's inputs too, and its peaks count from the
    first step (the notebooks read `max_memory_reserved` after training, never reset): the
    replayed allocated peak rises as the analytic one does, within 1 %."""
    from vramplan.training.allocations.step import reserved_memory
    from vramplan.training.result import step_shape

    arch = architecture_of(find_model("llama-3.1-8b"))
    kept, offloaded = (dataclasses.replace(_unsloth(day=day), seq_len=4096)
                       for day in (date(2025, 11, 24), date(2025, 11, 25)))
    replayed = [reserved_memory(arch, s, step_shape(arch, s)).replay.peak_allocated_bytes
                for s in (kept, offloaded)]
    analytic = [estimate_training(arch, s).allocated_bytes for s in (kept, offloaded)]
    assert analytic[0] - analytic[1] > 5 * 10**8
    assert replayed[0] - replayed[1] == pytest.approx(analytic[0] - analytic[1], rel=0.01)


def _phase_bytes(estimate: object, phase: Phase) -> int:
    return next(p.total_bytes for p in estimate.phases  # type: ignore[attr-defined]
                if p.phase is phase)


@pytest.mark.parametrize("framework", [Framework.GENERIC, Framework.ACCELERATE,
                                       Framework.DEEPSPEED])
def test_a_loop_that_keeps_the_outputs_holds_the_logits_through_backward_and_the_step(
        framework: Framework) -> None:
    """`outputs = model(**batch); loss = outputs.loss; backward(loss)` (the HF course's loop,
    DeepSpeed-Chat's): the 16-bit logits the model returns stay alive through backward and the
    step, and the previous step's through this forward; the Trainer keeps only the loss."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, lora_rank=8,
                          lora_targets=parse_lora_targets("q;v"), batch=2, seq_len=512,
                          framework=Framework.HF, gradient_accumulation=False,
                          optimizer_impl=OptimizerImpl.FOREACH,
                          no_autocast=True)  # the same step in each: no Trainer's autocast
    logits = 2 * arch.vocab_size * 2 * 512  # bf16, today's code (no shifted copy)
    trainer = estimate_training(arch, setup)
    loop = estimate_training(arch, dataclasses.replace(setup, framework=framework))
    assert loop.loss.logits_alive_bytes == logits and trainer.loss.logits_alive_bytes == 0
    for phase in (Phase.BACKWARD_BLOCKS, Phase.OPTIMIZER_STEP):
        assert _phase_bytes(loop, phase) - _phase_bytes(trainer, phase) == logits
    assert loop.loss.forward_peak_bytes - trainer.loss.forward_peak_bytes == logits  # previous
    first = estimate_training(arch, dataclasses.replace(setup, framework=framework,
                                                        steady_state=False))
    assert first.loss.forward_peak_bytes == trainer.loss.forward_peak_bytes


@pytest.mark.parametrize(("model", "day", "sixteen_bit"), [
    ("opt-1.3b", date(2023, 4, 18), True),    # OPT's loss: no upcast until v4.49.0
    ("opt-1.3b", date(2025, 3, 1), False),    # v4.49.0: self.loss_function upcasts
    ("gpt2", date(2024, 6, 1), True),
    ("llama-2-7b", date(2023, 7, 1), True),   # Llama before v4.31.0
    ("llama-2-7b", date(2023, 8, 1), False),  # v4.31.0: logits.float() in the model
])
def test_transformers_models_that_never_upcast_run_their_loss_in_16_bits(
        model: str, day: date, sixteen_bit: bool) -> None:
    """Before v4.49 the shifted copy of the logits and its log-softmax: 2 + 2 bytes per logit
    beside the 16-bit logits in a model that never upcast (OPT, GPT-2, Llama before v4.31),
    in a loop without autocast; in fp32 in one that did (`logits.float()`), from v4.49
    (`ForCausalLMLoss`) and under autocast, `amp`'s or the Trainer's over bf16 weights."""
    arch = architecture_of(find_model(model))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=512, framework=Framework.HF, code_date=day, no_autocast=True)
    every, shifted = arch.vocab_size * 512, arch.vocab_size * 511
    loss = estimate_training(arch, setup).loss
    if sixteen_bit:
        assert loss.forward_peak_bytes == 2 * every + 2 * 2 * shifted
        assert loss.backward_peak_bytes == max(3 * 2 * shifted, 2 * (shifted + every))
    else:  # fp32 logits (or their fp32 copy) and an fp32 log-softmax
        assert loss.forward_peak_bytes >= 2 * 4 * shifted
    for autocast in (dataclasses.replace(setup, precision=Precision.AMP, no_autocast=False),
                     dataclasses.replace(setup, no_autocast=False)):  # the Trainer's bf16=True
        assert estimate_training(arch, autocast).loss.forward_peak_bytes >= 2 * 4 * shifted


@pytest.mark.parametrize(("day", "compiled_loss"), [
    (date(2024, 10, 21), False),  # the model upcast its logits; the loss ran eagerly
    (date(2024, 10, 22), True),   # e10cb9494: `.float()` moved into the compiled loss
    (date(2024, 12, 18), False),  # e8977b007: "turning off compile on loss function"
    (date(2024, 12, 26), False),  # torchtitan compiled the model, not its loss
    (date(2025, 4, 2), True),     # bbb1b616e: `torch.compile(loss_fn)` under training.compile
    (None, True),
])
def test_torchtitan_compiles_its_loss_since_april_2025(day: date | None,
                                                       compiled_loss: bool) -> None:
    """The compiled `cross_entropy(pred.float())` saves its 16-bit input and a log-sum-exp per
    row and writes one 16-bit gradient; eager, the fp32 copy and log-softmax are made."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.MIXED, batch=1, seq_len=8192,
                          framework=Framework.TORCHTITAN, compiled=True, code_date=day)
    loss = estimate_training(arch, setup).loss
    logits = 2 * arch.vocab_size * 8192
    if compiled_loss:
        assert (loss.forward_peak_bytes, loss.backward_peak_bytes) == (logits, 2 * logits)
    elif day is not None and day < date(2024, 10, 22):
        # the model returned fp32 logits (`self.output(h).float()`): no copy in the loss
        assert loss.forward_peak_bytes == 2 * 4 * arch.vocab_size * 8192
    else:
        assert loss.forward_peak_bytes == logits + 2 * 4 * arch.vocab_size * 8192


@pytest.mark.parametrize(("day", "kept"), [(date(2024, 6, 11), True), (date(2024, 6, 12), False)])
def test_torchtitan_kept_its_logits_through_backward_until_june_2024(day: date,
                                                                    kept: bool) -> None:
    """`pred = model(input_ids); loss = loss_fn(pred, labels); loss.backward()`: the fp32
    logits stay referenced until the next forward rebinds `pred`; e29b6b4d4 (2024-06-12) added
    `del pred` before backward ("to save 3.9G memory": 8,192 x 128,256 x 4 bytes)."""
    arch = architecture_of(find_model("llama-3-8b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.AMP, batch=1, seq_len=8192,
                          framework=Framework.TORCHTITAN, code_date=day)
    loss = estimate_training(arch, setup).loss
    assert loss.logits_alive_bytes == (4 * arch.vocab_size * 8192 if kept else 0)


@pytest.mark.parametrize(("framework", "day", "kept"), [
    (Framework.HF, date(2022, 8, 18), True),    # torch 1.x: zero_grad() fills with zeros
    (Framework.GENERIC, date(2023, 3, 14), True),
    (Framework.HF, date(2023, 3, 15), False),   # PyTorch 2.0: set_to_none=True by default
    (Framework.HF, None, False),
    (Framework.DEEPSPEED, date(2022, 8, 18), False),  # its engine zeroes its own buffers
])
def test_before_pytorch_2_zero_grad_kept_the_gradients_into_the_next_forward(
        framework: Framework, day: date | None, kept: bool) -> None:
    arch = architecture_of(find_model("gpt2-xl"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=512, framework=framework, code_date=day,
                          gradient_accumulation=False)
    loss_forward = next(p for p in estimate_training(arch, setup).phases
                        if p.phase is Phase.LOSS_FORWARD)
    gradients = sum(p.memory_bytes for p in loss_forward.parts if p.kind is PartKind.GRADIENTS)
    assert gradients == (estimate_training(arch, setup).states.gradient_bytes if kept else 0)


def test_checkpointing_each_sub_module_keeps_four_inputs_and_recomputes_one_at_a_time() -> None:
    """NeMo Automodel wraps each decoder layer's two norms, attention and MLP in checkpoints of
    their own (parallelizer.py @b4733bdc): a layer keeps its input, the first norm's output, the
    mid-layer residual and the second norm's output, 4 bf16 hidden-sized tensors where a
    checkpointed block keeps 1 (Llama-3.2-1B, 16 layers, 8 x 2048 tokens: A = 67,108,864 bytes),
    and backward recomputes the largest sub-module, its MLP, not the whole block."""
    from vramplan.training.activations.checkpointing import largest_submodule_saved

    arch = architecture_of(find_model("llama-3.2-1b"))
    block = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=8,
                          seq_len=2048, checkpointing=Checkpointing.FULL,
                          framework=Framework.GENERIC, gradient_accumulation=False)
    parts = dataclasses.replace(block, checkpoint_submodules=True)
    a = 8 * 2048 * 2048 * 2
    whole, split = estimate_training(arch, block), estimate_training(arch, parts)
    assert split.activations_bytes - whole.activations_bytes == 3 * 16 * a
    saved = whole.block_saved
    mlp = sum(s.bytes_per_token for s in saved if s.name in
              ("gate_out", "act_out", "up_out", "mlp_hidden"))
    assert largest_submodule_saved(saved) == mlp


@pytest.mark.parametrize(("framework", "quant", "on", "kept"), [
    (Framework.HF, Quant.NF4, date(2024, 7, 1), True),  # bitsandbytes 0.43.1: (A, B)
    (Framework.HF, Quant.NF4, date(2024, 8, 1), False),  # 0.43.2: (None, B)
    (Framework.HF, Quant.NF4_DQ, None, False),  # today's code
    (Framework.HF, Quant.INT8, None, True),  # MatMul8bitLt still keeps its input
    (Framework.TORCHTUNE, Quant.NF4, date(2024, 4, 15), False),  # torchao's LinearNF4
])
def test_a_quantized_base_keeps_its_input_by_the_code_of_its_date(
        framework: Framework, quant: Quant, on: date | None, kept: bool) -> None:
    """bitsandbytes 9e753741 (v0.43.2, 2024-07-23) stopped keeping the 4-bit matmul's input. With
    adapters on q and v (no dropout), whose lora_A keeps the attention's input anyway, what goes
    is the MLP's: the norm's output (4096 bf16 values) and down's 11008-wide input."""
    setup = TrainingSetup(method=Method.QLORA, quant=quant, lora_rank=8, lora_targets=Q_V,
                          batch=1, seq_len=512, framework=framework, code_date=on)
    per_token = 2 * 4096 + 2 * 11008
    without = dataclasses.replace(setup, code_date=date(2024, 8, 1), quant=Quant.NF4,
                                  framework=Framework.HF)
    gap = estimate_training(LLAMA, setup).activations_bytes \
        - estimate_training(LLAMA, without).activations_bytes
    assert gap == (per_token * LLAMA.n_layers * 512 if kept else 0)


def test_quantized_experts_are_saved_dequantized_by_the_recomputed_moe_layer() -> None:
    """axolotl's `quantize_moe_experts` makes each fused expert tensor a bitsandbytes 4-bit
    parametrization, dequantized whole at each access, and `grouped_mm` saves it: GLM-4.5-Air's
    128 experts' gate_up (4,096 x 2,816) and down (1,408 x 4,096) in bf16, 4.43 GB, in the layer
    recomputed under full checkpointing."""
    arch = architecture_of(find_model("glm-4.5-air"))
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=16, lora_targets=Q_V,
                          batch=2, seq_len=2048, checkpointing=Checkpointing.FULL,
                          framework=Framework.AXOLOTL, gradient_accumulation=False)

    def copies(quantized: bool) -> int:
        phase = next(p for p in estimate_training(
            arch, dataclasses.replace(setup, quantized_experts=quantized)).phases
            if p.phase is Phase.BACKWARD_BLOCKS)
        return sum(p.memory_bytes for p in phase.parts if p.kind is PartKind.WEIGHT_COPIES)

    assert copies(True) == 128 * 3 * 4096 * 1408 * 2
    assert copies(False) == 0


def test_a_qlora_model_prepared_for_kbit_training_keeps_fp32_norms_and_residuals() -> None:
    """peft's `prepare_model_for_kbit_training` upcasts the norms; TRL cast back only the
    embeddings and the head, so an RMSNorm's output is fp32 and, behind the 4-bit base's
    `out.to(inp_dtype)`, the MLP's output and the residual stream: a checkpointed block keeps a
    4-byte input. axolotl casts the norms back: 16-bit."""
    trl = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=16, lora_targets=Q_V,
                        batch=1, seq_len=1024, checkpointing=Checkpointing.FULL,
                        framework=Framework.HF, kbit_upcast=True)
    assert residual_itemsize(trl) == 4
    assert residual_itemsize(dataclasses.replace(trl, kbit_upcast=False)) == 2
    assert residual_itemsize(dataclasses.replace(trl, framework=Framework.AXOLOTL)) == 2
    prepared = estimate_training(LLAMA, trl).activations_bytes
    plain = estimate_training(LLAMA, dataclasses.replace(trl, kbit_upcast=False)).activations_bytes
    assert prepared - plain >= 2 * 4096 * 1024 * LLAMA.n_layers  # the blocks' inputs, 2 bytes more


COATI_LORA = TrainingSetup(
    method=Method.LORA, lora_rank=8, adapters_fp32=False,
    lora_targets=frozenset({LoraTarget.ALL, LoraTarget.HEAD}), batch=8, seq_len=2048,
    checkpointing=Checkpointing.FULL, framework=Framework.GENERIC, gradient_accumulation=False,
    code_date=date(2024, 7, 10), input_require_grads=False)
"""ColossalChat's SFT benchmark with `--lora_rank 8` (benchmark_sft.py @d888c378): coati's
adapters on every linear and the head, transformers 4.39.3's reentrant checkpointing, nothing
making the embeddings' output require a gradient."""


def _part(estimate: object, phase: Phase, kind: PartKind) -> int:
    return sum(p.memory_bytes for p in next(
        m for m in estimate.phases if m.phase is phase).parts  # type: ignore[attr-defined]
        if p.kind is kind)


def test_reentrant_checkpoints_whose_input_needs_no_gradient_build_no_graph() -> None:
    """torch.utils.checkpoint's reentrant Function makes an output that needs a gradient only
    when an input does: with the embeddings' output needing none, no Llama block keeps its
    input (32 x 8 x 2048 x 4096 x 2 bytes), the frozen final norm keeps neither its fp32 input
    nor its rstd (8 x 2048 x (4 x 4096 + 4)), no block is recomputed in backward, and the only
    gradient made is the head adapter's, 8 x (4096 + 32,000) bf16 values. What is kept is the
    head adapter's: lora_A's input, the norm's bf16 output, and its rank-8 output."""
    cut = estimate_training(LLAMA, COATI_LORA)
    peft = estimate_training(LLAMA, dataclasses.replace(COATI_LORA, input_require_grads=None))
    tokens = 8 * 2048
    assert peft.activations_bytes - cut.activations_bytes == \
        32 * tokens * 4096 * 2 + tokens * (4 * 4096 + 4)
    assert cut.activations_bytes == tokens * (4096 + 8) * 2
    assert _part(cut, Phase.BACKWARD_BLOCKS, PartKind.BACKWARD_TEMPORARIES) == 0
    assert _part(peft, Phase.BACKWARD_BLOCKS, PartKind.BACKWARD_TEMPORARIES) > 0
    assert _part(cut, Phase.BACKWARD_END, PartKind.GRADIENTS) == 8 * (4096 + 32000) * 2
    # the adapters stay parameters: their storage and the optimizer's states are unchanged
    assert cut.states == peft.states


@pytest.mark.parametrize("change", [
    {"reentrant_checkpointing": False},  # saved-tensor hooks record the blocks' parameters
    {"checkpointing": Checkpointing.NONE},
    {"input_require_grads": True},
])
def test_the_graph_goes_through_the_blocks_otherwise(change: dict[str, object]) -> None:
    """Non-reentrant checkpointing, no checkpointing, or an input made to require a gradient:
    the blocks build their graph and keep what they keep."""
    setup = dataclasses.replace(COATI_LORA, **change)  # type: ignore[arg-type]
    assert estimate_training(LLAMA, setup).activations_bytes >= 32 * 8 * 2048 * 4096 * 2


def test_full_fine_tuning_needs_the_embeddings_gradient_whatever_the_input_hook() -> None:
    """The embedding trains: its output needs a gradient, and every block trains."""
    full = TrainingSetup(method=Method.FULL, batch=1, seq_len=1024, framework=Framework.GENERIC,
                         checkpointing=Checkpointing.FULL, code_date=date(2024, 7, 10))
    hooked = estimate_training(LLAMA, full)
    unhooked = estimate_training(LLAMA, dataclasses.replace(full, input_require_grads=False))
    assert unhooked.phases == hooked.phases
    assert unhooked.activations_bytes == hooked.activations_bytes > 32 * 1024 * 4096 * 2
