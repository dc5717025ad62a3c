"""What the sister pages (`/inference`, `/lora`) show: their forms as typed, and their results.

The results are the very JSON objects of `vramplan infer --json` and `vramplan lora --json`, built
by `vramplan.requests.answers`; this module only reads them for display (labels, the chart's
geometry).
Nothing is computed here that the core does not already say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar
from urllib.parse import urlencode

from vramplan.errors import MissingValue, UnknownName, VramplanError
from vramplan.i18n import Lang, translate
from vramplan.presets.gpus import GPUS
from vramplan.requests.answers import inference_answer, lora_answer
from vramplan.requests.reading import read
from vramplan.requests.vocabulary import INFERENCE, LORA, LORA_R, LORA_TARGETS
from vramplan.units import format_gb, format_gib
from vramplan.vocab import Engine, KvDtype, LoraTarget
from vramplan.web.chart import Segment, palette_styles, stack, units_per_byte
from vramplan.web.model_names import unknown_model_text
from vramplan.web.view import CONSUMER_GPU, DATACENTER_GPU, typeset

JSON = Mapping[str, Any]
"""A JSON answer (`vramplan.shapes.InferenceOut` or `LoraOut`) or one of its objects."""

INFERENCE_DEFAULT_MODEL = "llama-3.1-8b"
LORA_DEFAULT_MODEL = "llama-3.1-8b"

WEIGHT_CHOICES = (
    "bf16", "fp16", "fp32", "fp8", "int8", "nf4", "nf4-dq", "fp4",
    "gptq-8bit-g128", "gptq-4bit-g128", "gptq-3bit-g128", "gptq-2bit-g128", "awq-4bit-g128",
    "gguf-q8_0", "gguf-q6_k", "gguf-q5_k_m", "gguf-q4_k_m", "gguf-q4_0", "gguf-iq4_xs",
    "gguf-q3_k_m", "gguf-q2_k", "gguf-iq2_xxs",
)
"""The weight formats offered in the field's list (any other name `find_format` reads works)."""
TARGET_CHOICES = tuple(target.value for target in LoraTarget)
"""q, k, v, o, gate, up, down, head, all: the LoRA page's checkboxes."""


# --- forms ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class InferenceForm:
    """The inference page's fields as typed; the defaults are `vramplan infer`'s."""

    model: str = INFERENCE_DEFAULT_MODEL
    weights: str = "bf16"
    context: str = "4096"
    batch: str = "1"
    kv_dtype: str = KvDtype.FP16.value
    gpu: str = ""
    engine: str = ""
    tensor_parallel: str = "1"

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> InferenceForm:
        return _from_query(cls, query)

    def api_query(self) -> dict[str, str]:
        """The fields as `inference_payload` reads them, asking for the longest context and the
        most sequences per GPU too."""
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "limits": "1"}


@dataclass(frozen=True, slots=True)
class LoraForm:
    """The LoRA page's fields as typed; the defaults are `vramplan lora`'s."""

    model: str = LORA_DEFAULT_MODEL
    lora_r: str = str(LORA_R.default)
    lora_targets: str = LORA_TARGETS.default_text() or ""
    dora: str = ""
    rslora: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> LoraForm:
        return _from_query(cls, query)

    @property
    def targets(self) -> frozenset[str]:
        """The ticked targets (the text as typed, split like `parse_lora_targets` splits it)."""
        return frozenset(part.strip().lower() for part in self.lora_targets.replace(";", ",")
                         .split(",") if part.strip())

    def api_query(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def require_targets(self) -> None:
        """No ticked target is an error here (the API would silently take its default `q,v`,
        which the unticked boxes would contradict)."""
        if not self.targets:
            raise MissingValue("lora_targets")


_ABSENT_IS_EMPTY = frozenset({"model", "lora_targets", "dora", "rslora"})
"""Fields a query leaves out when they are empty: no model (the script leaves an empty one out of
the URL), no ticked target, an unticked box. Any other field left out takes its default."""
_Form = TypeVar("_Form", InferenceForm, LoraForm)


def _from_query(cls: type[_Form], query: Mapping[str, str]) -> _Form:
    """The form a query describes; a query naming none of its fields gets the defaults."""
    names = [f.name for f in fields(cls)]
    if not any(name in query for name in names):
        return cls()
    defaults = cls()
    return cls(**{name: query.get(name, "" if name in _ABSENT_IS_EMPTY
                                  else getattr(defaults, name)) for name in names})


# --- reading a form ------------------------------------------------------------------------------

FIELD_LABELS = {
    "model": "sister.model",
    "weights": "sister.infer.weights",
    "context": "sister.infer.context",
    "prompt": "sister.infer.context",
    "batch": "sister.infer.batch",
    "kv_dtype": "sister.infer.kv_dtype",
    "gpu": "sister.infer.gpu",
    "engine": "sister.infer.engine",
    "tensor_parallel": "sister.infer.tp",
    "lora_r": "sister.lora.rank",
    "lora_targets": "sister.lora.targets",
}
"""The page label of each query field, to name it in error messages."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A form's result: the CLI's JSON object, or the error of the field at fault."""

    payload: JSON | None
    errors: dict[str, str] = field(default_factory=dict)
    empty: bool = False
    """No model chosen: the page asks for one instead of showing an error."""


def error_text(error: VramplanError, lang: Lang) -> str:
    """`error`'s message in `lang`, its field named by the page's label."""
    def label(name: str) -> str:
        key = FIELD_LABELS.get(name)
        return translate(key, lang) if key else name

    if isinstance(error, UnknownName) and error.field == "model":
        return typeset(unknown_model_text(error, lang, label("model"), config_hint=False), lang)
    return typeset(error.message(lang, label), lang)


def read_inference(form: InferenceForm, lang: Lang) -> Reading:
    try:
        return Reading(inference_answer(read(INFERENCE, form.api_query(), text=True)))
    except MissingValue as error:
        if error.field == "model":
            return Reading(None, empty=True)
        return Reading(None, {error.field: error_text(error, lang)})
    except VramplanError as error:
        return Reading(None, {error.field: error_text(error, lang)})


def read_lora(form: LoraForm, lang: Lang) -> Reading:
    """The LoRA result, or the errors: no ticked target, and whatever else is wrong."""
    if not form.model.strip():
        return Reading(None, empty=True)
    errors = {}
    try:
        form.require_targets()
    except MissingValue as missing:
        errors[missing.field] = error_text(missing, lang)
    try:
        payload = lora_answer(read(LORA, form.api_query(), text=True))
    except VramplanError as error:
        errors.setdefault(error.field, error_text(error, lang))
        return Reading(None, errors)
    return Reading(None, errors) if errors else Reading(payload)


# --- the inference chart -------------------------------------------------------------------------

CUDA_CONTEXT = "cuda_context"
"""The chart's last segment: the CUDA context, counted by nvidia-smi on top of the tensors."""
@dataclass(frozen=True, slots=True)
class Line:
    """A GPU's usable memory (all of it, or the engine's share) as a vertical line."""

    display_name: str
    usable_bytes: int
    x: float


@dataclass(frozen=True, slots=True)
class InferenceChart:
    segments: tuple[Segment, ...]
    lines: tuple[Line, ...]
    total_bytes: int
    total_x: float


def chart_parts(payload: JSON) -> tuple[tuple[str, int], ...]:
    """(name, bytes) of every non-empty part per GPU, in the JSON's order, then the CUDA
    context; they add up to `device_bytes`."""
    parts = [(part["part"], int(part["memory_bytes"])) for part in payload["parts"]]
    parts.append((CUDA_CONTEXT, int(payload["cuda_context_bytes"])))
    return tuple((name, size) for name, size in parts if size > 0)


def line_verdicts(payload: JSON) -> list[JSON]:
    """The verdicts drawn as lines: the one GPU asked for, else the main page's two cards (a
    24 GB consumer card and an 80 GB accelerator)."""
    verdicts: list[JSON] = payload["verdicts"]
    if len(verdicts) == 1:
        return verdicts
    return [v for v in verdicts if v["gpu"] in (CONSUMER_GPU, DATACENTER_GPU)]


def inference_chart(payload: JSON) -> InferenceChart:
    """The stacked bar of `device_bytes` and a line at each drawn GPU's usable memory."""
    total = int(payload["device_bytes"])
    drawn = line_verdicts(payload)
    per_byte = units_per_byte(total, *(int(v["usable_bytes"]) for v in drawn))
    lines = tuple(Line(v["display_name"], int(v["usable_bytes"]),
                       int(v["usable_bytes"]) * per_byte) for v in drawn)
    named = chart_parts(payload)
    styles = palette_styles([(name, name) for name, _ in named])
    return InferenceChart(stack(named, per_byte, styles), lines, total, total * per_byte)


def part_label(name: str, lang: Lang) -> str:
    key = "sister.infer.part.cuda_context" if name == CUDA_CONTEXT else f"part.{name}"
    return translate(key, lang)


def inference_chart_label(chart: InferenceChart, lang: Lang) -> str:
    """The chart's text alternative: every part with its size, the total and the lines."""
    parts = ", ".join(f"{part_label(s.name, lang)} {format_gb(s.memory_bytes, lang.value)}"
                      for s in chart.segments)
    lines = ", ".join(translate("sister.infer.chart_line", lang, gpu=line.display_name,
                                usable=format_gib(line.usable_bytes, lang.value))
                      for line in chart.lines)
    return translate("sister.infer.chart_label", lang, parts=parts,
                     total=format_gb(chart.total_bytes, lang.value), lines=lines)


# --- choices and links ---------------------------------------------------------------------------

def gpu_choices() -> tuple[tuple[str, str], ...]:
    """(name, display name) of every GPU of the catalogue."""
    return tuple((gpu.name, gpu.display_name) for gpu in GPUS)


ENGINE_CHOICES = tuple(engine.value for engine in Engine)
KV_CHOICES = tuple(kv.value for kv in KvDtype)


def training_link(home: str, payload: JSON) -> str:
    """The main calculator with the LoRA result's training setup (`training_setup` of the JSON)
    in its query: model, method, lora_r, and one `lora_targets` per module, as the main page's
    boxes send them. DoRA stays out: the training calculator does not model it (the page says
    so next to the link)."""
    setup = payload["training_setup"]
    query = [("model", str(setup["model"])), ("method", str(setup["method"])),
             ("lora_r", str(setup["lora_r"]))]
    query += [("lora_targets", target) for target in str(setup["lora_targets"]).split(";")]
    return home + "?" + urlencode(query)
