"""What the templates are given: a request's query and language, formatters bound to the language,
and the seed calculator's state. Formatting only: every number comes from the core."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from vramplan import __version__
from vramplan.errors import MissingValue, UnknownName, VramplanError
from vramplan.i18n import Lang, translate
from vramplan.presets.gpus import GPUS, Gpu
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.seed import SeedEstimate, estimate_seed
from vramplan.units import bytes_to_gb, format_gb, format_gib, format_number, unit_label
from vramplan.verdict import GpuVerdict, verdicts
from vramplan.web.chart import BarChart, label_anchor, parts, stacked_bar
from vramplan.web.query import SeedForm, SeedReading, params_text, read_seed

if TYPE_CHECKING:
    from vramplan.web.fit_panel import FitState

TEMPLATES = Path(__file__).parent / "templates"

CONSUMER_GPU = "rtx-4090-24gb"
"""The seed's "24 GB consumer card"."""
DATACENTER_GPU = "h100-80gb"
"""The seed's "80 GB accelerator"."""

FIELD_LABELS = {
    "model": "web.model",
    "config": "web.config_label",
    "params": "web.params",
    "optimizer": "web.bytes_per_param",
    "bytes_per_param": "web.custom_bytes",
    "activations": "web.activations",
}
"""The page label of each query field, used to name it in error messages."""


def environment() -> jinja2.Environment:
    """Templates with autoescaping on everywhere: every user-supplied string is escaped."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def formatters(lang: Lang) -> dict[str, Callable[..., str]]:
    """`t`, `t_html`, `gb`, `gib`, `num` and `sold_as`, bound to `lang`, for the templates."""
    return {
        "t": partial(_t, lang),
        "t_html": partial(_t_html, lang),
        "sold_as": partial(_sold_as, lang),
        "gb": partial(_gb, lang),
        "gib": partial(_gib, lang),
        "num": partial(_num, lang),
        "gb_num": partial(_gb_num, lang),
        "gb_unit": partial(unit_label, "GB", lang.value),
        "anchor": label_anchor,
        "bytes_unit": partial(unit_label, "bytes", lang.value),
    }


_FRENCH_SPACES = (
    (" :", "\u00a0:"), (" ;", "\u202f;"), (" ?", "\u202f?"), (" !", "\u202f!"),
    ("« ", "«\u00a0"), (" »", "\u00a0»"), (" %", "\u00a0%"),
)
"""French typography puts a no-break space before `:` and `%` and inside « », a narrow one before
`;?!` (Imprimerie nationale rules); the catalogue writes plain spaces, the page makes them
unbreakable."""


def typeset(text: str, lang: Lang) -> str:
    """`text` with French punctuation spacing made unbreakable (unchanged in English)."""
    if lang is Lang.FR:
        for plain, unbreakable in _FRENCH_SPACES:
            text = text.replace(plain, unbreakable)
    return text


def _t(lang: Lang, key: str, **params: object) -> str:
    return typeset(translate(key, lang, **params), lang)


def _t_html(lang: Lang, key: str, **parts: object) -> Markup:
    """Message `key` with HTML in its placeholders (an inline formula, a link): the message is
    escaped, and each part goes in as is when it is markup (a macro's output), escaped
    otherwise."""
    marks = {name: f"\x00{index}\x00" for index, name in enumerate(parts)}
    html = escape(typeset(translate(key, lang, **marks), lang))
    for name, mark in marks.items():
        html = html.replace(mark, escape(parts[name]))
    return Markup(html)


def _sold_as(lang: Lang, gpu: Gpu) -> str:
    """A card's memory as its maker sells it ("80 GB", "80 Go"), which is in fact GiB."""
    return translate("web.sold_as", lang, size=format_number(gpu.memory_gib, lang.value, 0))


def _gb(lang: Lang, n_bytes: int) -> str:
    return format_gb(n_bytes, lang.value)


def _gib(lang: Lang, n_bytes: int, decimals: int = 2) -> str:
    return format_gib(n_bytes, lang.value, decimals)


def _num(lang: Lang, value: float, decimals: int = 2) -> str:
    return format_number(value, lang.value, decimals)


def _gb_num(lang: Lang, n_bytes: int) -> str:
    """Bytes as a number of GB without the unit (for MathML's <mn>)."""
    return format_number(bytes_to_gb(n_bytes), lang.value)


@dataclass(frozen=True, slots=True)
class SeedResult:
    """A good estimate and what the results panel shows of it."""

    estimate: SeedEstimate
    catalogue: tuple[GpuVerdict, ...]
    """V against one GPU of each type (the seed rule: the whole capacity, no margin)."""

    @property
    def model_states_gb(self) -> float:
        return bytes_to_gb(self.estimate.model_states_bytes)

    @property
    def note_key(self) -> str | None:
        optimizer = self.estimate.inputs.optimizer
        if optimizer in (OptimizerPreset.ADAM_8BIT, OptimizerPreset.SGD_MOMENTUM):
            return f"note.{optimizer.value}"
        return None

    def chart(self, gpus: tuple[Gpu, ...]) -> BarChart:
        """The stacked bar, with a line at each of `gpus`' capacity."""
        return stacked_bar(self.estimate, gpus)


def seed_result(estimate: SeedEstimate) -> SeedResult:
    return SeedResult(estimate=estimate, catalogue=verdicts(estimate.total_bytes, GPUS))


def page_query(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A query's fields (without `lang`), a repeated field's values joined by commas (the LoRA
    targets' checkboxes send `lora_targets=q&lora_targets=v`, the CLI `q,v`). A field sent only
    empty stays, empty: `lora_targets=` alone means that no box is ticked."""
    joined: dict[str, list[str]] = {}
    for name, value in items:
        if name != "lang":
            joined.setdefault(name, []).append(value.strip())
    return {name: ",".join(value for value in values if value) for name, values in joined.items()}


class PageRequest:
    """One page or fragment request: its query and language, parsed once, shared by the panels."""

    def __init__(self, query: Mapping[str, str], lang: Lang) -> None:
        self.query = query
        self.lang = lang

    @cached_property
    def seed_form(self) -> SeedForm:
        return SeedForm.from_query(self.query)

    @cached_property
    def seed_reading(self) -> SeedReading:
        return read_seed(self.seed_form)

    @cached_property
    def display_form(self) -> SeedForm:
        """The form as shown: a picked model's exact count in the params field."""
        count = self.seed_reading.model_params
        if count is None:
            return self.seed_form
        text = params_text(count)
        shown = text.replace(".", ",") if self.lang is Lang.FR else text
        return dataclasses.replace(self.seed_form, params=shown)

    @cached_property
    def field_errors(self) -> dict[str, str]:
        """Inline message per bad field (a value still to be typed is the empty state instead,
        not an error: the parameter count, or a custom value just chosen)."""
        return {
            name: self.error_text(error)
            for name, error in self.seed_reading.errors.items()
            if not isinstance(error, MissingValue)
        }

    @cached_property
    def fit(self) -> FitState:
        """The detailed model's reading and report, computed once per request and shared by
        the verdict and the detailed card."""
        from vramplan.web.fit_panel import FitState  # it reads this request: a cycle at import

        return FitState(self)

    @cached_property
    def seed_result(self) -> SeedResult | None:
        inputs = self.seed_reading.inputs
        return seed_result(estimate_seed(inputs)) if inputs is not None else None

    def error_text(self, error: VramplanError) -> str:
        """`error`'s message in the page's language, fields named by their page labels; an
        unknown model gets its close names and the config.json hint instead of the list."""
        if isinstance(error, UnknownName) and error.field == "model":
            from vramplan.web.model_names import unknown_model_text

            text = unknown_model_text(error, self.lang, self._label("model"), config_hint=True)
            return typeset(text, self.lang)
        return typeset(error.message(self.lang, self._label), self.lang)

    def _label(self, field: str) -> str:
        key = FIELD_LABELS.get(field)
        return translate(key, self.lang) if key else field


def chart_label(estimate: SeedEstimate, chart: BarChart, lang: Lang) -> str:
    """The chart's text alternative: every part with its size, the total and the lines."""
    names = ", ".join(
        f"{translate('chart.' + name, lang)} {format_gb(size, lang.value)}"
        for name, size in parts(estimate)
    )
    total = format_gb(estimate.total_bytes, lang.value)
    if not chart.lines:
        return translate("web.chart_label_bare", lang, parts=names, total=total)
    lines = ", ".join(
        translate("web.chart_line", lang, gpu=line.gpu.display_name,
                  capacity=format_gib(line.gpu.capacity_bytes, lang.value, 0))
        for line in chart.lines
    )
    return translate("web.chart_label", lang, parts=names, total=total, lines=lines)


def base_context(lang: Lang) -> dict[str, Any]:
    return {"lang": lang.value, "version": __version__, **formatters(lang)}
