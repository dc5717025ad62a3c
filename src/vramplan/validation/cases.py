"""The case file format of `../shared/validation/FORMAT.md` (docs/cases-format.md): its columns,
units and errors, and the reading of a file's rows into typed `Case`s.

`parse_cases` and `read_cases` take the CSV text; `read_case_file` (a file a user names) and
`shipped_cases` (the files in `vramplan/data/`) read it. What a row's notes say about its run is
read by `vramplan.validation.notes`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from vramplan.bounds import NumberField, parse_decimal
from vramplan.distributed.defaults import default_checkpointing, default_scheme
from vramplan.distributed.parallelism import FSDP_SCHEMES
from vramplan.errors import ConflictingOptions, MissingValue, UnknownName, VramplanError
from vramplan.files import read_text_file
from vramplan.i18n import Lang
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.presets.frameworks.defaults import (
    LIGHTNING_PRECISION_ALIASES,
    default_attention,
    default_optimizer,
    framework_defaults,
    read_framework,
)
from vramplan.presets.gpus import GPUS, Gpu, card_key, find_gpu
from vramplan.presets.models import find_copy, find_model, find_preset
from vramplan.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB
from vramplan.validation.notes import (
    notes_checkpointing,
    notes_loss,
    notes_offload,
    notes_optimizer,
    notes_optimizer_impl,
    notes_precision,
    notes_sharding,
    printed_metric,
    stack_named,
    stated_date,
)
from vramplan.vocab import (
    POLICY_METHODS,
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
    choice,
    member_named,
    spelling,
)

COLUMNS = ("id", "source", "model", "method", "precision", "optimizer", "optimizer_impl", "quant",
           "lora_r", "lora_targets", "batch", "seq_len", "new_tokens", "checkpointing",
           "attention", "loss", "gpus", "gpu", "sharding", "offload", "framework", "metric",
           "measured", "unit", "notes", "policy")
"""The columns of the format, in its order; `policy` (how a preference or RL method's policy
trains: full, lora, qlora) is vramplan's addition (docs/cases-format.md)."""
REQUIRED_COLUMNS = ("id", "model", "method", "measured", "unit")

UNITS = {"GB": BYTES_PER_GB, "GiB": BYTES_PER_GIB, "MiB": BYTES_PER_MIB}
_UNITS_ANY_CASE = {unit.lower(): unit for unit in UNITS}
"""`gb`, `gib` and `mib` are the units above (`MB` is not read as `MiB`: tools print both)."""
OOM = "OOM"

_COUNT = NumberField("count", minimum=1, maximum=100_000_000, minimum_inclusive=True)
_MEASURED = NumberField("measured", minimum=0, maximum=1e9, minimum_inclusive=False)

E = TypeVar("E", bound=StrEnum)


class CaseFormatError(VramplanError):
    """A case file whose header cannot be read: an unknown or a missing column."""

    key = "error.case_column"


class CaseUnknownColumn(UnknownName):
    """A header naming a column the case format does not have."""

    key = "error.case_unknown_column"


class CaseFileError(VramplanError):
    """A case file that cannot be read (`vramplan.files` reasons, or `not_csv`)."""

    key = "error.case_file"

    def __init__(self, field: str, value: str, reason: str = "", **params: object) -> None:
        if reason:
            self.key = f"error.case_file.{reason}"
        super().__init__(field, value, **params)


MAX_CASE_FILE_BYTES = 64 * 2**20
"""64 MiB: the public set is 40 KB; a million rows of a few hundred bytes still fit."""


def read_case_file(path: str | Path, field: str = "file") -> str:
    """The text of a case file a user names: a regular UTF-8 file of at most 64 MiB."""
    def problem(reason: str, **params: object) -> CaseFileError:
        return CaseFileError(field, str(path), reason, **params)

    try:
        return read_text_file(Path(path), MAX_CASE_FILE_BYTES, problem)
    except ValueError:  # a NUL byte in the path
        raise CaseFileError(field, str(path)) from None


class CaseValueError(VramplanError):
    """A bad cell: names the row (1 = first data row), the case id and the column, then says what
    the column accepts, through the error raised for the cell."""

    key = "error.case_value"

    def __init__(self, row: int, case_id: str, cause: VramplanError) -> None:
        self.row = row
        self.case_id = case_id
        self.cause = cause
        super().__init__(cause.field, cause.value, row=row, case_id=case_id)

    def message(self, lang: Lang, label: Callable[[str], str] | None = None) -> str:
        from vramplan.i18n import translate

        return translate(self.key, lang, row=self.row, case_id=self.case_id,
                         detail=self.cause.message(lang))


@dataclass(frozen=True, slots=True)
class Case:
    """One measured run, parsed."""

    row: int
    id: str
    source: str
    model: str
    method: Method
    precision: Precision
    optimizer: Optimizer
    optimizer_impl: OptimizerImpl | None
    quant: Quant
    lora_r: int | None
    lora_targets: frozenset[LoraTarget]
    batch: int
    seq_len: int | None
    new_tokens: int | None
    checkpointing: Checkpointing
    attention: Attention
    loss: Loss | None
    gpus: int
    gpu: Gpu | None
    sharding: Scheme
    offload: Offload
    framework: Framework
    metric: Metric
    measured_bytes: int | None
    """None for a run that did not fit (`OOM`)."""
    unit: str
    notes: str
    readings: tuple[Reading, ...] = ()
    """What was assumed to read the row (an unknown framework name, an unknown length...)."""
    policy: Method | None = None
    """A preference or RL method's policy (full, lora, qlora; empty: full)."""
    fsdp_named: FsdpVersion | None = None
    """The FSDP the `sharding` cell names (`fsdp1`, `fsdp2`: other spellings of `fsdp`)."""
    engine: Engine | None = None
    """The inference engine an inference row's `framework` cell names where the format's
    frameworks have no word for it (`vllm`, `llama.cpp`)."""


class Reading(StrEnum):
    """An assumption made to estimate a row whose cells leave something open. Its message is
    `reading.<value>` in the catalogue (`vramplan.i18n.catalogue.accuracy`)."""

    UNKNOWN_FRAMEWORK = "unknown_framework"
    """A framework name outside the vocabulary, read as `generic` (a plain PyTorch loop on
    transformers modules)."""
    SEQ_LEN_UNKNOWN = "seq_len_unknown"
    """A training row without `seq_len`: estimated at one token, a lower bound (only what does
    not grow with the sequence)."""
    QUANT_DEFAULT = "quant_default"
    """A QLoRA row without `quant`, or a `quant` naming bitsandbytes' 4 bits without their type
    (`4bit`, `load_in_4bit`): the framework's 4-bit storage."""
    LORA_ON_QUANTIZED = "lora_on_quantized"
    """A `lora` row whose base is quantized (`quant` other than `none`, as PEFT's LoRA on an
    8-bit base): estimated as `qlora` with that storage, which is what `qlora` models (adapters
    over a frozen quantized base)."""
    QLORA_UNQUANTIZED = "qlora_unquantized"
    """A `qlora` row whose `quant` is `none`: a QLoRA base is quantized, so the method is taken
    at its word and the base stored as the framework's default 4-bit format."""
    PRECISION_OF_STACK = "precision_of_stack"
    """A `precision` that names a 16-bit type only (`bf16`, `fp16`): read as what the
    framework's switch for that type runs, its default precision (`amp` for a full fine-tuning
    in fp16 on a stack whose default is all-16-bit, and for litgpt's Lightning, whose `bf16`
    and `16` are its mixed precisions; `bf16-true` for an inference row)."""
    GPU_UNKNOWN = "gpu_unknown"
    """A card outside the catalogue whose name gives no size: a measured row does not need it
    (only an OOM verdict and the cap of reserved memory read the card's size)."""
    OFFLOAD_NEEDS_SHARDING = "offload_needs_sharding"
    """An offload with `sharding` none or ddp, which cannot offload: read as the scheme a run of
    that framework offloads with (`vramplan.distributed.defaults.default_scheme`: ZeRO-Offload on
    ZeRO-2 for the optimizer; the framework's FSDP, else ZeRO-3, for the parameters)."""
    PARAM_OFFLOAD_NEEDS_ZERO3 = "param_offload_needs_zero3"
    """`params-optimizer` on ZeRO-1 or ZeRO-2: DeepSpeed's `offload_param` is "valid only with
    stage 3" (deepspeed/runtime/zero/offload_config.py `DeepSpeedZeroOffloadParamConfig`,
    docs/_pages/config-json.md), so such a run offloads the optimizer alone: read as
    `optimizer`."""
    MODEL_COPY = "model_copy"
    """A model named by a repository that copies a preset's weights: under another owner
    (`NousResearch/Llama-2-7b-hf`) or in a quantized format (`unsloth/llama-3-8b-bnb-4bit`,
    `TheBloke/Llama-2-7B-GPTQ`, whose storage the `quant` cell gives): read as that preset."""
    REMARK_NOT_READ = "remark_not_read"
    """A value with a remark in parentheses that names nothing in the column's vocabulary
    (`none (1 GPU)`, `full (every layer)`): read as the value outside them."""
    FSDP_OFFLOADS_PARAMS = "fsdp_offloads_params"
    """`optimizer` under FSDP: FSDP's CPU offload moves the parameters with their gradients and
    optimizer states (`CPUOffload(offload_params=True)`, FSDP2's `CPUOffloadPolicy`); it has no
    optimizer-only mode: read as `params-optimizer`."""


@dataclass(frozen=True, slots=True)
class UnreadRow:
    """A data row that could not be read (a bad or missing value): the error names the row, the
    case id and the column."""

    row: int
    id: str
    error: CaseValueError

    @property
    def reason(self) -> str:
        """The error in English (`error.message(lang)` says it in any language)."""
        return self.error.message(Lang.EN)


@dataclass(frozen=True, slots=True)
class CaseFile:
    """A case file read row by row: the rows read, and those that could not be."""

    cases: tuple[Case, ...]
    unread: tuple[UnreadRow, ...] = ()


PUBLIC_CASES = "cases.csv"
SHIPPED_CASE_FILES = (PUBLIC_CASES, "cases_vramplan.csv")
"""The measured runs shipped in `vramplan/data/`: the public set (a byte-identical copy of
../shared/validation/cases.csv) and the project's own published runs, each row with its
source."""


def shipped_cases(name: str) -> str:
    """The text of one shipped case file (`SHIPPED_CASE_FILES`)."""
    from importlib.resources import files

    if name not in SHIPPED_CASE_FILES:
        raise UnknownName("cases", name, SHIPPED_CASE_FILES)
    return files("vramplan").joinpath(f"data/{name}").read_text(encoding="utf-8")


def parse_cases(text: str) -> CaseFile:
    """Parse a case file. An unknown or missing column is an error (nothing can be read); a bad
    value makes its row unread, and the other rows are read all the same."""
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))  # a UTF-8 BOM is no column
    try:
        header = tuple(reader.fieldnames or ())
        missing = [column for column in REQUIRED_COLUMNS if column not in header]
        unknown = [column for column in header if column not in COLUMNS]
        # a file with none of the required columns is no case file (a link to a system file):
        # refused without quoting its first line
        if unknown and len(missing) < len(REQUIRED_COLUMNS):
            raise CaseUnknownColumn("column", unknown[0], COLUMNS)
        if missing:
            raise CaseFormatError("column", missing[0])
        cases, unread = [], []
        for number, raw in enumerate(reader, start=1):
            case_id = (raw.get("id") or "").strip()
            try:
                cases.append(_case(number, {k: (v or "").strip() for k, v in raw.items() if k}))
            except VramplanError as error:
                unread.append(UnreadRow(number, case_id, CaseValueError(number, case_id, error)))
    except csv.Error as error:  # a field over csv.field_size_limit(), a NUL byte...
        raise CaseFileError("file", f"line {reader.line_num + 1}", "not_csv",
                            cause=str(error)) from None
    return CaseFile(_with_same_run_notes(cases), tuple(unread))


_SAME_RUN = re.compile(r"\bsame run as ([a-z0-9][a-z0-9._-]*[a-z0-9])", re.IGNORECASE)


def _with_same_run_notes(cases: list[Case]) -> tuple[Case, ...]:
    """A row whose notes say it is the "same run as" another row of the file (the other metric
    of one report) is read with that row's notes after its own: the settings the notes give are
    the run's, written once."""
    by_id = {case.id: case for case in cases}

    def read(case: Case) -> Case:
        said = _SAME_RUN.search(case.notes)
        twin = by_id.get(said.group(1)) if said is not None else None
        if twin is None or twin is case:
            return case
        return replace(case, notes=f"{case.notes} [{twin.id}: {twin.notes}]")

    return tuple(read(case) for case in cases)


def read_cases(text: str) -> tuple[Case, ...]:
    """Parse a case file strictly: an unknown column or value is an error naming the row and
    column."""
    parsed = parse_cases(text)
    if parsed.unread:
        raise parsed.unread[0].error
    return parsed.cases


_UNSTATED = frozenset({"default", "n/a", "na", "-", "?", "unknown", "unspecified"})
"""Cell values that say "not stated" in words: read as the empty cell, the framework's default
(FORMAT.md)."""
_TEXT_COLUMNS = frozenset({"id", "source", "model", "measured", "unit", "notes"})
_COUNTER_UNNAMED = frozenset({"memory", "peak-memory", "max-memory", "gpu-memory", "vram",
                              "peak-vram", "peak-gpu-memory", "memory-usage", "gpu-memory-usage",
                              "vram-usage", "gpu-memory-used", "memory-used"})
"""`metric` values that name GPU memory without naming which counter was read: what an empty
`metric` cell reads."""

_FOUR_BIT_NAMES = frozenset({"4bit", "4-bit", "bnb-4bit", "load-in-4bit", "bitsandbytes-4bit"})
"""bitsandbytes' 4-bit storage named without its type (transformers' `load_in_4bit`)."""
_BF16_NAMES = frozenset({"bf16", "bfloat16", "torch.bfloat16"})
_FP16_NAMES = frozenset({"fp16", "float16", "torch.float16", "half", "16"})


_VALUE_NAMES: dict[str, tuple[type[StrEnum], frozenset[str]]] = {
    "method": (Method, frozenset()), "policy": (Method, frozenset()),
    "precision": (Precision, _BF16_NAMES | _FP16_NAMES), "optimizer": (Optimizer, frozenset()),
    "optimizer_impl": (OptimizerImpl, frozenset()), "quant": (Quant, _FOUR_BIT_NAMES),
    "checkpointing": (Checkpointing, frozenset()), "attention": (Attention, frozenset()),
    "loss": (Loss, frozenset()), "sharding": (Scheme, frozenset()),
    "offload": (Offload, frozenset()), "metric": (Metric, _COUNTER_UNNAMED),
    "framework": (Framework, frozenset())}
"""The columns that hold one name of a vocabulary, with the names read besides its members'."""

_REMARK = re.compile(r"^(?P<before>[^()]*)\((?P<inside>[^()]*)\)(?P<after>[^()]*)$")
"""A value with a remark in parentheses: `fsdp (full shard)`, `none (1 GPU)`, `sdpa (flash)`."""


def _stated(cell: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The row's cells with "not stated" words (`_UNSTATED`) emptied in the value columns, and
    a value with a remark in parentheses read as the value it names (`_without_remark`); with
    the columns whose remark was left unread."""
    stated: dict[str, str] = {}
    unread_remarks: list[str] = []
    for column, written in cell.items():
        value, remark_read = (_without_remark(column, written)
                              if column in _VALUE_NAMES and "(" in written else (written, True))
        if not remark_read:
            unread_remarks.append(column)
        unstated = _UNSTATED | _COUNTER_UNNAMED if column == "metric" else _UNSTATED
        stated[column] = ("" if column not in _TEXT_COLUMNS and spelling(value) in unstated
                          else value)
    return stated, tuple(unread_remarks)


def _remark_readings(value: str) -> tuple[tuple[str, bool], ...]:
    """The ways to read a value that may hold a remark in parentheses, in the order they are
    tried, each with whether it reads the remark: the value itself (`max_memory_allocated()`),
    the words together (`fsdp (full shard)` is `fsdp full shard`, `adamw (8-bit)` `adamw
    8-bit`), the remark alone as the more precise word (`sdpa (flash)`: flash), what is outside
    it (`none (1 GPU)`: none, the remark unread)."""
    found = _REMARK.match(value)
    if found is None:
        return ((value, True),)
    before, inside, after = (found.group(part).strip() for part in ("before", "inside", "after"))
    readings = ((value, True), (f"{before} {inside} {after}", True), (inside, True),
                (f"{before} {after}", False))
    return tuple((text.strip(), read) for text, read in readings if text.strip())


def _without_remark(column: str, value: str) -> tuple[str, bool]:
    """A value as the first of its `_remark_readings` that names a value of the column's
    vocabulary, with whether it read the remark; as written when none does (then refused)."""
    return next(((text, read) for text, read in _remark_readings(value)
                 if _names_a_value(column, text)), (value, True))


def _names_a_value(column: str, value: str) -> bool:
    enum, other_names = _VALUE_NAMES[column]
    return (member_named(enum, value) is not None or spelling(value) in other_names
            or spelling(value) in _UNSTATED)


def _precision(value: str, method: Method, framework: Framework, notes: str,
               readings: list[Reading]) -> Precision:
    """The `precision` cell (empty: what the notes set, `notes_precision`, else the framework's
    default), where a 16-bit type alone (`bf16`, `fp16`) is the stack's own switch for it: its
    default precision (each one computes in 16 bits; an inference row keeps its weights in that
    type). Two exceptions: litgpt's Lightning reads `bf16` and `16` as its mixed precisions
    (`LIGHTNING_PRECISION_ALIASES`); and fp16 gradients cannot be unscaled
    (torch/amp/grad_scaler.py `_unscale_grads_`: "Attempting to unscale FP16 gradients"), so a
    full fine-tuning in fp16 on a stack whose default is all-16-bit runs autocast over fp32
    weights (`amp`)."""
    default = notes_precision(notes, lightning=framework is Framework.LITGPT) \
        or framework_defaults(framework).precision
    name = spelling(value)
    if name not in _BF16_NAMES | _FP16_NAMES:
        return choice(Precision, "precision", value, default)
    readings.append(Reading.PRECISION_OF_STACK)
    if method is Method.INFERENCE:
        return Precision.BF16_TRUE
    if framework is Framework.LITGPT and name in LIGHTNING_PRECISION_ALIASES:
        return LIGHTNING_PRECISION_ALIASES[name]
    if name in _FP16_NAMES and method is Method.FULL and default is Precision.BF16_TRUE:
        return Precision.AMP
    return default


def _case(row: int, cell: Mapping[str, str]) -> Case:
    stated, unread_remarks = _stated(cell)
    get = stated.get
    method = _required_choice(Method, "method", get("method", ""))
    inference = method is Method.INFERENCE
    gpu_name = get("gpu", "")
    gpus = _optional_count("gpus", get("gpus", "")) or _cards_counted(gpu_name) or 1
    framework_read = read_framework(get("framework"))
    framework = framework_read.framework
    readings: list[Reading] = [Reading.REMARK_NOT_READ] if unread_remarks else []
    engine = _engine_named(framework_read.unknown_name) if inference else None
    if framework_read.unknown_name is not None and engine is None:
        readings.append(Reading.UNKNOWN_FRAMEWORK)
    framework = stack_named(framework, get("notes", ""), get("source", ""))
    seq_len = _seq_len(get("seq_len", ""), inference)
    if seq_len is None and not inference:
        readings.append(Reading.SEQ_LEN_UNKNOWN)
    if spelling(get("quant", "")) in _FOUR_BIT_NAMES:
        # bitsandbytes' 4 bits without their type: the framework's 4-bit storage
        quant = framework_defaults(framework).qlora_quant
        readings.append(Reading.QUANT_DEFAULT)
    else:
        quant = choice(Quant, "quant", get("quant"), Quant.NONE)
    if method is Method.QLORA and quant is Quant.NONE:
        quant = framework_defaults(framework).qlora_quant
        readings.append(Reading.QUANT_DEFAULT if not get("quant") else Reading.QLORA_UNQUANTIZED)
    elif method is Method.LORA and quant is not Quant.NONE:
        method = Method.QLORA
        readings.append(Reading.LORA_ON_QUANTIZED)
    # An empty cell is the framework's default (the format's rule): on several GPUs, its
    # data-parallel scheme; with litgpt's FSDP strategy, block checkpointing.
    notes = get("notes", "")
    # an empty cell: what the notes configure, else the framework's default
    offload = choice(Offload, "offload", get("offload"), notes_offload(notes) or Offload.NONE)
    sharding = choice(Scheme, "sharding", get("sharding"),
                      Scheme.NONE if inference else _sharding_in_notes(framework, gpus, notes)
                      or default_scheme(framework, gpus, offload))
    if not inference:
        sharding, offload = _offload_as_run(framework, gpus, sharding, offload, readings)
    fsdp_named = {"fsdp1": FsdpVersion.FSDP1, "fsdp2": FsdpVersion.FSDP2}.get(
        spelling(get("sharding") or ""))
    gpu = None
    if gpu_name:
        try:
            gpu = case_gpu(gpu_name)
        except UnknownName:
            if get("measured", "").strip().upper() == OOM:
                raise  # an OOM verdict needs the card's size
            readings.append(Reading.GPU_UNKNOWN)
    precision = _precision(get("precision", ""), method, framework, notes, readings)
    policy = _optional_choice(Method, "policy", get("policy"))
    if policy is not None and (not method.is_alignment or policy not in POLICY_METHODS):
        raise ConflictingOptions("policy", "method", policy.value)
    return Case(
        policy=policy,
        row=row,
        id=_required("id", get("id", "")),
        source=get("source", ""),
        model=_case_model(_required("model", get("model", "")), readings),
        method=method,
        precision=precision,
        optimizer=choice(Optimizer, "optimizer", get("optimizer"),
                         Optimizer.NONE if inference else notes_optimizer(notes)
                         or default_optimizer(framework, method)),
        optimizer_impl=_optional_choice(OptimizerImpl, "optimizer_impl", get("optimizer_impl"))
        or notes_optimizer_impl(get("notes", "")),
        quant=quant,
        lora_r=_optional_count("lora_r", get("lora_r", "")),
        lora_targets=(parse_lora_targets(get("lora_targets", ""))
                      if get("lora_targets") else frozenset()),
        batch=_optional_count("batch", get("batch", "")) or 1,
        seq_len=seq_len,
        new_tokens=_optional_count("new_tokens", get("new_tokens", "")),
        # an empty cell: what the notes set, else the framework's default
        checkpointing=choice(Checkpointing, "checkpointing", get("checkpointing"),
                             notes_checkpointing(get("notes", ""))
                             or default_checkpointing(framework, sharding)),
        # an empty cell: the attention the stack ran by default at the row's stated date, on
        # its card
        attention=choice(Attention, "attention", get("attention"),
                         default_attention(framework, stated_date(
                             f"{get('source', '')} {get('notes', '')}"),
                             _model_type(get("model", "")),
                             chip_capability(gpu_name) if gpu is None else gpu.cuda_capability)),
        # a supervised row's loss as its notes name it; a preference or RL trainer computes its
        # own loss from the logits, whatever Liger patched into the model's forward
        loss=_optional_choice(Loss, "loss", get("loss"))
        or (None if method.is_alignment else notes_loss(get("notes", ""))),
        gpus=gpus,
        gpu=gpu,
        sharding=sharding,
        offload=offload,
        framework=framework,
        # what the stack named in the cell prints (not the kernels the notes name: Unsloth's
        # under another harness), or torchtitan's trainer when the row names it, or what the
        # notes say the run's own code prints
        metric=choice(Metric, "metric", get("metric"),
                      printed_metric(get("notes", ""))
                      or framework_defaults(framework if framework is Framework.TORCHTITAN
                                            else framework_read.framework).reported_metric),
        measured_bytes=_measured(get("measured", ""), get("unit", "")),
        unit=get("unit", ""),
        notes=get("notes", ""),
        readings=tuple(readings),
        fsdp_named=fsdp_named,
        engine=engine,
    )


def _sharding_in_notes(framework: Framework, gpus: int, notes: str) -> Scheme | None:
    """The scheme the notes name (`notes_sharding`); a Megatron-LM row's is read from its
    distributed optimizer instead."""
    return None if framework is Framework.MEGATRON else notes_sharding(notes, gpus)


def _engine_named(name: str | None) -> Engine | None:
    """An engine of its own (vLLM, llama.cpp) that a `framework` cell names; the engines named
    after the format's frameworks are theirs already."""
    engine = None if name is None else member_named(Engine, name)
    return engine if engine in (Engine.VLLM, Engine.LLAMA_CPP) else None


def _offload_as_run(framework: Framework, gpus: int, sharding: Scheme, offload: Offload,
                    readings: list[Reading]) -> tuple[Scheme, Offload]:
    """A row's sharding and offload as a run can have them: a pair no stack runs (an offload
    without sharding, ZeRO-2 with parameters offloaded, FSDP offloading its optimizer alone) is
    read as the run its framework does with those settings, with a `Reading` saying so."""
    if offload is Offload.NONE or offload is Offload.ACTIVATIONS:
        return sharding, offload
    if sharding in (Scheme.NONE, Scheme.DDP):
        readings.append(Reading.OFFLOAD_NEEDS_SHARDING)
        return default_scheme(framework, gpus, offload), offload
    if offload is Offload.PARAMS_OPTIMIZER and sharding in (Scheme.ZERO1, Scheme.ZERO2):
        readings.append(Reading.PARAM_OFFLOAD_NEEDS_ZERO3)
        return sharding, Offload.OPTIMIZER
    if offload is Offload.OPTIMIZER and sharding in FSDP_SCHEMES:
        readings.append(Reading.FSDP_OFFLOADS_PARAMS)
        return sharding, Offload.PARAMS_OPTIMIZER
    return sharding, offload


_CARD_SIZE = re.compile(r"(?<![\d.])(\d{1,4})\s*-?\s*(?:gib|gb|g)\b", re.IGNORECASE)
"""A memory size in a card's name: the format's `a10g-24gb`, and as vendors and tools write it
(`A800 80GB`, nvidia-smi's `NVIDIA A100-SXM4-80GB`, `H20 96G`)."""


_NOT_THE_CARD = re.compile(
    r"\b(?:colab|kaggle)\b|^\s*\d{1,4}[x×*]\s*|^\s*\d{1,4}\s+[x×*]\s*(?=[a-z])|"
    r"(?:(?<=\s)|(?<=\d))[x×*]\s*\d{1,4}\s*$",
    re.IGNORECASE)
"""Words of a row's card that name the notebook's host or count the cards (`Colab T4`,
`8x A100 80GB`, `A100 x 8`: the `gpus` cell counts them, `_cards_counted`); brands and form
factors are the catalogue's (`vramplan.presets.gpus.card_key`)."""

def case_gpu(name: str) -> Gpu:
    """The row's card: from the catalogue (`find_gpu`, which reads `NVIDIA A100-SXM4-80GB` as
    the `a100-80gb`), without the notebook's host or a count of cards (`_NOT_THE_CARD`); else,
    for a name that states one memory size (the catalogue's `rtx-a5000-24gb`, a vendor's
    `RTX 3060 12GB`), a card of that many GiB (an "N GB" card holds N GiB, see
    `vramplan.presets.gpus`), of the catalogue card the name names without its size, if any
    (`h100-96gb`: an H100, whose compute capability it takes). A name with no size
    that the catalogue does not know (`V100`: 16 or 32 GB?), or with two different sizes, is not
    read."""
    both = _COUNT_AND_NUMBER.match(name)
    if both is not None:  # `3 x 4090`, `4090 x 2`: the card is the number that is one
        name = next((number for number in both.groups() if _catalogue_family(number)), name)
    stem = _SIZE_WRITTEN.sub(r"\1gb", _NOT_THE_CARD.sub(" ", name).replace("(", " ")
                             .replace(")", " "))
    try:
        return find_gpu(stem)
    except UnknownName:
        sizes = {int(found) for found in _CARD_SIZE.findall(name)}
        if len(sizes) != 1 or 0 in sizes:
            raise
        (size,) = sizes
        family = _catalogue_family(_CARD_SIZE.sub("", stem))
        return Gpu(name.strip().lower(), name.strip(), family.vendor if family else "", size,
                   source=f"case file: {size} GB read from the name",
                   cuda_capability=family.cuda_capability if family else None)


_CARD_COUNT = re.compile(
    r"^\s*(\d{1,4})(?:[x×*]|\s+[x×*]\s*(?=[a-z]))|(?:(?<=\s)|(?<=\d))[x×*]\s*(\d{1,4})\s*$",
    re.IGNORECASE)
"""A count of cards before the card's name or after it (`8x A100`, `3x 4090`, `A100 x 8`,
ms-swift's `8*A100`), not a card's own number (`4090 x 2` is two 4090s)."""

_SIZE_WRITTEN = re.compile(r"(?<![a-z\d.])(\d{1,4})\s*-?\s*(?:gib|gb|g)\b", re.IGNORECASE)
"""A card's memory size however written (`80GB`, `80 GB`, `80G`, `80-GB`): the catalogue's
`80gb`; not a card's own name (`A10G`)."""


def _cards_counted(name: str) -> int | None:
    """The number of cards a `gpu` cell counts (`8x A100 80GB`, `A100 x 8`): an empty `gpus`
    cell reads it. Between two numbers (`3 x 4090`, `4090 x 2`) the count is the one that is no
    card; neither or both: no count."""
    both = _COUNT_AND_NUMBER.match(name)
    if both is not None:
        counted = [number for number, other in (both.groups(), both.groups()[::-1])
                   if _catalogue_family(other) and not _catalogue_family(number)]
        return (int(counted[0]) or None) if counted else None
    found = _CARD_COUNT.search(name)
    return None if found is None else int(found.group(1) or found.group(2)) or None


_COUNT_AND_NUMBER = re.compile(r"^\s*(\d{1,4})\s*[x×*]\s*(\d{1,4})\s*$")
"""A count and a card named by its number alone, in either order (`3 x 4090`, `4090 x 2`)."""


def chip_capability(name: str) -> tuple[int, int] | None:
    """The compute capability of the chip a card's name gives without its size: the one every
    catalogue card of that name shares (`V100`: the 16 and 32 GB V100s, sm70; `A800`: the
    40 and 80 GB A800s, sm80), None where they differ or none is known."""
    key = card_key(_NOT_THE_CARD.sub(" ", name))
    found = {gpu.cuda_capability for gpu in GPUS
             if gpu.name.startswith(f"{key}-") and gpu.cuda_capability is not None}
    return found.pop() if len(found) == 1 else None


def _catalogue_family(stem: str) -> Gpu | None:
    """The catalogue card called `stem` (a card's name without its memory size), if any."""
    try:
        return find_gpu(card_key(stem))
    except UnknownName:
        return None


def _required(column: str, value: str) -> str:
    if not value:
        raise MissingValue(column)
    return value


def _required_choice(enum: type[E], column: str, value: str) -> E:
    if not value:
        raise MissingValue(column)
    return choice(enum, column, value, next(iter(enum)))


def _case_model(name: str, readings: list[Reading]) -> str:
    """The row's model: a preset's name, or one of the names a remark in parentheses gives
    (`Llama 2 7B (meta-llama/Llama-2-7b-hf)`: the remark, else what is outside it,
    `_remark_readings`), or a copy of one (`find_copy`: another owner's, or a quantized copy,
    whose storage the `quant` cell gives) read as that preset, said."""
    written = [text for text, _ in _remark_readings(name)]
    preset = next((text for text in written if find_preset(text) is not None), None)
    if preset is not None:
        return preset
    copied = next((found for found in map(find_copy, written) if found is not None), None)
    if copied is None:
        return name
    readings.append(Reading.MODEL_COPY)
    return copied.name


def _model_type(name: str) -> str | None:
    """transformers' `model_type` of the row's model, None where the registry does not know it
    (the row is then refused by the estimate, which names the model)."""
    try:
        return find_model(name).transformers_type
    except UnknownName:
        return None


def _optional_choice(enum: type[E], column: str, value: str | None) -> E | None:
    return choice(enum, column, value, next(iter(enum))) if value else None


_COUNT_WRITTEN = re.compile(
    r"^\s*(?:~|≈|about\s+)?(?P<count>\d+)(?:\.0+)?\s*"
    r"(?:tokens?|gpus?|cards?|sequences?|seqs?|samples?|(?:per|/)\s*(?:gpu|device))?\s*"
    r"(?:\([^()]*\))?\s*$", re.IGNORECASE)
"""A whole number as people write it in a table: with what it counts (`2048 tokens`, `2 GPUs`,
`4 per GPU`), a remark in parentheses (`8192 (packed)`, `16 (alpha 32)`), approximate (`~512`)
or with a zero decimal (`1.0`)."""


def _optional_count(column: str, value: str) -> int | None:
    if not value:
        return None
    written = _COUNT_WRITTEN.match(value)
    return NumberField(column, _COUNT.minimum, _COUNT.maximum, True).parse_int(
        written.group("count") if written else value)


def _seq_len(value: str, inference: bool) -> int | None:
    """The length, or None when the cell is empty: a training row is then estimated at one
    token, a lower bound (`Reading.SEQ_LEN_UNKNOWN`); an inference row at
    `UNPUBLISHED_PROMPT_TOKENS`."""
    return _optional_count("seq_len", value)


_MEASURED_WRITTEN = re.compile(
    r"^\s*(?:~|≈|about\s+)?(?P<amount>\d[\d.,]*(?:e[+-]?\d+)?)\s*(?P<unit>[a-z]+)?\s*"
    r"(?:\([^()]*\))?\s*$", re.IGNORECASE)
"""A measured peak as people write it: with its unit (`21.3 GB`, which an empty `unit` cell
takes), a remark in parentheses (`21.3 (peak)`) or approximate (`~21.3`)."""


def _unit_named(text: str) -> str:
    """`text` as one of `UNITS` in any case (`gib` is `GiB`), else as written."""
    return _UNITS_ANY_CASE.get(text.strip().lower(), text)


def _measured(value: str, unit: str) -> int | None:
    written = _MEASURED_WRITTEN.match(value)
    if written is not None and value.strip().upper() != OOM:
        value = written.group("amount")
        if written.group("unit"):
            said = _unit_named(written.group("unit"))
            if unit.strip() and _unit_named(unit) != said:
                raise ConflictingOptions("measured", "unit", written.group(0).strip(),
                                         "units_differ", unit=unit.strip())
            unit = said
    unit = _unit_named(unit)
    if unit not in UNITS:
        raise UnknownName("unit", unit, tuple(UNITS))
    if value.upper() == OOM:
        return None
    amount = _MEASURED.check(parse_decimal("measured", value), value)
    return round(amount * UNITS[unit])
