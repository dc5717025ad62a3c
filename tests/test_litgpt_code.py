"""litgpt's model code as it was when a published run used it, and the structure of its scripts:
the tensors they keep, counted by hand from Lightning-AI/litgpt's source at those commits."""

from __future__ import annotations

import dataclasses
from datetime import date
from importlib.resources import files

import pytest

from vramplan.parts import PartKind
from vramplan.presets.frameworks.litgpt import LitgptCode, litgpt_code
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.activations.block import block_saved
from vramplan.training.activations.head import HeadSpec, head_and_loss
from vramplan.training.activations.spec import BlockSpec, total_per_token
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Phase
from vramplan.training.setup import TrainingSetup
from vramplan.training.specs import block_spec, dequantized_bytes_per_value, head_spec
from vramplan.training.states import head_is_separate
from vramplan.validation import code_date, loss_in_function, read_cases, training_setup_of
from vramplan.vocab import (
    Attention,
    Framework,
    LoraTarget,
    Method,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
)

TINYLLAMA = architecture_of(find_model("tinyllama-1.1b"))
FALCON = architecture_of(find_model("falcon-7b"))
HEADER = files("vramplan").joinpath("data/cases.csv").read_text(encoding="utf-8").splitlines()[0]


def full_spec(**changes: object) -> BlockSpec:
    spec = BlockSpec(framework=Framework.LITGPT, residual_bytes=2, compute_bytes=2,
                     autocast=False, weights_train=True, base_keeps_input=False,
                     lora_targets=frozenset(), lora_rank=8, lora_dropout=False,
                     attention=Attention.SDPA)
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(("day", "expected"), [
    (None, LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=False,
                      fabric_quantization=True)),
    (date(2023, 9, 27), LitgptCode(mqa_kv_expanded=False, rmsnorm_scale_after_cast=False,
                                   fabric_quantization=False)),
    (date(2023, 10, 5), LitgptCode(mqa_kv_expanded=False, rmsnorm_scale_after_cast=False,
                                   fabric_quantization=True)),
    (date(2023, 10, 24), LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=False,
                                    fabric_quantization=True)),
    (date(2024, 2, 23), LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=True,
                                   fabric_quantization=True)),
    (date(2024, 7, 22), LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=True,
                                   fabric_quantization=True)),
    (date(2024, 7, 23), LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=False,
                                   fabric_quantization=True)),
])
def test_litgpt_code_by_the_dates_of_its_commits(day: date | None,
                                                 expected: LitgptCode) -> None:
    # 50b1974b (2023-10-24) expands MQA's k and v; 7c157492 (2024-02-23) to 916a84ca
    # (2024-07-23) cast RMSNorm's normalized input before the scale; 982abcbc (2023-10-05)
    # quantizes through Fabric's BitsandbytesPrecision
    assert litgpt_code(day) == expected


def test_tinyllama_full_block_as_litgpt_ran_it_in_may_2024() -> None:
    """The thunder README's pretraining block, counted by hand (bf16-true, every weight trains,
    flash SDPA): h = 2048, f = 5632, 32 heads of 64, 4 key-value groups."""
    h, f, heads = 2048, 5632, 32
    norm = 4 * h + 4 + 2 * h  # x.float(), rstd, x_normed cast to bf16 before `* self.weight`
    expected = (
        norm + 2 * h       # norm_1, and its bf16 output kept by the fused qkv linear
        + 3 * 2 * h        # q and k after RoPE (new tensors), v expanded to 32 heads (a copy)
        + 2 * h + 4 * heads  # SDPA's output and log-sum-exp
        + 2 * h            # `y.transpose(1, 2).reshape(B, T, C)`: a copy, kept by proj
        + norm + 2 * h     # norm_2, and its output kept by fc_1 and fc_2
        + 4 * 2 * f        # fc_1's and fc_2's outputs, silu's output, their product (proj)
    )
    spec = full_spec(rmsnorm_scale_after_cast=True)
    assert total_per_token(block_saved(TINYLLAMA, spec, seq_len=2048)) == expected
    # today's RMSNorm multiplies in fp32: its normalized input is kept in fp32, twice per block
    today = total_per_token(block_saved(TINYLLAMA, full_spec(), seq_len=2048))
    assert today - expected == 2 * 2 * h


def test_the_output_projection_keeps_its_own_copy_only_where_it_reads_it() -> None:
    def widths(spec: BlockSpec) -> dict[str, int]:
        return {s.name: s.bytes_per_token for s in block_saved(TINYLLAMA, spec, 512)}

    # full: SDPA's output and proj's input, both 2 x 2048 bytes per token
    full = widths(full_spec())
    assert full["attn_out"] == full["attn_out_merged"] == 2 * 2048
    # LoRA on q and v: proj is frozen and its input is freed at once
    lora = widths(full_spec(weights_train=False, lora_targets=frozenset({LoraTarget.Q,
                                                                         LoraTarget.V})))
    assert "attn_out_merged" not in lora
    # QLoRA: bitsandbytes' MatMul4Bit keeps its input (the copy) in ctx.tensors
    qlora = widths(full_spec(weights_train=False, base_keeps_input=True,
                             lora_targets=frozenset({LoraTarget.Q, LoraTarget.V})))
    assert qlora["attn_out_merged"] == 2 * 2048
    # transformers' `.transpose(1, 2).contiguous()` of a (B, T, nh, hs)-laid output is a view
    hf = widths(full_spec(framework=Framework.HF))
    assert "attn_out_merged" not in hf


def test_falcon_mqa_ran_sdpa_math_kernel_in_litgpt_of_september_2023() -> None:
    setup = TrainingSetup(method=Method.LORA, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=1,
                          seq_len=1079, framework=Framework.LITGPT,
                          code_date=date(2023, 9, 27))
    assert block_spec(FALCON, setup).attention is Attention.EAGER
    today = dataclasses.replace(setup, code_date=None)
    assert block_spec(FALCON, today).attention is Attention.SDPA
    # the math kernel keeps `query * scale`, k and v expanded from one head to 71 (copies made
    # by matmul's expand + reshape) and the bf16 probabilities; not q itself, no log-sum-exp
    saved = {s.name: s.bytes_per_token
             for s in block_saved(FALCON, block_spec(FALCON, setup), 1079)}
    q = 71 * 64
    assert (saved["q_scaled"], saved["k"], saved["v"]) == (2 * q, 2 * q, 2 * q)
    assert saved["attn_probs"] == 2 * 71 * 1079
    assert "q" not in saved and "attn_logsumexp" not in saved and "qkv" not in saved
    # the probabilities grow with the sequence: 2 bytes x 71 heads x T per token
    short = total_per_token(block_saved(FALCON, block_spec(FALCON, setup), 256))
    assert total_per_token(block_saved(FALCON, block_spec(FALCON, setup), 1079)) - short == \
        2 * 71 * (1079 - 256)


def test_a_loss_computed_in_a_function_leaves_no_logits_to_the_loop() -> None:
    """extensions/thunder/pretrain.py `forward_and_loss`: the fp32 logits live until the loss
    returns; backward holds the saved log-softmax and the fp32 gradients of the log-softmax and
    of the logits, three fp32 tensors of the logits' size (the loop's `logits` variable of the
    finetune scripts would be a fourth)."""
    spec = full_spec()
    batch, seq = 4, 2048
    logits = 4 * TINYLLAMA.vocab_size * batch * seq
    head = HeadSpec(framework=Framework.LITGPT, chunked=False, head_trains=True, head_lora=False,
                    head_keeps_input=False, head_dequant_bytes=0, previous_logits=True,
                    loss_in_function=True)
    loss = head_and_loss(TINYLLAMA, spec, head, batch, seq)
    assert loss.logits_alive_bytes == 0
    assert loss.forward_peak_bytes == 2 * logits  # fp32 logits and log-softmax, no slice copy
    assert loss.backward_peak_bytes == 3 * logits
    kept = head_and_loss(TINYLLAMA, spec, dataclasses.replace(head, loss_in_function=False),
                         batch, seq)
    assert kept.logits_alive_bytes == logits
    assert kept.forward_peak_bytes == 3 * logits  # `logits[..., :-1, :]` reshaped: a copy
    assert kept.backward_peak_bytes == 4 * logits


def test_a_quantized_head_runs_its_backward_after_every_loss_chunk() -> None:
    """Autograd runs the latest node first, and the head's chunks are made inside `model(...)`,
    before Fabric's fp32 cast and the loss: their backward comes after every loss chunk's, with
    the log-softmax outputs freed and every logit's gradient alive in the head's dtype, and
    each chunk dequantizes the head again. A trace of lit-gpt 982abcbc's QLoRA step of
    StableLM 3B (bitsandbytes 0.41.1's 4-bit linear emulated on fake tensors) peaks there."""
    spec = full_spec()
    batch, seq, vocab = 1, 128, TINYLLAMA.vocab_size
    tokens = batch * seq
    logits = 4 * vocab * tokens
    dequantized = (2 + 2) * TINYLLAMA.hidden_size * vocab  # fp16, then its bf16 cast
    head = HeadSpec(framework=Framework.LITGPT, chunked=True, head_trains=False,
                    head_lora=False, head_keeps_input=True, head_dequant_bytes=dequantized,
                    quantized_head_output_bytes=2, previous_logits=True)
    loss = head_and_loss(TINYLLAMA, spec, head, batch, seq)
    # the loop's fp32 logits, the bf16 gradients of all of them, the dequantized head
    assert loss.backward_peak_bytes == logits + 2 * vocab * tokens + dequantized
    # without a quantized head, the first loss chunk's backward: the kept logits, the saved
    # log-softmax, a chunk's two fp32 gradients
    plain = head_and_loss(TINYLLAMA, spec, dataclasses.replace(
        head, head_keeps_input=False, head_dequant_bytes=0, quantized_head_output_bytes=0),
        batch, seq)
    assert plain.backward_peak_bytes == 2 * logits + 2 * 4 * vocab * min(128, seq) * batch


@pytest.mark.parametrize(("day", "precision", "dequantized", "output"), [
    (date(2023, 10, 5), Precision.BF16_TRUE, 2 + 2, 2),  # Fabric: fp16, then its bf16 cast
    (date(2023, 8, 21), Precision.AMP, 4 + 2, 4),  # fp32, autocast's bf16 copy; fp32 out
    (date(2023, 8, 21), Precision.BF16_TRUE, 2, 2),  # quantized from bf16, computed in bf16
])
def test_litgpt_quantization_before_and_after_fabric(day: date, precision: Precision,
                                                     dequantized: int, output: int) -> None:
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4, precision=precision,
                          optimizer=Optimizer.PAGED_ADAMW, framework=Framework.LITGPT,
                          lora_rank=8, lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}),
                          batch=1, seq_len=128, code_date=day)
    assert dequantized_bytes_per_value(setup) == dequantized
    head = head_spec(TINYLLAMA, setup)
    assert head.head_dequant_bytes == dequantized * TINYLLAMA.hidden_size * TINYLLAMA.vocab_size
    assert head.quantized_head_output_bytes == output


def test_the_thunder_pretraining_step_holds_no_logits_at_its_optimizer_step() -> None:
    setup = TrainingSetup(method=Method.FULL, optimizer_impl=OptimizerImpl.FUSED, batch=4,
                          seq_len=2048, framework=Framework.LITGPT, loss_in_function=True,
                          code_date=date(2024, 5, 6))
    phases = {p.phase: p for p in estimate_training(TINYLLAMA, setup).phases}
    step = phases[Phase.OPTIMIZER_STEP]
    assert sum(p.memory_bytes for p in step.parts if p.kind is PartKind.LOGITS_LOSS) == 0


@pytest.mark.parametrize(("source", "expected"), [
    ("Lightning-AI/litgpt config_hub/finetune/README.md (rows added in 5895df10, e5493986)",
     date(2024, 4, 26)),
    ("Lightning-AI/litgpt tutorials/prepare_dataset.md (29de2828)", date(2023, 9, 27)),
    ("Lightning-AI/litgpt tutorials/finetune_lora.md (mirror commit 0cc02afa)",
     date(2023, 10, 27)),
    ("Lightning-AI/litgpt README.md (0123abcd)", None),  # a commit whose date is not known
])
def test_a_litgpt_rows_code_date_is_its_earliest_known_commit(source: str,
                                                              expected: date | None) -> None:
    row = (f'x,"{source}",llama-2-7b,lora,bf16-true,adamw,,none,8,q;v,1,512,,none,sdpa,,1,'
           f"a100-40gb,none,none,litgpt,allocated,20,GB,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert code_date(case) == expected
    assert training_setup_of(case).code_date == expected
    (hf,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",hf,"))))
    assert code_date(hf) is None


def test_rows_of_the_thunder_extension_compute_their_loss_in_a_function() -> None:
    row = ('x,"Lightning-AI/litgpt extensions/thunder/README.md (101e31d2)",tinyllama-1.1b,full,'
           "bf16-true,adamw,fused,none,,,4,2048,,none,sdpa,,1,a100-40gb,none,none,litgpt,"
           "allocated,29.84,GB,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert loss_in_function(case)
    assert training_setup_of(case).loss_in_function
    (other,) = read_cases("\n".join((HEADER, row.replace("extensions/thunder/README.md",
                                                         "README.md"))))
    assert not loss_in_function(other)


def test_litgpts_model_under_another_loop_saves_what_litgpts_blocks_save() -> None:
    """lightning-thunder's benchmark_litgpt.py runs litgpt's GPT (thunder/tests/litgpt_model.py)
    in its own loop: the blocks are litgpt's. Its attention splits one fused qkv output, so SDPA's
    saved v is a view that keeps all of it (3 x 4096 bf16 values a token, not 4096), and merges
    the heads with a copy the output projection keeps (4096 more). Dated as litgpt 0.3.1, whose
    RMSNorm casts before its scale as transformers' does (thunder pinned it, b7f77316)."""
    arch = architecture_of(find_model("llama-2-7b"))
    generic = TrainingSetup(precision=Precision.BF16_TRUE, batch=1, seq_len=4096,
                            framework=Framework.GENERIC, gradient_accumulation=False,
                            code_date=date(2024, 5, 8))

    def per_token(setup: TrainingSetup) -> int:
        return total_per_token(block_saved(arch, block_spec(arch, setup), 4096))

    litgpt = dataclasses.replace(generic, litgpt_model=True)
    assert per_token(litgpt) - per_token(generic) == 2 * (2 * 4096 + 4096)
    assert head_is_separate(arch, litgpt)


@pytest.mark.parametrize(("framework", "day", "keeps"), [
    # litgpt pinned bitsandbytes==0.42.0 (929f9c79) until d2ed13c3 (2024-12-28) asked for 0.44
    (Framework.LITGPT, date(2024, 9, 27), True),
    (Framework.LITGPT, date(2024, 12, 27), True),
    (Framework.LITGPT, date(2024, 12, 28), False),
    (Framework.LITGPT, None, False),
    # elsewhere the release itself: v0.43.2 of 2024-07-23 dropped MatMul4Bit's saved input
    (Framework.HF, date(2024, 7, 22), True),
    (Framework.HF, date(2024, 9, 27), False),
])
def test_a_qlora_base_keeps_its_input_with_the_bitsandbytes_its_stack_installed(
        framework: Framework, day: date | None, keeps: bool) -> None:
    arch = architecture_of(find_model("llama-3.2-1b"))
    setup = TrainingSetup(method=Method.QLORA, precision=Precision.BF16_TRUE,
                          quant=Quant.NF4, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}),
                          framework=framework, code_date=day)
    assert block_spec(arch, setup).base_keeps_input is keeps


def test_litgpts_llama_3_1_qlora_row_of_july_2024_kept_the_bases_inputs() -> None:
    # config_hub/finetune/README.md at fd71063c (2024-07-24): 17.41 GB, the Llama 3 8B
    # figure of the same recipe in April; with bitsandbytes 0.43.2's dropped inputs the
    # estimate was 14.46 GB (-17 %)
    (case,) = (c for c in read_cases(files("vramplan.data").joinpath(
        "cases_vramplan.csv").read_text(encoding="utf-8"))
        if c.id == "litgpt-hub-llama-3.1-8b-qlora-r32-qv-nf4-1xa10g-mb2-s512")
    estimate = estimate_training(architecture_of(find_model(case.model)),
                                 training_setup_of(case))
    assert estimate.allocated_bytes == pytest.approx(case.measured_bytes, rel=0.02)
