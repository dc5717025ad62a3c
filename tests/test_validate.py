"""`vramplan validate`: the case format, clear errors, and the accuracy goals on the shipped
measurements (src/vramplan/data/cases.csv, a byte-identical copy of the public set)."""

from __future__ import annotations

import io
import json
import re
import statistics
from dataclasses import replace
from datetime import date
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vramplan.cli.main import main
from vramplan.distributed.defaults import MS_SWIFT_ZERO3, program_sharding
from vramplan.distributed.parallelism import CommBuffers
from vramplan.errors import UnknownName
from vramplan.parts import PartKind
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.presets.frameworks.torchtitan import torchtitan_code
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.dummy_wgrads import dummy_wgrad_bytes
from vramplan.training.estimate import estimate_training
from vramplan.training.setup import TrainingSetup, gradient_itemsize, loop_keeps_logits
from vramplan.validation import (
    SHIPPED_CASE_FILES,
    Case,
    CaseFormatError,
    CaseValueError,
    ModelParallel,
    Outcome,
    Reading,
    ValidationReport,
    code_date,
    compiled,
    embedding_sharded_apart,
    estimate_inference_case,
    fsdp_version,
    lora_dropout,
    model_parallel,
    multi_gpu_estimate,
    parse_cases,
    read_cases,
    score_case,
    score_cases,
    shipped_cases,
    torchtune_generate_cache,
    training_setup_of,
    warmup_reserved_bytes,
    zero3_config_file,
)
from vramplan.validation.notes import largest_batch_first
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Engine,
    Framework,
    FsdpVersion,
    LoraTarget,
    Loss,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
    member_named,
)

CASES = files("vramplan").joinpath("data/cases.csv").read_text(encoding="utf-8")
HEADER = CASES.splitlines()[0]
ROW = ("t1,src,llama-2-7b,lora,bf16-true,adamw,,none,8,q;v,1,1304,,none,sdpa,,1,a100-40gb,none,"
       "none,litgpt,allocated,21.30,GB,")


@pytest.fixture(scope="module")
def report() -> ValidationReport:
    return score_cases(read_cases(CASES))


def _oom_right(report: ValidationReport) -> bool:
    return all(s.oom_right for s in report.scores if s.outcome is Outcome.OOM)


def test_accuracy_goals_on_the_published_measurements(report: ValidationReport) -> None:
    # issue 16's goals: median absolute error <= 1.5 %, 90th percentile <= 6 %
    assert report.rows_scored >= 110
    assert report.median_abs_error_pct is not None and report.median_abs_error_pct <= 1.5
    assert report.p90_abs_error_pct is not None and report.p90_abs_error_pct <= 6
    assert report.oom_total >= 9
    assert _oom_right(report)
    assert not report.unread and not report.skipped


def test_single_gpu_training_rows_meet_the_goals_on_their_own(report: ValidationReport) -> None:
    mine = ValidationReport(tuple(s for s in report.scores if s.model_kind == "training"))
    assert mine.rows_scored >= 35
    assert mine.median_abs_error_pct is not None and mine.median_abs_error_pct <= 5
    assert mine.p90_abs_error_pct is not None and mine.p90_abs_error_pct <= 12
    assert _oom_right(mine)


def test_litgpt_rows_within_5_5_percent(report: ValidationReport) -> None:
    # the furthest are two 2023 FSDP LoRA rows at micro-batch 4 under full checkpointing, -4.7
    # and -5.2 % (docs/sharding.md); -3.5 and -4.1 % while a plain GELU MLP's backward was
    # counted with three intermediate-wide gradients, where the traces hold two
    # (tests/test_trace_agreement.py, StarCoder2 and OPT under full checkpointing)
    errors = {s.case.id: s.error_pct for s in report.scores
              if s.case.framework is Framework.LITGPT and s.error_pct is not None}
    assert len(errors) >= 70
    # phi-2's full recipe runs without accumulation: read from its recipe (litgpt_recipe)
    off = {case: round(error, 1) for case, error in errors.items() if abs(error) > 5.5}
    assert not off


def test_every_row_is_estimated_by_the_model_that_owns_it(report: ValidationReport) -> None:
    kinds = {s.case.id: s.model_kind for s in report.scores}
    assert kinds["litgpt-rt-llama-2-7b-lora-mb1"] == "training"
    assert kinds["litgpt-rt-llama-2-7b-lora-fsdp2-mb1"] == "per_gpu"
    assert kinds["litgpt-rt-inf-llama-2-7b-bf16"] == "inference"
    assert not report.skipped


def test_multi_gpu_rows_meet_the_goals_on_their_own(report: ValidationReport) -> None:
    # issue 7: the rows with more than one GPU, with the goals of issue 6
    multi = ValidationReport(tuple(s for s in report.scores if s.model_kind == "per_gpu"))
    assert multi.rows_scored >= 12
    assert multi.median_abs_error_pct is not None and multi.median_abs_error_pct <= 5
    assert multi.p90_abs_error_pct is not None and multi.p90_abs_error_pct <= 15
    assert multi.oom_right == multi.oom_total


def test_notes_saying_the_largest_batch_came_first_drop_the_steady_state() -> None:
    first = ROW + '"Alpaca, longest sample forced into the first batch"'
    cases = read_cases("\n".join((HEADER, ROW, first.replace("t1,", "t2,", 1))))
    assert training_setup_of(cases[0]).steady_state
    assert not training_setup_of(cases[1]).steady_state


@pytest.mark.parametrize(("notes", "swift_file"), [
    ("swift sft --model Qwen/Qwen2.5-7B --packing true --deepspeed zero3 --use_liger_kernel true",
     True),
    ("swift rlhf --rlhf_type dpo --tuner_type full --deepspeed zero3 --attn_impl flash_attn", True),
    ("swift sft --model Qwen/Qwen2.5-7B --deepspeed zero3_offload", False),
    ("accelerate launch train.py --deepspeed zero3", False),
])
def test_notes_giving_an_ms_swift_zero3_command_read_its_config_file(notes: str,
                                                                     swift_file: bool) -> None:
    row = ROW.replace("none,none,litgpt", "zero3,none,hf") + f'"{notes}"'
    case = read_cases("\n".join((HEADER, row)))[0]
    assert (zero3_config_file(case) is MS_SWIFT_ZERO3) is swift_file


def test_deepspeed_config_keys_in_the_notes_set_the_zero3_buffers() -> None:
    notes = ('"ds_config.json: {""sub_group_size"": 1e8, ""stage3_max_live_parameters"": 1e8, '
             'reduce_bucket_size=200000000}"')
    row = ROW.replace("none,none,litgpt", "zero3,none,deepspeed") + notes
    config = zero3_config_file(read_cases("\n".join((HEADER, row)))[0])
    assert config is not None
    assert (config.sub_group_elements, config.max_live_parameters, config.max_reuse_distance,
            config.reduce_bucket_elements, config.prefetch_bucket_elements) == (
        100_000_000, 100_000_000, 1_000_000_000, 200_000_000, None)  # the rest: DeepSpeed's
    buffers = config.buffers(4096, CommBuffers())
    assert buffers.zero_reduce_bucket_elements == 200_000_000
    assert buffers.zero3_prefetch_bucket_elements == CommBuffers().zero3_prefetch_bucket_elements
    swift = ROW.replace("none,none,litgpt", "zero3,none,hf") + \
        '"swift sft --deepspeed zero3; sub_group_size 5e8"'
    on_swift = zero3_config_file(read_cases("\n".join((HEADER, swift)))[0])
    assert on_swift is not None and on_swift.buckets_from_hidden_size  # the file ms-swift ships
    assert on_swift.sub_group_elements == 500_000_000


@pytest.mark.parametrize(("notes", "tensor", "pipeline", "expert"), [
    ("megatron: --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2", 2, 2, 1),
    ("TP2PP2, sequence parallel", 2, 2, 1),
    ("tp=4", 4, 1, 1),
    ("tensor parallel 2, ep=2", 2, 1, 2),
    ("pp. 3 of the paper; https://host/tp", 1, 1, 1),
    # as torchtitan's and other stacks' configs, and prose, give them
    ("--parallelism.tensor_parallel_degree 2 --parallelism.pipeline_parallel_degree 2", 2, 2, 1),
    ("expert_parallel_degree = 4", 1, 1, 4),
    ("4-way tensor parallelism", 4, 1, 1),
    ("2-way TP, 2 pipeline stages", 2, 2, 1),
    ("TP degree 2, EP 2", 2, 1, 2),
    ("tensor parallelism of 4", 4, 1, 1),
    ("tp_size=2, ep_size=4", 2, 1, 4),
    ("TP (2), PP (2)", 2, 2, 1),
    ("step 4, epoch 2; the row megatron-fsdp8-tp4-ep2 cited", 1, 1, 1),
])
def test_notes_giving_model_parallel_sizes_split_the_model(notes: str, tensor: int,
                                                          pipeline: int, expert: int) -> None:
    row = ROW.replace(",1,a100-40gb,none,none,litgpt", ",4,a100-40gb,,none,megatron") \
        + f'"{notes}"'
    case = read_cases("\n".join((HEADER, row)))[0]
    assert model_parallel(case) == ModelParallel(tensor, pipeline, expert)


@pytest.mark.parametrize(("row_id", "model", "notes", "sizes"), [
    ("megatron-gpt-tp4-sp-mb2", "llama-2-7b", "", (4, 1, 1)),
    ("run_tp2pp2", "llama-2-7b", "", (2, 2, 1)),
    ("mcore-qwen3-30b-a3b-ep4-tp1", "qwen3-30b-a3b", "", (1, 1, 4)),
    ("mcore-tp2", "llama-2-7b", "TP 4", (4, 1, 1)),  # the notes first
    ("run-tp3", "llama-2-7b", "", (1, 1, 1)),  # 3 does not divide the 4 GPUs
    ("run-tp8", "llama-2-7b", "", (1, 1, 1)),  # more than the 4 GPUs
    ("dense-ep4", "llama-2-7b", "", (1, 1, 1)),  # no experts to split
    ("step8-laptop", "llama-2-7b", "", (1, 1, 1)),
])
def test_a_rows_own_id_gives_the_parallel_sizes_its_notes_do_not(
        row_id: str, model: str, notes: str, sizes: tuple[int, int, int]) -> None:
    row = ROW.replace("t1,src,llama-2-7b,", f"{row_id},src,{model},").replace(
        ",1,a100-40gb,none,none,litgpt", ",4,a100-40gb,,none,megatron") + f'"{notes}"'
    case = read_cases("\n".join((HEADER, row)))[0]
    assert model_parallel(case) == ModelParallel(*sizes)


@pytest.mark.parametrize(("cell", "notes", "checkpointing"), [
    ("", "TrainingArguments(gradient_checkpointing=True, bf16=True)", Checkpointing.FULL),
    ("", "torchtune: enable_activation_checkpointing: True", Checkpointing.FULL),
    ("", 'get_peft_model(use_gradient_checkpointing="unsloth")', Checkpointing.FULL),
    ("", "model.gradient_checkpointing_enable()", Checkpointing.FULL),
    ("", "deepspeed main.py --gradient_checkpointing --zero_stage 3", Checkpointing.FULL),
    ("", "trained with gradient checkpointing", Checkpointing.FULL),
    ("", "--recompute-granularity selective --sequence-parallel", Checkpointing.SELECTIVE),
    ("", "torchtitan: activation_checkpoint mode selective", Checkpointing.SELECTIVE),
    ("", "litgpt --checkpoint_activations True", Checkpointing.FULL),
    ("", "gradient_checkpointing use_reentrant True", Checkpointing.FULL),
    ("", "axolotl gradient_checkpointing: offload", Checkpointing.FULL),
    ("", "activation checkpointing of every Block", Checkpointing.FULL),
    ("", "apply_activation_checkpointing(model, checkpoint_wrapper_fn=...)", Checkpointing.FULL),
    ("", "gradient_checkpointing: false", Checkpointing.NONE),
    ("", "no --gradient_checkpointing, no --lora_dim", Checkpointing.NONE),
    ("", "without activation checkpointing", Checkpointing.NONE),
    # a mention that a pattern cannot tell set or denied: the framework's default
    ("", "we did not turn on memory-saving options, e.g., gradient checkpointing", None),
    ("none", "gradient_checkpointing=True", Checkpointing.NONE),  # the cell first
])
def test_an_empty_checkpointing_cell_reads_what_the_notes_set(
        cell: str, notes: str, checkpointing: Checkpointing | None) -> None:
    row = ROW.replace(",1304,,none,sdpa,", f",1304,,{cell},sdpa,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    (default,) = read_cases("\n".join((HEADER, ROW.replace(",1304,,none,", ",1304,,,"))))
    assert case.checkpointing is (checkpointing or default.checkpointing)


@pytest.mark.parametrize(("notes", "precision"), [
    ("litgpt finetune_lora --precision bf16-mixed", Precision.AMP),
    ("precision: 32-true", Precision.FP32),
    ("Fabric(precision=16)", Precision.AMP),  # on litgpt, Lightning's older name of 16-mixed
    ("--precision bf16-true, then --precision 16-mixed for the second", None),  # two: not read
])
def test_an_empty_precision_cell_reads_the_precision_the_notes_set(
        notes: str, precision: Precision | None) -> None:
    row = ROW.replace(",lora,bf16-true,", ",lora,,")
    (case,) = read_cases("\n".join((HEADER, row + f'"{notes}"')))
    assert case.precision is (precision or Precision.BF16_TRUE)  # litgpt's default
    # elsewhere bf16 is not Lightning's alias: Answer.AI's --precision bf16 is pure bf16
    (hf,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",hf,") + '"--precision bf16"')))
    assert hf.precision is Precision.BF16_TRUE


@pytest.mark.parametrize(("gpu", "gpus", "read"), [
    ("8x A100 80GB", "", 8), ("A100 80GB x 4", "", 4), ("RTX 3090", "", 1),
    ("8x A100 80GB", "4", 4),  # the cell first
    ("8*A100", "", 8), ("3x 4090", "", 3),
    ("4090 x 2", "", 2), ("3 x 4090", "", 3),  # the count is the number that is no card
    ("5 x 7", "", 1),  # neither is a card: no count read
])
def test_an_empty_gpus_cell_reads_the_cards_the_gpu_cell_counts(gpu: str, gpus: str,
                                                                read: int) -> None:
    row = ROW.replace(",1,a100-40gb,none,none,litgpt", f",{gpus},{gpu},,none,hf")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.gpus == read


@pytest.mark.parametrize(("notes", "optimizer"), [
    ('TrainingArguments(optim="paged_adamw_8bit")', Optimizer.PAGED_ADAMW_8BIT),
    ("--optim adamw_bnb_8bit --bf16", Optimizer.ADAMW_8BIT),
    ("optimizer: torch.optim.SGD", Optimizer.SGD),
    ("optimizer type AdamW in the DeepSpeed config", Optimizer.ADAMW),
    ("optimizer: _component_: bitsandbytes.optim.PagedAdamW8bit", Optimizer.PAGED_ADAMW_8BIT),
    ("dtype bf16, bitsandbytes.optim.PagedAdamW (32-bit paged states)", Optimizer.PAGED_ADAMW),
    # a clause saying it was replaced, or two optimizers set: the framework's default
    ("optimizer torch.optim.AdamW (lr 2e-4), replaced by bitsandbytes PagedAdamW", None),
    ("optim=adamw_torch for the baseline, optim=adamw_bnb_8bit for the second run", None),
])
def test_an_empty_optimizer_cell_reads_the_optimizer_the_notes_set(
        notes: str, optimizer: Optimizer | None) -> None:
    row = ROW.replace(",adamw,,none,", ",,,none,")
    (case,) = read_cases("\n".join((HEADER, row + f'"{notes}"')))
    assert case.optimizer is (optimizer or Optimizer.ADAMW)
    (filled,) = read_cases("\n".join((HEADER, ROW.replace(",adamw,,", ",sgd,,") + f'"{notes}"')))
    assert filled.optimizer is Optimizer.SGD  # the cell first


def test_an_empty_optimizer_cell_of_a_litgpt_qlora_row_is_paged_adamw() -> None:
    """litgpt replaces the AdamW it builds by bitsandbytes' PagedAdamW on a quantized model."""
    row = ROW.replace(",lora,bf16-true,adamw,,none,", ",qlora,bf16-true,,,nf4,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.optimizer is Optimizer.PAGED_ADAMW
    (hf,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",hf,"))))
    assert hf.optimizer is Optimizer.ADAMW


@pytest.mark.parametrize(("gpus", "notes", "sharding"), [
    (8, "deepspeed --zero_stage 3 --gradient_checkpointing", Scheme.ZERO3),
    (8, "DeepSpeed ZeRO-2, bf16", Scheme.ZERO2),
    (4, "accelerate FSDP, fsdp_sharding_strategy FULL_SHARD", Scheme.FSDP),
    (4, "fsdp_sharding_strategy: SHARD_GRAD_OP", Scheme.FSDP_GRAD_OP),
    (4, "torchrun, DistributedDataParallel", Scheme.DDP),
    (4, "no FSDP: plain DDP", Scheme.DDP),
    (4, "ZeRO-3 was tried first; the run used DDP", None),  # two schemes: not read
    # FSDP with a ZeRO stage: its strategy of that name (lightning-thunder's --shard_mode)
    (8, "--distributed_mode fsdp --shard_mode zero2", Scheme.FSDP_GRAD_OP),
    (8, "FSDP, shard_mode zero3", Scheme.FSDP),
    (1, "DeepSpeed ZeRO-3 with the parameters offloaded", Scheme.ZERO3),  # ZeRO on one GPU
    (1, "the 8-GPU rows ran FSDP", None),  # FSDP beside a one-GPU run: another run's
])
def test_an_empty_sharding_cell_reads_the_scheme_the_notes_name(
        gpus: int, notes: str, sharding: Scheme | None) -> None:
    row = ROW.replace(",1,a100-40gb,none,none,litgpt", f",{gpus},a100-40gb,,none,hf")
    (case,) = read_cases("\n".join((HEADER, row + f'"{notes}"')))
    (default,) = read_cases("\n".join((HEADER, row + '""')))
    assert case.sharding is (sharding or default.sharding)


@pytest.mark.parametrize(("notes", "offload"), [
    ('zero_optimization.offload_optimizer.device "cpu"', Offload.OPTIMIZER),
    ("openrlhf.cli.train_sft --zero_stage 2 --adam_offload", Offload.OPTIMIZER),
    ("--zero_stage 2 (no --adam_offload)", None),
    ("fsdp_offload_params: true", Offload.PARAMS_OPTIMIZER),
    ("torchtune: enable_activation_offloading: True", Offload.ACTIVATIONS),
    ("ZeRO-Offload was not used here", None),  # prose: not read
])
def test_an_empty_offload_cell_reads_the_offload_the_notes_configure(
        notes: str, offload: Offload | None) -> None:
    row = ROW.replace(",1,a100-40gb,none,none,litgpt", ",2,a100-40gb,,,deepspeed")
    (case,) = read_cases("\n".join((HEADER, row + f'"{notes}"')))
    assert case.offload is (offload or Offload.NONE)


@pytest.mark.parametrize(("cell", "notes", "loss"), [
    ("", "axolotl, cut_cross_entropy: true", Loss.CHUNKED),
    ("", "Cut Cross-Entropy plugin", Loss.CHUNKED),
    ("", "torchtune loss: CEWithChunkedOutputLoss", Loss.CHUNKED),
    ("", "apply_liger_kernel_to_llama()", Loss.CHUNKED),  # fused linear cross-entropy on
    ("", "--use_liger_kernel true", Loss.CHUNKED),
    ("", "no CCE; cut_cross_entropy: false", None),
    ("", "use_liger False", None),
    ("", "plain cross-entropy", None),
    ("standard", "use_liger_kernel True, the model's own loss", Loss.STANDARD),  # the cell first
])
def test_an_empty_loss_cell_reads_the_loss_the_notes_name(cell: str, notes: str,
                                                         loss: Loss | None) -> None:
    """A loss that never holds the whole logits, named in the notes (`FUSED_LOSS_NOTE`,
    `LIGER_KERNELS_NOTE`), is what an empty `loss` cell reads as; a filled cell is read as
    written; None is the framework's default."""
    row = ROW.replace(",sdpa,,1,", f",sdpa,{cell},1,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.loss is loss
    # a GRPO or DPO trainer computes its own loss from the logits, whatever Liger patched
    (grpo,) = read_cases("\n".join((HEADER, row.replace(",lora,", ",grpo,"))))
    assert grpo.loss is (loss if cell else None)


@pytest.mark.parametrize(("cell", "notes", "impl"), [
    ("", "torchtune optimizer_in_bwd: True", OptimizerImpl.IN_BACKWARD),
    ("", "+ optimizer step fused into backward", OptimizerImpl.IN_BACKWARD),
    ("", "LOMO = SGD step fused into backward via per-parameter hooks", OptimizerImpl.IN_BACKWARD),
    ("", "opt-in-bwd", OptimizerImpl.IN_BACKWARD),
    ("", "optimizer_in_bwd: False", None),
    ("", "without optimizer in backward", None),
    ("", "the baseline of the LOMO paper: AdamW", None),
    ("fused", "optimizer_in_bwd: True", OptimizerImpl.FUSED),  # the cell first
])
def test_an_empty_optimizer_impl_cell_reads_a_step_in_backward_the_notes_name(
        cell: str, notes: str, impl: OptimizerImpl | None) -> None:
    """An optimizer stepping inside backward (`OPTIMIZER_IN_BACKWARD_NOTE`) is what an empty
    `optimizer_impl` cell reads as; a filled cell is read as written."""
    row = ROW.replace(",adamw,,none,", f",adamw,{cell},none,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.optimizer_impl is impl


@pytest.mark.parametrize(("framework", "source", "attention"), [
    ("hf", "a blog post of 2023-10-30", Attention.EAGER),  # transformers before v4.36.0
    ("generic", "arXiv 2305.17333", Attention.EAGER),
    ("hf", "a blog post of 2023-12-11", Attention.SDPA),  # v4.36.0 made SDPA the default
    ("hf", "a blog post (undated)", Attention.SDPA),
    ("litgpt", "a blog post of 2023-10-30", Attention.SDPA),  # not transformers' code
    ("unsloth", "a blog post of 2023-12-05", Attention.SDPA),  # its own kernels
])
def test_an_empty_attention_cell_is_the_stacks_default_at_the_rows_date(
        framework: str, source: str, attention: Attention) -> None:
    """transformers' models ran their eager attention by default until v4.36.0 (2023-12-11):
    an empty `attention` cell of a row on transformers' code dated before reads `eager`; not
    Falcon's, whose code called SDPA itself."""
    row = ROW.replace(",src,", f",{source},").replace(",sdpa,", ",,") \
        .replace(",litgpt,", f",{framework},") + '""'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.attention is attention
    (falcon,) = read_cases("\n".join((HEADER, row.replace(",llama-2-7b,", ",falcon-7b,"))))
    assert falcon.attention is Attention.SDPA


def test_an_empty_attention_cell_of_unsloth_on_gpt_oss_is_its_flex_attention() -> None:
    """Unsloth trains gpt-oss with its Flex Attention (no score matrix kept); transformers' own
    stacks run their default there."""
    row = ROW.replace(",sdpa,", ",,").replace(",llama-2-7b,", ",gpt-oss-20b,")
    (unsloth,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",unsloth,"))))
    (hf,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",hf,"))))
    assert (unsloth.attention, hf.attention) == (Attention.FLASH, Attention.SDPA)


@pytest.mark.parametrize(("source", "gpu", "attention"), [
    # Megatron-LM ran its local unfused attention until Transformer Engine became its default
    # (e7b74a4b7e, 2024-04-02); TE has flash and fused attention from sm80 only
    ("a run of 2024-03-01", "a100-40gb", Attention.EAGER),
    ("a run of 2024-09-14", "a100-40gb", Attention.FLASH),
    ("a run (undated)", "h100-80gb", Attention.FLASH),
    ("a run of 2024-09-14", "v100-32gb", Attention.EAGER),
    ("a run of 2024-09-14", "t4-16gb", Attention.EAGER),
    ("a run of 2024-09-14", "V100", Attention.EAGER),  # 16 or 32 GB, sm70 either way
])
def test_an_empty_attention_cell_of_a_megatron_row_is_megatrons_at_its_date_on_its_card(
        source: str, gpu: str, attention: Attention) -> None:
    row = ROW.replace(",src,", f",{source},").replace(",sdpa,", ",,").replace(
        ",1,a100-40gb,none,none,litgpt", f",1,{gpu},none,none,megatron") + '""'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.attention is attention


@pytest.mark.parametrize(("notes", "first"), [
    ("Alpaca, longest sample forced into the first batch (seq_len = longest sample)", True),
    ("the longest sequence is placed first", True),
    ("largest batch first, so potential OOMs happen right away", True),
    ("seq_len = the longest sample; steady state after 100 steps", False),
    ("first batch of the epoch", False),
])
def test_notes_saying_the_largest_batch_ran_first(notes: str, first: bool) -> None:
    """litgpt's 2023 finetune scripts put the longest sample into the first batch: such a row's
    figure is its first micro-batch's (`largest_batch_first`), however the notes word it."""
    (case,) = read_cases("\n".join((HEADER, ROW + f'"{notes}"')))
    assert largest_batch_first(case) is first


def test_a_megatron_row_on_several_gpus_splits_and_shards_as_its_notes_say() -> None:
    """Megatron-LM's distributed optimizer is `zero1`; tensor parallelism divides each GPU's
    weights by its size (`vramplan.distributed.parallelism.Parallelism.tensor_parallel`)."""
    full = ("m1,src,llama-2-7b,full,mixed,adamw,,none,,,1,4096,,selective,flash,,8,h100-80gb,,"
            "none,megatron,allocated,40,GB,")
    split = full.replace("m1,", "m2,", 1) + '"tp=2 --use-distributed-optimizer"'
    plain, tp2 = (score_cases(read_cases("\n".join((HEADER, row)))).scores[0]
                  for row in (full, split))
    assert (plain.model_kind, tp2.model_kind) == ("per_gpu", "per_gpu")
    assert plain.estimate_bytes is not None and tp2.estimate_bytes is not None
    # 18 bytes per parameter, against (6 + 12/4) / 2 with the model halved over 4 copies
    assert tp2.estimate_bytes < plain.estimate_bytes / 3


def test_a_litgpt_config_hub_row_reads_its_recipe_where_its_cells_are_empty() -> None:
    """litgpt's config_hub recipes (vramplan.presets.litgpt_recipes, read at fd71063c): phi-2's
    full recipe on 2 devices does not accumulate (8 // 2 // 4 = 1 micro-batch per step),
    gemma-7b's LoRA recipe has rank 16; a row's own cells and notes come first, and a row from
    elsewhere keeps the framework's defaults."""
    hub = "Lightning-AI/litgpt config_hub/finetune/README.md"
    full = (f"h1,{hub},phi-2,full,bf16-true,adamw,,none,,,4,512,,full,sdpa,,2,a10g-24gb,fsdp,"
            "none,litgpt,allocated,14.44,GB,")
    lora = (f"h2,{hub},gemma-7b,lora,bf16-true,adamw,,none,,all;head,1,512,,none,sdpa,,1,"
            "a10g-24gb,none,none,litgpt,allocated,OOM,GB,")
    ranked = lora.replace("h2,", "h3,", 1).replace(",none,,all;head", ",none,32,all;head", 1)
    elsewhere = full.replace("h1,", "h4,", 1).replace(hub, "a blog post", 1)
    said = full.replace("h1,", "h5,", 1) + '"via gradient accumulation"'
    cases = read_cases("\n".join((HEADER, full, lora, ranked, elsewhere, said)))
    setups = [training_setup_of(case) for case in cases]
    assert not setups[0].gradient_accumulation
    assert setups[1].lora_rank == 16
    assert setups[2].lora_rank == 32
    assert setups[3].gradient_accumulation  # litgpt's default: its recipes accumulate
    assert setups[4].gradient_accumulation


@pytest.mark.parametrize(("notes", "accumulates"), [
    ("no gradient accumulation", False),
    ("batch size 2 (without gradient accumulation)", False),  # torchtune's README
    ("via gradient accumulation", True),
    ("--per_device_train_batch_size 4 --gradient_accumulation_steps 1 --max_length 8192", False),
    ("TrainingArguments(gradient_accumulation_steps=4)", True),
    ("gradient_accumulation_steps: 1", False),
    ("via gradient accumulation (2)", True),
    ("gradient accumulation steps of 1", False),  # named, but one micro-batch per step
    # universal-llm-trainer's config key, spelt as its repository spells it
    ("Gradient accumulation: Full fine-tuning 1, LoRA 32; gradient_accumuate_step 1", False),
    # two values quoted (a config and an override): the notes' words decide, else the default
    ("gradient_accumulation_steps 64 in the config but 1 when run", True),
    ("", True),  # torchtune's LoRA default
])
def test_a_rows_notes_say_whether_it_accumulated(notes: str, accumulates: bool) -> None:
    row = ROW.replace(",litgpt,", ",torchtune,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert training_setup_of(case).gradient_accumulation is accumulates


def test_torchtunes_optimization_flags_table_does_not_accumulate() -> None:
    """The command under torchtune's README table (README.md @1814feb17) sets
    `gradient_accumulation_steps=1`: its rows do not accumulate, where a torchtune LoRA row of
    another source takes the recipes' default."""
    row = ROW.replace(",litgpt,", ",torchtune,") + '""'
    table = row.replace("t1,src,", "t1,pytorch/torchtune README.md 'Optimization flags' table "
                                    "(1814feb17),", 1)
    (case,) = read_cases("\n".join((HEADER, table)))
    assert not training_setup_of(case).gradient_accumulation
    (other,) = read_cases("\n".join((HEADER, row)))
    assert training_setup_of(other).gradient_accumulation


@pytest.mark.parametrize(("notes", "metric"), [
    ("its progress bar prints torch.cuda.memory_reserved()/1E9 as 'G'", Metric.RESERVED),
    ("the script prints torch.cuda.max_memory_allocated() at the end", Metric.ALLOCATED),
    ("", Metric.ALLOCATED),  # the generic stack's default
])
def test_an_empty_metric_reads_what_the_runs_own_code_prints(notes: str, metric: Metric) -> None:
    row = ROW.replace(",litgpt,", ",generic,").replace(",allocated,", ",,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.metric is metric


def _setup_of_notes(framework: str, notes: str) -> TrainingSetup:
    """The setup of a one-row file whose row runs `framework` with `notes`."""
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",litgpt,", f",{framework},")
                                     + f'"{notes}"')))
    return training_setup_of(case)


def test_a_loop_that_deletes_its_outputs_after_the_loss_keeps_no_logits() -> None:
    """universal-llm-trainer's `del output` (`del_logits_after_forward: True`): nothing holds
    the logits through backward, as in a loop that computes its loss in a function."""
    assert _setup_of_notes("generic", "nn.CrossEntropyLoss on output.logits[:, :-1] itself, "
                                      "deleting the output after the loss").loss_in_function
    assert not _setup_of_notes("generic", "").loss_in_function


@pytest.mark.parametrize(("framework", "notes", "keeps", "frees"), [
    # Answer.AI's train.py under the `hf` cell: its own loop, not the Trainer's
    ("hf", "the loop keeps `output` through backward and the optimizer step and sets it to "
           "None before the next forward", True, True),
    ("hf", "", None, False),
    # llama-recipes' train_utils.py: `loss = model(**batch).loss` binds no outputs
    ("generic", "the loop keeps only the loss, 'loss = model(**batch).loss'", False, False),
    ("generic", "", None, False),
])
def test_notes_say_what_the_loop_does_with_the_models_outputs(
        framework: str, notes: str, keeps: bool | None, frees: bool) -> None:
    setup = _setup_of_notes(framework, notes)
    assert setup.loop_keeps_outputs is keeps
    assert setup.loop_frees_outputs is frees
    default = framework == "generic"  # a plain loop keeps them; the Trainer does not
    assert loop_keeps_logits(setup) is (default if keeps is None else keeps)


@pytest.mark.parametrize(("sharding", "kernel"), [("none", True), ("fsdp", False),
                                                  ("zero3", False), ("ddp", True)])
def test_use_kernels_applies_the_hub_moe_kernel_only_to_a_model_loaded_on_its_gpu(
        sharding: str, kernel: bool) -> None:
    """transformers 4.55 `kernelize`s the model where `from_pretrained` put it: on the GPU with a
    device map, on the CPU when FSDP or ZeRO-3 shard it afterwards (no kernel for "cpu")."""
    row = ROW.replace(",1,a100-40gb,none,none,litgpt,", f",2,a100-40gb,{sharding},none,hf,") \
        + '"use_kernels true (kernels-community MoE kernels for the experts)"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert training_setup_of(case).moe_hub_kernel is kernel


def test_axolotls_quantized_experts_are_read_from_the_notes() -> None:
    assert _setup_of_notes("axolotl", "load_in_4bit true with quantize_moe_experts true "
                                      "(NF4 parametrization)").quantized_experts
    assert not _setup_of_notes("axolotl", "").quantized_experts


def test_torchtunes_custom_sharded_embedding_is_a_unit_of_its_own() -> None:
    """torchtune's `custom_sharded_layers: ['tok_embeddings', 'output']` (its llama3_1 70B_full
    config @30b8519e8) shards the embedding as its own FSDP2 unit, resharded after forward: the
    root no longer holds Llama-3.1-70B's 128,256 x 8,192 bf16 embedding gathered through the
    step (2.1 GB), from the loss on."""
    row = ("tt1,src,llama-3.1-70b,full,bf16-true,adamw,fused,none,,,2,2048,,full,sdpa,chunked,8,"
           "a100-80gb,fsdp,none,torchtune,allocated,30,GiB,")
    apart = row.replace("tt1,", "tt2,", 1) \
        + '"custom_sharded_layers [\'tok_embeddings\', \'output\']"'
    other = apart.replace(",torchtune,", ",hf,").replace("tt2,", "tt3,", 1)
    kept, split, hf = score_cases(read_cases("\n".join((HEADER, row, apart, other)))).scores
    assert embedding_sharded_apart(split.case) and not embedding_sharded_apart(hf.case)
    embedding = 128_256 * 8_192 * 2
    assert kept.estimate_bytes is not None and split.estimate_bytes is not None
    assert kept.estimate_bytes - split.estimate_bytes == pytest.approx(embedding, rel=0.02)


@pytest.mark.parametrize(("notes", "is_compiled"), [
    ("--training.compile on", True),
    ("torch.compile enabled", True),
    ("compile: True", True),
    ("use_torch_compile: true", True),
    ("decode compiled (--compile, mode reduce-overhead)", True),
    # a config quoted as it is written (torchtune's YAML), and the other ways notes deny it
    ("enable_activation_checkpointing: True, compile: False, gradient_accumulation_steps 1",
     False),
    ("compile=False", False),
    ("compile off", False),
    ("eager (no compile)", False),
    ("without torch.compile", False),
    ("not compiled", False),
    ("compile flag not stated", False),
    ("precompiled CUDA kernels", False),
    # the word's other sense, as another hand may write a row's provenance
    ("figures compiled from Table 3 of the paper", False),
    ("numbers compiled by the authors; torch.compile on", True),
    ("", False),
])
def test_a_rows_notes_say_whether_it_ran_compiled(notes: str, is_compiled: bool) -> None:
    (case,) = read_cases("\n".join((HEADER, ROW + f'"{notes}"')))
    assert compiled(case) is is_compiled


@pytest.mark.parametrize(("notes", "dropout", "version"), [
    ("LoRA r8 alpha16 dropout .1", 0.1, None),
    ("lora_dropout=0.05, FSDP2", 0.05, FsdpVersion.FSDP2),
    # the model's own dropout is not the adapters'; FSDP2 denied is not FSDP2
    ("attention dropout 0.1, hidden dropout 0.1; FSDP1, not FSDP2", None, FsdpVersion.FSDP1),
    ("fsdp_version: 2", None, FsdpVersion.FSDP2),
    # another row's id cited in the notes: its "fsdp2" counts GPUs
    ("as fms-mixtral-8x7b-lora-r16-qkvo-fsdp2-mb2-s4096-alloc with per_device 4", None, None),
])
def test_a_rows_notes_give_its_adapter_dropout_and_fsdp(notes: str, dropout: float | None,
                                                        version: FsdpVersion | None) -> None:
    row = ROW.replace(",1,a100-40gb,none,none,", ",2,a100-40gb,fsdp,none,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert lora_dropout(case) == dropout
    assert fsdp_version(case) is version


@pytest.mark.parametrize(("source", "notes", "cache"), [
    # torchtune's generate recipe in April 2024: the builder's max_seq_len, every query head
    ("pytorch/torchtune docs/source/tutorials/llama3.rst (20747cd87)", "max_seq_len 4096",
     (4096, True)),
    ("pytorch/torchtune docs/source/tutorials/llama3.rst (20747cd87)", "", (8192, True)),
    # September 2024: the cache fits the request, still every query head (until 2024-11-10)
    ("pytorch/torchtune README.md (30b8519e8)", "max_seq_len 4096", (None, True)),
    ("pytorch/torchtune README.md", "", (None, None)),  # no date: today's recipe
])
def test_torchtunes_generate_cache_follows_the_rows_date(
        source: str, notes: str, cache: tuple[int | None, bool | None]) -> None:
    row = (f"g1,{source},llama-3-8b,inference,bf16-true,none,,none,,,1,,206,none,sdpa,,1,,none,"
           f'none,torchtune,allocated,18.31,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    assert torchtune_generate_cache(case) == cache


def test_an_inference_row_split_by_layers_is_not_read_as_tensor_parallel() -> None:
    """litgpt's generate/sequentially.py places 20 of Llama-2-70B's 80 blocks on each of 4 GPUs,
    with the embedding and the head on the first; a vocabulary-parallel tensor split (the generic
    engine's) leaves a quarter of them there: 3/4 of 2 x 32,000 x 8,192 bf16 values more, and
    the prefill's working set less (its projections are not split)."""
    row = ("s1,src,llama-2-70b,inference,bf16-true,none,,none,,,1,,256,none,sdpa,,4,a100-40gb,"
           "none,none,generic,allocated,35.64,GB,")
    split = row.replace("s1,", "s2,", 1) + '"generate/sequentially.py, layer_to_device"'
    tp, seq = score_cases(read_cases("\n".join((HEADER, row, split)))).scores
    assert tp.estimate_bytes is not None and seq.estimate_bytes is not None
    vocab = 2 * 32_000 * 8_192 * 2
    assert seq.estimate_bytes - tp.estimate_bytes == pytest.approx(vocab * 3 / 4, rel=0.01)


@pytest.mark.parametrize(("quant", "notes", "warmed"), [
    # a bitsandbytes load: half the meta model's bf16 bytes, more than its 4-bit weights
    ("nf4", "run 2025-10-01", "half"),
    ("nf4", "run 2025-01-01", "none"),  # before transformers v4.50.0
    # an unquantized, untied model with a device_map fills its warm-up exactly
    ("none", "device_map auto, run 2025-10-01", "none"),
])
def test_transformers_warm_up_is_what_a_hf_inference_row_keeps_reserved(
        quant: str, notes: str, warmed: str) -> None:
    row = (f"w1,src,llama-2-7b,inference,bf16-true,none,,{quant},,,1,8,64,none,sdpa,,1,,none,"
           f'none,hf,reserved,10,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    estimate = estimate_inference_case(case.model, case.precision.value, case.quant.value,
                                       batch=1, seq_len=8, new_tokens=64, framework="hf")
    params = architecture_of(find_model("llama-2-7b")).params_total
    expected = {"half": params * 2 // 2, "none": 0}[warmed]
    assert warmup_reserved_bytes(case, estimate) == expected
    if warmed == "half":
        assert expected > estimate.bytes_of(PartKind.WEIGHTS)


@pytest.mark.parametrize(("notes", "empties"), [
    ("harness: empty_cache every 10 steps", True),
    ("torch.cuda.empty_cache() after each step", True),
    ("axolotl calls `empty_cache` only in code paths this run does not take", False),
])
def test_a_row_empties_the_cache_between_steps_only_where_its_notes_say_so(
        notes: str, empties: bool) -> None:
    row = ("e1,src,llama-2-7b,lora,bf16-true,adamw,,none,8,q;v,1,512,,none,sdpa,,1,,none,none,"
           f'hf,reserved,10,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    assert training_setup_of(case).empty_cache_between_steps is empties


@pytest.mark.parametrize(("notes", "steady"), [
    ("'[Rank 0] (after 1 iterations) memory (MB) | allocated: 1 | max allocated: 2'", False),
    ("'(after 100 iterations) memory (MB) | max allocated: 2'", True),
])
def test_a_megatron_report_after_the_first_iteration_covers_the_first_step_only(
        notes: str, steady: bool) -> None:
    """Megatron's `report_memory` at the first logging interval: with `log_interval` 1 its max
    allocated is that of step 1, whose micro-batches ran before the optimizer's states existed."""
    row = ("m1,src,gpt2-xl,full,mixed,adamw,,none,,,1,1024,,none,flash,,4,,ddp,none,megatron,"
           f'allocated,10,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    setup = training_setup_of(case)
    assert setup.steady_state is steady
    assert setup.first_step_report is not steady


def test_a_first_step_report_replays_the_load_and_one_step() -> None:
    """The reserved figure after the first iteration holds what the load and that step cached:
    the replay runs one step, not a steady step after an earlier one."""
    from vramplan.allocator import RESET_PEAKS, EventKind
    from vramplan.presets.models import architecture_of, find_model
    from vramplan.training.allocations.step import step_program
    from vramplan.training.result import step_shape

    arch = architecture_of(find_model("gpt2-xl"))
    row = ("m1,src,gpt2-xl,full,mixed,adamw,,none,,,1,1024,,none,flash,,1,,none,none,megatron,"
           'reserved,10,GB,"(after 1 iterations) memory (MB)"')
    (case,) = read_cases("\n".join((HEADER, row)))
    first = training_setup_of(case)
    steady = replace(first, first_step_report=False)

    def forwards(setup: object) -> int:
        events = step_program(arch, setup, step_shape(arch, setup))  # type: ignore[arg-type]
        reset = next(i for i, e in enumerate(events) if e.name == RESET_PEAKS)
        return sum(e.kind is EventKind.MARK and e.name == "forward" for e in events[:reset])

    assert forwards(first) == 0 < forwards(steady)


def test_the_warm_up_of_a_hf_row_is_capped_by_its_card() -> None:
    """A 70B bitsandbytes load on a 40 GB card: the warm-up would be 70 GB (half the bf16 meta
    model), transformers v4.52 on caps its byte count at the card's free memory less 1.2 GiB
    before halving it."""
    row = ("w2,src,llama-2-70b,inference,bf16-true,none,,nf4,,,1,8,64,none,sdpa,,1,a100-40gb,"
           'none,none,hf,reserved,10,GB,"run 2025-10-01"')
    (case,) = read_cases("\n".join((HEADER, row)))
    estimate = estimate_inference_case(case.model, case.precision.value, case.quant.value,
                                       batch=1, seq_len=8, new_tokens=64, framework="hf")
    assert case.gpu is not None
    # the card's free memory counts from what CUDA hands out on it: 39.56 GiB on an A100 40GB
    free = 40_509 * 2**20 - CUDA_CONTEXT_BYTES
    assert warmup_reserved_bytes(case, estimate) == 2 * ((free - round(1.2 * 2**30)) // 4)


def test_unsloths_70b_notebook_run_reserves_the_capped_warm_up() -> None:
    """unslothai/notebooks nb/Llama3.3_(70B)_A100-Conversational.ipynb (outputs of 2025-09-06):
    Unsloth 2025.9.1 on an A100 80GB printed 45.94 GB (42.789 GiB) of peak reserved memory, of
    which 39.221 GiB were reserved once the model had loaded: transformers' warm-up, capped by
    the card, not half the 141 GB of the bf16 meta model."""
    (case,) = [c for c in parse_cases(shipped_cases("cases_vramplan.csv")).cases
               if c.id == "unsloth-nb-llama3.3-70b-finetome-qlora-r16-b2-a100-80gb"]
    score = score_case(case)
    assert score.error_pct is not None and abs(score.error_pct) < 6


def test_a_hf_generate_row_before_transformers_4_42_holds_two_caches() -> None:
    """optimum-benchmark's Llama-2-7B report of 2023-11-29 (transformers 4.35.2): the decode step
    holds the previous tuple cache beside the grown one; from v4.42.0 one DynamicCache."""
    row = ("o1,src,llama-2-7b,inference,bf16-true,none,,none,,,16,256,512,none,sdpa,,1,,none,"
           'none,hf,allocated,26.442,GB,"report added 2023-11-29"')
    later = row.replace("o1,", "o2,", 1).replace("2023-11-29", "2024-07-01")
    old, new = score_cases(read_cases("\n".join((HEADER, row, later)))).scores
    assert old.estimate_bytes is not None and new.estimate_bytes is not None
    per_token = 2 * 32 * 32 * 128 * 2
    # and, before v4.41.0, every layer's rotary tables: 32 x (cos, sin) x 4096 x 128 x 2 bytes
    tables = 32 * 2 * 4096 * 128 * 2
    assert old.estimate_bytes - new.estimate_bytes == 16 * 767 * per_token + tables


@pytest.mark.parametrize(("framework", "notes", "loss16", "untied"), [
    # lightning-thunder's benchmark_litgpt.py: litgpt's GPT in a plain bf16 loop
    ("generic", "the litgpt GPT built on the meta device; loss F.cross_entropy on the bf16 logits",
     True, True),
    ("generic", "litgpt.GPT; cross_entropy on the fp32 logits", False, True),
    # universal-llm-trainer's wrapper: no labels to the model, its own loss on the raw logits
    ("generic", "computes nn.CrossEntropyLoss on output.logits[:, :-1] itself (model-dtype logits "
     "plus the sliced copy)", True, False),
    ("generic", "nn.CrossEntropyLoss on output.logits, cast with .float() first", False, False),
    # litgpt's own scripts: Fabric casts the output to fp32 first, and the head is untied anyway
    ("litgpt", "F.cross_entropy on the bf16 logits", False, False),
    ("hf", "", False, False),
])
def test_a_rows_notes_say_how_its_loop_ran_the_loss_and_the_model(
        framework: str, notes: str, loss16: bool, untied: bool) -> None:
    row = ROW.replace(",litgpt,", f",{framework},") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    setup = training_setup_of(case)
    assert (setup.loss_16bit, setup.litgpt_model) == (loss16, untied)


@pytest.mark.parametrize(("notes", "sixteen"), [
    ("BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)", True),
    ("bnb_4bit_compute_dtype: bfloat16", True),
    ("bnb_4bit_compute_dtype=torch.float32", False),
    ("compute dtype not given", False),
])
def test_an_inference_rows_notes_give_the_4bit_compute_dtype(notes: str, sixteen: bool) -> None:
    row = ("q1,src,llama-2-7b,inference,bf16-true,none,,nf4,,,1,512,1,none,sdpa,,1,,none,none,"
           f'hf,allocated,5.0,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    sixteen_bit = estimate_inference_case(
        case.model, "bf16-true", "nf4", batch=1, seq_len=512, new_tokens=1, framework="hf",
        bnb_compute_16bit=True).allocated_bytes
    fp32 = estimate_inference_case(
        case.model, "bf16-true", "nf4", batch=1, seq_len=512, new_tokens=1,
        framework="hf").allocated_bytes
    assert fp32 > sixteen_bit
    assert score_case(case).estimate_bytes == (sixteen_bit if sixteen else fp32)


@pytest.mark.parametrize(("notes", "outside"), [
    ("metric: benchmark_memory() returns torch memory_stats allocated_bytes.all.peak + "
     "(nvidia-smi memory.used peak sampled every 0.1 s by memory_tracker.py - "
     "reserved_bytes.all.peak)", True),
    ("torch.cuda.max_memory_allocated()", False),
    ("allocated_bytes.all.peak", False),
])
def test_an_allocated_figure_with_the_memory_outside_pytorch_adds_the_context(
        notes: str, outside: bool) -> None:
    """optimum's GPTQ benchmark (tests/benchmark/benchmark_gptq.py) adds NVML's used memory
    less the reserved peak to the allocated peak: the row is scored with the CUDA context."""
    row = INFERENCE_ROW.replace(",device,", ",allocated,")
    (plain,) = score_cases(read_cases("\n".join((HEADER, row)))).scores
    (read,) = score_cases(read_cases("\n".join((HEADER, row + f'"{notes}"')))).scores
    assert plain.estimate_bytes is not None
    assert read.estimate_bytes == plain.estimate_bytes + (CUDA_CONTEXT_BYTES if outside else 0)


@pytest.mark.parametrize(("notes", "reentrant", "in_units"), [
    ("--gradient_checkpointing True --use_reentrant True", True, False),
    ("gradient_checkpointing_kwargs {'use_reentrant': False}", False, False),
    # Answer.AI's train.py: its own flag, its checkpoint wrapper inside each FSDP unit
    ("--use_gradient_checkpointing True --reentrant_checkpointing True", True, True),
    ("fsdp_activation_checkpointing True (apply_activation_checkpointing with NO_REENTRANT "
     "checkpoint_wrapper on every LlamaDecoderLayer)", False, True),
    ("gradient checkpointing", None, False),
])
def test_a_rows_notes_say_how_it_checkpointed(notes: str, reentrant: bool | None,
                                              in_units: bool) -> None:
    (case,) = read_cases("\n".join((HEADER, ROW + f'"{notes}"')))
    setup = training_setup_of(case)
    assert (setup.reentrant_checkpointing, setup.checkpoint_in_units) == (reentrant, in_units)
    assert not setup.checkpoint_submodules


def test_a_preference_rows_notes_name_coatis_trainer() -> None:
    """ColossalChat's ORPO rows run coati's trainer, not TRL's (`AlignmentSetup.coati`)."""
    row = ROW.replace(",lora,bf16-true,adamw,,none,8,q;v,", ",orpo,bf16-true,adamw,,none,,,")
    (coati,) = read_cases("\n".join((HEADER, row + '"coati ORPOTrainer: one forward"')))
    (trl,) = read_cases("\n".join((HEADER, row + '"TRL ORPOTrainer"')))
    for case, expected in ((coati, True), (trl, False)):
        alignment = training_setup_of(case).alignment
        assert alignment is not None and alignment.coati is expected


@pytest.mark.parametrize(("notes", "hooked"), [
    ("--lora_rank 8: coati convert_to_lora_module replaces EVERY nn.Linear of the model, lm_head "
     "included, with loralib-style LoraLinear (not peft)", False),
    ("peft LoraConfig r 8, gradient_checkpointing True", None),
])
def test_a_rows_notes_say_whether_its_embeddings_output_was_made_to_need_a_gradient(
        notes: str, hooked: bool | None) -> None:
    """ColossalChat's `convert_to_lora_module` is not peft: nothing calls
    `enable_input_require_grads()`; a row that does not say so is read as its stack does."""
    (case,) = read_cases("\n".join((HEADER, ROW + f'"{notes}"')))
    assert training_setup_of(case).input_require_grads is hooked


@pytest.mark.parametrize("notes", [
    "wraps, in every decoder layer, self_attn, mlp, input_layernorm and post_attention_layernorm "
    "separately with torch checkpoint_wrapper (parallelizer.py)",
    "the same per-sub-module checkpoint_wrapper checkpointing as the previous row",
])
def test_a_rows_notes_say_it_checkpointed_each_sub_module(notes: str) -> None:
    (case,) = read_cases("\n".join((HEADER, ROW + f'"{notes}"')))
    assert training_setup_of(case).checkpoint_submodules


def test_a_row_of_the_same_run_is_read_with_its_twins_notes() -> None:
    """Megatron's `report_memory` line gives allocated and reserved at once: the reserved row
    says "same run as" the allocated one, whose notes give the run's settings."""
    alloc = ("m1,src,gpt2-medium,full,mixed,adamw,,none,,,1,1024,,none,sdpa,,4,,ddp,none,"
             'megatron,allocated,9.1,GiB,"accumulate_allreduce_grads_in_fp32 False"')
    reserved = ('m2,src,gpt2-medium,full,mixed,adamw,,none,,,1,1024,,none,sdpa,,4,,ddp,none,'
                'megatron,reserved,9.2,GiB,"same run as m1; max reserved"')
    alone = reserved.replace("m2,", "m3,", 1).replace("same run as m1", "same run as m9")
    _, twin, orphan = read_cases("\n".join((HEADER, alloc, reserved, alone)))
    assert twin.notes.endswith("[m1: accumulate_allreduce_grads_in_fp32 False]")
    assert training_setup_of(twin).grad_buffer_16bit
    assert not training_setup_of(orphan).grad_buffer_16bit


@pytest.mark.parametrize(("notes", "day"), [
    ("Megatron-LM core_r0.5.0, legacy model; runs 2024-09-14", date(2024, 2, 26)),
    ("runs 2023-07-16", date(2023, 7, 16)),
])
def test_a_megatron_rows_code_is_the_release_it_names(notes: str, day: date) -> None:
    row = ("m1,src,gpt2-medium,full,mixed,adamw,,none,,,4,1024,,none,eager,,4,,ddp,none,"
           f'megatron,allocated,4.6,GiB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    assert code_date(case) == day


def test_a_colossalai_zero2_row_reduces_through_its_bucket_and_keeps_its_gradients() -> None:
    """ColossalChat's benchmark on LowLevelZeroPlugin(stage=2, cpu_offload): the bf16 gradient
    partition stays on the GPU until the step (2 bytes x 6.74e9 / 2 GPUs, its fp32 copies on
    the host), and no DeepSpeed 1 GB bucket is held."""
    from vramplan.parts import PartKind

    row = ("c1,src,llama-2-7b,full,mixed,adamw,fused,none,,,4,2048,,full,flash,standard,2,,"
           "zero2,optimizer,generic,allocated,23.5,GB,")
    deepspeed, colossal = read_cases("\n".join((
        HEADER, row + '"DeepSpeed ZeRO-Offload"',
        row.replace("c1,", "c2,", 1) + '"LowLevelZeroPlugin(stage=2, cpu_offload=True)"')))

    def at_step(case: Case, kind: PartKind) -> int:
        estimate = multi_gpu_estimate(case)
        step = next(p for p in estimate.phases if p.phase.value == "optimizer_step")
        return sum(p.memory_bytes for p in step.parts if p.kind is kind)

    assert at_step(deepspeed, PartKind.GRADIENTS) == 0
    assert at_step(colossal, PartKind.GRADIENTS) == 2 * -(-6_738_415_616 // 2)

    def bucket(case: Case) -> int:
        estimate = multi_gpu_estimate(case)
        blocks = next(p for p in estimate.phases if p.phase.value == "backward_blocks")
        return sum(p.memory_bytes for p in blocks.parts if p.kind is PartKind.SHARDING_BUFFERS)

    # DeepSpeed's reduce bucket of 5e8 bf16 values against ColossalAI's 12 Mi, and DeepSpeed's
    # overflow check of the head's gradient (32,000 x 4,096 values, 11 bytes each)
    assert bucket(deepspeed) - bucket(colossal) \
        == 2 * (500_000_000 - 12 * 1024 * 1024) + 11 * 32_000 * 4096


def test_torchtitan_compiling_its_loss_alone_runs_eager_blocks_and_a_compiled_loss() -> None:
    """torchtitan's `[compile] components = ["loss"]` (its DeepSeek-V3 16B config, 2025-08):
    the blocks run eager, the cross-entropy compiled: less than the eager loss's fp32 copies."""
    row = ("d1,src,llama-3.1-8b,full,amp,adamw,fused,none,,,2,8192,,selective,sdpa,standard,8,"
           "h100-80gb,fsdp,none,torchtitan,reserved,50,GiB,")
    alone = row.replace("d1,", "d2,", 1) + '"[compile] enable true, components [\'loss\']"'
    eager, loss_only = read_cases("\n".join((HEADER, row + '"2025-08-20"', alone + " 2025-08-20")))
    setup = training_setup_of(loss_only)
    assert setup.loss_compiled_alone and not setup.compiled
    assert not training_setup_of(eager).loss_compiled_alone
    assert (score_case(loss_only).estimate_bytes or 0) < (score_case(eager).estimate_bytes or 0)


@pytest.mark.parametrize(("notes", "sixteen"), [
    ("grad_reduce_in_fp32 False in both mixed_precision and ddp", True),
    ("fp16 true, accumulate_allreduce_grads_in_fp32 False (main_grad buffer fp16)", True),
    ("main_grads fp32 (grad_reduce_in_fp32 true)", False),
    ("Megatron sets accumulate_allreduce_grads_in_fp32 for bf16 (fp32 main grads)", False),
])
def test_a_megatron_rows_notes_say_whether_its_gradient_buffer_is_fp32(notes: str,
                                                                      sixteen: bool) -> None:
    row = ("m1,src,llama-2-7b,full,mixed,adamw,,none,,,1,1024,,none,flash,,8,h100-80gb,zero1,"
           f'none,megatron,allocated,50,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    setup = training_setup_of(case)
    assert setup.grad_buffer_16bit is sixteen
    assert gradient_itemsize(setup) == (2 if sixteen else 4)


@pytest.mark.parametrize(("notes", "liger"), [
    ("--use_liger_kernel true (loss chunked)", True),
    ("use_liger True: liger_kernel.transformers.apply_liger_kernel_to_qwen2", True),
    ("LigerPlugin with liger_glu_activation, liger_rms_norm", True),
    ("the command sets --use_liger True/False; use_liger False: HF forward", False),
    ("the same command without --use_liger_kernel", False),
])
def test_a_rows_notes_say_whether_liger_patched_the_model(notes: str, liger: bool) -> None:
    row = ROW.replace(",litgpt,", ",hf,") + f'"{notes}"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert training_setup_of(case).liger_kernels is liger


@pytest.mark.parametrize(("notes", "te", "per_logit"), [
    ("cross_entropy_loss_fusion True impl te (fused CE on the logits)", True, 2),
    ("cross_entropy_fusion_impl='te'", True, 2),
    ("cross_entropy_loss_fusion true (impl native)", False, 10),
    ("--cross-entropy-loss-fusion --bf16", False, 10),
    ("cross_entropy_loss_fusion False", False, 6),
    ("--cross-entropy-loss-fusion false", False, 6),
    ("no fusion flag", False, 6),
])
def test_a_megatron_rows_notes_say_which_cross_entropy_ran(notes: str, te: bool,
                                                           per_logit: int) -> None:
    """Transformer Engine's fused cross-entropy keeps the 16-bit logits alone: 2 bytes per
    logit in forward and backward, where Megatron's own keeps an fp32 softmax beside them (6),
    and its native fused one, compiled, an fp32 buffer more while it updates the softmax (10:
    `HeadSpec.native_fused_cross_entropy`)."""
    row = ("m1,src,llama-2-7b,full,mixed,adamw,,none,,,1,1024,,none,flash,,1,h100-80gb,none,"
           f'none,megatron,allocated,50,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    setup = training_setup_of(case)
    assert setup.te_cross_entropy is te
    loss = estimate_training(architecture_of(find_model("llama-2-7b")), setup).loss
    assert loss.forward_peak_bytes == per_logit * 1024 * 32000
    assert loss.backward_peak_bytes == per_logit * 1024 * 32000


@pytest.mark.parametrize(("notes", "fused"), [
    ("--no-gradient-accumulation-fusion", False),
    ("gradient_accumulation_fusion False (no Apex)", False),
    ("megatron sft --no_gradient_accumulation_fusion true", False),
    ("gradient_accumulation_fusion True, hidden_dropout 0.1", True),
    ("cross_entropy_loss_fusion False", True),
])
def test_a_megatron_rows_notes_say_whether_it_fused_gradient_accumulation(notes: str,
                                                                         fused: bool) -> None:
    """Fused accumulation hands autograd Transformer Engine's cached dummy weight gradients
    (`vramplan.training.dummy_wgrads`); without it, none."""
    row = ("m1,src,llama-2-7b,full,mixed,adamw,,none,,,1,1024,,none,flash,,1,h100-80gb,none,"
           f'none,megatron,allocated,50,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    setup = training_setup_of(case)
    assert setup.gradient_accumulation_fusion is fused
    assert (dummy_wgrad_bytes(architecture_of(find_model("llama-2-7b")), setup) > 0) is fused


@pytest.mark.parametrize(("notes", "bucket"), [
    ("--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather", 40_000_000),
    ("use_distributed_optimizer true, overlap_grad_reduce true, bucket_size 4e7", 40_000_000),
    ("use_distributed_optimizer True, overlap_grad_reduce/param_gather False", None),
])
def test_a_megatron_rows_notes_say_whether_its_buffer_is_cut_in_buckets(
        notes: str, bucket: int | None) -> None:
    """Without `--overlap-grad-reduce` Megatron-LM's gradient buffer is one bucket, which its
    distributed optimizer cuts in data-parallel ranges."""
    row = ("m1,src,llama-2-7b,full,mixed,adamw,,none,,,1,1024,,none,flash,,8,h100-80gb,,"
           f'none,megatron,reserved,50,GB,"{notes}"')
    (case,) = read_cases("\n".join((HEADER, row)))
    estimate = multi_gpu_estimate(case)
    sharding = program_sharding(estimate.single.states, estimate.sharded)
    assert (sharding.param_buffer_ranks, sharding.bucket_elements) == (8, bucket)


def test_a_hub_repository_of_the_unsloth_organization_is_not_an_unsloth_run() -> None:
    row = ROW.replace(",litgpt,", ",generic,") + '"weights from unsloth/Mistral-7B-v0.2"'
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.framework is Framework.GENERIC


def test_a_fsdp_grad_op_row_can_say_it_ran_fsdp1() -> None:
    row = ROW.replace(",1,a100-40gb,none,none,litgpt,", ",8,a100-40gb,fsdp-grad-op,none,generic,")
    notes = '"FSDP1 FullyShardedDataParallel(sharding_strategy=SHARD_GRAD_OP), not FSDP2"'
    (case,) = read_cases("\n".join((HEADER, row + notes)))
    assert fsdp_version(case) is FsdpVersion.FSDP1


def test_oom_rows_and_units_are_read() -> None:
    oom = ROW.replace("21.30,GB", "OOM,GB")
    mib = ROW.replace("21.30,GB", "20314,MiB")
    cases = read_cases("\n".join((HEADER, oom, mib.replace("t1,", "t2,", 1))))
    assert cases[0].measured_bytes is None
    assert cases[1].measured_bytes == 20314 * 2**20
    scores = score_cases(cases).scores
    assert scores[0].outcome is Outcome.OOM
    assert scores[0].oom_right is False  # 21 GB fits on an A100 40GB


def test_unknown_column_is_named() -> None:
    with pytest.raises(UnknownName) as caught:
        read_cases(HEADER + ",colour\n" + ROW + ",red\n")
    assert caught.value.field == "column"
    assert "colour" in str(caught.value)
    from vramplan.cli.options import error_text
    from vramplan.i18n import Lang

    french = error_text(caught.value, Lang.FR)
    assert french.startswith("fichier de cas : colonne inconnue « colour »")


def test_missing_required_column_is_named() -> None:
    header = HEADER.replace(",unit,", ",units,")
    with pytest.raises(UnknownName):
        read_cases(header + "\n" + ROW + "\n")
    without = ",".join(c for c in HEADER.split(",") if c != "measured")
    row = ROW.replace("21.30,", "")
    with pytest.raises(CaseFormatError) as caught:
        read_cases(without + "\n" + row + "\n")
    assert "'measured'" in str(caught.value)


@pytest.mark.parametrize(("bad", "column"), [
    (ROW.replace("bf16-true", "bf17"), "precision"),
    (ROW.replace(",lora,", ",lorax,"), "method"),
    (ROW.replace("q;v", "q;query"), "lora_targets"),
    (ROW.replace("21.30", "lots"), "measured"),
    (ROW.replace(",GB,", ",GO,"), "unit"),
    (ROW.replace("a100-40gb", "a100-big").replace("21.30", "OOM"), "gpu"),  # needs its size
    (ROW.replace(",1304,", ",-3,"), "seq_len"),
])
def test_bad_value_names_row_and_column(bad: str, column: str) -> None:
    with pytest.raises(CaseValueError) as caught:
        read_cases("\n".join((HEADER, ROW, bad)))
    message = str(caught.value)
    assert "row 2 (t1)" in message
    assert column in message
    parsed = parse_cases("\n".join((HEADER, ROW, bad)))  # leniently: that row alone is unread
    assert len(parsed.cases) == 1
    (unread,) = parsed.unread
    assert (unread.row, unread.id) == (2, "t1") and column in unread.reason


def test_a_row_no_model_takes_is_skipped_with_its_reason_and_the_others_are_scored() -> None:
    unknown_model = ROW.replace("llama-2-7b", "llama-9").replace("t1,", "t2,", 1)
    # a full fine-tuning of 4-bit weights: no stack trains that, refused by the setup's checks
    refused = ROW.replace(",lora,bf16-true,adamw,,none,8,q;v,", ",full,bf16-true,adamw,,nf4,,,")
    refused = refused.replace("t1,", "t3,", 1)
    report = score_cases(read_cases("\n".join((HEADER, ROW, unknown_model, refused))))
    assert [s.outcome for s in report.scores] == [Outcome.SCORED, Outcome.SKIPPED,
                                                  Outcome.SKIPPED]
    assert report.rows_scored == 1
    skipped = {s.case.id: s.skip_reason for s in report.skipped}
    assert "llama-9" in skipped["t2"]
    assert "quant" in skipped["t3"]


def test_several_gpus_without_a_scheme_is_a_model_split_by_layers() -> None:
    split = ROW.replace(",1,a100-40gb,none,none,", ",2,a100-40gb,none,none,")
    one, two = score_cases(read_cases("\n".join((HEADER, ROW, split.replace("t1,", "t2,", 1)))))\
        .scores
    assert (two.outcome, two.model_kind) == (Outcome.SCORED, "per_gpu")
    assert one.estimate_bytes is not None and two.estimate_bytes is not None
    assert one.estimate_bytes / 2 < two.estimate_bytes < one.estimate_bytes


FULL_ROW = ROW.replace(",lora,bf16-true,adamw,,none,8,q;v,", ",full,mixed,adamw,,none,,,")


@pytest.mark.parametrize(("gpus", "sharding", "offload", "read_as", "reading"), [
    # ZeRO-Offload's own setting, written as the one GPU's "no sharding"
    (1, "none", "optimizer", ("zero2", "optimizer"), Reading.OFFLOAD_NEEDS_SHARDING),
    (2, "ddp", "optimizer", ("zero2", "optimizer"), Reading.OFFLOAD_NEEDS_SHARDING),
    (1, "none", "params-optimizer", ("zero3", "params-optimizer"),
     Reading.OFFLOAD_NEEDS_SHARDING),
    # DeepSpeed's offload_param is "valid only with stage 3": the optimizer alone goes
    (2, "zero2", "params-optimizer", ("zero2", "optimizer"), Reading.PARAM_OFFLOAD_NEEDS_ZERO3),
    (2, "zero1", "params-optimizer", ("zero1", "optimizer"), Reading.PARAM_OFFLOAD_NEEDS_ZERO3),
    # FSDP's CPU offload moves the parameters with the optimizer
    (2, "fsdp", "optimizer", ("fsdp", "params-optimizer"), Reading.FSDP_OFFLOADS_PARAMS),
])
def test_an_offload_no_run_has_is_read_as_the_run_its_stack_does_and_says_so(
        gpus: int, sharding: str, offload: str, read_as: tuple[str, str],
        reading: Reading) -> None:
    row = FULL_ROW.replace(",1,a100-40gb,none,none,litgpt,",
                           f",{gpus},a100-40gb,{sharding},{offload},generic,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert (case.sharding.value, case.offload.value) == read_as
    assert case.readings == (reading,)
    (score,) = score_cases((case,)).scores
    assert score.outcome is Outcome.SCORED


def test_offload_on_one_gpu_is_never_silently_ignored() -> None:
    # read as ZeRO-Offload (with its reading), which keeps the optimizer off the GPU
    offloaded = FULL_ROW.replace(",1,a100-40gb,none,none,", ",1,a100-40gb,none,optimizer,")
    kept, moved = score_cases(read_cases("\n".join(
        (HEADER, FULL_ROW, offloaded.replace("t1,", "t2,", 1))))).scores
    assert moved.case.readings == (Reading.OFFLOAD_NEEDS_SHARDING,)
    assert kept.estimate_bytes is not None and moved.estimate_bytes is not None
    assert moved.estimate_bytes < kept.estimate_bytes


@pytest.mark.parametrize(("framework", "scheme", "checkpointing", "single_checkpointing"), [
    ("litgpt", "fsdp", "full", "none"),  # FSDPStrategy with activation_checkpointing_policy
    ("torchtune", "fsdp", "full", "full"),  # its configs: enable_activation_checkpointing
    ("torchtitan", "fsdp", "selective", "selective"),  # per-op selective checkpointing
    ("hf", "ddp", "none", "none"),
    ("generic", "ddp", "none", "none"),
])
def test_empty_sharding_on_several_gpus_is_the_frameworks_default(
        framework: str, scheme: str, checkpointing: str, single_checkpointing: str) -> None:
    # the format: "an empty optional cell means the framework's default"
    row = ROW.replace(",none,sdpa,,1,a100-40gb,none,none,litgpt,",
                      f",,sdpa,,2,a100-40gb,,none,{framework},")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert (case.sharding.value, case.checkpointing.value) == (scheme, checkpointing)
    (score,) = score_cases((case,)).scores
    assert (score.outcome, score.model_kind) == (Outcome.SCORED, "per_gpu")
    (single,) = read_cases("\n".join((HEADER, row.replace(",2,a100-40gb,", ",1,a100-40gb,"))))
    assert (single.sharding.value, single.checkpointing.value) == ("none", single_checkpointing)


def test_a_card_missing_from_the_catalogue_is_read_by_the_size_in_its_name() -> None:
    (case,) = read_cases("\n".join((HEADER, ROW.replace("a100-40gb", "rtx-a5000-24gb"))))
    assert case.gpu is not None
    assert case.gpu.capacity_bytes == 24 * 2**30  # an "N GB" card holds N GiB
    (known,) = read_cases("\n".join((HEADER, ROW.replace("a100-40gb", "H100_80GB"))))
    assert known.gpu is not None and known.gpu.name == "h100-80gb"


@pytest.mark.parametrize(("written", "gib"), [
    ("A800 80GB", 80), ("NVIDIA A100-SXM4-80GB", 80), ("H20 96G", 96), ("RTX A6000 (48 GB)", 48),
    ("2x24GB", 24), ("h800-80gb", 80)])
def test_a_card_written_as_its_vendor_does_is_read_by_its_size(written: str, gib: int) -> None:
    """An OOM verdict needs the card's size: a name that states one is read, however spelled."""
    row = ROW.replace("a100-40gb", f'"{written}"').replace(",21.30,GB,", ",OOM,GB,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.gpu is not None and case.gpu.capacity_bytes == gib * 2**30


@pytest.mark.parametrize("written", ["V100", "A100 40GB or 80GB", "RTX 3080 0GB"])
def test_an_oom_row_on_a_card_of_no_single_size_is_not_read(written: str) -> None:
    row = ROW.replace("a100-40gb", f'"{written}"').replace(",21.30,GB,", ",OOM,GB,")
    report = parse_cases("\n".join((HEADER, row)))
    assert not report.cases and len(report.unread) == 1


def test_a_measured_row_on_a_card_of_unknown_size_is_estimated_and_says_so() -> None:
    (case,) = read_cases("\n".join((HEADER, ROW.replace("a100-40gb", "rtx-3080"))))
    assert case.gpu is None and case.readings == (Reading.GPU_UNKNOWN,)
    (score,) = score_cases((case,)).scores
    assert score.outcome is Outcome.SCORED


@pytest.mark.parametrize(("cells", "column", "value"), [
    # transformers' TrainingArguments.optim names, torch.optim.Adam
    ({"adamw": "adamw_torch"}, "optimizer", Optimizer.ADAMW),
    ({"adamw": "Adam"}, "optimizer", Optimizer.ADAMW),
    ({"adamw": "paged_adamw_32bit"}, "optimizer", Optimizer.PAGED_ADAMW),
    ({"adamw": "paged_adamw_8bit"}, "optimizer", Optimizer.PAGED_ADAMW_8BIT),
    ({"bf16-true": "bf16-mixed"}, "precision", Precision.AMP),  # Lightning's names
    ({",sdpa,": ",flash_attention_2,"}, "attention", Attention.FLASH),
    ({",none,sdpa,": ",true,sdpa,"}, "checkpointing", Checkpointing.FULL),
    ({"q;v": "q_proj;v_proj"}, "lora_targets", frozenset({LoraTarget.Q, LoraTarget.V})),
    ({"litgpt": "trl"}, "framework", Framework.HF),
    ({"litgpt": "llama-factory"}, "framework", Framework.LLAMAFACTORY),
    ({"litgpt": "Hugging Face"}, "framework", Framework.HF),
    ({"bf16-true": "fp16-mixed"}, "precision", Precision.AMP),
    ({",lora,": ",full fine-tuning,", "8,q;v": ","}, "method", Method.FULL),
    ({",adamw,,": ",adamw,single_tensor,"}, "optimizer_impl", OptimizerImpl.FOR_LOOP),
    ({"bf16-true": "16-true"}, "precision", Precision.BF16_TRUE),  # Lightning's fp16 weights
    ({",none,sdpa,": ",SAC,sdpa,"}, "checkpointing", Checkpointing.SELECTIVE),  # torchtitan's
    ({",sdpa,": ",flex_attention,"}, "attention", Attention.FLASH),
    ({"allocated": "W&B"}, "metric", Metric.DEVICE),
    ({"allocated": "torch.cuda.mem_get_info"}, "metric", Metric.DEVICE),
    ({"allocated": "max_memory_cached"}, "metric", Metric.RESERVED),  # PyTorch before 1.4
    ({",1,a100-40gb,none,": ",2,a100-40gb,ZeRO stage 3,"}, "sharding", Scheme.ZERO3),
    ({",1,a100-40gb,none,": ",2,a100-40gb,fully_shard,"}, "sharding", Scheme.FSDP),
    ({"a100-40gb,none,none,": "a100-40gb,fsdp,optimizer+params,"}, "offload",
         Offload.PARAMS_OPTIMIZER),
    ({"a100-40gb,none,none,": "a100-40gb,none,activation offloading,"}, "offload",
         Offload.ACTIVATIONS),
    ({"litgpt": "Megatron-Bridge"}, "framework", Framework.MEGATRON),
    ({"allocated": "max_memory_allocated"}, "metric", Metric.ALLOCATED),
    ({"allocated": "nvidia-smi"}, "metric", Metric.DEVICE),
    ({"allocated": "torch.cuda.max_memory_reserved"}, "metric", Metric.RESERVED),
    ({"allocated": "Peak Memory Active"}, "metric", Metric.ALLOCATED),  # torchtune's log
    ({"adamw": "PagedAdamW32bit"}, "optimizer", Optimizer.PAGED_ADAMW),  # bitsandbytes' class
    ({",adamw,,": ",adamw,optimizer_in_bwd,"}, "optimizer_impl", OptimizerImpl.IN_BACKWARD),
    ({",none,sdpa,": ",off,sdpa,"}, "checkpointing", Checkpointing.NONE),
    ({",sdpa,": ",xformers,"}, "attention", Attention.SDPA),
    ({",sdpa,,": ",sdpa,liger,"}, "loss", Loss.CHUNKED),
    ({",sdpa,,": ",sdpa,cut_cross_entropy,"}, "loss", Loss.CHUNKED),
    ({",1,a100-40gb,none,": ",2,a100-40gb,deepspeed_zero3,"}, "sharding", Scheme.ZERO3),
    ({"a100-40gb,none,none,": "a100-40gb,zero2,optimizer_states,"}, "offload",
         Offload.OPTIMIZER),
    # the counters under the names the stacks log them (torchtune, torchtitan, DeepSpeed,
    # memory_stats(), nvidia-smi's query field), and a torch.cuda function written as a call
    ({",allocated,": ",peak_memory_alloc,"}, "metric", Metric.ALLOCATED),
    ({",allocated,": ",peak_memory_reserved,"}, "metric", Metric.RESERVED),
    ({",allocated,": ",max_reserved_gib,"}, "metric", Metric.RESERVED),
    ({",allocated,": ",max_active,"}, "metric", Metric.ALLOCATED),
    ({",allocated,": ",Max_CA,"}, "metric", Metric.RESERVED),
    ({",allocated,": ",reserved_bytes.all.peak,"}, "metric", Metric.RESERVED),
    ({",allocated,": ",memory.used,"}, "metric", Metric.DEVICE),
    ({",allocated,": ",torch.cuda.max_memory_allocated(),"}, "metric", Metric.ALLOCATED),
    ({",allocated,": ",torch.cuda.mem_get_info,"}, "metric", Metric.DEVICE),
    # a class named with its module path
    ({",adamw,,": ",torch.optim.AdamW,,"}, "optimizer", Optimizer.ADAMW),
    ({",adamw,,": ",bnb.optim.PagedAdamW8bit,,"}, "optimizer", Optimizer.PAGED_ADAMW_8BIT),
    ({",1,a100-40gb,none,": ",2,a100-40gb,NO_SHARD,"}, "sharding", Scheme.DDP),
    ({",sdpa,": ",math,"}, "attention", Attention.EAGER),
    ({",sdpa,,": ",sdpa,cross_entropy,"}, "loss", Loss.STANDARD),
    ({",litgpt,": ",openrlhf,"}, "framework", Framework.DEEPSPEED),
    ({",litgpt,": ",fms-hf-tuning,"}, "framework", Framework.HF),
    ({",litgpt,": ",Firefly,"}, "framework", Framework.HF),
    ({",litgpt,": ",oumi,"}, "framework", Framework.HF),
    ({",litgpt,": ",Megatron-SWIFT,"}, "framework", Framework.MEGATRON),
    ({",litgpt,": ",ms-swift (megatron),"}, "framework", Framework.MEGATRON),
    ({",litgpt,": ",ArcticTraining,"}, "framework", Framework.DEEPSPEED),
    # the same values written in words
    ({",adamw,,": ",8-bit AdamW,,"}, "optimizer", Optimizer.ADAMW_8BIT),
    ({",adamw,,": ",DeepSpeedCPUAdam,,"}, "optimizer", Optimizer.ADAMW),
    ({",1,a100-40gb,none,": ",2,a100-40gb,DistributedDataParallel,"}, "sharding", Scheme.DDP),
    ({",1,a100-40gb,none,": ",2,a100-40gb,DeepSpeed ZeRO-3,"}, "sharding", Scheme.ZERO3),
    ({",none,sdpa,": ",activation checkpointing,sdpa,"}, "checkpointing", Checkpointing.FULL),
    ({",none,sdpa,": ",disabled,sdpa,"}, "checkpointing", Checkpointing.NONE),
    ({",sdpa,": ",torch.nn.functional.scaled_dot_product_attention,"}, "attention",
     Attention.SDPA),
    ({",sdpa,": ",kernels-community/vllm-flash-attn3,"}, "attention", Attention.FLASH),
    ({",sdpa,,": ",sdpa,LigerFusedLinearCrossEntropyLoss,"}, "loss", Loss.CHUNKED),
    ({",sdpa,,": ",sdpa,torch.nn.CrossEntropyLoss,"}, "loss", Loss.STANDARD),
    ({",allocated,": ",peak allocated memory,"}, "metric", Metric.ALLOCATED),
    ({"a100-40gb,none,none,": "a100-40gb,zero2,ZeRO-Offload,"}, "offload", Offload.OPTIMIZER),
    ({",litgpt,": ",Hugging Face Transformers,"}, "framework", Framework.HF),
    ({",lora,bf16-true,": ",lora,tf32,"}, "precision", Precision.FP32),
    # a remark in parentheses: the words it completes, or the more precise value it names
    ({",1,a100-40gb,none,": ",2,a100-40gb,FSDP (full shard),"}, "sharding", Scheme.FSDP),
    ({",1,a100-40gb,none,": ",2,a100-40gb,fsdp (shard_grad_op),"}, "sharding",
     Scheme.FSDP_GRAD_OP),
    ({",adamw,,": ",adamw (8-bit),,"}, "optimizer", Optimizer.ADAMW_8BIT),
    ({",sdpa,": ",sdpa (flash),"}, "attention", Attention.FLASH),
    ({",allocated,": ",nvidia-smi (used),"}, "metric", Metric.DEVICE),
])
def test_the_stacks_own_names_for_a_value_are_read_as_it(cells: dict[str, str], column: str,
                                                         value: object) -> None:
    row = ROW
    for old, new in cells.items():
        row = row.replace(old, new)
    (case,) = read_cases("\n".join((HEADER, row)))
    assert getattr(case, column) == value and case.readings == ()


@pytest.mark.parametrize(("method", "framework", "written", "read"), [
    # each stack's 16-bit switch is its default precision: transformers' pure bf16,
    # DeepSpeed's and Megatron's fp32 master copy, torchtitan's fp32 shards
    # except Lightning's older names, litgpt's: "bf16" is "bf16-mixed", "16" is "16-mixed"
    ("lora", "litgpt", "bf16", Precision.AMP),
    ("lora", "litgpt", "16", Precision.AMP),
    ("full", "hf", "bf16", Precision.BF16_TRUE),
    ("full", "deepspeed", "bf16", Precision.MIXED),
    ("full", "megatron", "fp16", Precision.MIXED),
    ("full", "torchtitan", "bfloat16", Precision.AMP),
    # fp16 gradients cannot be unscaled: a full fine-tuning in fp16 runs autocast
    ("full", "hf", "fp16", Precision.AMP),
    ("lora", "hf", "fp16", Precision.BF16_TRUE),
    ("inference", "deepspeed", "fp16", Precision.BF16_TRUE),
])
def test_a_precision_that_names_a_16_bit_type_is_the_stacks_switch_for_it(
        method: str, framework: str, written: str, read: Precision) -> None:
    row = ROW.replace(",lora,bf16-true,", f",{method},{written},").replace(",litgpt,",
                                                                          f",{framework},")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.precision is read and case.readings == (Reading.PRECISION_OF_STACK,)


@pytest.mark.parametrize(("cells", "column", "value"), [
    ({",1,a100-40gb,none,": ",1,a100-40gb,none (1 GPU),"}, "sharding", Scheme.NONE),
    ({",none,sdpa,": ",full (every layer),sdpa,"}, "checkpointing", Checkpointing.FULL),
    ({",allocated,": ",reserved (peak),"}, "metric", Metric.RESERVED),
])
def test_a_remark_that_names_nothing_is_left_unread_and_said(cells: dict[str, str],
                                                            column: str, value: object) -> None:
    row = ROW
    for old, new in cells.items():
        row = row.replace(old, new)
    (case,) = read_cases("\n".join((HEADER, row)))
    assert getattr(case, column) == value and case.readings == (Reading.REMARK_NOT_READ,)


@pytest.mark.parametrize("written", ["Peak Memory", "VRAM", "gpu_memory", "Peak Memory (MB)"])
def test_a_metric_naming_no_counter_is_the_empty_cell(written: str) -> None:
    """"Peak memory" says GPU memory was read, not which counter: the framework's, as empty."""
    (empty,) = read_cases("\n".join((HEADER, ROW.replace(",allocated,", ",,"))))
    (said,) = read_cases("\n".join((HEADER, ROW.replace(",allocated,", f",{written},"))))
    assert said.metric is empty.metric
    assert said.readings == ((Reading.REMARK_NOT_READ,) if "(" in written else ())


@pytest.mark.parametrize("written", ["speedy (flashy)", "sdpa (flash", "sdpa (flash) (x)"])
def test_a_value_no_reading_of_which_names_a_value_is_refused(written: str) -> None:
    """Neither the words, the remark nor what is outside it names an attention; a parenthesis
    left open, or two remarks, are not a remark."""
    report = parse_cases("\n".join((HEADER, ROW.replace(",sdpa,", f",{written},"))))
    assert not report.cases and len(report.unread) == 1


@pytest.mark.parametrize("written", ["default", "n/a", "-", "unknown"])
def test_a_cell_saying_not_stated_is_the_empty_cell(written: str) -> None:
    empty = ROW.replace(",sdpa,,1,", ",,,1,").replace(",none,litgpt,", ",,litgpt,")
    said = ROW.replace(",sdpa,,1,", f",{written},{written},1,").replace(
        ",none,litgpt,", f",{written},litgpt,")
    (expected,) = read_cases("\n".join((HEADER, empty)))
    (case,) = read_cases("\n".join((HEADER, said)))
    assert (case.attention, case.loss, case.offload) == \
        (expected.attention, expected.loss, expected.offload)


@pytest.mark.parametrize("written", ["4bit", "load_in_4bit", "bnb-4bit"])
def test_4_bits_without_their_type_are_the_frameworks_4_bit_storage(written: str) -> None:
    row = ROW.replace(",lora,bf16-true,adamw,,none,", f",qlora,bf16-true,adamw,,{written},")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.quant is Quant.NF4 and case.readings == (Reading.QUANT_DEFAULT,)
    (lora,) = read_cases("\n".join((HEADER, ROW.replace(",none,8,", f",{written},8,"))))
    assert (lora.method, lora.quant) == (Method.QLORA, Quant.NF4)


@pytest.mark.parametrize("written", ["vllm", "vLLM", "llama.cpp", "llamacpp"])
def test_an_inference_engine_in_the_framework_cell_is_that_engine(written: str) -> None:
    row = ROW.replace(",lora,bf16-true,adamw,,none,8,q;v,1,1304,,none,",
                      ",inference,bf16-true,none,,none,,,1,128,64,none,").replace(
                          ",litgpt,", f",{written},")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.engine is member_named(Engine, written) and case.readings == ()
    training = ROW.replace(",litgpt,", f",{written},")
    (trained,) = read_cases("\n".join((HEADER, training)))
    assert trained.engine is None and trained.readings == (Reading.UNKNOWN_FRAMEWORK,)


def test_a_vllm_row_is_estimated_as_vllm_whether_its_cell_or_its_notes_say_so() -> None:
    row = ROW.replace(",lora,bf16-true,adamw,,none,8,q;v,1,1304,,none,",
                      ",inference,bf16-true,none,,none,,,1,128,64,none,").replace(
                          ",allocated,", ",device,")
    (by_cell,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",vllm,"))))
    (by_notes,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", ",,") + "served by vLLM")))
    assert score_case(by_cell).estimate_bytes == score_case(by_notes).estimate_bytes
    assert score_case(by_cell).estimate_bytes != score_case(
        read_cases("\n".join((HEADER, row.replace(",litgpt,", ",,"))))[0]).estimate_bytes


def test_fsdp2_in_the_sharding_cell_is_fsdp_run_as_fsdp2() -> None:
    row = ROW.replace(",1,a100-40gb,none,", ",2,a100-40gb,fsdp2,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.sharding is Scheme.FSDP and fsdp_version(case) is FsdpVersion.FSDP2
    (plain,) = read_cases("\n".join((HEADER, row.replace(",fsdp2,", ",fsdp,"))))
    assert fsdp_version(plain) is None  # the framework's default


def test_lora_on_a_quantized_base_is_estimated_as_qlora_with_that_storage() -> None:
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",none,8,", ",int8,8,"))))
    assert (case.method, case.quant) == (Method.QLORA, Quant.INT8)
    assert case.readings == (Reading.LORA_ON_QUANTIZED,)
    (qlora,) = read_cases("\n".join((HEADER, ROW.replace(",lora,", ",qlora,"))))  # quant none
    assert qlora.quant is not Quant.NONE and qlora.readings == (Reading.QLORA_UNQUANTIZED,)


def test_units_are_read_in_any_case_but_mb_is_not_mib() -> None:
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",GB,", ",gib,"))))
    assert case.measured_bytes == round(21.30 * 2**30)
    with pytest.raises(CaseValueError, match="unit"):
        read_cases("\n".join((HEADER, ROW.replace(",GB,", ",MB,"))))


@pytest.mark.parametrize(("framework", "notes", "in_function"), [
    ("deepspeed", "pl.Trainer(strategy=DeepSpeedStrategy(stage=3)), PyTorch Lightning", True),
    ("generic", "Lightning training_step returns the loss", True),
    ("generic", "weights from Lightning-AI's checkpoint", False),  # the organization
    ("deepspeed", "DeepSpeed-Chat main.py", False),
    ("hf", "Lightning", False),  # the Trainer keeps no outputs anyway
])
def test_a_lightning_loop_keeps_no_outputs(framework: str, notes: str,
                                           in_function: bool) -> None:
    row = ROW.replace("none,none,litgpt", f"none,none,{framework}") + f'"{notes}"'
    case = read_cases("\n".join((HEADER, row)))[0]
    assert training_setup_of(case).loss_in_function is in_function


INFERENCE_ROW = ("i1,src,llama-2-7b,inference,bf16-true,none,,none,,,1,128,128,,sdpa,,1,"
                 "a100-80gb,,,hf,device,70,GB,")


@pytest.mark.parametrize(("notes", "share"), [
    ("served with vLLM", 0.9),  # vLLM's default gpu_memory_utilization
    ("vllm serve --gpu-memory-utilization 0.5", 0.5),
    ("vLLM; gpu_memory_utilization=0.95", 0.95),
])
def test_a_vllm_row_holds_its_share_of_the_card(notes: str, share: float) -> None:
    (plain,) = score_cases(read_cases("\n".join((HEADER, INFERENCE_ROW)))).scores
    assert plain.estimate_bytes is not None and plain.estimate_bytes < 20e9  # weights + KV
    (case,) = read_cases("\n".join((HEADER, INFERENCE_ROW + notes)))
    (score,) = score_cases((case,)).scores
    # vllm/v1/worker/gpu_worker.py: requested_memory = total_memory * gpu_memory_utilization,
    # `total_memory` CUDA's (79.15 GiB of the A100 80GB's 80)
    assert score.estimate_bytes == round(share * 81_050 * 2**20)
    (allocated,) = score_cases(read_cases("\n".join(
        (HEADER, INFERENCE_ROW.replace(",device,", ",allocated,") + notes)))).scores
    assert allocated.estimate_bytes == round(share * 81_050 * 2**20) - CUDA_CONTEXT_BYTES


@pytest.mark.parametrize("notes", [
    "not vLLM: transformers' generate",
    "without vLLM",
    "the vLLM tables give no memory figure",
    "vLLM's figures are in another table",
])
def test_a_row_that_only_mentions_vllm_is_not_a_vllm_row(notes: str) -> None:
    (plain,) = score_cases(read_cases("\n".join((HEADER, INFERENCE_ROW)))).scores
    (case,) = read_cases("\n".join((HEADER, INFERENCE_ROW + f'"{notes}"')))
    (score,) = score_cases((case,)).scores
    assert score.estimate_bytes == plain.estimate_bytes


@pytest.mark.parametrize(("notes", "warmed"), [
    ("from_pretrained(device_map='auto'), transformers of 2025-05-01", True),
    ("from_pretrained(device_map='auto'), transformers of 2025-08-01", False),  # v4.54: skipped
    ("model.to('cuda'), transformers of 2025-05-01", False),  # no device_map: no warm-up
])
def test_a_tied_head_counted_twice_by_transformers_warm_up_stays_reserved(
        notes: str, warmed: bool) -> None:
    """transformers v4.50-v4.53 warmed the allocator up with every state_dict entry's bytes, a
    tied head's twice: after loading, the tied matrix's bytes stay reserved."""
    row = INFERENCE_ROW.replace("llama-2-7b", "qwen2.5-0.5b").replace(",device,", ",reserved,")
    (case,) = read_cases("\n".join((HEADER, row + f'"{notes}"')))
    (score,) = score_cases((case,)).scores
    arch = architecture_of(find_model("qwen2.5-0.5b"))
    assert arch.tied_embeddings
    weights = 2 * arch.params_total
    expected = weights + 2 * arch.params_token_embedding if warmed else None
    if expected is not None:
        assert score.estimate_bytes == expected
    else:
        assert score.estimate_bytes is not None and score.estimate_bytes < weights + 2 * \
            arch.params_token_embedding


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_cli_json_has_the_documented_shape(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("\n".join((HEADER, ROW)) + "\n", encoding="utf-8")
    status, out, err = run("validate", str(path), "--json")
    assert (status, err) == (0, "")
    payload = json.loads(out)
    assert set(payload["summary"]) >= {"rows_scored", "median_abs_error_pct", "p90_abs_error_pct",
                                       "max_abs_error_pct", "within_10pct_share", "oom_right",
                                       "oom_total"}
    row = payload["rows"][0]
    assert set(row) >= {"id", "estimate_bytes", "measured_bytes", "error_pct", "oom_right"}
    assert row["measured_bytes"] == 21_300_000_000
    assert abs(row["error_pct"]) < 2


def test_cli_text_in_french_and_a_bad_row_is_listed_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("\n".join((HEADER, ROW)) + "\n", encoding="utf-8")
    status, out, _ = run("validate", str(path), "--lang", "fr")
    assert status == 0
    assert "écart absolu médian" in out
    bad = tmp_path / "bad.csv"
    rows = (HEADER, ROW.replace("bf16-true", "bf17"), ROW.replace("t1,", "t2,", 1))
    bad.write_text("\n".join(rows) + "\n", encoding="utf-8")
    status, out, err = run("validate", str(bad), "--lang", "en")
    assert (status, err) == (0, "")
    assert "rows scored: 1" in out
    assert "rows not read, not scored: 1" in out
    assert "row 1 (t1): precision: unknown name 'bf17'" in out
    status, out, _ = run("validate", str(bad), "--json")
    (unread,) = json.loads(out)["summary"]["unread"]
    assert (unread["row"], unread["id"]) == (1, "t1") and "precision" in unread["reason"]


def test_a_bad_header_still_stops_with_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + ",colour\n" + ROW + ",red\n", encoding="utf-8")
    status, _, err = run("validate", str(bad), "--lang", "en")
    assert status == 2
    assert "colour" in err and "Traceback" not in err


def test_cli_lists_skipped_rows_in_the_users_language(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    unknown_model = ROW.replace("llama-2-7b", "llama-9").replace("t1,", "t2,", 1)
    path.write_text("\n".join((HEADER, ROW, unknown_model)) + "\n", encoding="utf-8")
    status, out, err = run("validate", str(path), "--lang", "fr")
    assert (status, err) == (0, "")
    assert "lignes non modélisées : 1" in out
    assert "t2: model : « llama-9 » n'est ni un modèle du catalogue" in out
    status, out, _ = run("validate", str(path), "--json")
    assert status == 0
    assert json.loads(out)["summary"]["skipped"][0]["id"] == "t2"


def test_byte_order_mark_and_crlf_are_accepted() -> None:
    text = "\ufeff" + "\r\n".join((HEADER, ROW)) + "\r\n"
    (case,) = read_cases(text)
    assert (case.id, case.measured_bytes) == ("t1", 21_300_000_000)


def test_unreadable_file_exits_2_with_a_message(tmp_path: Path) -> None:
    status, _, err = run("validate", str(tmp_path / "missing.csv"), "--lang", "fr")
    assert status == 2
    assert "missing.csv" in err and "n'existe pas" in err


def test_the_projects_own_runs_are_all_read_estimated_and_sourced() -> None:
    text = shipped_cases("cases_vramplan.csv")
    assert text.splitlines()[0] == HEADER + ",policy"  # vramplan's column for RL policies
    parsed = parse_cases(text)
    assert not parsed.unread and len(parsed.cases) >= 40
    assert len({case.id for case in parsed.cases}) == len(parsed.cases)
    assert all(case.source for case in parsed.cases)
    report = score_cases(parsed.cases)
    # every row is estimated: scored, or an OOM row classified (LLaMA-Factory's wiki table)
    assert not report.skipped and report.rows_scored + report.oom_total == len(parsed.cases)
    # every OOM row classified right but four: axolotl PR #2412's SmolLM2-1.7B at 16,384
    # packed tokens without checkpointing, estimated at 70.6 GB on an 80 GB card (unexplained),
    # fms-acceleration's Llama-2-70B QLoRA on 2 GPUs at micro-batch 4, 83.3 GB estimated on an
    # 85.9 GB card (its micro-batch-2 run's nvidia-smi figure is 4 % above the estimate), and
    # lightning-thunder #1261's compiled Gemma 2 27B, 83.6 GB on its 85.9 GB card since the
    # allocator's program keeps the logits its loop holds (86.8 GB before, from the cache of
    # logits the program freed and the analytic model kept). ArcticTraining's Qwen3-32B at
    # 400K tokens on one H100 is classified right since ZeRO-3's coordinator keeps what its
    # prefetches walked past (`sharding.Zero3Coordinator`; 85.1 GB on its 85.9 GB card before).
    # And transformers' SDPA benchmark's GPT-2 large eager at 2 x 1,024 tokens: 15.9 GB
    # estimated where a 16 GB laptop card (written as a 16 GiB card, its usable memory unknown)
    # ran out of memory. And transformers issue #3360's GPT-2 in fp32 on a Colab T4 (4 x 1,024
    # tokens): 14.10 GiB allocated at least (its message), 13.26 GiB estimated; the T4's 14.75
    # GiB (`cuda_total_bytes`) is not reached either way. And torchtitan issue #1789's
    # DeepSeek 16B default config on 8 H100s 80GB: 75.8 GB estimated, 84.9 GB on the card (the
    # same config's measured row, PR #1610 on 96 GB cards, is estimated -9.6 %)
    missed = {s.case.id for s in report.scores if s.oom_right is False}
    assert missed == {
        "pr-axolotl-pr2412-smollm2-1.7b-full-s16384-1xh100-oom",
        "fms-bnb-llama-2-70b-qlora-r16-qkvo-fsdp2-mb4-s4096-oom",
        "thunder-pr1261-gemma-2-27b-full-bf16-fsdp1-zero3-ckpt-compiled-8xh100-b1-s8192-oom",
        "tfdoc-sdpa-gpt2-large-fwdbwd-eager-b2-s1024-oom",
        "hf-tf-i3360-gpt2-full-fp32-t4-b4-s1024-oom",
        "titan-issue1789-deepseek-v2-lite-16b-ep8-fsdp8-mb8-s4096-h100-80gb-oom"}
    assert report.oom_right == report.oom_total - 6
    # what the model reaches on them (docs/memory-model.md): inference within 4 % where the
    # figure is the metric it names (optimum's GPTQ benchmark adds the memory outside the
    # allocator to the allocated peak: below; MeZO's Table 22 gives whole GB at average
    # lengths), torchtitan's dense FSDP2 runs of its eager-loss eras within 10 % but its
    # 64-GPU run, whose length and checkpointing are assumed from the default config (the
    # compiled-loss ones, 1 to 28 % apart, those with tensor parallelism, 5 to 13 % under, and
    # DeepSeek's experts, -14 to -4 %: left open, docs/memory-model.md). Qwen3's speed
    # benchmark is left out too: its figures are the weights plus the whole KV cache within
    # 0.05 GB, with no room for the prefill's MLP intermediates that the same script's Qwen2.5
    # figures hold (docs/open-leads.md)
    inference = ValidationReport(tuple(
        s for s in report.scores if s.model_kind == "inference"
        and not s.case.id.startswith(("blog-optimum-bench-", "paper-mezo-", "qwen3-speed-",
                                      "optimum-ob-"))))
    assert inference.p90_abs_error_pct is not None and inference.p90_abs_error_pct <= 4
    # optimum-benchmark's Vicuna and Mistral reports of 2023-10 read NVML's used memory through
    # py3nvml (the driver's reserve counted) after many generate calls: fp16 up to 4
    # sequences within 2 %, up to 8 within 10 %; at 16 the growing cache's replay is far above
    # Vicuna's; bitsandbytes' rows are about 1 GB under up to 8 sequences, within 15 %
    # (docs/open-leads.md)
    runs = {s.case.id: s.error_pct for s in report.scores if s.case.id.startswith("optimum-ob-")}
    assert len(runs) == 20 and all(error is not None for error in runs.values())
    batch = {case_id: int(re.search(r"-b(\d+)-", case_id)[1]) for case_id in runs}  # type: ignore[index]
    assert all(abs(error or 0) <= 2 for case_id, error in runs.items()
               if "-fp16-" in case_id and batch[case_id] <= 4)
    assert all(abs(error or 0) <= 10 for case_id, error in runs.items()
               if "-fp16-" in case_id and batch[case_id] <= 8)
    assert all(-15 <= (error or 0) < 0 for case_id, error in runs.items()
               if "-bnb-" in case_id and batch[case_id] <= 8)
    assert all(abs(error or 0) <= 15 for case_id, error in runs.items() if "-bnb-" in case_id)
    # optimum's figure is the allocated peak plus NVML's used less the reserved peak
    # (`ALLOCATED_PLUS_OUTSIDE_NOTE`): scored as the allocated estimate plus the modelled CUDA
    # context (500 MiB), it stays under the figure by what optimum-benchmark's A100-80GB
    # reports of 2023 put the memory outside PyTorch at beyond that (about 1.4 GB in all),
    # whatever the batch
    offsets = sorted((s.case.measured_bytes or 0) - (s.estimate_bytes or 0)
                     for s in report.scores if s.case.id.startswith("blog-optimum-bench-"))
    assert len(offsets) == 20 and offsets[0] >= 0.1e9 and offsets[-1] <= 1.1e9
    assert 0.7e9 <= statistics.median(offsets) <= 1.0e9
    titan = [s for s in report.scores if s.case.framework.value == "torchtitan"
             and s.error_pct is not None and model_parallel(s.case).tensor == 1
             and not architecture_of(find_model(s.case.model)).is_moe
             and not (compiled(s.case) and torchtitan_code(code_date(s.case)).compiles_loss)]
    assert len(titan) >= 15
    # and PR #382's compiled run at micro-batch 2 (+13 %, unexplained: its reserved figure is
    # 4.8 GiB above the allocated estimate, where the replay adds 13.8; docs/open-leads.md)
    assert {s.case.id for s in titan if abs(s.error_pct or 100) > 10} == {
        "pr-titan-pr1881-llama-3.1-8b-fsdp64-mb1-s8192-fsdp2",
        "titan-pr382-llama-3-8b-fsdp8-h100-mb2-s8192-compile-fused-main"}
    # supervised runs (median 7.8 % since the ms-swift ZeRO-3, axolotl FSDP2, TRL and
    # LLaMA-Factory rows of 2026-08, 3.9 % on the 45 before); the preference and RL rows
    # (ms-swift's example headers, a TRL notebook; lengths unknown, estimated as lower bounds)
    # are scored but not held to it
    supervised = ValidationReport(tuple(s for s in report.scores
                                        if not s.case.method.is_alignment))
    assert supervised.median_abs_error_pct is not None and supervised.median_abs_error_pct <= 8
    assert any(s.case.method.is_alignment for s in report.scores)


def test_both_shipped_files_are_named() -> None:
    assert SHIPPED_CASE_FILES == ("cases.csv", "cases_vramplan.csv")
    assert shipped_cases("cases.csv") == CASES
    with pytest.raises(UnknownName):
        shipped_cases("other.csv")


@pytest.mark.parametrize(("framework", "notes", "read_as"), [
    ("hf", "Unsloth 2024.5, FastLanguageModel", Framework.UNSLOTH),
    ("generic", "LoRA r128, Unsloth kernels", Framework.UNSLOTH),
    ("llamafactory", "LoRA r128, Unsloth kernels", Framework.LLAMAFACTORY),
    ("hf", "vanilla HF", Framework.HF),
    ("hf", "vanilla HF, without Unsloth", Framework.HF),
])
def test_a_row_whose_notes_name_unsloth_is_read_as_unsloths(framework: str, notes: str,
                                                            read_as: Framework) -> None:
    """The format's frameworks cannot say Unsloth: a `hf` or `generic` row whose notes name it
    gets Unsloth's defaults and kernels (`vramplan.presets.frameworks`)."""
    row = ROW.replace(",litgpt,", f",{framework},") + f'"{notes}"'
    assert read_cases("\n".join((HEADER, row)))[0].framework is read_as


@pytest.mark.parametrize(("framework", "source", "notes", "read_as"), [
    ("generic", "src", "torchtitan llama3_8b.toml, FSDP2", Framework.TORCHTITAN),
    ("hf", "pytorch/torchtitan PR #996", "the PR's baseline run", Framework.TORCHTITAN),
    ("generic", "src", "a plain loop, not torchtitan", Framework.GENERIC),
    ("torchtune", "src", "compared with torchtitan's", Framework.TORCHTUNE),
    ("generic", "src", "Unsloth; torchtitan's loss", Framework.UNSLOTH),
])
def test_a_row_that_names_torchtitan_is_read_as_torchtitans(framework: str, source: str,
                                                            notes: str,
                                                            read_as: Framework) -> None:
    """The format's frameworks cannot say torchtitan: a `hf` or `generic` row whose notes or
    source name it gets torchtitan's model code, FSDP2 and checkpointing (written `generic`,
    a torchtitan run was read as transformers' code under FSDP1, about twice its memory)."""
    row = ROW.replace(",src,", f",{source},").replace(",litgpt,", f",{framework},") \
        + f'"{notes}"'
    assert read_cases("\n".join((HEADER, row)))[0].framework is read_as


def test_a_torchtitan_run_written_generic_is_estimated_as_torchtitans() -> None:
    """One of torchtitan's logged runs (the case file's PR #996 baseline) written with the
    format's `generic` and an empty metric: the same estimate and metric as with `torchtitan`."""
    (titan,) = [line for line in shipped_cases("cases_vramplan.csv").splitlines()
                if line.startswith("titan-pr996-llama-3-8b-fsdp8-mb1-s8192-baseline,")]
    generic = titan.replace(",torchtitan,reserved,", ",generic,,")
    assert generic != titan
    header = shipped_cases("cases_vramplan.csv").splitlines()[0]
    as_titan, as_generic = (score_cases(read_cases("\n".join((header, row)))).scores[0]
                            for row in (titan, generic))
    assert as_generic.case.metric is Metric.RESERVED
    assert as_generic.estimate_bytes == as_titan.estimate_bytes
    measured = as_generic.case.measured_bytes
    assert as_generic.estimate_bytes is not None and measured is not None
    assert abs(as_generic.estimate_bytes / measured - 1) < 0.05


@pytest.mark.parametrize(("framework", "notes", "metric"), [
    ("torchtitan", "", Metric.RESERVED),  # its `memory:` log line is max_memory_reserved
    ("unsloth", "", Metric.RESERVED),  # its notebooks print max_memory_reserved
    ("litgpt", "", Metric.ALLOCATED),  # `Memory used`: max_memory_allocated
    ("hf", "", Metric.ALLOCATED),
    # Unsloth's kernels under another stack's harness: that stack printed the figure
    ("hf", "LoRA r128, Unsloth kernels", Metric.ALLOCATED),
])
def test_an_empty_metric_is_what_the_stack_prints(framework: str, notes: str,
                                                  metric: Metric) -> None:
    """The format reads an empty cell as the framework's default: for `metric`, the peak the
    stack named in the row prints by itself (`FrameworkDefaults.reported_metric`)."""
    row = ROW.replace(",litgpt,allocated,", f",{framework},,") + f'"{notes}"'
    assert f",{framework},,21.30,GB," in row  # the metric cell is empty
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.metric is metric


# --- any row in the format is read and estimated -------------------------------------------------

_CELLS = {
    "model": ["llama-2-7b", "mixtral-8x7b", "gpt2", "qwen3-30b-a3b", "gemma-2-9b", "falcon-7b",
              "opt-1.3b", "bloom-560m", "gpt-neo-125m", "deepseek-v3", "gpt-oss-20b"],
    "precision": ["mixed", "amp", "bf16-true", "fp32", ""],
    "optimizer": ["adamw", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd-momentum", "sgd",
                  "adafactor", ""],
    "optimizer_impl": ["foreach", "fused", "for-loop", "in-backward", ""],
    "lora_r": ["", "8"], "lora_targets": ["", "q;v", "all;head"],
    "batch": ["1", "4"], "seq_len": ["", "512", "4096"],
    "checkpointing": ["none", "full", "selective", ""], "attention": ["eager", "sdpa", "flash", ""],
    "loss": ["standard", "chunked", ""], "gpus": ["1", "2", "8"],
    "gpu": ["a100-80gb", "rtx-4090-24gb", "rtx-3080", ""],
    "framework": ["hf", "litgpt", "torchtune", "torchtitan", "deepspeed", "megatron", "generic",
                  "axolotl", "llamafactory", "unsloth", "accelerate", "colossalai", ""],
    "metric": ["allocated", "reserved", "device"],
}
_SHARDED_OFFLOAD = [("none", "none"), ("ddp", "none"), ("zero1", "none"), ("zero2", "optimizer"),
                    ("zero3", "params-optimizer"), ("fsdp", "none"), ("fsdp", "params-optimizer"),
                    ("fsdp-grad-op", "none"), ("", "none"), ("zero3", "activations")]


@st.composite
def _case_rows(draw: st.DrawFn) -> str:
    cells = {column: draw(st.sampled_from(values)) for column, values in _CELLS.items()}
    method = draw(st.sampled_from(["full", "lora", "qlora", "freeze", "inference"]))
    quant = draw(st.sampled_from(["none", "nf4", "nf4-dq", "int8", ""])) \
        if method in ("lora", "qlora", "inference") else "none"
    sharding, offload = draw(st.sampled_from(_SHARDED_OFFLOAD))
    values = {**cells, "id": "r", "source": "s", "method": method, "quant": quant,
              "new_tokens": "64" if method == "inference" else "", "sharding": sharding,
              "offload": offload, "measured": "10", "unit": "GB", "notes": ""}
    return ",".join(values[column] for column in HEADER.split(","))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(_case_rows())
def test_any_plausible_row_in_the_format_is_read_and_estimated(row: str) -> None:
    """The format's whole vocabulary, as a held-out row may combine it: read without error,
    scored (never skipped), with a positive estimate."""
    parsed = parse_cases("\n".join((HEADER, row)))
    assert not parsed.unread, parsed.unread[0].reason
    (score,) = score_cases(parsed.cases).scores
    assert score.outcome is Outcome.SCORED, score.skip_reason
    assert score.estimate_bytes is not None and 0 < score.estimate_bytes < 10**15


@pytest.mark.parametrize(("framework", "offload", "scheme"), [
    ("deepspeed", "optimizer", Scheme.ZERO2),  # ZeRO-Offload, on one GPU too
    ("hf", "params-optimizer", Scheme.ZERO3),
    ("torchtune", "params-optimizer", Scheme.FSDP),  # its scheme is FSDP: its CPU offload
])
def test_an_offload_without_a_sharding_takes_the_scheme_it_needs(
        framework: str, offload: str, scheme: Scheme) -> None:
    row = ROW.replace(",1,a100-40gb,none,none,litgpt,", f",1,a100-40gb,,{offload},{framework},")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.sharding is scheme
    (score,) = score_cases((case,)).scores
    assert score.outcome is Outcome.SCORED  # not skipped as a conflict


@pytest.mark.parametrize(("notes", "gpu", "metric", "added"), [
    ("NVML used read by py3nvml after the call", "a100-80gb", "device", 904_200_000),
    ("py3nvml", "a10-24gb", "device", 541_917_184),
    ("nvidia-smi memory.used", "a100-80gb", "device", 0),
    ("not py3nvml: nvidia-smi", "a100-80gb", "device", 0),
    ("py3nvml", "h100-80gb", "device", 0),  # no published reserve for the card
    ("py3nvml", "a100-80gb", "reserved", 0),
])
def test_an_nvml_v1_reader_counts_the_drivers_reserve(notes: str, gpu: str, metric: str,
                                                      added: int) -> None:
    """py3nvml's `nvmlDeviceGetMemoryInfo` fills NVML's first `nvmlMemory_t`, whose used memory
    counts what the driver reserves on the card (optimum-benchmark issue #31: "py3nvml measures
    reserved and not used memory"); nvidia-smi's used memory (R510 and later) leaves it out.
    Idle cards: 912 MB used through v1 and 7.8 MB through v2 on A100s (rust-nvml/nvml-wrapper
    issue #57); 541,917,184 bytes on an A10 with driver 535.129.03 (mayooot/detect-gpu
    issue #3)."""
    row = (f"t1,src,vicuna-7b-v1.5,inference,bf16-true,none,,none,,,1,128,256,none,eager,,1,"
           f"{gpu},none,none,hf,{metric},15.55,GB,")
    plain, = read_cases(f"{HEADER}\n{row}\n")
    read = replace(plain, notes=notes)
    assert score_case(plain).estimate_bytes is not None
    assert score_case(read).estimate_bytes == score_case(plain).estimate_bytes + added


def test_a_card_has_free_at_load_all_that_cuda_hands_out_but_the_context() -> None:
    """`torch.cuda.mem_get_info` counts from `cudaMemGetInfo`'s total, the card less ECC's
    share and the driver's reserve: PyTorch gives an A100 80GB "a total capacity of 79.15 GiB",
    912.7 MB under the 81,920 MiB nvidia-smi shows, a T4 14.75 GiB of its 16; a card without a
    published figure keeps its capacity less the driver's reserve, where that is published."""
    from vramplan.presets.cuda import DRIVER_RESERVE_BYTES, cuda_total_bytes, free_at_load_bytes
    from vramplan.presets.gpus import find_gpu

    a100, t4, v100 = find_gpu("a100-80gb"), find_gpu("t4-16gb"), find_gpu("v100-16gb")
    assert free_at_load_bytes(a100) == cuda_total_bytes(a100) - CUDA_CONTEXT_BYTES
    assert abs(cuda_total_bytes(a100) - 79.15 * 2**30) < 0.01 * 2**30
    # the two published figures of the A100 80GB agree within 10 MB
    assert abs(a100.capacity_bytes - DRIVER_RESERVE_BYTES["a100-80gb"]
               - cuda_total_bytes(a100)) < 10**7
    assert abs(cuda_total_bytes(t4) - 14.75 * 2**30) < 0.01 * 2**30
    assert cuda_total_bytes(v100) == v100.capacity_bytes


def test_an_oom_verdict_counts_what_cuda_hands_out_on_the_card() -> None:
    """An OOM row on a T4 is right once the estimate passes its 14.75 GiB, short of the 16 GiB
    it is sold with (ECC takes a sixteenth of a GDDR data-center card)."""
    from dataclasses import replace

    from vramplan.validation.scoring import CaseScore, Outcome

    row = ("t4,src,gpt2,full,fp32,adamw,for-loop,none,,,4,1024,,none,eager,standard,1,t4-16gb,"
           "none,none,hf,allocated,OOM,GiB,")
    (case,) = read_cases("\n".join((HEADER, row)))
    at = CaseScore(case, Outcome.OOM, device_bytes=round(15.0 * 2**30))
    assert at.oom_right
    assert not replace(at, device_bytes=round(14.5 * 2**30)).oom_right


@pytest.mark.parametrize("written", ["Llama 2 7B (meta-llama/Llama-2-7b-hf)",
                                     "meta-llama/Llama-2-7b-hf (base)"])
def test_a_model_with_a_remark_in_parentheses_is_read_by_the_name_it_gives(written: str) -> None:
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",llama-2-7b,", f",{written},"))))
    assert find_model(case.model).name == "llama-2-7b" and case.readings == ()


@pytest.mark.parametrize(("written", "model"), [
    ("NousResearch/Llama-2-7b-hf", "llama-2-7b"), ("TheBloke/Llama-2-7B-GPTQ", "llama-2-7b")])
def test_a_copy_of_a_known_model_is_read_as_that_model_and_said(written: str, model: str) -> None:
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",llama-2-7b,", f",{written},"))))
    assert case.model == model and case.readings == (Reading.MODEL_COPY,)
    (known,) = read_cases("\n".join((HEADER, ROW.replace(",llama-2-7b,", ",Llama-2-7b-hf,"))))
    assert known.model == "Llama-2-7b-hf" and known.readings == ()


@pytest.mark.parametrize(("cells", "column", "value"), [
    ({",1,1304,": ",1 (x 8 accumulation),1304,"}, "batch", 1),
    ({",1,1304,": ",4 per GPU,1304,"}, "batch", 4),
    ({",1,1304,": ",1,2048 tokens,"}, "seq_len", 2048),
    ({",1,1304,": ",1,8192 (packed),"}, "seq_len", 8192),
    ({",1,1304,": ",1.0,1304.0,"}, "seq_len", 1304),
    ({",8,q;v,": ",16 (alpha 32),q;v,"}, "lora_r", 16),
    ({",,1,a100-40gb,": ",,2 GPUs,a100-40gb,"}, "gpus", 2),
    ({",21.30,GB,": ",~21.3,GB,"}, "measured_bytes", 21_300_000_000),
    ({",21.30,GB,": ",21.3 GiB,,"}, "measured_bytes", round(21.3 * 2**30)),
    ({",21.30,GB,": ",21.3 GB (peak),GB,"}, "measured_bytes", 21_300_000_000),
])
def test_a_number_written_as_in_a_table_is_read(cells: dict[str, str], column: str,
                                                value: int) -> None:
    """What it counts, a remark in parentheses, `~`, a zero decimal; a measured peak with its
    unit, which an empty `unit` cell takes."""
    row = ROW
    for old, new in cells.items():
        assert old in row
        row = row.replace(old, new)
    (case,) = read_cases("\n".join((HEADER, row)))
    assert getattr(case, column) == value


@pytest.mark.parametrize(("old", "new"), [
    (",1,1304,", ",1,2k,"),  # 2,000 or 2,048?
    (",1,1304,", ",2x4,1304,"),
    (",21.30,GB,", ",<24,GB,"),  # a bound, not a measurement
    (",21.30,GB,", ",21.3 GiB,GB,"),  # two units
    (",21.30,GB,", ",21.3 MB,,"),  # 10^6 or 2^20 bytes?
])
def test_a_number_that_says_no_one_value_is_refused(old: str, new: str) -> None:
    assert old in ROW
    report = parse_cases("\n".join((HEADER, ROW.replace(old, new))))
    assert not report.cases and len(report.unread) == 1


def test_a_measured_peak_whose_unit_contradicts_the_unit_cell_says_which_to_keep() -> None:
    report = parse_cases("\n".join((HEADER, ROW.replace(",21.30,GB,", ",21.3 GiB,GB,"))))
    (unread,) = report.unread
    message = str(unread.error)
    assert "21.3 GiB" in message and "(GB)" in message and "keep one unit" in message


@pytest.mark.parametrize(("tokens", "published_mib"), [(1, 23_929), (2001, 24_496)])
def test_an_offloaded_zero2_peaks_on_the_rank_checking_the_embeddings_or_the_head(
        tokens: int, published_mib: int) -> None:
    """Giles Thomas' Llama-3-8B under ZeRO-2 with the optimizer offloaded, 8 GPUs, full
    checkpointing, fp16 (gpjt/fine-tune-2024-04 sequence-length-memory-modeling-8B/
    results-with-no-env-var-but-with-optimizer-offload.csv, active MiB per rank): the ranks
    whose partitions hold the embeddings and the head peak above the others (23,929 and
    23,930 MiB against 20,419 at one token; the head's rank 24,496 at 2,001 tokens), when
    DeepSpeed checks those gradients for overflow. The estimate is the largest rank's, within
    2 % (an upper bound at 2,001 tokens: the phase counts a block's working tensors)."""
    (case,) = [c for c in parse_cases(shipped_cases("cases_vramplan.csv")).cases
               if c.id == "gpjt-llama-3-8b-full-zero2-offload-ckpt-8gpu-fp16-b1-s2001-default-"
               "reserved"]
    score = score_case(replace(case, seq_len=tokens, metric=Metric.ALLOCATED))
    assert score.estimate_bytes is not None
    error = score.estimate_bytes / (published_mib * 2**20) - 1
    assert -0.02 <= error <= 0.02
