"""Each framework's defaults (vramplan.presets.frameworks) and how `vramplan validate` reads a row
that leaves something to them: an unknown framework name, an empty `quant` on a QLoRA row, an empty
`seq_len` on a training row."""

from __future__ import annotations

import dataclasses
from datetime import date
from importlib.resources import files

import pytest

from vramplan.allocator import PYTORCH_DEFAULTS
from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.errors import UnknownName
from vramplan.i18n import Lang, translate
from vramplan.parts import PartKind
from vramplan.presets.cuda import CUDA_CONTEXT_BYTES
from vramplan.presets.frameworks.defaults import (
    ACCELERATE_FSDP2_NO_SYNC_SINCE,
    DEFAULTS,
    accumulate_without_sync,
    default_fsdp_version,
    default_gradient_accumulation,
    default_optimizer_impl,
    framework_defaults,
    read_framework,
)
from vramplan.presets.frameworks.torchtune import torchtune_loop_keeps_logits
from vramplan.presets.gpus import Gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.activations.block import block_saved
from vramplan.training.activations.checkpointing import kept_for_backward, per_op_selective_saved
from vramplan.training.activations.spec import total_per_token
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Phase, TrainingEstimate
from vramplan.training.setup import (
    TrainingSetup,
    autocasts_16bit_weights,
    lora_dropout_active,
    loss_in_16bit,
)
from vramplan.training.specs import block_spec
from vramplan.validation import (
    Outcome,
    Reading,
    case_gpu,
    code_date,
    compiled,
    fsdp_version,
    metric_on_card,
    read_cases,
    score_cases,
    training_setup_of,
)
from vramplan.vocab import (
    Checkpointing,
    Framework,
    FsdpVersion,
    LoraTarget,
    Loss,
    Method,
    Metric,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)

HEADER = files("vramplan").joinpath("data/cases.csv").read_text(encoding="utf-8").splitlines()[0]
ROW = ("t1,src,llama-2-7b,lora,bf16-true,adamw,,none,8,q;v,1,1304,,none,sdpa,,1,a100-40gb,none,"
       "none,litgpt,allocated,21.30,GB,")


def _read(row: str) -> tuple[object, ...]:
    return read_cases("\n".join((HEADER, row)))


def test_every_framework_has_its_defaults_with_a_source() -> None:
    assert set(DEFAULTS) == set(Framework)
    for framework, defaults in DEFAULTS.items():
        assert defaults.framework is framework
        assert defaults.source


@pytest.mark.parametrize("written", ["PEFT + TRL", "transformers and peft", "trl, peft",
                                     "TRL on transformers", "Hugging Face Transformers"])
def test_libraries_named_together_are_the_framework_they_all_run_on(written: str) -> None:
    assert read_framework(written) == read_framework("hf")


@pytest.mark.parametrize("written", ["HF Trainer with DeepSpeed", "peft + colossalai", "peft +"])
def test_libraries_of_different_frameworks_named_together_are_not_guessed(written: str) -> None:
    """transformers' Trainer on DeepSpeed is written `hf` with a ZeRO `sharding` in the shipped
    files, DeepSpeed's own engine `deepspeed`: the two names together do not say which."""
    assert read_framework(written).unknown_name == written


def test_an_unknown_framework_is_read_as_generic_and_said() -> None:
    reading = read_framework(" ColossalAI ")
    assert (reading.framework, reading.unknown_name) == (Framework.GENERIC, "ColossalAI")
    assert read_framework("torchtitan").unknown_name is None
    assert read_framework(" Unsloth ").framework is Framework.UNSLOTH
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",litgpt,", ",colossalai,"))))
    assert case.framework is Framework.GENERIC
    assert case.readings == (Reading.UNKNOWN_FRAMEWORK,)
    (score,) = score_cases((case,)).scores
    assert score.outcome is Outcome.SCORED


@pytest.mark.parametrize(("framework", "quant"), [
    ("hf", Quant.FP4),  # BitsAndBytesConfig: bnb_4bit_quant_type='fp4', no double quant
    ("axolotl", Quant.NF4_DQ),  # axolotl's loader: nf4, bnb_4bit_use_double_quant True
    ("llamafactory", Quant.NF4_DQ),  # QuantizationArguments: nf4, double_quantization True
    ("torchtune", Quant.NF4_DQ),  # torchao NF4Tensor: int8 scalers, one scale per 256
    ("unsloth", Quant.NF4_DQ),  # FastLanguageModel.from_pretrained: nf4, double quant
])
def test_an_empty_quant_on_a_qlora_row_is_the_frameworks_storage(framework: str,
                                                                 quant: Quant) -> None:
    row = ROW.replace(",lora,bf16-true,adamw,,none,", ",qlora,bf16-true,adamw,,,")
    (case,) = read_cases("\n".join((HEADER, row.replace(",litgpt,", f",{framework},"))))
    assert case.quant is quant
    assert Reading.QUANT_DEFAULT in case.readings


def test_an_empty_quant_on_a_row_that_unsloth_loaded_is_unsloths_nf4_with_double_quant() -> None:
    # unsloth/models/llama.py FastLlamaModel.from_pretrained: nf4, bnb_4bit_use_double_quant
    row = ROW.replace(",lora,bf16-true,adamw,,none,", ",qlora,bf16-true,adamw,,,")
    row = row.replace(",litgpt,", ",hf,")
    (case,) = _read(row + '"LoRA r128 on all linear layers, Unsloth kernels (not vanilla HF)"')
    assert case.quant is Quant.NF4_DQ  # type: ignore[attr-defined]
    assert Reading.QUANT_DEFAULT in case.readings  # type: ignore[attr-defined]
    (case,) = _read(row + '"no kernels of its own"')
    assert case.quant is Quant.FP4  # type: ignore[attr-defined]


def test_an_empty_seq_len_is_a_lower_bound_at_one_token() -> None:
    row = ROW.replace(",1,1304,,", ",1,,,")
    (case,) = read_cases("\n".join((HEADER, row)))
    assert case.seq_len is None and Reading.SEQ_LEN_UNKNOWN in case.readings
    (short,) = score_cases((case,)).scores
    (long,) = score_cases(read_cases("\n".join((HEADER, ROW)))).scores
    assert short.estimate_bytes is not None and long.estimate_bytes is not None
    assert short.estimate_bytes < long.estimate_bytes
    assert training_setup_of(case).seq_len == 1


def test_accumulation_defaults_follow_the_recipes() -> None:
    # litgpt's recipes always accumulate; the transformers Trainer's default is 1 micro-batch
    assert default_gradient_accumulation(Framework.LITGPT, Method.FULL)
    assert not default_gradient_accumulation(Framework.HF, Method.FULL)
    assert not default_gradient_accumulation(Framework.TORCHTUNE, Method.FULL)
    (case,) = read_cases("\n".join((HEADER, ROW.replace(",litgpt,", ",hf,"))))
    assert not training_setup_of(case).gradient_accumulation


def test_a_llamafactory_row_without_a_checkpointing_cell_checkpoints_every_block_reentrant(
        ) -> None:
    """LLaMA-Factory enables gradient checkpointing unless `disable_gradient_checkpointing`
    (False by default) and passes `use_reentrant=True` (`use_reentrant_gc`, True by default):
    model/model_utils/checkpointing.py `prepare_model_for_training` @ff6d4d12e. An empty cell
    was read as no checkpointing, every block's activations kept."""
    from vramplan.training.setup import checkpoints_reentrant

    row = ROW.replace(",litgpt,", ",llamafactory,")
    cells = row.split(",")
    cells[13] = ""  # checkpointing: the framework's
    (case,) = read_cases("\n".join((HEADER, ",".join(cells))))
    setup = training_setup_of(case)
    assert setup.checkpointing is Checkpointing.FULL
    assert checkpoints_reentrant(setup)
    hf = training_setup_of(read_cases("\n".join((HEADER, ",".join(cells).replace(
        ",llamafactory,", ",hf,"))))[0])
    assert hf.checkpointing is Checkpointing.NONE


@pytest.mark.parametrize(("framework", "rank", "every_linear"), [
    ("unsloth", 16, True),  # get_peft_model(r = 16, target_modules = the 7 projections)
    ("llamafactory", 8, True),  # LoraArguments: lora_rank 8, lora_target "all"
    ("hf", 8, False),  # peft's LoraConfig: r 8, q_proj and v_proj for Llama-style models
])
def test_a_lora_row_without_rank_or_targets_gets_its_frameworks(framework: str, rank: int,
                                                                every_linear: bool) -> None:
    from vramplan.training.setup import lora_rank_of, lora_targets_of
    from vramplan.vocab import BLOCK_TARGETS, LoraTarget

    cells = ROW.replace(",litgpt,", f",{framework},").split(",")
    cells[8] = cells[9] = ""  # lora_r, lora_targets: the framework's
    (case,) = read_cases("\n".join((HEADER, ",".join(cells))))
    setup = training_setup_of(case)
    assert lora_rank_of(setup) == rank
    assert lora_targets_of(setup) == (BLOCK_TARGETS if every_linear
                                      else {LoraTarget.Q, LoraTarget.V})
    arch = architecture_of(find_model("llama-2-7b"))
    named = dataclasses.replace(setup, lora_rank=rank, lora_targets=lora_targets_of(setup))
    assert estimate_training(arch, setup).allocated_bytes \
        == estimate_training(arch, named).allocated_bytes


@pytest.mark.parametrize(("framework", "rank", "targets"), [
    ("unsloth", 16, ["down", "gate", "k", "o", "q", "up", "v"]),
    ("llamafactory", 8, ["down", "gate", "k", "o", "q", "up", "v"]),
    ("hf", 8, ["q", "v"]),
])
def test_a_fit_without_lora_settings_takes_its_frameworks_and_says_which(
        framework: str, rank: int, targets: list[str]) -> None:
    """The CLI, the API and the library take the framework's LoRA rank and modules when none
    is given, and the JSON says the ones estimated; given ones stand."""
    import vramplan
    from vramplan.serialize import fit_to_json

    asked = {"model": "llama-3.1-8b", "gpu": "a100-80gb", "method": "qlora",
             "framework": framework, "batch": 1, "seq_len": 1024}
    out = fit_to_json(vramplan.fit(**asked).value)
    assert (out["setup"]["lora_r"], out["lora_targets"]) == (rank, targets)
    given = fit_to_json(vramplan.fit(**asked, lora_r=4, lora_targets="q,k").value)
    assert (given["setup"]["lora_r"], given["lora_targets"]) == (4, ["k", "q"])


def test_torchtune_steps_adamw_fused_by_default() -> None:
    assert framework_defaults(Framework.TORCHTUNE).optimizer_impl is OptimizerImpl.FUSED
    # a loop of one's own builds torch.optim.AdamW: foreach on CUDA, whatever the date
    for framework in (Framework.ACCELERATE, Framework.GENERIC):
        assert default_optimizer_impl(framework, None) is OptimizerImpl.FOREACH
        assert default_optimizer_impl(framework, date(2024, 1, 1)) is OptimizerImpl.FOREACH
    # axolotl sets adamw_torch_fused itself
    assert default_optimizer_impl(Framework.AXOLOTL, date(2025, 3, 1)) is OptimizerImpl.FUSED


@pytest.mark.parametrize(("on", "impl"), [
    # transformers v4.31.0's default "adamw_hf" loops over the parameters; v4.32.0 (2023-08-21)
    # switched to torch's AdamW (foreach); v4.54.0 with PyTorch 2.8 (2025-08-06) to the fused one
    (date(2023, 8, 20), OptimizerImpl.FOR_LOOP), (date(2023, 8, 21), OptimizerImpl.FOREACH),
    (date(2025, 8, 5), OptimizerImpl.FOREACH), (date(2025, 8, 6), OptimizerImpl.FUSED),
    (None, OptimizerImpl.FUSED)])
def test_the_trainers_adamw_follows_transformers_default_optim(
        on: date | None, impl: OptimizerImpl) -> None:
    for framework in (Framework.HF, Framework.LLAMAFACTORY, Framework.UNSLOTH):
        assert default_optimizer_impl(framework, on) is impl


def test_a_dated_hf_row_steps_as_the_trainer_did_then() -> None:
    """Llama-2-7B full fine-tuning in bf16 with the Trainer: in 2024 torch's foreach AdamW makes
    one state-sized temporary for every parameter at once (2 bytes each in bf16); today's fused
    kernel makes none; a row that names its implementation keeps it."""
    arch = architecture_of(find_model("llama-2-7b"))
    row = ROW.replace(",lora,", ",full,").replace(",8,q;v,", ",,,").replace(",litgpt,", ",hf,")

    def step_temporaries(csv_row: str) -> int:
        (case,) = read_cases("\n".join((HEADER, csv_row)))
        step = next(p for p in estimate_training(arch, training_setup_of(case)).phases
                    if p.phase is Phase.OPTIMIZER_STEP)
        return sum(p.memory_bytes for p in step.parts if p.kind is PartKind.STEP_TEMPORARIES)

    assert step_temporaries(row) == 0
    assert step_temporaries(row + "run of 2024-05-02") == 2 * arch.params_total
    assert step_temporaries(row.replace(",adamw,,", ",adamw,fused,") + "run of 2024-05-02") == 0


@pytest.mark.parametrize("reading", list(Reading))
def test_every_reading_is_said_in_both_languages(reading: Reading) -> None:
    for lang in Lang:
        assert translate(f"reading.{reading.value}", lang)


# --- what the case notes say ------------------------------------------------------------------

@pytest.mark.parametrize(("notes", "expected"), [
    ("packed 4096, compile, chunked CE", True),
    ("+ packed, + torch.compile", True),
    ("compile off; Llama 3.2 3B", False),
    ("no compile", False),
    ("compile=False", False),
    ("eager (no thunder) row", False),
])
def test_notes_that_say_torch_compile(notes: str, expected: bool) -> None:
    (case,) = _read(ROW + f'"{notes}"')
    assert compiled(case) is expected  # type: ignore[arg-type]
    assert training_setup_of(case).compiled is expected  # type: ignore[arg-type]


def test_notes_on_accumulation_and_empty_cache() -> None:
    no = ROW.replace(",litgpt,", ",litgpt,") + '"global batch 32 (no grad accumulation)"'
    (case,) = _read(no)
    assert not training_setup_of(case).gradient_accumulation  # type: ignore[arg-type]
    yes = ROW.replace(",litgpt,", ",hf,") + '"global batch 128 via gradient accumulation"'
    (case,) = _read(yes)
    assert training_setup_of(case).gradient_accumulation  # type: ignore[arg-type]
    cache = ROW + '"memory_reserved sampled after each step (empty_cache every 10 steps)"'
    (case,) = _read(cache)
    assert training_setup_of(case).empty_cache_between_steps  # type: ignore[arg-type]


FREEZE_ROW = ("t1,src,llama-2-7b,freeze,bf16-true,adamw-8bit,,none,,,1,512,,full,flash,,1,"
              "a100-40gb,none,none,hf,,15.69,GB,")
LLAMA_2_7B_BLOCK = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
"""q, k, v, o; gate, up, down; the two RMSNorm weights (config.json: hidden 4096, intermediate
11008, 32 heads of 128, no GQA)."""


@pytest.mark.parametrize(("framework", "notes", "blocks"), [
    ("hf", "freeze-tuning: last 3 layers trainable", 3),  # LlamaFactory Table 4's notes
    ("hf", "only the last 2 decoder layers train", 2),
    ("hf", "", 1),  # no freeze method of its own: the last block
    ("llamafactory", "", 2),  # FreezeArguments.freeze_trainable_layers = 2
    ("llamafactory", "last 4 blocks", 4),
])
def test_a_freeze_row_trains_the_blocks_its_notes_say(framework: str, notes: str,
                                                      blocks: int) -> None:
    (case,) = _read(FREEZE_ROW.replace(",hf,", f",{framework},") + f'"{notes}"')
    setup = training_setup_of(case)  # type: ignore[arg-type]
    assert setup.train_layers == blocks
    estimate = estimate_training(architecture_of(find_model("llama-2-7b")), setup)
    assert estimate.states.trainable_params == blocks * LLAMA_2_7B_BLOCK


def test_a_request_without_train_layers_takes_the_frameworks_blocks() -> None:
    from vramplan.requests.reading import read
    from vramplan.requests.training import training_setup
    from vramplan.requests.vocabulary import FIT

    def blocks(**fields: object) -> int:
        inputs = read(FIT, {"model": "llama-2-7b", "gpu": "a100-40gb", "method": "freeze",
                            **fields}, text=False)
        return training_setup(inputs).train_layers

    assert framework_defaults(Framework.LLAMAFACTORY).freeze_layers == 2
    assert blocks(framework="llamafactory") == 2
    assert blocks(framework="hf") == 1
    assert blocks(framework="llamafactory", train_layers=5) == 5


@pytest.mark.parametrize(("notes", "expected"), [
    ("QLoRA via bnb Linear4bit(quant_type nf4, quant_storage bf16)", True),  # Answer.AI rows
    ("4-bit nf4 + nested quant, compute bf16, bnb_4bit_quant_storage bf16", True),
    ("NF4 + double quant with bf16 quant storage; compute bf16", True),
    ("bnb_4bit_quant_storage=torch.bfloat16", True),
    ("4-bit bitsandbytes, quant type/double quant not stated", False),
])
def test_notes_that_say_the_4bit_storage_is_a_float(notes: str, expected: bool) -> None:
    row = ROW.replace(",lora,bf16-true,adamw,,none,", ",qlora,bf16-true,adamw,,nf4,")
    (case,) = _read(row.replace(",litgpt,", ",hf,") + f'"{notes}"')
    setup = training_setup_of(case)  # type: ignore[arg-type]
    assert setup.float_quant_storage is expected
    # peft's adapters: fp32 on a uint8 storage, before peft v0.12.0 the base's bf16 on a float
    # one (since, fp32 on both)
    early = dataclasses.replace(setup, code_date=date(2024, 7, 1))
    states = estimate_training(architecture_of(find_model("llama-2-7b")), early).states
    assert states.trainable_weight_bytes == (2 if expected else 4) * states.trainable_params
    today = estimate_training(architecture_of(find_model("llama-2-7b")), setup).states
    assert today.trainable_weight_bytes == 4 * today.trainable_params


def test_reserved_never_exceeds_the_card_when_the_tensors_fit() -> None:
    """The allocator frees its cache and retries before it fails (release_cached_blocks)."""
    arch = architecture_of(find_model("llama-2-7b"))
    estimate = estimate_training(arch, TrainingSetup(batch=2, seq_len=2048,
                                                     precision=Precision.MIXED))
    assert estimate.reserved_bytes - estimate.allocated_bytes > 2**30  # a cache worth clamping
    gib = -(-(estimate.allocated_bytes + CUDA_CONTEXT_BYTES) // 2**30)
    card = Gpu(f"test-{gib}gb", "test", "", gib, source="test")
    room = card.capacity_bytes - CUDA_CONTEXT_BYTES
    assert estimate.allocated_bytes <= room < estimate.reserved_bytes
    assert metric_on_card(estimate, Metric.RESERVED, card) == room
    assert metric_on_card(estimate, Metric.DEVICE, card) == card.capacity_bytes
    assert metric_on_card(estimate, Metric.ALLOCATED, card) == estimate.allocated_bytes
    roomy = Gpu("test-200gb", "test", "", 200, source="test")
    assert metric_on_card(estimate, Metric.RESERVED, roomy) == estimate.reserved_bytes


# --- the frameworks' mechanisms ------------------------------------------------------------------

LLAMA31 = architecture_of(find_model("llama-3.1-8b"))


def test_torchtitan_per_op_selective_checkpointing_keeps_every_other_matmul() -> None:
    """q, v, w1 and w2 outputs (mms 1, 3, 5, 7), SDPA's output and log-sum-exp, the block input
    (torchtitan parallelize_llama.py @9dec370, `_get_custom_policy`)."""
    spec = block_spec(LLAMA31, TrainingSetup(framework=Framework.TORCHTITAN,
                                             precision=Precision.MIXED,
                                             checkpointing=Checkpointing.SELECTIVE))
    kept = per_op_selective_saved(LLAMA31, spec)
    h, q, kv, f, heads = 4096, 4096, 1024, 14336, 32
    assert total_per_token(kept) == 2 * h + 2 * q + 2 * kv + 2 * q + 4 * heads + 2 * f + 2 * h
    everything = block_saved(LLAMA31, spec, 8192)
    assert kept_for_backward(LLAMA31, spec, everything, Checkpointing.SELECTIVE) == kept
    megatron = dataclasses.replace(spec, framework=Framework.MEGATRON)
    assert kept_for_backward(LLAMA31, megatron, everything, Checkpointing.SELECTIVE) != kept
    # compiled, the partitioner stores only what backward reads: not w2's output, which feeds
    # the residual add alone
    compiled_kept = per_op_selective_saved(LLAMA31, dataclasses.replace(spec, compiled=True))
    assert total_per_token(kept) - total_per_token(compiled_kept) == 2 * h


@pytest.mark.parametrize(("day", "reduce_scatter_saved"), [
    (date(2025, 11, 14), True), (None, True),
    # left out of the save list from 247f4e3aa (2025-03-20) until 88d8ab372 (2025-04-21)
    (date(2025, 3, 20), False), (date(2025, 4, 20), False), (date(2025, 4, 21), True),
])
def test_torchtitan_per_op_checkpointing_under_tensor_parallelism_keeps_w2_whole(
        day: date | None, reduce_scatter_saved: bool) -> None:
    """Under tensor parallelism with torchtitan's sequence-parallel norms (`apply_tp` at
    028a455c1), w2's row-parallel mm (mm 7, kept) makes the whole sequence's partial sum at the
    full hidden width on every GPU, and the save list keeps both reduce-scatters' outputs
    (`_c10d_functional.reduce_scatter_tensor`), after wo and after w2, each a sequence share.
    Llama 3.1 8B at tp 2, bytes per token before the split by the degree: the one-GPU 63,616
    (q, v, SDPA's output and log-sum-exp, w1's output, the block input: 2 x 4,096 + 2 x 4,096 +
    2 x 1,024 + 2 x 4,096 + 4 x 32 + 2 x 14,336 + 2 x 4,096), w2's output once more
    (2 x 4,096) and two reduce-scatter outputs (2 x 2 x 4,096): 88,192, 24,576 more, i.e.
    24,576 x 8,192 x 32 / 2 = 3,221,225,472 bytes more per GPU over 32 layers of 8,192 tokens
    split over 2 GPUs. Compiled, wo's reduce-scatter output alone (2 x 4,096) is added to the
    one-GPU 55,424."""
    setup = TrainingSetup(framework=Framework.TORCHTITAN, precision=Precision.MIXED,
                          checkpointing=Checkpointing.SELECTIVE, code_date=day)
    one_gpu = block_spec(LLAMA31, setup)
    spec = block_spec(LLAMA31, dataclasses.replace(setup, tensor_parallel=2))
    assert (spec.tensor_parallel, spec.reduce_scatter_saved) == (2, reduce_scatter_saved)
    h = 4096
    kept = dict((item.name, item.bytes_per_token) for item in per_op_selective_saved(LLAMA31, spec))
    assert kept["w2_mm_out"] == 2 * h * 2
    extra = 2 * h + (2 * 2 * h if reduce_scatter_saved else 0)
    assert sum(kept.values()) == total_per_token(per_op_selective_saved(LLAMA31, one_gpu)) + extra
    if day is None:
        assert sum(kept.values()) == 88_192
    # compiled, the partitioner stores wo's reduce-scatter output, which the mid-block residual
    # needs, not w2's output nor its reduce-scatter's
    compiled = total_per_token(per_op_selective_saved(
        LLAMA31, dataclasses.replace(spec, compiled=True)))
    one_gpu_compiled = total_per_token(per_op_selective_saved(
        LLAMA31, dataclasses.replace(one_gpu, compiled=True)))
    assert compiled - one_gpu_compiled == (2 * h if reduce_scatter_saved else 0)


def test_torchtitan_runs_its_blocks_at_the_tensor_parallel_degree() -> None:
    """`estimate_per_gpu` gives a torchtitan run's blocks its tensor-parallel degree; not
    another framework's, whose selective checkpointing recomputes the attention core (the
    degree changes nothing in it). Llama 3.1 8B at TP 2, 8,192 tokens: the code of 2025-04-21
    keeps the two reduce-scatter outputs that of 2025-04-20 did not, 2 x 2 x 4,096 bytes per
    token and layer before the split, 4,294,967,296 bytes over 32 layers."""
    def single(framework: Framework, day: date) -> TrainingEstimate:
        setup = TrainingSetup(framework=framework, precision=Precision.AMP, batch=1,
                              seq_len=8192, checkpointing=Checkpointing.SELECTIVE, code_date=day)
        plan = default_parallelism(setup, Scheme.FSDP, 8, tensor_parallel=2, on=day)
        return estimate_per_gpu(LLAMA31, setup, plan).single

    after = single(Framework.TORCHTITAN, date(2025, 4, 21))
    before = single(Framework.TORCHTITAN, date(2025, 4, 20))
    assert after.setup.tensor_parallel == 2
    assert after.activations_bytes - before.activations_bytes == 2 * 2 * 4096 * 8192 * 32
    assert single(Framework.HF, date(2025, 4, 21)).setup.tensor_parallel == 1


def test_torchtitan_holds_fp32_shards_and_computes_in_fsdp2s_bf16_copies() -> None:
    """torchtitan's FSDP2 `MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)` over fp32
    parameters: the fp32 shard is the only copy (no bf16 shard, no master), the gathered units
    are bf16, and nothing runs under autocast."""
    assert framework_defaults(Framework.TORCHTITAN).precision is Precision.AMP
    setup = TrainingSetup(framework=Framework.TORCHTITAN, precision=Precision.AMP, batch=1,
                          seq_len=8192, checkpointing=Checkpointing.SELECTIVE)
    plan = default_parallelism(setup, Scheme.FSDP, 8)
    assert plan.params_cast_for_compute
    estimate = estimate_per_gpu(LLAMA31, setup, plan)
    n = LLAMA31.params_total
    parts = {part.kind: part.memory_bytes for part in estimate.peak.parts}
    assert parts[PartKind.WEIGHTS_PER_GPU] == pytest.approx(4 * n / 8, rel=1e-3)
    assert parts.get(PartKind.MASTER_WEIGHTS, 0) == 0
    assert not block_spec(LLAMA31, setup).autocast


def test_a_tensor_parallel_gpus_program_replays_its_share_of_the_activations() -> None:
    """The step program of one tensor-parallel GPU: the micro-batch split by the degree (its
    sequence when the batch does not divide), as the analytic model splits the activations."""
    from vramplan.distributed.defaults import tensor_parallel_share

    setup = TrainingSetup(framework=Framework.TORCHTITAN, batch=32, seq_len=4096)
    assert tensor_parallel_share(setup, 1) is setup
    assert tensor_parallel_share(setup, 8).batch == 4
    odd = dataclasses.replace(setup, batch=2)
    assert (tensor_parallel_share(odd, 8).batch, tensor_parallel_share(odd, 8).seq_len) == (2, 512)


@pytest.mark.parametrize(("day", "capability", "saved"), [
    # flash first everywhere before 3b85aa31f (2025-05-14)
    (date(2025, 5, 13), (10, 0), True),
    # cuDNN first on Blackwell (`has_cuda_capability(10, 0)`), not on Hopper nor on ROCm
    (date(2025, 5, 14), (10, 0), False), (date(2025, 8, 14), (9, 0), True),
    (date(2025, 8, 14), None, True),
    # cuDNN first on every CUDA device from 6a3a9da95 (2025-10-09)
    (date(2025, 10, 9), (9, 0), False), (date(2025, 10, 9), None, True),
    # the save list holds cuDNN's kernel from b39377f9f (2025-12-01)
    (date(2025, 12, 1), (10, 0), True), (None, (9, 0), True),
])
def test_torchtitan_recomputes_cudnn_attention_until_its_save_list_had_it(
        day: date | None, capability: tuple[int, int] | None, saved: bool) -> None:
    """pytorch/torchtitan torchtitan/models/attention.py puts cuDNN's SDPA kernel first
    (`sdpa_kernel(..., set_priority=True)`), and `aten._scaled_dot_product_cudnn_attention` was
    not in the per-op policy's save list until 2025-12-01: backward recomputes the attention,
    whose output and log-sum-exp are not kept. Llama 3.1 8B: 2·4,096 + 4·32 = 8,320 bytes per
    token and layer (2.18 GB over 32 layers at 8,192 tokens; torchtitan #1196's B200 log went
    from 46.39 to 44.59 GiB when cuDNN's kernel was put first)."""
    setup = TrainingSetup(framework=Framework.TORCHTITAN, precision=Precision.AMP,
                          checkpointing=Checkpointing.SELECTIVE, code_date=day,
                          cuda_capability=capability)
    spec = block_spec(LLAMA31, setup)
    assert spec.sdpa_output_saved is saved
    kept = total_per_token(per_op_selective_saved(LLAMA31, spec))
    flash = total_per_token(per_op_selective_saved(
        LLAMA31, dataclasses.replace(spec, sdpa_output_saved=True)))
    assert flash - kept == (0 if saved else 2 * 4096 + 4 * 32)


def test_a_cards_capability_reaches_the_setup_from_the_catalogue_or_its_family() -> None:
    """A row's card sets `cuda_capability` (NVIDIA's table); a card the catalogue lacks takes
    that of the card its name names without its size (`h100-96gb`: an H100)."""
    assert case_gpu("b200-180gb").cuda_capability == (10, 0)
    assert case_gpu("h100-96gb").cuda_capability == (9, 0)
    assert case_gpu("mi300x-192gb").cuda_capability is None
    # the export versions of the A100 and H100, in the catalogue
    assert case_gpu("A800 80GB").cuda_capability == (8, 0)
    assert case_gpu("H800 80GB").cuda_capability == (9, 0)


@pytest.mark.parametrize(("name", "card"), [
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"),  # the catalogue's reading (test_gpu_catalogue.py)
    ("Colab T4", "t4-16gb"),  # the notebook's host
    ("8x A100 80GB", "a100-80gb"),  # a count of cards: the `gpus` cell holds it
    ("2x Tesla V100-SXM2-32GB", "v100-32gb"),
    ("A100 80GB x 8", "a100-80gb"),
    ("4x RTX 4090", "rtx-4090-24gb"),
    ("RTX 3090", "rtx-3090-24gb"),  # the X of RTX counts nothing
    ("A100 (80GB)", "a100-80gb"),  # the size in parentheses, or written 80G
    ("A100-80G", "a100-80gb"),
    ("A10G", "a10g-24gb"), ("1x A10G", "a10g-24gb"),  # its G is not a size
    ("Nvidia A100 (40 GB)", "a100-40gb"),
    ("T4 (Colab)", "t4-16gb"),
    ("8*A100", "a100-80gb"),  # ms-swift's count
    ("4090 x 2", "rtx-4090-24gb"),
    ("3 x 4090", "rtx-4090-24gb"),
])
def test_a_rows_card_is_read_without_brands_form_factors_or_counts(name: str, card: str) -> None:
    """Brands, form factors, memory types, the notebook's host and a count of cards do not tell
    cards apart: the catalogue card is what is left (its size, capability and published driver
    reserve)."""
    assert case_gpu(name).name == card


@pytest.mark.parametrize("name", ["V100", "RTX 3080", "H100 80GB 94GB"])
def test_a_card_name_that_does_not_say_its_size_is_not_guessed(name: str) -> None:
    """The V100 came with 16 or 32 GB: a name without one is not read (the row is scored
    without a card, or refused if it is an OOM row)."""
    with pytest.raises(UnknownName):
        case_gpu(name)


@pytest.mark.parametrize(("day", "apart"), [
    (date(2025, 7, 27), False), (date(2025, 7, 28), True), (None, True)])
def test_torchtitan_shards_its_embedding_apart_since_july_2025(day: date | None,
                                                               apart: bool) -> None:
    """pytorch/torchtitan 83e694105 (2025-07-28): `tok_embeddings` a unit of its own; before, it
    stayed in the root unit, gathered from forward to backward."""
    setup = TrainingSetup(framework=Framework.TORCHTITAN, precision=Precision.AMP,
                          batch=1, seq_len=8192, code_date=day)
    assert default_parallelism(setup, Scheme.FSDP, 8, on=day).embedding_apart is apart


@pytest.mark.parametrize(("framework", "day", "apart"), [
    # accelerate 60b5c258 (2026-04-24): fsdp2_prepare_model shards the embedding apart
    (Framework.HF, date(2026, 4, 23), False), (Framework.HF, date(2026, 4, 24), True),
    (Framework.HF, None, True),
    # axolotl's own fsdp2_prepare_model keeps the embedding in the root unit
    (Framework.AXOLOTL, date(2026, 7, 24), False), (Framework.AXOLOTL, None, False),
])
def test_accelerates_fsdp2_shards_the_embedding_apart_since_april_2026(
        framework: Framework, day: date | None, apart: bool) -> None:
    setup = TrainingSetup(framework=framework, batch=1, seq_len=4096, code_date=day)
    plan = default_parallelism(setup, Scheme.FSDP, 8, fsdp_version=FsdpVersion.FSDP2, on=day)
    assert plan.embedding_apart is apart


@pytest.mark.parametrize(("method", "chunked", "is_compiled", "backward_tv"), [
    # tokens x vocab units (tv); LLAMA31: hidden 4096, so the head's bf16 weight is
    # 2 x 4096 x vocab = 1.0 tv over 2 x 4096 tokens; a chunk's bf16 logits 0.25 tv, fp32 0.5 tv
    (Method.FULL, False, False, 12),  # fp32 log-softmax saved; nll and log-softmax gradients
    # the full recipes drop `compile_loss`'s result: an unchunked loss runs eagerly
    (Method.FULL, False, True, 12),
    (Method.LORA, False, True, 8),    # the LoRA recipe keeps it: fp32 logits saved, one gradient
    # eager chunks: log-softmaxes and one chunk's gradients; then the head, chunk by chunk: 7
    # chunk gradients wait while the head's weight gradient is summed (3 x 1.0 tv)
    (Method.FULL, True, False, max(4.0 + 2 * 0.5 + 0.25, 7 * 0.25 + 3 * 1.0)),
    (Method.FULL, True, True, max(2.0 + 0.25, 7 * 0.25 + 3 * 1.0)),
    # a frozen head: the 16-bit chunks kept by the compiled CE, one chunk's 16-bit gradient
    (Method.LORA, True, True, 2.0 + 0.25),
])
def test_torchtune_cross_entropy(method: Method, chunked: bool, is_compiled: bool,
                                 backward_tv: float) -> None:
    tokens, vocab = 2 * 4096, LLAMA31.vocab_size
    assert 2 * LLAMA31.hidden_size == tokens  # the head's weight is 1.0 tv
    adapters = {"lora_rank": 8, "lora_targets": frozenset({LoraTarget.Q, LoraTarget.V})} \
        if method.uses_lora else {}
    setup = TrainingSetup(framework=Framework.TORCHTUNE, method=method, batch=2, seq_len=4096,
                          loss=Loss.CHUNKED if chunked else Loss.STANDARD, compiled=is_compiled,
                          **adapters)  # type: ignore[arg-type]
    loss = estimate_training(LLAMA31, setup).loss
    assert loss.backward_peak_bytes == pytest.approx(backward_tv * tokens * vocab, rel=1e-6)


@pytest.mark.parametrize(("method", "distributed", "day", "keeps"), [
    # 8a98fbaa3 (2024-07-28): `del logits` in the single-device recipes and full_distributed
    (Method.LORA, False, date(2024, 7, 27), True),
    (Method.LORA, False, date(2024, 7, 28), False),
    (Method.FULL, True, date(2024, 7, 27), True),
    (Method.FULL, False, date(2024, 7, 28), False),
    # cb3ed29d7 (2024-06-04): lora_finetune_distributed did it first
    (Method.LORA, True, date(2024, 6, 3), True),
    (Method.QLORA, True, date(2024, 6, 4), False),
    (Method.LORA, False, None, False),  # today's recipes
])
def test_torchtune_recipes_kept_their_logits_through_backward_until_mid_2024(
        method: Method, distributed: bool, day: date | None, keeps: bool) -> None:
    assert torchtune_loop_keeps_logits(method, distributed, day) is keeps


def test_torchtune_logits_kept_through_backward_add_one_fp32_copy() -> None:
    """The recipes of April 2024 bound the shifted fp32 logits to `logits` through backward and
    the step: one more tokens x vocab x 4 bytes beside the log-softmax and its two gradients."""
    fp32 = 2 * 4096 * LLAMA31.vocab_size * 4
    base = TrainingSetup(framework=Framework.TORCHTUNE, method=Method.FULL, batch=2,
                         seq_len=4096, loss=Loss.STANDARD, gradient_accumulation=False)
    today = estimate_training(LLAMA31, base).loss
    april = estimate_training(LLAMA31, dataclasses.replace(base, code_date=date(2024, 4, 18)))
    assert april.loss.logits_alive_bytes == fp32 and today.logits_alive_bytes == 0
    assert april.loss.backward_peak_bytes == today.backward_peak_bytes + fp32
    step = {p.phase: p for p in april.phases}[Phase.OPTIMIZER_STEP]
    assert sum(p.memory_bytes for p in step.parts if p.kind is PartKind.LOGITS_LOSS) == fp32


def test_torchtunes_distributed_lora_recipe_dropped_its_logits_first() -> None:
    """In June and July 2024 lora_finetune_distributed had `del logits` (cb3ed29d7) and the
    single-device recipe did not yet (8a98fbaa3): the same LoRA step keeps its fp32 logits on
    one GPU, not on two (`TrainingSetup.distributed`, set for a multi-GPU step)."""
    setup = TrainingSetup(framework=Framework.TORCHTUNE, method=Method.LORA, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=2,
                          seq_len=2048, loss=Loss.STANDARD, code_date=date(2024, 7, 1))
    one = estimate_training(LLAMA31, setup)
    two = estimate_per_gpu(LLAMA31, setup, default_parallelism(setup, Scheme.FSDP, 2))
    assert not one.setup.distributed and two.single.setup.distributed
    assert one.loss.logits_alive_bytes == 2 * 2048 * LLAMA31.vocab_size * 4
    assert two.single.loss.logits_alive_bytes == 0


def test_torchtune_compiled_chunks_hold_only_their_16_bit_logits_in_forward() -> None:
    """The upcast is fused into the compiled cross-entropy's reductions: no fp32 chunk."""
    setup = TrainingSetup(framework=Framework.TORCHTUNE, batch=2, seq_len=4096,
                          loss=Loss.CHUNKED, compiled=True)
    loss = estimate_training(LLAMA31, setup).loss
    assert loss.forward_peak_bytes == 2 * 2 * 4096 * LLAMA31.vocab_size


def test_optimizer_in_backward_never_holds_every_gradient() -> None:
    base = TrainingSetup(framework=Framework.TORCHTUNE, precision=Precision.BF16_TRUE,
                         batch=1, seq_len=1024, gradient_accumulation=False)
    usual = estimate_training(LLAMA31, base)
    fused = estimate_training(LLAMA31, dataclasses.replace(
        base, optimizer_impl=OptimizerImpl.IN_BACKWARD))
    end = {p.phase: p for p in fused.phases}[Phase.BACKWARD_END]
    grads = sum(p.memory_bytes for p in end.parts if p.kind is PartKind.GRADIENTS)
    assert grads == 2 * LLAMA31.vocab_size * LLAMA31.hidden_size  # the largest: embedding
    assert fused.allocated_bytes < usual.allocated_bytes


def test_fsdp1_units_mixing_adapters_and_weights_hold_one_dtype() -> None:
    """FSDP1 flattens one dtype per unit (`_validate_tensors_to_flatten`): blocks whose flat
    parameter holds frozen bf16 weights and adapters ran with bf16 adapters, though peft before
    v0.6.0 made them fp32; their gradients are as large either way."""
    early = TrainingSetup(method=Method.LORA, lora_rank=8, batch=1, seq_len=512,
                          framework=Framework.GENERIC, precision=Precision.BF16_TRUE,
                          code_date=date(2023, 7, 25))
    arch = architecture_of(find_model("llama-2-7b"))
    mixed = Parallelism(scheme=Scheme.FSDP, gpus=4, fsdp_version=FsdpVersion.FSDP1)
    later = dataclasses.replace(early, code_date=date(2024, 1, 1))
    assert estimate_per_gpu(arch, early, mixed).sharded.gradients_bytes \
        == estimate_per_gpu(arch, later, mixed).sharded.gradients_bytes


def test_peft_wrap_policy_gives_frozen_blocks_no_gradient() -> None:
    """FSDP1 with peft's fsdp_auto_wrap_policy: the blocks' flat parameters hold frozen
    weights only; litgpt's blocks mix them with the adapters and get a gradient for all."""
    setup = TrainingSetup(method=Method.LORA, lora_rank=8, batch=1, seq_len=512,
                          framework=Framework.HF, gradient_accumulation=True)
    arch = architecture_of(find_model("llama-2-7b"))
    apart = estimate_per_gpu(arch, setup, Parallelism(
        scheme=Scheme.FSDP, gpus=2, fsdp_version=FsdpVersion.FSDP1,
        accumulate_without_sync=True, adapters_wrapped_apart=True))
    mixed = estimate_per_gpu(arch, setup, Parallelism(
        scheme=Scheme.FSDP, gpus=2, fsdp_version=FsdpVersion.FSDP1,
        accumulate_without_sync=True))
    trainable = estimate_training(arch, setup).states.gradient_bytes
    assert apart.sharded.gradients_bytes == trainable  # unsharded under no_sync: adapters only
    assert mixed.sharded.gradients_bytes > 100 * trainable
    assert default_parallelism(setup, Scheme.FSDP, 2).adapters_wrapped_apart


def test_fsdp2_wrapping_the_embedding_apart_keeps_only_the_head_gathered() -> None:
    setup = TrainingSetup(framework=Framework.TORCHTITAN, precision=Precision.MIXED,
                          batch=1, seq_len=8192)
    plan = default_parallelism(setup, Scheme.FSDP, 8)
    assert plan.embedding_apart and plan.fsdp_version is FsdpVersion.FSDP2
    apart = estimate_per_gpu(LLAMA31, setup, plan).sharded
    root = estimate_per_gpu(LLAMA31, setup, dataclasses.replace(plan, embedding_apart=False))
    embedding = 2 * LLAMA31.vocab_size * LLAMA31.hidden_size
    assert root.sharded.loss_buffers_bytes - apart.loss_buffers_bytes == embedding  # type: ignore[operator]


def test_torchtune_stores_nf4_as_torchao_nf4tensor_with_quantized_scalers() -> None:
    """torchao's NF4Tensor always double-quantizes its scalers: a torchtune `nf4` base weighs
    what bitsandbytes' nf4-dq does; elsewhere `nf4` keeps an fp32 absmax per 64 values."""
    arch = architecture_of(find_model("llama-3.2-3b"))
    lora = {"method": Method.QLORA, "lora_rank": 8,
            "lora_targets": frozenset({LoraTarget.Q, LoraTarget.V})}
    tune = TrainingSetup(framework=Framework.TORCHTUNE, quant=Quant.NF4, **lora)  # type: ignore[arg-type]
    hf = dataclasses.replace(tune, framework=Framework.HF)
    # per linear of m values: nf4 keeps m / 64 fp32 absmax; nf4-dq m / 64 uint8 absmax, one fp32
    # per 256 of them and an fp32 offset (m is a multiple of 64 x 256 here)
    sizes = [3072 * 3072] * 2 + [3072 * 1024] * 2 + [3072 * 8192] * 3
    saved = sum(4 * m // 64 - (m // 64 + 4 * m // 64 // 256 + 4) for m in sizes)
    tune_bytes = estimate_training(arch, tune).states.frozen_weight_bytes
    hf_bytes = estimate_training(arch, hf).states.frozen_weight_bytes
    assert hf_bytes - tune_bytes == 28 * saved == 131_431_664


@pytest.mark.parametrize(("is_compiled", "per_value"), [
    (False, 8 + 3 * 2),  # int64 codes of both nibbles, the looked-up and scaled halves, stack
    (True, 2),           # inductor fuses it: the bf16 weight only
])
def test_torchtune_nf4_dequantization_transient(is_compiled: bool, per_value: int) -> None:
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(framework=Framework.TORCHTUNE, method=Method.QLORA, quant=Quant.NF4,
                          lora_rank=8, lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}),
                          batch=1, seq_len=16, compiled=is_compiled)
    blocks = {p.phase: p for p in estimate_training(arch, setup).phases}[Phase.BACKWARD_BLOCKS]
    transient = sum(p.memory_bytes for p in blocks.parts
                    if p.kind is PartKind.BACKWARD_TEMPORARIES)
    plain = estimate_training(arch, dataclasses.replace(setup, framework=Framework.HF))
    hf_blocks = {p.phase: p for p in plain.phases}[Phase.BACKWARD_BLOCKS]
    hf_transient = sum(p.memory_bytes for p in hf_blocks.parts
                       if p.kind is PartKind.BACKWARD_TEMPORARIES)
    mlp = 4096 * 11008
    assert transient - hf_transient == (per_value - 2) * mlp


@pytest.mark.parametrize(("loss", "tensors"), [
    (Loss.STANDARD, 3),  # the head's gradient is a transposed view: summed out of place
    (Loss.CHUNKED, 2),   # the 8 chunks' sum is a tensor of its own: the embedding's added in place
])
def test_torchtune_tied_embedding_gradients_at_the_embeddings_backward(loss: Loss,
                                                                       tensors: int) -> None:
    arch = architecture_of(find_model("llama-3.2-3b"))
    assert arch.tied_embeddings
    setup = TrainingSetup(framework=Framework.TORCHTUNE, batch=2, seq_len=4096, loss=loss,
                          compiled=True, checkpointing=Checkpointing.FULL,
                          gradient_accumulation=False)
    phase = {p.phase: p for p in estimate_training(arch, setup).phases}[Phase.EMBEDDING_BACKWARD]
    temporaries = sum(p.memory_bytes for p in phase.parts
                      if p.kind is PartKind.BACKWARD_TEMPORARIES)
    embedding = 2 * 128256 * 3072
    block_input = 2 * 3072 * 2 * 4096  # the first block's gradient arriving at the embedding
    assert temporaries == tensors * embedding + block_input


@pytest.mark.parametrize(("notes", "expected"), [
    ("LoRA r64 alpha16 dropout0.1 on q,k,v,up,down,gate", 0.1),  # Answer.AI rows
    ("LoRA r8 alpha16 dropout .1 all-linear", 0.1),  # the PEFT docs' FSDP rows
    ("lora_dropout=0.05", 0.05),
    ("LoRA r8 alpha16, dropout 0", 0.0),
    ("LoRA r8 alpha16", None),  # not said: the framework's default
])
def test_notes_that_give_the_adapters_dropout(notes: str, expected: float | None) -> None:
    (case,) = _read(ROW.replace(",litgpt,", ",hf,") + f'"{notes}"')
    setup = training_setup_of(case)  # type: ignore[arg-type]
    assert setup.lora_dropout == expected
    assert lora_dropout_active(setup) is (bool(expected) if expected is not None else False)


@pytest.mark.parametrize(("notes", "expected"), [
    ("fsdp_version 2 (FSDP2 fully_shard)", FsdpVersion.FSDP2),  # the axolotl gpt-oss rows
    ("fsdp_version: 2, reshard_after_forward true", FsdpVersion.FSDP2),
    ("the model is wrapped with fully_shard per block", FsdpVersion.FSDP2),
    # only accelerate's function is named: not a statement of the FSDP version
    ("axolotl replaces accelerate's fsdp2_prepare_model", None),
    # the Answer.AI rows: their ids say "fsdp2" (2 GPUs), their notes name no version
    ("LoRA r64 alpha16 dropout0.1 on q,k,v,up,down,gate; 2 GPUs", None),
])
def test_notes_that_name_fsdp2(notes: str, expected: FsdpVersion | None) -> None:
    row = ROW.replace("t1,", "aai-llama-2-7b-lora-fsdp2-mb1,")
    (case,) = _read(row.replace(",1,a100-40gb,none,", ",2,a100-40gb,fsdp,") + f'"{notes}"')
    assert fsdp_version(case) is expected  # type: ignore[arg-type]


def test_a_rows_code_date_is_the_earliest_its_source_gives() -> None:
    hf_row = ROW.replace(",litgpt,", ",hf,")
    (case,) = _read(hf_row.replace(",src,", ',"README (added in ba3dba3e4, 2025-08-06; '
                                            'read at ca796fb56, 2025-08-07)",'))
    assert code_date(case) == date(2025, 8, 6)  # type: ignore[arg-type]
    (undated,) = _read(hf_row)
    assert code_date(undated) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(("framework", "version", "on", "expected"), [
    # accelerate's `no_sync` reached FSDP2 modules on 2025-09-07 (ec92b1af, v1.11.0)
    (Framework.AXOLOTL, FsdpVersion.FSDP2, date(2025, 8, 6), False),
    (Framework.HF, FsdpVersion.FSDP2, ACCELERATE_FSDP2_NO_SYNC_SINCE, True),
    (Framework.HF, FsdpVersion.FSDP2, None, True),  # today's accelerate
    (Framework.HF, FsdpVersion.FSDP1, date(2024, 1, 1), True),  # FSDP1's own `no_sync`
    (Framework.LITGPT, FsdpVersion.FSDP1, date(2024, 1, 1), True),  # Fabric's no_backward_sync
    (Framework.TORCHTITAN, FsdpVersion.FSDP2, None, False),
])
def test_accumulation_without_sync_by_stack_fsdp_version_and_date(
        framework: Framework, version: FsdpVersion, on: date | None, expected: bool) -> None:
    assert accumulate_without_sync(framework, version, on) is expected


def test_fsdp2_under_accelerate_before_its_no_sync_keeps_the_gradients_sharded() -> None:
    """Before accelerate 1.11 the Trainer's `no_sync` found none on a `fully_shard` module:
    every micro-batch's gradients are reduce-scattered, and each GPU keeps its shard only."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(framework=Framework.AXOLOTL, precision=Precision.BF16_TRUE,
                          batch=1, seq_len=512, gradient_accumulation=True)
    early = default_parallelism(setup, Scheme.FSDP, 8, fsdp_version=FsdpVersion.FSDP2,
                                on=date(2025, 8, 6))
    today = default_parallelism(setup, Scheme.FSDP, 8, fsdp_version=FsdpVersion.FSDP2)
    assert early.fsdp_version is today.fsdp_version is FsdpVersion.FSDP2
    assert not early.accumulate_without_sync and today.accumulate_without_sync
    grads = estimate_training(arch, setup).states.gradient_bytes  # bf16: 2 bytes a parameter
    assert estimate_per_gpu(arch, setup, early).sharded.gradients_bytes == grads // 8
    assert estimate_per_gpu(arch, setup, today).sharded.gradients_bytes == grads


@pytest.mark.parametrize(("notes", "expandable"), [
    ("PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' swift sft --model Qwen/Qwen2.5-7B", True),
    ("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True swift rlhf --rlhf_type ppo", True),
    ("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False", False),
    ("PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6", False),  # not simulated
    ("no allocator setting", False),
    # said without the variable: on where affirmed, a bare or denied mention says nothing
    ("expandable_segments: True", True),
    ("run with expandable segments", True),
    ("expandable segments on", True),
    ("without expandable segments", False),
    ("no-expandable-segments: PyTorch's default allocator", False),
    ("patch_optimized_env() (PYTORCH_CUDA_ALLOC_CONF expandable_segments and more)", False),
])
def test_notes_that_give_the_allocator_settings(notes: str, expandable: bool) -> None:
    (case,) = _read(ROW.replace(",allocated,", ",reserved,") + f'"{notes}"')
    setup = training_setup_of(case)  # type: ignore[arg-type]
    assert setup.alloc_conf.expandable_segments is expandable
    # the replay runs with them: expandable segments map pages instead of whole segments
    arch = architecture_of(find_model("llama-2-7b"))
    default = estimate_training(arch, dataclasses.replace(setup, alloc_conf=PYTORCH_DEFAULTS))
    estimate = estimate_training(arch, setup)
    assert (estimate.reserved_bytes != default.reserved_bytes) is expandable


def test_torchtitan_with_tensor_parallelism_computes_its_loss_under_loss_parallel() -> None:
    """DTensor's `loss_parallel()` on vocabulary-sharded logits: 2 + 12 bytes per local logit in
    forward (the 16-bit logits, the fp32 copy, `shifted`, `exp`), 16 in backward; the output
    layer saves its sequence-gathered input whole on every tensor-parallel GPU."""
    from vramplan.training.activations.head import _loss_parallel

    loss = _loss_parallel(saved=0, elements=1000, compute=2)
    assert (loss.forward_peak_bytes, loss.backward_peak_bytes) == (14_000, 16_000)
    qwen = architecture_of(find_model("qwen3-32b"))
    setup = TrainingSetup(framework=Framework.TORCHTITAN, precision=Precision.AMP, batch=16,
                          seq_len=4096, checkpointing=Checkpointing.FULL)
    tp = default_parallelism(setup, Scheme.FSDP, 32, tensor_parallel=8)
    estimate = estimate_per_gpu(qwen, setup, tp)
    assert estimate.single.setup.loss_parallel
    local = qwen.vocab_size * 16 * 4096 // 8
    peak_loss = max(part.memory_bytes for phase in estimate.phases for part in phase.parts
                    if part.kind is PartKind.LOGITS_LOSS)
    assert peak_loss == pytest.approx(16 * local, rel=1e-3)
    hf = estimate_per_gpu(qwen, dataclasses.replace(setup, framework=Framework.HF), tp)
    assert not hf.single.setup.loss_parallel


@pytest.mark.parametrize(("day", "empties"), [
    (date(2024, 7, 17), False), (date(2024, 7, 18), True), (None, True)])
def test_axolotl_empties_the_cache_once_its_model_is_loaded(day: date | None,
                                                            empties: bool) -> None:
    """axolotl 7830fe04b (2024-07-18): `load_model` ends with `torch.cuda.empty_cache()`, so
    the fp32 copies of the k-bit preparation leave nothing cached for training."""
    from vramplan.allocator import EMPTY_CACHE, EventKind
    from vramplan.training.allocations.step import step_program
    from vramplan.training.result import step_shape

    llama = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=16, batch=1,
                          seq_len=2048, checkpointing=Checkpointing.FULL,
                          framework=Framework.AXOLOTL, code_date=day)
    events = step_program(llama, setup, step_shape(llama, setup))
    first_step = next(i for i, e in enumerate(events)
                      if e.kind is EventKind.MARK and e.name == "forward")
    marks = [e.name for e in events[:first_step] if e.kind is EventKind.MARK]
    assert (EMPTY_CACHE in marks) is empties


@pytest.mark.parametrize(("method", "on", "version"), [
    (Method.FULL, date(2024, 8, 10), FsdpVersion.FSDP1),  # before #1287
    (Method.FULL, date(2024, 8, 11), FsdpVersion.FSDP2),
    (Method.LORA, date(2024, 9, 9), FsdpVersion.FSDP1),  # before #1517
    (Method.LORA, date(2024, 9, 10), FsdpVersion.FSDP2),
    (Method.QLORA, date(2024, 6, 1), FsdpVersion.FSDP2),  # only ever on the FSDP2 recipe
    (Method.LORA, None, FsdpVersion.FSDP2),  # today's recipe
])
def test_torchtunes_distributed_recipes_moved_to_fsdp2_on_their_dates(
        method: Method, on: date | None, version: FsdpVersion) -> None:
    """torchtune's full and LoRA distributed recipes wrapped the model in FSDP1 until
    afd23fd0b (2024-08-11) and 6deeda92c (2024-09-10): a run dated before that names no FSDP
    gets FSDP1; other stacks keep theirs whatever the date."""
    assert default_fsdp_version(Framework.TORCHTUNE, method, on) is version
    setup = TrainingSetup(framework=Framework.TORCHTUNE, method=method, batch=1, seq_len=512)
    assert default_parallelism(setup, Scheme.FSDP, 2, on=on).fsdp_version is version
    assert default_fsdp_version(Framework.TORCHTITAN, method, date(2024, 1, 1)) \
        is FsdpVersion.FSDP2
    assert default_fsdp_version(Framework.HF, method, date(2024, 1, 1)) is FsdpVersion.FSDP1


def test_only_the_stacks_accelerate_drives_run_a_16_bit_model_under_autocast() -> None:
    """accelerate sets `native_amp` for `mixed_precision="bf16"` unless DeepSpeed or Megatron-LM
    runs the model, and `prepare_model` wraps the forward in `torch.autocast`
    (accelerate/accelerator.py): the Trainer's stacks autocast a bf16 model, a plain loop
    (`generic`) and DeepSpeed's engine do not. Under that autocast OPT's loss, which
    transformers before v4.49 computed on its 16-bit logits (`LEGACY_16BIT_LOSS_TYPES`), runs
    `log_softmax` in fp32 (CUDA autocast's float32 list): no 16-bit loss."""
    hf = TrainingSetup(precision=Precision.BF16_TRUE, framework=Framework.HF,
                       code_date=date(2024, 6, 1))
    assert autocasts_16bit_weights(hf) and not loss_in_16bit(hf, "opt")
    for other in (dataclasses.replace(hf, framework=Framework.GENERIC),
                  dataclasses.replace(hf, framework=Framework.DEEPSPEED),
                  dataclasses.replace(hf, no_autocast=True)):
        assert not autocasts_16bit_weights(other) and loss_in_16bit(other, "opt")
    # the Trainer on DeepSpeed: accelerate turns no autocast on
    arch = architecture_of(find_model("opt-1.3b"))
    zero = estimate_per_gpu(arch, hf, default_parallelism(hf, Scheme.ZERO2, 2))
    assert zero.single.setup.no_autocast and not autocasts_16bit_weights(zero.single.setup)
    ddp = estimate_per_gpu(arch, hf, default_parallelism(hf, Scheme.DDP, 2))
    assert autocasts_16bit_weights(ddp.single.setup)
