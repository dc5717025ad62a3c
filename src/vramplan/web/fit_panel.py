"""The page's "Activations" estimate and "Will it fit?" section: query text -> typed inputs ->
the core -> what the templates show. Formatting and geometry only; every number comes from
`vramplan.training.estimate` and `vramplan.planner.report`.

Query fields are named like `vramplan fit`'s options: `gpu`, `gpus`, `sharding`, `offload`,
`precision`, `checkpointing`, `margin`, and, shared with the Activations group, `batch`,
`seq_len`, `method`. The model is the page's model picker (`model`); the optimizer is the seed's
"memory per parameter" preset, mapped to the training optimizer it names (`SEED_OPTIMIZERS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, TypeVar
from urllib.parse import urlencode

from vramplan.distributed.per_gpu import overhead_parts
from vramplan.errors import MissingValue, VramplanError
from vramplan.i18n import Lang, translate
from vramplan.planner.report import FitReport, fit_report
from vramplan.planner.search import MAX_GPUS
from vramplan.presets.gpus import GPUS, Gpu, find_gpu
from vramplan.presets.models import ModelPreset
from vramplan.requests.reading import Inputs, read, read_all
from vramplan.requests.seed import simple_activations as seed_activations
from vramplan.requests.training import fit_request
from vramplan.requests.vocabulary import ACTIVATIONS_FORM, FIT, GPU, LORA_R, LORA_TARGETS
from vramplan.requests.vocabulary import GPUS as GPU_COUNT
from vramplan.units import bytes_to_gb, format_number
from vramplan.vocab import (
    Checkpointing,
    Generation,
    LoraTarget,
    Method,
    Offload,
    Precision,
    Scheme,
)
from vramplan.web.chart import Segment, palette_styles, stack, units_per_byte
from vramplan.web.labels import alignment_line, field_label, option_label, setting_text
from vramplan.web.view import PageRequest, typeset

_T = TypeVar("_T")

DEFAULT_GPU = "h100-80gb"
"""The seed's "80 GB accelerator"."""
TRAINING_METHODS = (Method.FULL, Method.FREEZE, Method.LORA, Method.QLORA, Method.DPO,
                    Method.ORPO, Method.SIMPO, Method.KTO, Method.PPO, Method.GRPO)
"""Methods that train (`inference` is the sister calculator's)."""
LORA_METHODS = frozenset(method.value for method in Method if method.uses_lora)
"""Methods that read the LoRA settings (`lora_r`, `lora_targets`)."""
ALIGNMENT_METHODS = tuple(m.value for m in TRAINING_METHODS if m.is_alignment)
"""Preference and RL methods: their policy is trained as the `policy` field says."""
ONLINE_METHODS = frozenset(m.value for m in TRAINING_METHODS if m.generates)
DEFAULT_TARGETS = LORA_TARGETS.default_text() or ""
"""`q,v`, peft's default for Llama-style models (a query without `lora_targets` means it)."""


@dataclass(frozen=True, slots=True)
class FitForm:
    """The fields as typed. The defaults are `vramplan fit`'s, except `precision` (`mixed`, as the
    seed's "Adam in mixed precision") and `gpu` (the seed's 80 GB accelerator)."""

    gpu: str = DEFAULT_GPU
    gpus: str = "1"
    sharding: str = ""
    """Empty: `none` on one GPU, `ddp` on more (as the CLI)."""
    offload: str = Offload.NONE.value
    precision: str = Precision.MIXED.value
    checkpointing: str = Checkpointing.NONE.value
    margin: str = "80"
    batch: str = "1"
    seq_len: str = "2048"
    method: str = Method.FULL.value
    lora_r: str = str(LORA_R.default)
    lora_targets: str = DEFAULT_TARGETS
    """The ticked modules, comma-joined (`q,v`); empty when none is ticked."""
    policy: str = Method.FULL.value
    """A preference or RL method's policy: full, lora or qlora."""
    generation: str = Generation.MODEL.value
    completion_len: str = ""
    """Empty: TRL's default for the method."""
    vllm_share: str = "0.3"

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> FitForm:
        defaults = cls()
        return cls(**{f.name: query.get(f.name, getattr(defaults, f.name)).strip()
                      for f in fields(cls)})

    @property
    def aligns(self) -> bool:
        """A preference or RL method."""
        return self.method in ALIGNMENT_METHODS

    @property
    def uses_lora(self) -> bool:
        """The weights that train are LoRA adapters (the method's, or its policy's)."""
        return self.method in LORA_METHODS or (self.aligns and self.policy in LORA_METHODS)

    @property
    def targets(self) -> frozenset[str]:
        """The ticked modules' names, split as the vocabulary splits them (`q,v` or `q;v`)."""
        return frozenset(part.strip().lower() for part in
                         self.lora_targets.replace(";", ",").split(",") if part.strip())

    @staticmethod
    def defaults() -> dict[str, str]:
        """Each field's default: the page's script leaves a field at its default out of the URL."""
        form = FitForm()
        return {f.name: getattr(form, f.name) for f in fields(FitForm)}


PAGE_FIELDS = frozenset(f.name for f in fields(FitForm)) | {"model", "optimizer"}
"""Fields with an input on the page (an error about another one shows in the panel itself)."""


def _label(lang: Lang, field: str) -> str:
    return translate("web.bytes_per_param", lang) if field == "optimizer" \
        else field_label(field, lang)


def error_text(error: VramplanError, lang: Lang) -> str:
    """`error`'s message, fields named by their labels on the page."""
    return typeset(error.message(lang, lambda field: _label(lang, field)), lang)


# --- Activations: the simple mode's A from batch and sequence length ----------------------------


@dataclass(frozen=True, slots=True)
class SimpleActivations:
    """A for the seed's V = M + A, from the detailed model (`activations_for_simple_mode`)."""

    model: ModelPreset
    batch: int
    seq_len: int
    method: Method
    activations_bytes: int

    def field_text(self, lang: Lang) -> str:
        """The value the "use it as A" button puts in the activations field (GB, 2 decimals)."""
        text = f"{bytes_to_gb(self.activations_bytes):.2f}"
        return text.replace(".", ",") if lang is Lang.FR else text


def simple_activations(model: ModelPreset, batch: str, seq_len: str) -> SimpleActivations:
    """As `vramplan estimate --model M --batch B --seq-len T` computes A."""
    inputs = read(ACTIVATIONS_FORM, {"model": model.name, "batch": batch, "seq_len": seq_len},
                  text=True)
    result = seed_activations(inputs)
    return SimpleActivations(model, result.batch, result.seq_len, Method.FULL,
                             result.activations_bytes)


PAGE_PATHS = {Lang.FR: "/", Lang.EN: "/en/"}


def fill_url(request: PageRequest, name: str, value: str) -> str:
    """The page with the same query and `name` set to `value` (a link that works without JS)."""
    query = {**request.query, name: value}
    query.pop("lang", None)
    return PAGE_PATHS[request.lang] + "?" + urlencode(query)


def activations_context(request: PageRequest) -> Mapping[str, Any]:
    form = FitForm.from_query(request.query)
    model = request.seed_reading.model
    result: SimpleActivations | None = None
    errors: dict[str, str] = {}
    try:
        if model is not None:
            result = simple_activations(model, form.batch, form.seq_len)
        else:  # a bad value shows even without a model
            read(ACTIVATIONS_FORM, {"batch": form.batch, "seq_len": form.seq_len}, text=True)
    except VramplanError as error:
        errors[error.field] = error_text(error, request.lang)
    field = result.field_text(request.lang) if result else ""
    return {"act": result, "act_errors": errors, "act_field": field,
            "act_fill_url": fill_url(request, "activations", field)}


# --- Will it fit? --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChartLine:
    kind: str
    """`usable` (capacity times the margin) or `capacity`."""
    memory_bytes: int
    x: float


@dataclass(frozen=True, slots=True)
class FitChart:
    parts: tuple[Segment, ...]
    """Named by the message key of their label, styled by their `Component` (or `overhead`)."""
    lines: tuple[ChartLine, ...]
    total_x: float


OVERHEAD = "overhead"


def fit_chart(report: FitReport) -> FitChart:
    """The per-GPU peak's parts (as `vramplan fit` lists them) on one byte scale, each in a
    colour of its own, with lines at the usable share and at the capacity."""
    estimate, verdict = report.estimate, report.verdict
    named = [(part.kind.label_key, part.memory_bytes)
             for part in estimate.peak.parts if part.memory_bytes]
    components = {part.kind.label_key: part.component.value for part in estimate.peak.parts}
    for key, n_bytes in overhead_parts(estimate):
        named.append((key, n_bytes))
        components[key] = OVERHEAD
    scale = units_per_byte(estimate.total_bytes, verdict.capacity_bytes)
    parts = stack(named, scale, palette_styles([(name, components[name]) for name, _ in named]))
    lines = (ChartLine("usable", verdict.usable_bytes, verdict.usable_bytes * scale),
             ChartLine("capacity", verdict.capacity_bytes, verdict.capacity_bytes * scale))
    return FitChart(parts, lines, estimate.total_bytes * scale)


class FitState:
    """One request's "Will it fit?" reading: the report, or why there is none."""

    def __init__(self, request: PageRequest) -> None:
        self.request = request
        self.form = FitForm.from_query(request.query)
        self.errors: dict[str, VramplanError] = {}

    @cached_property
    def inputs(self) -> Inputs:
        """The fields read through the `fit` form, each bad one recorded in `errors`."""
        inputs, self.errors = read_all(FIT, self.fit_values(), text=True)
        if self.form.uses_lora and not self.form.targets:  # every box unticked
            self.errors["lora_targets"] = MissingValue("lora_targets")
        return inputs

    @cached_property
    def gpu(self) -> Gpu | None:
        """The GPU type, checked even without a model: the seed rule's verdict uses it too."""
        inputs = self.inputs
        return self._attempt("gpu", lambda: find_gpu(inputs.require(GPU)))

    @cached_property
    def gpus(self) -> int | None:
        """The number of GPUs (None when the field is bad)."""
        inputs = self.inputs
        return None if "gpus" in self.errors else inputs.get(GPU_COUNT) or 1

    @cached_property
    def report(self) -> FitReport | None:
        seed = self.request.seed_reading
        inputs, gpu = self.inputs, self.gpu
        if seed.model is None or self.errors or "model" in seed.errors \
                or "optimizer" in seed.errors:
            return None
        fit = self._attempt(None, lambda: fit_request(inputs))
        if gpu is None or fit is None:
            return None
        return fit_report(fit.setup, fit.gpu, fit.usable_share)

    @property
    def needs_model(self) -> bool:
        return self.request.seed_reading.model is None and "model" not in \
            self.request.seed_reading.errors

    @property
    def custom_optimizer(self) -> bool:
        return self.request.seed_form.is_custom

    def fit_values(self) -> dict[str, str]:
        """The `vramplan fit` fields the page's inputs name (its optimizer is the seed's
        memory-per-parameter preset, whose name the optimizer field reads; a custom figure has no
        optimizer, and the fit uses AdamW)."""
        form, seed = self.form, self.request.seed_form
        model = self.request.seed_reading.model
        values = {"model": model.name if model else "", "gpu": form.gpu or DEFAULT_GPU,
                  "gpus": form.gpus, "sharding": form.sharding, "offload": form.offload,
                  "method": form.method, "precision": form.precision,
                  "optimizer": "" if seed.is_custom else seed.optimizer, "batch": form.batch,
                  "seq_len": form.seq_len, "checkpointing": form.checkpointing,
                  "margin": form.margin}
        if form.uses_lora:  # the LoRA settings count only for LoRA and QLoRA
            values |= {"lora_r": form.lora_r, "lora_targets": form.lora_targets}
        if form.aligns:
            values["policy"] = form.policy
        if form.method in ONLINE_METHODS:
            values |= {"generation": form.generation, "completion_len": form.completion_len}
            if form.generation == Generation.VLLM_COLOCATE.value:
                values["vllm_share"] = form.vllm_share
        return values

    def _attempt(self, name: str | None, compute: Callable[[], _T]) -> _T | None:
        """`compute()`, or None with its error recorded under `name` (default: its field)."""
        try:
            return compute()
        except VramplanError as error:
            self.errors[name or error.field] = error
            return None

    def messages(self) -> dict[str, str]:
        _ = self.gpus, self.report
        return {name: error_text(error, self.request.lang) for name, error in self.errors.items()}


def api_query(state: FitState) -> str:
    """The `/api/v1/fit` query (and `vramplan fit` options) of what the page shows."""
    return urlencode({name: value for name, value in state.fit_values().items() if value})


def _percent(share: float, lang: Lang) -> str:
    return format_number(share * 100, lang.value, 1)


def _choices(field: str, values: list[str], lang: Lang) -> list[tuple[str, str]]:
    return [(value, option_label(field, value, lang)) for value in values]


def fit_context(request: PageRequest) -> Mapping[str, Any]:
    state = request.fit
    report = state.report
    messages = state.messages()
    lang = request.lang
    return {
        "fit_form": state.form,
        "fit_defaults": FitForm.defaults(),
        "fit_report": report,
        "fit_model_name": request.seed_reading.model.display_name
        if request.seed_reading.model else "",
        "fit_errors": messages,
        "fit_other_errors": [text for name, text in messages.items() if name not in PAGE_FIELDS],
        "fit_needs_model": state.needs_model,
        "fit_custom_optimizer": state.custom_optimizer,
        "fit_chart": fit_chart(report) if report is not None else None,
        "fit_share": _percent(report.verdict.usable_share, lang) if report else "",
        "fit_max_gpus": MAX_GPUS,
        "alignment_methods": " ".join(ALIGNMENT_METHODS),
        "fit_alignment_line": (alignment_line(report.setup.training, lang)
                               if report is not None and report.setup.training.alignment
                               else ""),
        "fit_api_query": api_query(state) if report is not None else "",
        "fit_choices": {
            "gpu": [(gpu.name, gpu.display_name) for gpu in GPUS],
            "sharding": [("", typeset(translate("web_fit.auto", lang), lang)),
                         *_choices("sharding", [scheme.value for scheme in Scheme], lang)],
            "offload": _choices("offload", [offload.value for offload in Offload], lang),
            "precision": _choices("precision", [p.value for p in Precision], lang),
            "checkpointing": _choices("checkpointing", [c.value for c in Checkpointing], lang),
            "method": _choices("method", [method.value for method in TRAINING_METHODS], lang),
            "policy": _choices("method", [m.value for m in (Method.FULL, Method.LORA,
                                                            Method.QLORA)], lang),
            "generation": _choices("generation", [g.value for g in Generation], lang),
            "lora_targets": [(target.value, option_label("lora_targets", target, lang))
                             for target in LoraTarget],
        },
        "option": lambda field, value: option_label(field, value, lang),
        "targets_text": lambda targets: ", ".join(
            option_label("lora_targets", target, lang)
            for target in LoraTarget if target in targets),
        "settings_text": lambda settings: setting_text(settings, lang),
        "part_label": lambda key: typeset(translate(key, lang), lang),
    }
