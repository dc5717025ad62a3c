"""Scoring estimates against measured runs: the case format of `../shared/validation/FORMAT.md`.

Pure: `read_cases` takes the CSV text (the CLI reads the file), `score_cases` returns typed scores
and a summary. Every row is estimated by the module that owns its kind of run: single-GPU training
by `vramplan.training.estimate`, multi-GPU training by `vramplan.distributed.per_gpu`
(sharding), inference by `vramplan.inference.estimate`.

A measured `OOM` row is classified right when the run would not fit: when the estimate of what the
device must hold (the allocated peak, the allocator's overhead and the CUDA context, the `device`
metric) exceeds the GPU's memory.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from vramplan.allocator import PYTORCH_DEFAULTS, AllocatorConfig, AllocConfError, parse_alloc_conf
from vramplan.bounds import NumberField, parse_decimal
from vramplan.distributed.per_gpu import (
    MS_SWIFT_ZERO3,
    ZERO3_CONFIG_FILES,
    PerGpuEstimate,
    default_checkpointing,
    default_parallelism,
    default_scheme,
    estimate_per_gpu,
)
from vramplan.distributed.sharding import (
    FSDP_SCHEMES,
    SHARDED_PARAMETER_SCHEMES,
    PipelineSchedule,
    Zero3ConfigFile,
)
from vramplan.errors import ConflictingOptions, MissingValue, UnknownName, VramplanError
from vramplan.files import read_text_file
from vramplan.i18n import Lang
from vramplan.inference.allocations import growing_cache_reserve_bytes
from vramplan.inference.estimate import InferenceEstimate, estimate_inference
from vramplan.inference.setup import inference_inputs
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.parts import PartKind
from vramplan.presets.cuda import free_at_load_bytes
from vramplan.presets.frameworks import (
    LITGPT_COMMIT_DATES,
    MEGATRON_CORE_RELEASE_DATES,
    TORCHTUNE_COMMIT_DATES,
    TORCHTUNE_GENERATE_CACHE_FITS_SINCE,
    TORCHTUNE_KV_HEADS_CACHED_SINCE,
    ModelCode,
    TransformersCode,
    default_gradient_accumulation,
    framework_defaults,
    read_framework,
    torchtune_rope_modules,
    transformers_code,
    unsloth_release_date,
)
from vramplan.presets.gpus import Gpu, find_gpu
from vramplan.presets.inference_engines import VLLM_MEMORY_UTILIZATION
from vramplan.presets.litgpt_recipes import LITGPT_HUB_RECIPES, LITGPT_HUB_SOURCE, LitgptRecipe
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import find_format
from vramplan.training.alignment import estimate_step
from vramplan.training.estimate import PeakOverPhases
from vramplan.training.setup import AlignmentSetup, TrainingSetup
from vramplan.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB
from vramplan.vocab import (
    POLICY_METHODS,
    Attention,
    Checkpointing,
    ComputeDtype,
    Engine,
    Framework,
    FsdpVersion,
    KvDtype,
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
WITHIN_SHARE_PCT = 10.0
"""The summary's `within_10pct_share` threshold."""

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
    """A QLoRA row without `quant`: the framework's 4-bit storage."""
    LORA_ON_QUANTIZED = "lora_on_quantized"
    """A `lora` row whose base is quantized (`quant` other than `none`, as PEFT's LoRA on an
    8-bit base): estimated as `qlora` with that storage, which is what `qlora` models (adapters
    over a frozen quantized base)."""
    QLORA_UNQUANTIZED = "qlora_unquantized"
    """A `qlora` row whose `quant` is `none`: a QLoRA base is quantized, so the method is taken
    at its word and the base stored as the framework's default 4-bit format."""
    GPU_UNKNOWN = "gpu_unknown"
    """A card outside the catalogue whose name gives no size: a measured row does not need it
    (only an OOM verdict and the cap of reserved memory read the card's size)."""
    OFFLOAD_NEEDS_SHARDING = "offload_needs_sharding"
    """An offload with `sharding` none or ddp, which cannot offload: read as the scheme a run of
    that framework offloads with (`vramplan.distributed.per_gpu.default_scheme`: ZeRO-Offload on
    ZeRO-2 for the optimizer; the framework's FSDP, else ZeRO-3, for the parameters)."""
    PARAM_OFFLOAD_NEEDS_ZERO3 = "param_offload_needs_zero3"
    """`params-optimizer` on ZeRO-1 or ZeRO-2: DeepSpeed's `offload_param` is "valid only with
    stage 3" (deepspeed/runtime/zero/offload_config.py `DeepSpeedZeroOffloadParamConfig`,
    docs/_pages/config-json.md), so such a run offloads the optimizer alone: read as
    `optimizer`."""
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


def _case(row: int, cell: Mapping[str, str]) -> Case:
    get = cell.get
    method = _required_choice(Method, "method", get("method", ""))
    inference = method is Method.INFERENCE
    gpu_name = get("gpu", "")
    gpus = _optional_count("gpus", get("gpus", "")) or 1
    framework_read = read_framework(get("framework"))
    framework = framework_read.framework
    readings: list[Reading] = []
    if framework_read.unknown_name is not None:
        readings.append(Reading.UNKNOWN_FRAMEWORK)
    if framework in UNSLOTH_HOSTS and UNSLOTH_NOTE.search(get("notes", "")):
        framework = Framework.UNSLOTH
    seq_len = _seq_len(get("seq_len", ""), inference)
    if seq_len is None and not inference:
        readings.append(Reading.SEQ_LEN_UNKNOWN)
    quant = choice(Quant, "quant", get("quant"), Quant.NONE)
    if method is Method.QLORA and quant is Quant.NONE:
        quant = framework_defaults(framework).qlora_quant
        readings.append(Reading.QUANT_DEFAULT if not get("quant") else Reading.QLORA_UNQUANTIZED)
    elif method is Method.LORA and quant is not Quant.NONE:
        method = Method.QLORA
        readings.append(Reading.LORA_ON_QUANTIZED)
    # An empty cell is the framework's default (the format's rule): on several GPUs, its
    # data-parallel scheme; with litgpt's FSDP strategy, block checkpointing.
    offload = choice(Offload, "offload", get("offload"), Offload.NONE)
    sharding = choice(Scheme, "sharding", get("sharding"),
                      Scheme.NONE if inference else default_scheme(framework, gpus, offload))
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
    policy = _optional_choice(Method, "policy", get("policy"))
    if policy is not None and (not method.is_alignment or policy not in POLICY_METHODS):
        raise ConflictingOptions("policy", "method", policy.value)
    return Case(
        policy=policy,
        row=row,
        id=_required("id", get("id", "")),
        source=get("source", ""),
        model=_required("model", get("model", "")),
        method=method,
        precision=choice(Precision, "precision", get("precision"),
                         framework_defaults(framework).precision),
        optimizer=choice(Optimizer, "optimizer", get("optimizer"),
                         Optimizer.NONE if inference else Optimizer.ADAMW),
        optimizer_impl=_optional_choice(OptimizerImpl, "optimizer_impl", get("optimizer_impl")),
        quant=quant,
        lora_r=_optional_count("lora_r", get("lora_r", "")),
        lora_targets=(parse_lora_targets(get("lora_targets", ""))
                      if get("lora_targets") else frozenset()),
        batch=_optional_count("batch", get("batch", "")) or 1,
        seq_len=seq_len,
        new_tokens=_optional_count("new_tokens", get("new_tokens", "")),
        checkpointing=choice(Checkpointing, "checkpointing", get("checkpointing"),
                             default_checkpointing(framework, sharding)),
        attention=choice(Attention, "attention", get("attention"), Attention.SDPA),
        loss=_optional_choice(Loss, "loss", get("loss")),
        gpus=gpus,
        gpu=gpu,
        sharding=sharding,
        offload=offload,
        framework=framework,
        # what the stack named in the cell prints (not the kernels the notes name), or what the
        # notes say the run's own code prints
        metric=choice(Metric, "metric", get("metric"),
                      printed_metric(get("notes", ""))
                      or framework_defaults(framework_read.framework).reported_metric),
        measured_bytes=_measured(get("measured", ""), get("unit", "")),
        unit=get("unit", ""),
        notes=get("notes", ""),
        readings=tuple(readings),
        fsdp_named=fsdp_named,
    )


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


_UNDENIED = r"(?<!no )(?<!not )(?<!without )"
"""Prefix of a notes pattern: a name not denied ("no FSDP2", "not Unsloth", "without ...")."""

UNSLOTH_NOTE = re.compile(rf"{_UNDENIED}(?<!non-)\bunsloth\b(?!/)", re.IGNORECASE)
"""A row whose notes name Unsloth (not to deny it, "without Unsloth", nor as the organization of
a Hub repository, "unsloth/Mistral-7B-v0.2"): Unsloth loaded and ran
the model, which the format's frameworks cannot say: a `hf` or `generic` row is read as
`unsloth` (its nf4 with double quantization, its kernels and checkpointing:
`vramplan.presets.frameworks`)."""
UNSLOTH_HOSTS = frozenset({Framework.HF, Framework.GENERIC})
"""The frameworks whose rows are read as Unsloth's when their notes name it (`UNSLOTH_NOTE`)."""


_CARD_SIZE = re.compile(r"(?<![\d.])(\d{1,4})\s*-?\s*(?:gib|gb|g)\b", re.IGNORECASE)
"""A memory size in a card's name: the format's `a10g-24gb`, and as vendors and tools write it
(`A800 80GB`, nvidia-smi's `NVIDIA A100-SXM4-80GB`, `H20 96G`)."""


def case_gpu(name: str) -> Gpu:
    """The row's card: from the catalogue, else, for a name that states one memory size (the
    catalogue's `rtx-a5000-24gb`, a vendor's `A800 80GB`), a card of that many GiB (an "N GB" card
    holds N GiB, see `vramplan.presets.gpus`), of the catalogue card the name names without its
    size, if any (`h100-96gb`: an H100, whose compute capability it takes). A name with no size,
    or with two different ones, is not read."""
    try:
        return find_gpu(name)
    except UnknownName:
        sizes = {int(found) for found in _CARD_SIZE.findall(name)}
        if len(sizes) != 1 or 0 in sizes:
            raise
        (size,) = sizes
        family = _catalogue_family(_CARD_SIZE.sub("", name))
        return Gpu(name.strip().lower(), name.strip(), family.vendor if family else "", size,
                   source=f"case file: {size} GB read from the name",
                   cuda_capability=family.cuda_capability if family else None)


def _catalogue_family(stem: str) -> Gpu | None:
    """The catalogue card called `stem` (a card's name without its memory size), if any."""
    try:
        return find_gpu(stem.strip(" -_"))
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


def _optional_choice(enum: type[E], column: str, value: str | None) -> E | None:
    return choice(enum, column, value, next(iter(enum))) if value else None


def _optional_count(column: str, value: str) -> int | None:
    if not value:
        return None
    return NumberField(column, _COUNT.minimum, _COUNT.maximum, True).parse_int(value)


def _seq_len(value: str, inference: bool) -> int | None:
    """The length, or None when the cell is empty: a training row is then estimated at one
    token, a lower bound (`Reading.SEQ_LEN_UNKNOWN`); an inference row at
    `UNPUBLISHED_PROMPT_TOKENS`."""
    return _optional_count("seq_len", value)


def _measured(value: str, unit: str) -> int | None:
    unit = _UNITS_ANY_CASE.get(unit.strip().lower(), unit)
    if unit not in UNITS:
        raise UnknownName("unit", unit, tuple(UNITS))
    if value.upper() == OOM:
        return None
    amount = _MEASURED.check(parse_decimal("measured", value), value)
    return round(amount * UNITS[unit])


# --- scoring ----------------------------------------------------------------------------------

class Outcome(StrEnum):
    """What happened to a row."""

    SCORED = "scored"
    """A measured peak, compared with the estimate."""
    OOM = "oom"
    """A run that did not fit: right when the estimate does not fit either."""
    SKIPPED = "skipped"
    """Not scored: the row's kind of run is not modelled yet (the reason says which)."""


@dataclass(frozen=True, slots=True)
class CaseScore:
    case: Case
    outcome: Outcome
    estimate_bytes: int | None = None
    """The estimate in the row's metric."""
    device_bytes: int | None = None
    """The estimate of what the device must hold (for OOM verdicts)."""
    peak_phase: str = ""
    model_kind: str = ""
    """Which model estimated the row: `training`, `per_gpu`, `inference`."""
    skip_error: VramplanError | None = None
    """Why the row was not estimated (`skip_error.message(lang)` in any language)."""

    @property
    def skip_reason(self) -> str:
        """Why the row was not estimated, in English ("" for an estimated row)."""
        return self.skip_error.message(Lang.EN) if self.skip_error is not None else ""

    @property
    def error_pct(self) -> float | None:
        """(estimate - measured) / measured, in percent."""
        if self.estimate_bytes is None or not self.case.measured_bytes:
            return None
        return 100 * (self.estimate_bytes - self.case.measured_bytes) / self.case.measured_bytes

    @property
    def oom_right(self) -> bool | None:
        if self.outcome is not Outcome.OOM or self.device_bytes is None:
            return None
        if self.case.gpu is None:
            return None
        return self.device_bytes > self.case.gpu.capacity_bytes


@dataclass(frozen=True, slots=True)
class ValidationReport:
    scores: tuple[CaseScore, ...]
    unread: tuple[UnreadRow, ...] = ()
    """Rows of the file that could not be read (and so were not scored)."""

    def _errors(self) -> list[float]:
        return sorted(abs(s.error_pct) for s in self.scores if s.error_pct is not None)

    @property
    def rows_total(self) -> int:
        return len(self.scores) + len(self.unread)

    @property
    def rows_scored(self) -> int:
        return len(self._errors())

    @property
    def median_abs_error_pct(self) -> float | None:
        errors = self._errors()
        return statistics.median(errors) if errors else None

    @property
    def p90_abs_error_pct(self) -> float | None:
        """90th percentile, linear interpolation between closest ranks (numpy's default)."""
        return _percentile(self._errors(), 0.9)

    @property
    def max_abs_error_pct(self) -> float | None:
        errors = self._errors()
        return errors[-1] if errors else None

    @property
    def within_10pct_share(self) -> float | None:
        errors = self._errors()
        if not errors:
            return None
        return sum(1 for e in errors if e <= WITHIN_SHARE_PCT) / len(errors)

    @property
    def oom_total(self) -> int:
        return sum(1 for s in self.scores if s.outcome is Outcome.OOM)

    @property
    def oom_right(self) -> int:
        return sum(1 for s in self.scores if s.oom_right)

    @property
    def skipped(self) -> tuple[CaseScore, ...]:
        return tuple(s for s in self.scores if s.outcome is Outcome.SKIPPED)


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def score_cases(cases: Sequence[Case], unread: Sequence[UnreadRow] = ()) -> ValidationReport:
    """Estimate every case and compare it with its measurement (`unread`: the file's rows that
    could not be read, carried into the report)."""
    return ValidationReport(tuple(score_case(case) for case in cases), tuple(unread))


def score_case(case: Case) -> CaseScore:
    """One row: estimated by the model that owns its kind of run. A row that no model takes (a
    model missing from the registry, a combination the models refuse) is skipped with the reason,
    so that one such row does not stop the others from being scored."""
    try:
        if case.method is Method.INFERENCE:
            return _score_inference(case)
        if case.sharding is not Scheme.NONE or case.gpus > 1 or case.offload is not Offload.NONE \
                or model_parallel(case).splits_model:
            return _score_multi_gpu(case)
        return _score_training(case)
    except VramplanError as error:
        return CaseScore(case, Outcome.SKIPPED, skip_error=error)


def _outcome(case: Case) -> Outcome:
    return Outcome.OOM if case.measured_bytes is None else Outcome.SCORED


def training_setup_of(case: Case) -> TrainingSetup:
    """The detailed model's inputs for a training row. A preference or RL row trains its
    `policy` (full when empty); its `new_tokens` are the tokens each sequence generates (GRPO,
    PPO; empty: TRL's default), and a colocated engine takes its share of the row's GPU."""
    aligned = case.method.is_alignment
    method = (case.policy or Method.FULL) if aligned else case.method
    uses_lora = method.uses_lora
    loss_alone = LOSS_ALONE_COMPILED.search(case.notes) is not None
    alignment = AlignmentSetup(
        case.method, completion_len=case.new_tokens if case.method.generates else None,
        value_adapters=ms_swift_rlhf(case),
        coati=COATI_TRAINER_NOTE.search(case.notes) is not None,
        gpu_memory_bytes=case.gpu.capacity_bytes if case.gpu is not None else None) \
        if aligned else None
    return TrainingSetup(
        alignment=alignment,
        method=method, precision=case.precision, optimizer=case.optimizer,
        optimizer_impl=case.optimizer_impl, quant=case.quant,
        lora_rank=lora_rank(case) if uses_lora else None,
        lora_targets=case.lora_targets if uses_lora else frozenset(),
        batch=case.batch, seq_len=case.seq_len or _shortest_sequence(alignment),
        checkpointing=case.checkpointing,
        attention=case.attention, loss=case.loss, framework=case.framework, metric=case.metric,
        train_layers=trained_blocks(case),
        float_quant_storage=float_quant_storage(case),
        lora_dropout=lora_dropout(case) if uses_lora else None,
        alloc_conf=alloc_conf(case), card_free_bytes=card_free_bytes(case),
        cuda_capability=case.gpu.cuda_capability if case.gpu else None,
        gradient_accumulation=accumulates(case),
        empty_cache_between_steps=EMPTY_CACHE_NOTE.search(case.notes) is not None,
        reentrant_checkpointing=reentrant_checkpointing(case),
        input_require_grads=False if NO_INPUT_REQUIRE_GRADS_NOTE.search(case.notes) else None,
        checkpoint_in_units=CHECKPOINT_IN_UNITS_NOTE.search(case.notes) is not None,
        checkpoint_submodules=SUBMODULE_CHECKPOINT_NOTE.search(case.notes) is not None,
        kbit_upcast=True if KBIT_PREPARATION_NOTE in case.notes else None,
        compiled=compiled(case) and not loss_alone,
        loss_compiled_alone=loss_alone,
        grad_buffer_16bit=GRAD_BUFFER_16BIT_NOTE.search(case.notes) is not None,
        liger_kernels=LIGER_KERNELS_NOTE.search(case.notes) is not None,
        no_autocast=NO_AUTOCAST_NOTE.search(case.notes) is not None,
        te_cross_entropy=TE_CROSS_ENTROPY_NOTE.search(case.notes) is not None,
        gradient_accumulation_fusion=NO_GRADIENT_ACCUMULATION_FUSION_NOTE.search(
            case.notes) is None,
        steady_state=not (largest_batch_first(case) or first_step_only(case)),
        first_step_report=first_step_only(case),
        code_date=code_date(case),
        loss_in_function=loss_in_function(case), loss_16bit=loss_on_16bit_logits(case),
        quantized_experts=QUANTIZED_EXPERTS_NOTE.search(case.notes) is not None,
        moe_hub_kernel=moe_hub_kernel(case), litgpt_model=runs_litgpt_model(case))


QUANTIZED_EXPERTS_NOTE = re.compile(r"\bquantize_moe_experts\W{0,4}true\b", re.IGNORECASE)
"""A row whose notes say axolotl quantized the fused expert tensors
(`TrainingSetup.quantized_experts`)."""


USE_KERNELS_NOTE = re.compile(r"\buse_kernels\W{0,4}true\b", re.IGNORECASE)
"""A row whose notes say its model loaded with transformers' `use_kernels=True`."""


def moe_hub_kernel(case: Case) -> bool:
    """The Hub's MoE kernel replaced the experts' forward (`TrainingSetup.moe_hub_kernel`): the
    notes say `use_kernels` true, and the model loaded on its GPU; sharded by FSDP or ZeRO-3 it
    loads on the CPU (no `device_map`), where `kernelize` keeps the model's forward (transformers
    4.55 modeling_utils.py: `kernelize(model, device=Device(type=model.device.type))`; kernels
    0.9.0 maps no kernel to "cpu")."""
    return USE_KERNELS_NOTE.search(case.notes) is not None \
        and case.sharding not in SHARDED_PARAMETER_SCHEMES


_REENTRANT = re.compile(r"\b(?:use_reentrant|reentrant_checkpointing)\W{0,4}(true|false)\b",
                        re.IGNORECASE)
_NO_REENTRANT = re.compile(r"\bNO_REENTRANT\b")


def reentrant_checkpointing(case: Case) -> bool | None:
    """Whether a row's notes give its checkpointing as reentrant ("use_reentrant True/False",
    Answer.AI's "--reentrant_checkpointing True", torch's `CheckpointImpl.NO_REENTRANT`); None
    where they say nothing (`TrainingSetup.reentrant_checkpointing`)."""
    said = _REENTRANT.search(case.notes)
    if said is not None:
        return said.group(1).lower() == "true"
    return False if _NO_REENTRANT.search(case.notes) else None


COATI_TRAINER_NOTE = re.compile(r"\bcoati (?:ORPO|DPO|KTO|SimPO)Trainer\b")
"""A preference row whose notes name ColossalChat's trainer ("coati ORPOTrainer": hpcaitech/
ColossalAI applications/ColossalChat coati/trainer @d888c378), which runs the method its own way
(`AlignmentSetup.coati`)."""


NO_INPUT_REQUIRE_GRADS_NOTE = re.compile(r"\bconvert_to_lora_module\b")
"""A row whose adapters were made by ColossalChat's `convert_to_lora_module` (hpcaitech/
ColossalAI applications/ColossalChat coati/models/lora.py @d888c378: every `nn.Linear` becomes
its own `LoraLinear`, then loralib's `mark_only_lora_as_trainable`), not by peft: nothing calls
`enable_input_require_grads()`, and transformers' `gradient_checkpointing_enable` before v5 calls
it only for a loaded peft adapter (`TrainingSetup.input_require_grads` False)."""


SUBMODULE_CHECKPOINT_NOTE = re.compile(
    r"\bseparately with (?:torch(?:'s)? )?checkpoint_wrapper\b|"
    r"\bper[- ]sub-?module checkpoint_wrapper\b", re.IGNORECASE)
"""A row whose notes say each sub-module of a block is wrapped in a checkpoint of its own
("wraps, in every decoder layer, self_attn, mlp, input_layernorm and post_attention_layernorm
separately with torch checkpoint_wrapper", "per-sub-module checkpoint_wrapper checkpointing":
`TrainingSetup.checkpoint_submodules`)."""


CHECKPOINT_IN_UNITS_NOTE = re.compile(
    r"\bapply_activation_checkpointing\b|\bfsdp_activation_checkpointing\W{0,4}true\b|"
    r"--reentrant_checkpointing\b", re.IGNORECASE)
"""A row whose checkpoint wrapper sits inside each FSDP unit (`TrainingSetup.
checkpoint_in_units`): torch's `apply_activation_checkpointing`, accelerate's and llama-recipes'
`fsdp_activation_checkpointing`, and Answer.AI's train.py, whose `--reentrant_checkpointing` flag
exists only there (AnswerDotAI/fsdp_qlora train.py applies `apply_activation_checkpointing` to
the wrapped model)."""


def _shortest_sequence(alignment: AlignmentSetup | None) -> int:
    """The length a row without `seq_len` is estimated at (`Reading.SEQ_LEN_UNKNOWN`): one
    token, or for an online method its completion after a one-token prompt."""
    if alignment is not None and alignment.method.generates:
        return alignment.completion_tokens + 1
    return 1


LARGEST_BATCH_FIRST = "longest sample forced into the first batch"
"""How a row's notes say that its run processed its largest batch first: litgpt's 2023 finetune
scripts put the longest sample into the first batch "so potential OOMs happen right away"
(Lightning-AI/litgpt finetune/lora.py @0010d8ef: `get_batch(..., longest_seq_ix if iter_num ==
0 else None)`), so later micro-batches, drawn at random, are shorter and unknown."""


_COMPILE_MENTION = re.compile(r"(?<![a-z])(?:torch[._ ]?)?compiled?\b", re.IGNORECASE)
_NEGATED_BEFORE = re.compile(r"\b(?:no|not|without|w/o)\s+$", re.IGNORECASE)
_FALSE_AFTER = re.compile(
    r"^\W{0,3}(?:flag\s+|mode\s+)?(?:\.?enabled?\s*)?(?:[:=]\s*)?"
    r"(?:false|off|disabled?|0|none|no|not\s+(?:stated|set|used|enabled))\b", re.IGNORECASE)


def compiled(case: Case) -> bool:
    """Whether the row's run used torch.compile: its notes name it (`torch.compile`,
    `--training.compile`, `compile: True`, `compiled`) other than to deny it (`no compile`,
    `without torch.compile`, `not compiled`, and a config's `compile: False`, `compile=False`,
    `compile off`, `compile (off)`, `compile flag not stated`); the format has no column for
    it."""
    return any(
        _NEGATED_BEFORE.search(case.notes, 0, m.start()) is None
        and _FALSE_AFTER.match(case.notes[m.end():]) is None
        for m in _COMPILE_MENTION.finditer(case.notes))


TE_CROSS_ENTROPY_NOTE = re.compile(
    r"\bcross_entropy_loss_fusion\W{0,4}true\W{0,4}impl\W{0,4}te\b"
    r"|\bcross_entropy_fusion_impl\W{0,4}(?:=\s*)?['\"]?te\b", re.IGNORECASE)
"""A Megatron row whose notes say its fused cross-entropy ran Transformer Engine's kernel
(`cross_entropy_fusion_impl te`): `TrainingSetup.te_cross_entropy`."""


NO_GRADIENT_ACCUMULATION_FUSION_NOTE = re.compile(
    r"--no-gradient-accumulation-fusion\b"
    r"|\bgradient_accumulation_fusion\W{0,4}(?:=\s*)?false\b"
    r"|\bno_gradient_accumulation_fusion\W{0,4}(?:=\s*)?true\b", re.IGNORECASE)
"""A Megatron row whose notes say it ran without gradient-accumulation fusion
(`--no-gradient-accumulation-fusion`, `gradient_accumulation_fusion False`, ms-swift's
`no_gradient_accumulation_fusion true`): `TrainingSetup.gradient_accumulation_fusion`."""


NO_AUTOCAST_NOTE = re.compile(
    r"\b(?:no autocast|(?:use_amp|amp_training)\W{0,4}false)\b", re.IGNORECASE)
"""A row whose notes say its loop runs the model without `torch.autocast`
(`TrainingSetup.no_autocast`): "no autocast", universal-llm-trainer's `amp_training False`,
PEFT's MetaMathQA harness `use_amp false` (method_comparison/MetaMathQA/run.py: `autocast_ctx =
nullcontext` unless `use_amp`; default_training_params.json `"use_amp": false`)."""


LIGER_KERNELS_NOTE = re.compile(
    r"\b(?:use_liger(?:_kernel)?\W{0,4}(?:=\s*)?true\b(?!\s*/)|apply_liger_kernel\w*\b"
    r"|liger_rms_norm\b|LigerPlugin\b)", re.IGNORECASE)
"""A row whose notes say Liger-Kernel patched the model (`use_liger_kernel True`,
`--use_liger_kernel true`, `apply_liger_kernel_to_llama`, axolotl's `LigerPlugin` with
`liger_rms_norm`; not a command's `--use_liger True/False`): `TrainingSetup.liger_kernels`."""


GRAD_BUFFER_16BIT_NOTE = re.compile(
    r"\b(?:grad_reduce_in_fp32|accumulate_allreduce_grads_in_fp32)\W{0,4}(?:=\s*)?false\b",
    re.IGNORECASE)
"""A Megatron row whose notes say its gradient buffer is not fp32 (`grad_reduce_in_fp32 False`,
`accumulate_allreduce_grads_in_fp32 False`: `TrainingSetup.grad_buffer_16bit`)."""


LOSS_ALONE_COMPILED = re.compile(r"\bcomponents\W{0,4}\[\s*['\"]loss['\"]\s*\]")
"""A row whose notes give torchtitan's compile components as the loss alone (`[compile]
components = ["loss"]`): the loss compiled, the blocks eager
(`TrainingSetup.loss_compiled_alone`)."""


_COMMIT = re.compile(r"\b[0-9a-f]{8,40}\b")
_COMMIT_DATES = {Framework.LITGPT: LITGPT_COMMIT_DATES,
                 Framework.TORCHTUNE: TORCHTUNE_COMMIT_DATES}


def code_date(case: Case) -> date | None:
    """The date of the model code a row ran, None (today's code) when unknown.

    litgpt and torchtune: from the commits its source names, the earliest whose date is known
    (`vramplan.presets.frameworks.LITGPT_COMMIT_DATES`, `TORCHTUNE_COMMIT_DATES`), as a
    published run is no newer than the commit that published it. transformers' model code
    (`ModelCode.TRANSFORMERS`): the earliest date its source or notes state (`stated_date`).
    Unsloth: the release its notes name (`Unsloth 2024.5`, the banner `Unsloth: Fast Llama
    patching release 2024.5`; Unsloth numbers its releases year.month[.patch]), at the earliest
    date it can have run (`unsloth_release_date`), else as transformers'.
    torchtitan and Megatron-LM: the earliest date its source or notes state, as transformers';
    a Megatron-LM release tag the notes name first (`MEGATRON_CORE_RELEASE_DATES`). Other
    frameworks: None."""
    if case.framework in _COMMIT_DATES:
        known = _COMMIT_DATES[case.framework]
        dates = [known[commit[:8]] for commit in _COMMIT.findall(case.source)
                 if commit[:8] in known]
        return min(dates, default=None)
    if framework_defaults(case.framework).model_code not in (ModelCode.TRANSFORMERS,
                                                             ModelCode.TORCHTITAN,
                                                             ModelCode.MEGATRON):
        return None
    core = _MEGATRON_CORE_RELEASE.search(f"{case.source} {case.notes}")
    tag = (int(core.group(1)), int(core.group(2))) if core is not None else None
    if case.framework is Framework.MEGATRON and tag in MEGATRON_CORE_RELEASE_DATES:
        return MEGATRON_CORE_RELEASE_DATES[tag]
    release = _UNSLOTH_RELEASE.search(case.notes)
    if case.framework is Framework.UNSLOTH and release is not None:
        version = tuple(int(part) for part in release.groups() if part is not None)
        return unsloth_release_date(version)
    return stated_date(f"{case.source} {case.notes}")


_MEGATRON_CORE_RELEASE = re.compile(r"\bcore_r(\d+)\.(\d+)\.\d+\b")
"""A Megatron-LM release tag the row names (`core_r0.5.0`): its code is that tag's
(`MEGATRON_CORE_RELEASE_DATES`), whatever the date of the run."""


_UNSLOTH_RELEASE = re.compile(
    r"\bUnsloth:?\s+(?:[A-Za-z]+\s+){0,4}(20\d\d)\.(1[0-2]|[1-9])(?:\.(?:post)?(\d+))?"
    r"(?:\.\d+|\.post\d+)*\b")
"""A release the notes name, `Unsloth 2024.11.8` or the banner's `Unsloth: Fast Llama patching
release 2024.5` (year, month and the patch or post number when given)."""


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_ISO_DATE = re.compile(r"\b(20\d\d)-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH}(?:\s*[-/]\s*{_MONTH})?\s+(20\d\d)\b", re.IGNORECASE)
_ARXIV = re.compile(r"\barxiv[: ]*(\d\d)(0[1-9]|1[0-2])\.\d{4,5}\b", re.IGNORECASE)


def stated_date(text: str) -> date | None:
    """The earliest date `text` states: ISO dates (`2024-03-13`, `2024-10`), a month and year
    (`March 2024`; a range `Feb-Mar 2024` reads as its first month), arXiv identifiers
    (`arXiv 2403.13372`: March 2024); a month alone reads as its first day."""
    dates = [date(int(year), int(month), int(day or 1))
             for year, month, day in _ISO_DATE.findall(text)]
    dates += [date(int(year), _MONTHS.index(first.lower()) + 1, 1)
              for first, _, year in _MONTH_YEAR.findall(text)]
    dates += [date(2000 + int(year), int(month), 1) for year, month in _ARXIV.findall(text)]
    return min(dates, default=None)


LOSS_IN_FUNCTION_SOURCE = "extensions/thunder/"
"""Where a litgpt row's source names the thunder extension, its run is extensions/thunder/
pretrain.py, which computes the logits and the loss in `forward_and_loss` and returns the loss
alone (`TrainingSetup.loss_in_function`)."""


LIGHTNING_NOTE = re.compile(r"\b(?:pytorch[ -])?lightning\b(?![-_ ]ai)", re.IGNORECASE)
"""A row whose notes name PyTorch Lightning ran its loop: `training_step` computes the logits
and the loss and returns the loss alone (automatic optimization), so no loop variable holds the
logits (`TrainingSetup.loss_in_function`), whatever engine it drives (DeepSpeed, DDP). Not
`Lightning-AI`, the organization that publishes litgpt."""


OUTPUTS_DELETED_NOTE = re.compile(
    r"\b(?:deleting|deletes|del)\s+(?:the\s+)?(?:model's\s+)?(?:output|outputs|logits)\b"
    r"[^;]{0,20}\bafter the loss\b", re.IGNORECASE)
"""A row whose notes say its loop deletes the model's output once the loss is computed
(universal-llm-trainer's `del output` under `del_logits_after_forward`): nothing holds the
logits through backward."""


def loss_in_function(case: Case) -> bool:
    """The logits and the loss are computed in a function that returns the loss alone: litgpt's
    thunder extension (`LOSS_IN_FUNCTION_SOURCE`), or a PyTorch Lightning loop
    (`LIGHTNING_NOTE`) driving a framework whose own loop keeps the model's outputs; or that loop
    deletes them after the loss (`OUTPUTS_DELETED_NOTE`), to the same effect."""
    if case.framework is Framework.LITGPT:
        return LOSS_IN_FUNCTION_SOURCE in case.source
    return framework_defaults(case.framework).loop_keeps_outputs and (
        LIGHTNING_NOTE.search(case.notes) is not None
        or OUTPUTS_DELETED_NOTE.search(case.notes) is not None)


_LOSS_ON_16BIT_LOGITS = re.compile(
    r"\b(?:cross[_ ]entropy|CrossEntropyLoss)\b[^;]{0,80}?"
    r"(?:\bon the (?:bf16|fp16|16-bit) logits\b|\(model-dtype logits\b)", re.IGNORECASE)


def loss_on_16bit_logits(case: Case) -> bool:
    """The row's loop computes its cross-entropy on the model's 16-bit logits as they are, as its
    notes say ("F.cross_entropy on the bf16 logits", "nn.CrossEntropyLoss on output.logits[:, :-1]
    itself (model-dtype logits"; the format has no column for it): no fp32
    copy (`vramplan.training.setup.TrainingSetup.loss_16bit`). Not the stacks that cast first
    (Fabric's `convert_output` in litgpt's scripts, transformers' loss)."""
    return case.framework is not Framework.LITGPT \
        and _LOSS_ON_16BIT_LOGITS.search(case.notes) is not None


_LITGPT_MODEL = re.compile(r"\blitgpt(?:'s)?[ .](?:model\.)?GPT\b")
"""litgpt's model class named in a row's notes ("litgpt GPT", "litgpt.GPT", "litgpt's GPT")."""


def runs_litgpt_model(case: Case) -> bool:
    """A row of another stack whose notes say it ran litgpt's `GPT` (lightning-thunder's
    benchmark_litgpt.py): its head is never tied (`TrainingSetup.litgpt_model`)."""
    return case.framework is not Framework.LITGPT and _LITGPT_MODEL.search(case.notes) is not None


KBIT_PREPARATION_NOTE = "prepare_model_for_kbit_training"
"""How a QLoRA row's notes say that its script ran peft's `prepare_model_for_kbit_training`
and cast the embeddings and head back (TRL's trainers until 2025-12-04:
`vramplan.presets.frameworks.FrameworkDefaults.kbit_upcast_at_load`)."""

EMPTY_CACHE_NOTE = re.compile(
    r"\bempty_cache\b(?:\(\))?\s+(?:every|between|after (?:each|every))\b", re.IGNORECASE)
"""How a row's notes say that its loop called `torch.cuda.empty_cache()` between steps (the PEFT
MetaMathQA harness: `empty_cache every 10 steps`, method_comparison/MetaMathQA/run.py); the
name alone ("calls `empty_cache` only in code paths this run does not take") says nothing."""

_CUSTOM_SHARDED_EMBEDDING = re.compile(r"\bcustom_sharded_layers\b[^;]{0,40}?\btok_embeddings\b",
                                       re.IGNORECASE)
"""torchtune's `custom_sharded_layers` naming `tok_embeddings`, as its llama3 and llama3_1
`8B_full` and `70B_full` configs do (pytorch/torchtune recipes/configs @30b8519e8)."""


def embedding_sharded_apart(case: Case) -> bool:
    """A torchtune FSDP row whose notes say the input embedding was a unit of its own
    (`_CUSTOM_SHARDED_EMBEDDING`): the recipe adds `n in custom_sharded_layers` to its shard
    conditions and `training.shard_model` gives each such module its own `fully_shard`, resharded
    after forward (recipes/full_finetune_distributed.py and torchtune/training/_distributed.py
    @30b8519e8), as `vramplan.distributed.sharding.Parallelism.embedding_apart` models. An
    `output` named beside it is a unit of its own as well, which is not modelled: the head is
    counted with the root, gathered from its forward to its backward (at most the head's bytes
    more between the two)."""
    return case.framework is Framework.TORCHTUNE and case.sharding in FSDP_SCHEMES \
        and _CUSTOM_SHARDED_EMBEDDING.search(case.notes) is not None


_NO_ACCUMULATION = re.compile(r"\b(?:no|without) (?:grad|gradient) accumulation\b",
                              re.IGNORECASE)
_ACCUMULATION = re.compile(r"\b(?:grad|gradient) accumulation\b", re.IGNORECASE)
_ACCUMULATION_STEPS = re.compile(
    r"\b(?:grad|gradient)[ _](?:accumulation(?:[ _]steps)?|accumul?ate[ _]steps?)\b['\"]?\W{0,3}"
    r"(?:of\s+)?(\d{1,6})\b",
    re.IGNORECASE)
"""A number of micro-batches per step, as command lines, configs and prose give it
(`--gradient_accumulation_steps 4`, `gradient_accumulation_steps: 1`, `gradient accumulation
(2)`, `gradient accumulation steps of 8`, universal-llm-trainer's `gradient_accumuate_step 1`)."""


_PRINTED_METRIC = re.compile(
    r"\bprints? torch\.cuda\.(max_memory_allocated|max_memory_reserved|memory_reserved)\(\)")
"""The one memory figure a row's notes say its run's own code prints (universal-llm-trainer's
progress bar: `torch.cuda.memory_reserved()`, what the caching allocator holds; it never
shrinks without `empty_cache`, so a later step's reading is the run's reserved peak)."""


def printed_metric(notes: str) -> Metric | None:
    """The metric an empty cell reads as when the notes name what the run's code prints."""
    said = _PRINTED_METRIC.search(notes)
    if said is None:
        return None
    return Metric.ALLOCATED if said.group(1) == "max_memory_allocated" else Metric.RESERVED


def accumulates(case: Case) -> bool:
    """Whether the row's run accumulated gradients over micro-batches, as its notes say (the
    format has no column for it): "no gradient accumulation" / "without gradient accumulation";
    else the number of micro-batches they give when they give one (`gradient_accumulation_steps
    1` does not accumulate); else "gradient accumulation" named; else the command its source
    prints (`TORCHTUNE_OPTIMIZATION_FLAGS_SOURCE`), the litgpt recipe its source names
    (`litgpt_recipe`), else the framework's default
    (`vramplan.presets.frameworks.default_gradient_accumulation`)."""
    if _NO_ACCUMULATION.search(case.notes):
        return False
    steps = {int(n) for n in _ACCUMULATION_STEPS.findall(case.notes)}
    if len(steps) == 1:
        return steps.pop() > 1
    if _ACCUMULATION.search(case.notes):
        return True
    if case.framework is Framework.TORCHTUNE and TORCHTUNE_OPTIMIZATION_FLAGS_SOURCE in case.source:
        return False
    recipe = litgpt_recipe(case)
    if recipe is not None:
        return recipe.accumulates
    return default_gradient_accumulation(case.framework, case.method)


TORCHTUNE_OPTIMIZATION_FLAGS_SOURCE = "pytorch/torchtune README.md 'Optimization flags' table"
"""The source of the rows of torchtune's README table of optimization flags, measured with the
command printed under it (README.md @1814feb17: `tune run lora_finetune_single_device ...
gradient_accumulation_steps=1`, the techniques "added on top of the previous one"): no row of it
accumulates gradients, whatever the LoRA recipes' default (`accumulates`)."""


def litgpt_recipe(case: Case) -> LitgptRecipe | None:
    """The litgpt finetuning recipe a row's run used, when its source is litgpt's config_hub
    (`vramplan.presets.litgpt_recipes`): an empty cell of such a row is the recipe's value."""
    if case.framework is not Framework.LITGPT or LITGPT_HUB_SOURCE not in case.source:
        return None
    return LITGPT_HUB_RECIPES.get((case.model, case.method))


def lora_rank(case: Case) -> int | None:
    """The row's LoRA rank: its `lora_r`, else its litgpt recipe's, else None (the framework's
    default)."""
    if case.lora_r is not None:
        return case.lora_r
    recipe = litgpt_recipe(case)
    return recipe.lora_r if recipe is not None else None


_LAST_BLOCKS = re.compile(r"\blast (\d{1,5}) (?:decoder |transformer )?(?:layers|blocks)\b",
                          re.IGNORECASE)


def trained_blocks(case: Case) -> int:
    """How many of the last blocks a `freeze` row trains: what its notes say ("last 3 layers
    trainable"; the format has no column for it), else the framework's default
    (`vramplan.presets.frameworks.FrameworkDefaults.freeze_layers`)."""
    said = _LAST_BLOCKS.search(case.notes)
    if said is not None and int(said.group(1)) > 0:
        return int(said.group(1))
    return framework_defaults(case.framework).freeze_layers


_FLOAT = r"(?:torch\.)?(?:bf16|fp16|fp32|bfloat16|float16|float32)"
_FLOAT_QUANT_STORAGE = re.compile(
    rf"quant[_ ]storage[ :=]*{_FLOAT}\b|\b{_FLOAT} quant[_ ]storage\b", re.IGNORECASE)


def float_quant_storage(case: Case) -> bool:
    """The row's 4-bit base is stored in a float dtype (bitsandbytes `bnb_4bit_quant_storage`,
    "quant_storage bf16" in its notes; the format has no column for it): peft's adapters then
    take that dtype (`vramplan.training.setup.adapters_in_fp32`)."""
    return _FLOAT_QUANT_STORAGE.search(case.notes) is not None


_LORA_DROPOUT = re.compile(
    r"(?<!attention )(?<!hidden )(?<!residual )(?<!embedding )(?<!attn )(?<!resid )"
    r"\b(?:lora[_ ])?dropout[ :=]*(0?\.\d+|0)(?![\d.])", re.IGNORECASE)
"""An adapter's dropout rate; the model's own ("attention dropout 0.1", "hidden_dropout 0.1")
is not the adapters'."""


def lora_dropout(case: Case) -> float | None:
    """The adapters' dropout rate of a LoRA row, as its notes give it ("dropout 0.1",
    "lora_dropout=0.05"; the format has no column for it), else None: the framework's default
    (`vramplan.training.setup.lora_dropout_active`)."""
    said = _LORA_DROPOUT.search(case.notes)
    return float(said.group(1)) if said is not None else None


_FSDP1 = re.compile(rf"{_UNDENIED}(?:(?<![\w-])FSDP1(?![\w-])|\bfsdp_version[ :=]*1\b|"
                    r"\bFullyShardedDataParallel\(|\bFSDP1-style\b)", re.IGNORECASE)
_FSDP2 = re.compile(rf"{_UNDENIED}(?:(?<![\w-])FSDP2(?![\w-])|\bfsdp_version[ :=]*2\b|"
                    r"\bfully_shard\b)", re.IGNORECASE)
"""An FSDP named in a row's notes: not inside a hyphenated name (another row's id cited in
the notes, whose "fsdp2" may count GPUs)."""


def fsdp_version(case: Case) -> FsdpVersion | None:
    """The FSDP a `fsdp` row ran, when its `sharding` cell names it (`fsdp1`, `fsdp2`) or its
    notes name it ("FSDP2", "fsdp_version: 2", "fully_shard"; else "FSDP1", "fsdp_version: 1",
    "FullyShardedDataParallel(": a `fsdp-grad-op` row has no cell for FSDP1's SHARD_GRAD_OP;
    not after "no", "not" or "without"; the format has no column for it), else None: the
    framework's default
    (`vramplan.presets.frameworks.FrameworkDefaults.fsdp_version`). The id is not read: an id's
    "fsdp2" may count GPUs."""
    if case.fsdp_named is not None:
        return case.fsdp_named
    if _FSDP2.search(case.notes) is not None:
        return FsdpVersion.FSDP2
    return FsdpVersion.FSDP1 if _FSDP1.search(case.notes) is not None else None


@dataclass(frozen=True, slots=True)
class ModelParallel:
    """Tensor, pipeline and expert parallel sizes a row's notes give (the format has no column
    for them): 1 where they say nothing."""

    tensor: int = 1
    pipeline: int = 1
    expert: int = 1

    @property
    def splits_model(self) -> bool:
        return self.tensor * self.pipeline * self.expert > 1


def _size_pattern(short: str, long: str) -> re.Pattern[str]:
    """`tp=2`, `TP 2`, `TP2` (as in `TP2PP4`), `tensor parallel 2`, `tensor parallelism = 2`,
    `--tensor-model-parallel-size 2`, `tensor_model_parallel_size: 2`."""
    return re.compile(
        rf"(?<![a-z]){short}\s*[=:]?\s*(\d+)(?!\.\d)|"
        rf"\b{long}[-_ ](?:model[-_ ])?parallel(?:ism)?(?:[-_ ]size)?\s*[=:]?\s*(\d+)\b",
        re.IGNORECASE)


_TENSOR_PARALLEL = _size_pattern("tp", "tensor")
_PIPELINE_PARALLEL = _size_pattern("pp", "pipeline")
_EXPERT_PARALLEL = re.compile(
    r"(?<![a-z])ep\s*=\s*(\d+)\b|\bexpert[-_ ](?:model[-_ ])?parallel(?:ism)?(?:[-_ ]size)?"
    r"\s*[=:]?\s*(\d+)\b", re.IGNORECASE)


def model_parallel(case: Case) -> ModelParallel:
    """The tensor, pipeline and expert parallel sizes of a training row, from its notes (Megatron-
    LM's `--tensor-model-parallel-size 2`, `tp=2`, `TP2PP2`...); 1 where they are silent. A
    size must divide the row's GPUs (checked by `vramplan.distributed.sharding
    .check_parallelism`, which refuses the row otherwise)."""
    if case.method is Method.INFERENCE:
        return ModelParallel()

    def size(pattern: re.Pattern[str]) -> int:
        found = pattern.search(case.notes)
        return int(next(g for g in found.groups() if g)) if found else 1

    return ModelParallel(tensor=size(_TENSOR_PARALLEL), pipeline=size(_PIPELINE_PARALLEL),
                         expert=size(_EXPERT_PARALLEL))


_DISTRIBUTED_OPTIMIZER = re.compile(
    r"(?<!no )(?<!without )(?<!without the )\b(?:--)?use[-_]distributed[-_]optimizer\b"
    r"(?!\s*[=:]?\s*false)|(?<!no )(?<!without )(?<!without the )\bdistributed optimizer\b",
    re.IGNORECASE)


def megatron_distributed_optimizer(case: Case) -> bool:
    """A Megatron-LM row whose notes say it used the distributed optimizer
    (`--use-distributed-optimizer`, "distributed optimizer"; not "no"/"without" it): its scheme
    is `zero1` (`vramplan.distributed.sharding.Parallelism.main_grad_buffer`) when its
    `sharding` cell is empty or `ddp`."""
    return case.framework is Framework.MEGATRON \
        and _DISTRIBUTED_OPTIMIZER.search(case.notes) is not None


_MS_SWIFT_RLHF = re.compile(r"\bswift rlhf\b")
_MS_SWIFT_REPOSITORY = "modelscope/ms-swift"


def ms_swift_rlhf(case: Case) -> bool:
    """A preference or RL row that ms-swift ran: its notes give a `swift rlhf` command or its
    source is one of ms-swift's examples. Its PPO value model takes the policy's adapters
    (`vramplan.training.setup.AlignmentSetup.value_adapters`)."""
    return _MS_SWIFT_RLHF.search(case.notes) is not None or _MS_SWIFT_REPOSITORY in case.source


_MS_SWIFT_ZERO3 = re.compile(r"\bswift (?:sft|rlhf)\b.*--deepspeed zero3\b")


def zero3_config_file(case: Case) -> Zero3ConfigFile | None:
    """The ZeRO-3 config file of a row whose notes give an ms-swift command with `--deepspeed
    zero3` (`swift sft ... --deepspeed zero3`: `MS_SWIFT_ZERO3`, the file ms-swift ships; the
    format has no column for it and ms-swift is no framework of ours), with the DeepSpeed config
    keys the notes give a number (`sub_group_size 1e8`, `"stage3_max_live_parameters": 1e8`,
    `stage3_max_reuse_distance`, `stage3_prefetch_bucket_size`, `reduce_bucket_size`) over it
    or over the framework's file; None when the notes give neither: the row's framework's
    (`vramplan.distributed.per_gpu.ZERO3_CONFIG_FILES`). `zero3_offload` is another file and
    is not read."""
    base = MS_SWIFT_ZERO3 if _MS_SWIFT_ZERO3.search(case.notes) is not None else None
    keys = {match.group(1): int(float(match.group(2)))
            for match in _ZERO3_KEY.finditer(case.notes)}
    if not keys:
        return base
    base = base or ZERO3_CONFIG_FILES.get(case.framework) \
        or Zero3ConfigFile(buckets_from_hidden_size=False)
    return replace(
        base,
        sub_group_elements=keys.get("sub_group_size", base.sub_group_elements),
        max_live_parameters=keys.get("stage3_max_live_parameters", base.max_live_parameters),
        max_reuse_distance=keys.get("stage3_max_reuse_distance", base.max_reuse_distance),
        prefetch_bucket_elements=keys.get("stage3_prefetch_bucket_size",
                                          base.prefetch_bucket_elements),
        reduce_bucket_elements=keys.get("reduce_bucket_size", base.reduce_bucket_elements))


_ZERO3_KEY = re.compile(
    r"\b(sub_group_size|stage3_max_live_parameters|stage3_max_reuse_distance|"
    r"stage3_prefetch_bucket_size|reduce_bucket_size)\b[\"']?\s*[:=]?\s*"
    r"(\d+(?:\.\d+)?(?:[eE]\+?\d+)?)\b")
"""A DeepSpeed ZeRO config key (deepspeed/runtime/zero/config.py) given a number in a row's
notes."""


_ALLOC_CONF = re.compile(r"PYTORCH_CUDA_ALLOC_CONF\s*=\s*['\"]?([\w:.,]+)")


def alloc_conf(case: Case) -> AllocatorConfig:
    """The allocator settings the row's notes give (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:
    True` before the command; the format has no column for it), else PyTorch's defaults. Settings
    the simulation does not take leave the defaults."""
    said = _ALLOC_CONF.search(case.notes)
    if said is None:
        return PYTORCH_DEFAULTS
    try:
        return parse_alloc_conf(said.group(1))
    except AllocConfError:
        return PYTORCH_DEFAULTS


def card_free_bytes(case: Case) -> int | None:
    """What the row's card has free when the model loads (`torch.cuda.mem_get_info`): its
    capacity less the CUDA context; None without a card."""
    return free_at_load_bytes(case.gpu.capacity_bytes) if case.gpu else None


def largest_batch_first(case: Case) -> bool:
    """The row's run processed its largest batch first (said in its notes): the peak is that of
    the run's first micro-batch, not of a steady state at `seq_len`."""
    return LARGEST_BATCH_FIRST in case.notes.lower()


FIRST_STEP_REPORT = re.compile(r"\(after 1 iterations?\)", re.IGNORECASE)
"""How a row's notes quote a figure that covers the run's first step only: Megatron-LM's
`report_memory` line `(after 1 iterations) memory (MB) | ... | max allocated: ...`, printed once,
at the first logging interval (megatron/training/training.py `training_log`:
`report_memory_flag`), with `log_interval` 1. The optimizer's states are made inside that step
(`torch.optim`'s and Transformer Engine's FusedAdam create them at their first `step()`), so the
micro-batches before it ran without them."""


def first_step_only(case: Case) -> bool:
    """The row's figure covers the run's first step, not a steady state (`FIRST_STEP_REPORT`)."""
    return FIRST_STEP_REPORT.search(case.notes) is not None


def metric_on_card(estimate: PeakOverPhases, metric: Metric, gpu: Gpu | None) -> int:
    """The estimate in `metric`, on the row's card: the caching allocator cannot reserve more
    than the card gives it. When `cudaMalloc` fails it releases its free cached segments and
    retries (c10/cuda/CUDACachingAllocator.cpp `release_cached_blocks`, counted in
    `num_alloc_retries`), so a run whose tensors fit reserves at most the card less the CUDA
    context (and what managed memory holds)."""
    value = estimate.metric_bytes(metric)
    if gpu is None or metric is Metric.ALLOCATED:
        return value
    room = gpu.capacity_bytes - estimate.outside_allocator_bytes
    if estimate.allocated_bytes > room:
        return value
    reserved = min(estimate.reserved_bytes, room)
    return reserved if metric is Metric.RESERVED else \
        reserved + estimate.outside_allocator_bytes


def _score_training(case: Case) -> CaseScore:
    from vramplan.presets.models import architecture_of, find_model

    estimate = estimate_step(architecture_of(find_model(case.model)), training_setup_of(case))
    return CaseScore(case, _outcome(case), metric_on_card(estimate, case.metric, case.gpu),
                     estimate.device_bytes, estimate.peak.phase.value, "training")


def _score_multi_gpu(case: Case) -> CaseScore:
    estimate = multi_gpu_estimate(case)
    return CaseScore(case, _outcome(case), metric_on_card(estimate, case.metric, case.gpu),
                     estimate.device_bytes, estimate.peak.phase.value, "per_gpu")


def multi_gpu_estimate(case: Case) -> PerGpuEstimate:
    """One GPU's estimate of a row on several GPUs, with the parallelism its cells and notes
    give."""
    from vramplan.presets.models import architecture_of, find_model

    setup = training_setup_of(case)
    split = model_parallel(case)
    if case.sharding is Scheme.NONE and case.gpus > 1 and not split.splits_model:
        # no data parallelism on several GPUs: the model split across them by layers
        plan = default_parallelism(setup, case.sharding, case.gpus, case.offload,
                                   pipeline_parallel=case.gpus,
                                   pipeline_schedule=PipelineSchedule.SEQUENTIAL)
    else:
        scheme = case.sharding
        if scheme in (Scheme.NONE, Scheme.DDP) and megatron_distributed_optimizer(case):
            scheme = Scheme.ZERO1
        if scheme is Scheme.NONE and case.gpus > split.tensor * split.pipeline:
            scheme = Scheme.DDP  # copies of the model beside the split: data parallelism
        plan = default_parallelism(setup, scheme, case.gpus, case.offload,
                                   tensor_parallel=split.tensor, pipeline_parallel=split.pipeline,
                                   expert_parallel=split.expert,
                                   fsdp_version=fsdp_version(case), on=setup.code_date)
    if embedding_sharded_apart(case):
        plan = replace(plan, embedding_apart=True)
    if case.sharding is Scheme.ZERO3 and OUTSIDE_ZERO_INIT_NOTE.search(case.notes):
        plan = replace(plan, zero3_built_outside_init=True)
    if case.framework is Framework.MEGATRON and OVERLAP_GRAD_REDUCE_NOTE.search(case.notes):
        plan = replace(plan, overlap_grad_reduce=True)
    if case.sharding in (Scheme.ZERO1, Scheme.ZERO2) and COLOSSALAI_ZERO_NOTE.search(case.notes):
        plan = replace(plan, offload_keeps_gradients=True, buffers=replace(
            plan.buffers, zero_reduce_bucket_elements=COLOSSALAI_REDUCE_BUCKET_ELEMENTS))
    return estimate_per_gpu(architecture_of(find_model(case.model)), setup, plan,
                            zero3_config=zero3_config_file(case))


OVERLAP_GRAD_REDUCE_NOTE = re.compile(
    r"--overlap-grad-reduce\b|\boverlap_grad_reduce\W{0,4}(?:=\s*)?true\b", re.IGNORECASE)
"""A Megatron row whose notes say it reduced its gradients bucket by bucket
(`--overlap-grad-reduce`, `overlap_grad_reduce true`): `vramplan.distributed.sharding.
Parallelism.overlap_grad_reduce`."""


COLOSSALAI_ZERO_NOTE = re.compile(r"\bLowLevelZeroPlugin\b")
"""A `zero1`/`zero2` row that ran ColossalAI's `LowLevelZeroPlugin`: its optimizer offload keeps
the gradient partition on the GPU (`vramplan.distributed.sharding.Parallelism.
offload_keeps_gradients`), and it reduces through `COLOSSALAI_REDUCE_BUCKET_ELEMENTS`."""
COLOSSALAI_REDUCE_BUCKET_ELEMENTS = 12 * 1024 * 1024
"""LowLevelZeroPlugin `reduce_bucket_size_in_m=12`, passed as `reduce_bucket_size_in_m * 1024 *
1024` elements (colossalai/booster/plugin/low_level_zero_plugin.py @d888c378)."""

OUTSIDE_ZERO_INIT_NOTE = re.compile(r"\boutside (?:deepspeed\.)?zero\.Init\b")
"""How a ZeRO-3 row's notes say that its script built the model outside `deepspeed.zero.Init`
(`vramplan.distributed.sharding.Parallelism.zero3_built_outside_init`)."""


LAYER_SPLIT_NOTE = re.compile(r"\bgenerate[/_ ]sequentially\b|\bsequentially\.py\b|"
                              r"\blayer_to_device\b", re.IGNORECASE)
"""An inference row whose notes say its blocks were placed on its GPUs in consecutive chunks by one
process (litgpt's generate/sequentially.py), not split by tensor parallelism."""

_MAX_SEQ_LEN = re.compile(r"\bmax_seq_len\b\W{0,3}(\d{2,7})\b", re.IGNORECASE)


def torchtune_generate_cache(case: Case) -> tuple[int | None, bool | None]:
    """How torchtune's generate recipe of the row's date held its KV cache: (tokens it allocated
    it for, whether it held every query head), None where today's recipe does as the estimate
    does. Before `TORCHTUNE_GENERATE_CACHE_FITS_SINCE`, the model's `max_seq_len` (the notes'
    "max_seq_len N", else config.json's `max_position_embeddings`); before
    `TORCHTUNE_KV_HEADS_CACHED_SINCE`, every query head. A row without a known date runs
    today's recipe."""
    on = code_date(case)
    if case.framework is not Framework.TORCHTUNE or on is None:
        return None, None
    tokens = None
    if on < TORCHTUNE_GENERATE_CACHE_FITS_SINCE:
        said = _MAX_SEQ_LEN.search(case.notes)
        tokens = int(said.group(1)) if said is not None else \
            architecture_of(find_model(case.model)).max_position_embeddings
    return tokens, (True if on < TORCHTUNE_KV_HEADS_CACHED_SINCE else None)


def _score_inference(case: Case) -> CaseScore:
    vllm = VLLM_NOTE.search(case.notes) is not None
    cache_tokens, kv_all_heads = torchtune_generate_cache(case)
    generate = None if vllm or case.framework is not Framework.HF \
        else transformers_code(code_date(case))
    estimate = estimate_inference_case(
        case.model, case.precision.value, case.quant.value, batch=case.batch,
        seq_len=case.seq_len, new_tokens=case.new_tokens,
        framework=Engine.VLLM.value if vllm else case.framework.value,
        gpus=case.gpus, attention=case.attention.value,
        layer_split=case.gpus > 1 and LAYER_SPLIT_NOTE.search(case.notes) is not None,
        cache_tokens=cache_tokens, kv_all_heads=kv_all_heads,
        previous_cache_alive=generate is not None and generate.generate_holds_two_caches,
        prompt_logits_bytes=0 if generate is None else generate_prompt_logits_bytes(case, generate),
        prompt_logits_kept=generate is not None and generate.generate_keeps_prefill_outputs,
        bnb_compute_16bit=BNB_COMPUTE_16BIT_NOTE.search(case.notes) is not None,
        rope_tables=generate is not None
        and architecture_of(find_model(case.model)).family in generate.rope_caches,
        torchtune_rope_modules=torchtune_rope_modules(
            architecture_of(find_model(case.model)).n_layers, code_date(case))
        if case.framework is Framework.TORCHTUNE else 0)
    allocated, device = estimate.allocated_bytes, estimate.device_bytes
    if case.metric is not Metric.ALLOCATED and not vllm:
        # `reserved` and `device` read the allocator's cache: what a growing KV cache leaves
        # behind (`vramplan.inference.allocations`), and transformers' warm-up segment, which
        # the tensors fill first
        growth = growing_cache_reserve_bytes(estimate, card_free_bytes(case))
        warmup = warmup_reserved_bytes(case, estimate)
        allocated = max(allocated + growth, warmup)
        device = max(device + growth, warmup + estimate.cuda_context_bytes)
    if vllm and case.gpu is not None:
        # vLLM takes `requested_memory = total_memory * gpu_memory_utilization` and gives the
        # KV cache whatever its weights, profiled activations and non-torch memory leave of it
        # (vllm/v1/worker/gpu_worker.py `init_device`, `determine_available_memory`): the
        # process holds its share of the card whatever the request.
        requested = round(vllm_memory_utilization(case) * case.gpu.capacity_bytes)
        device = max(device, requested)
        allocated = max(allocated, requested - estimate.cuda_context_bytes)
    # compare the allocated peak with allocated/reserved, the device total with device
    value = device if case.metric is Metric.DEVICE else allocated
    if case.metric is Metric.ALLOCATED and ALLOCATED_PLUS_OUTSIDE_NOTE.search(case.notes):
        value += estimate.cuda_context_bytes
    return CaseScore(case, _outcome(case), value, device, "", "inference")


ALLOCATED_PLUS_OUTSIDE_NOTE = re.compile(
    r"allocated_bytes\.all\.peak\s*\+\s*\(nvidia-smi memory\.used peak\b.{0,80}?"
    r"-\s*reserved_bytes\.all\.peak\)")
"""An `allocated` row whose figure is the allocated peak plus what the process holds outside
PyTorch's allocator, NVML's used memory less the reserved peak (optimum's
tests/benchmark/benchmark_gptq.py `benchmark_memory`): scored as the allocated estimate plus the
CUDA context the device estimate counts (`vramplan.presets.cuda.CUDA_CONTEXT_BYTES`)."""


BNB_COMPUTE_16BIT_NOTE = re.compile(
    r"\bbnb_4bit_compute_dtype\s*[=:]\s*['\"]?(?:torch\.)?(?:b?float16|b?f16)\b")
"""An inference row whose notes give bitsandbytes' 4-bit compute dtype as a 16-bit one
(`InferenceInputs.bnb_compute_16bit`)."""


def generate_prompt_logits_bytes(case: Case, code: TransformersCode) -> int:
    """Bytes per value of the logits transformers' `generate` of `code`'s release kept for every
    prompt position of the row (`TransformersCode.generate_all_prompt_logits`): fp32 where the
    model upcast them (`TransformersCode.upcasts_logits`), else the row's 16-bit dtype; 0 where
    it kept the last one."""
    if not code.generate_all_prompt_logits:
        return 0
    if code.upcasts_logits(architecture_of(find_model(case.model)).family):
        return ComputeDtype.FP32.bytes
    return _CASE_DTYPES[case.precision.value].bytes


DEVICE_MAP_NOTE = re.compile(r"\bdevice_map\b")


def warmup_reserved_bytes(case: Case, estimate: InferenceEstimate) -> int:
    """What transformers' loading left reserved for a `hf` inference row, by the release of the
    row's date (`vramplan.presets.frameworks.TransformersCode`, dated by its source and notes;
    none: today's): its allocator warm-up, one segment whose unused part the step's tensors fill
    first. A bitsandbytes load (whose `device_map` transformers sets itself) warms up half the
    meta model's bytes, its linears at full shape in the 16-bit load dtype (factor 4), more than
    its 4-bit weights; an unquantized load with a `device_map` (its notes say so) warms up its
    weights exactly, plus the tied matrix counted twice from v4.50 to v4.53. 0 otherwise."""
    if case.framework is not Framework.HF:
        return 0
    code = transformers_code(code_date(case))
    arch = estimate.inputs.arch
    tied = arch.params_token_embedding if arch.tied_embeddings else 0
    itemsize = estimate.inputs.compute_dtype.bytes
    free = card_free_bytes(case)
    if case.quant is not Quant.NONE:
        return code.quantized_warmup_bytes(arch.params_total, tied, itemsize, free)
    if not (tied and code.warmup_counts_tied) or DEVICE_MAP_NOTE.search(case.notes) is None:
        return 0
    return code.warmup_bytes(estimate.bytes_of(PartKind.WEIGHTS) + tied * itemsize,
                             UNQUANTIZED_WARMUP_FACTOR, free)


UNQUANTIZED_WARMUP_FACTOR = 2
"""`caching_allocator_warmup`'s factor without a quantizer: the whole model."""


VLLM_NOTE = re.compile(rf"{_UNDENIED}\bvllm\b(?!'s)(?! tables?\b)", re.IGNORECASE)
"""An inference row whose notes name vLLM ran on vLLM (the format's frameworks are training
stacks); not a denied name ("not vLLM", "without vLLM") nor a mention of another source's
figures ("vLLM's", "the vLLM table")."""
_UTILIZATION = re.compile(r"gpu[_ -]memory[_ -]utilization[\s=:]*(0?\.\d+|1(?:\.0+)?)\b",
                          re.IGNORECASE)


def vllm_memory_utilization(case: Case) -> float:
    """The share of the card a vLLM row's engine takes: `gpu_memory_utilization` as its notes
    give it (`--gpu-memory-utilization 0.8`, `gpu_memory_utilization=0.95`), else vLLM's
    default (`vramplan.presets.inference_engines.VLLM_MEMORY_UTILIZATION`)."""
    said = _UTILIZATION.search(case.notes)
    return float(said.group(1)) if said is not None else VLLM_MEMORY_UTILIZATION


# --- inference rows -----------------------------------------------------------------------------

UNPUBLISHED_PROMPT_TOKENS = 8
"""Prompt length assumed when a measured case does not publish it: the published runs used short
prompts ('Hello, my name is', 'What food do llamas eat?'), 5 to 8 tokens with their tokenizers."""

_CASE_DTYPES = {"bf16-true": ComputeDtype.BF16, "mixed": ComputeDtype.BF16,
                "fp16-true": ComputeDtype.FP16, "16-true": ComputeDtype.FP16,
                "fp32": ComputeDtype.FP32, "amp": ComputeDtype.FP32}
_CASE_ENGINES = {"litgpt": Engine.LITGPT, "hf": Engine.HF, "vllm": Engine.VLLM,
                 "llama.cpp": Engine.LLAMA_CPP, "generic": Engine.GENERIC}


def estimate_inference_case(model: str, precision: str, quant: str, *, batch: int,
                            seq_len: int | None, new_tokens: int | None, framework: str = "",
                            gpus: int = 1, attention: str = "", layer_split: bool = False,
                            cache_tokens: int | None = None,
                            kv_all_heads: bool | None = None,
                            previous_cache_alive: bool = False, prompt_logits_bytes: int = 0,
                            prompt_logits_kept: bool = False,
                            bnb_compute_16bit: bool = False,
                            rope_tables: bool = False,
                            torchtune_rope_modules: int = 0) -> InferenceEstimate:
    """Estimate one `method=inference` row of a cases file (columns as in docs/cases-format.md):
    `seq_len` is the prompt length (UNPUBLISHED_PROMPT_TOKENS when empty), the cache holds prompt
    plus `new_tokens`, the KV cache and activations are in the precision's dtype, `quant` picks the
    weight format (`none` keeps the precision's dtype), `gpus` is the tensor-parallel degree, or,
    with `layer_split`, the GPUs the blocks are placed on in consecutive chunks; `cache_tokens`,
    `kv_all_heads`, `previous_cache_alive`, `prompt_logits_bytes`, `prompt_logits_kept`,
    `bnb_compute_16bit`, `rope_tables` and `torchtune_rope_modules` as in
    `vramplan.inference.setup.InferenceInputs`.
    Compare `allocated_bytes` with metric `allocated`/`reserved`, `device_bytes` with `device`."""
    if precision not in _CASE_DTYPES:
        raise UnknownName("precision", precision, list(_CASE_DTYPES))
    dtype = _CASE_DTYPES[precision]
    weights = find_format(dtype.value if quant in ("", "none") else quant)
    engine = _CASE_ENGINES.get(framework or "generic", Engine.GENERIC)
    prompt = seq_len or UNPUBLISHED_PROMPT_TOKENS
    kv = {ComputeDtype.FP32: KvDtype.FP32, ComputeDtype.BF16: KvDtype.BF16}.get(dtype, KvDtype.FP16)
    kernel = Attention.EAGER if attention == "eager" else Attention.SDPA
    return estimate_inference(inference_inputs(
        architecture_of(find_model(model)), weights, context=prompt + (new_tokens or 0),
        batch=batch, prompt=prompt, kv_dtype=kv, compute_dtype=dtype, engine=engine,
        tensor_parallel=1 if layer_split else gpus, attention=kernel, model_name=model,
        layer_split=gpus if layer_split else 1, cache_tokens=cache_tokens,
        kv_all_heads=kv_all_heads, previous_cache_alive=previous_cache_alive,
        prompt_logits_bytes=prompt_logits_bytes, prompt_logits_kept=prompt_logits_kept,
        bnb_compute_16bit=bnb_compute_16bit, rope_tables=rope_tables,
        torchtune_rope_modules=torchtune_rope_modules))
