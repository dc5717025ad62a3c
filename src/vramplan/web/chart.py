"""The stacked bar of a result: where each part of the VRAM goes, against GPU memory lines.

Pure geometry in percent of the bar's width (0 to `WIDTH`); the templates draw it as inline SVG
whose text is in the page's own size (no viewBox scaling), so the chart is made on the server
from the same estimate as the numbers beside it and its labels stay legible at any width.
Every part of a chart gets a colour of its own, and every line a style of its own, each with its
legend entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from vramplan.parts import Component
from vramplan.presets.gpus import Gpu
from vramplan.seed import SeedEstimate

WIDTH = 100.0
"""Chart width, in percent of the drawn bar."""
SCALE_MARGIN = 1.08
"""The axis ends 8% past the largest of the total and the lines, so that both show."""
MODEL_STATES = "model_states"
"""Segment name of a custom B, which has no per-component breakdown."""
PALETTE_SIZE = 14
"""Colours `seg-p0` to `seg-p13` in app.css: Okabe & Ito's eight colour-blind-safe colours
(https://jfly.uni-koeln.de/color/, weights blue, gradients orange...) and six more."""
PREFERRED = {
    "weights": 0, "gradients": 1, "master_weights": 2, "optimizer_states": 3, "activations": 4,
    MODEL_STATES: 5, "planning_margin": 6, "overhead": 6, "kv_cache": 3,
    "prefill_activations": 4, "logits": 2, "quant_transient": 1, "engine_buffers": 5,
    "cuda_context": 6,
}
"""The colour each kind of part takes when its chart has no other part in it already: the same
part keeps its colour from chart to chart."""
LABEL_SWITCH = 50.0
"""A label left of this position starts at its line; right of it, it ends at its line."""


def palette_styles(parts: Sequence[tuple[str, str]]) -> dict[str, str]:
    """A distinct colour (`p0`...) for each (name, kind) of one chart: the kind's preferred one
    when it is free, else the first free one."""
    styles: dict[str, str] = {}
    used: set[int] = set()
    for name, kind in parts:
        preferred = PREFERRED.get(kind, 0)
        free = [i for i in range(PALETTE_SIZE) if i not in used]
        index = preferred if preferred not in used else (free[0] if free else preferred)
        used.add(index)
        styles[name] = f"p{index}"
    return styles


def label_anchor(x: float) -> str:
    """SVG `text-anchor` that keeps a label at `x` (percent) inside the chart."""
    return "start" if x < LABEL_SWITCH else "end"


@dataclass(frozen=True, slots=True)
class Segment:
    """One part of a stacked bar (every chart of the site: seed, inference, will it fit)."""

    name: str
    """What the part is: a `Component` value or `MODEL_STATES` here, an inference part, a
    message key in the fit chart."""
    memory_bytes: int
    x: float
    width: float
    style: str = ""
    """CSS class suffix (`seg-…`): its colour in this chart."""


def units_per_byte(*sizes: int) -> float:
    """Chart units per byte, so that the largest of `sizes` ends `SCALE_MARGIN` before the edge."""
    return WIDTH / (max(sizes) * SCALE_MARGIN)


def stack(parts: Iterable[tuple[str, int]], per_byte: float,
          styles: Mapping[str, str] | None = None) -> tuple[Segment, ...]:
    """The parts side by side from 0, in order, `per_byte` chart units per byte."""
    segments = []
    offset = 0
    for name, size in parts:
        style = (styles or {}).get(name, name)
        segments.append(Segment(name, size, offset * per_byte, size * per_byte, style))
        offset += size
    return tuple(segments)


@dataclass(frozen=True, slots=True)
class CapacityLine:
    gpu: Gpu
    x: float


@dataclass(frozen=True, slots=True)
class BarChart:
    segments: tuple[Segment, ...]
    lines: tuple[CapacityLine, ...]
    total_bytes: int
    total_x: float


def parts(estimate: SeedEstimate) -> tuple[tuple[str, int], ...]:
    """(name, bytes) of each non-empty part, in `Component` order, activations last."""
    by_component = {component.value: 0 for component in Component}
    for item in estimate.breakdown:
        by_component[item.component.value] += item.memory_bytes
    if not estimate.breakdown:
        by_component = {MODEL_STATES: estimate.model_states_bytes, **by_component}
    by_component[Component.ACTIVATIONS.value] = estimate.activations_bytes
    return tuple((name, size) for name, size in by_component.items() if size > 0)


def stacked_bar(estimate: SeedEstimate, gpus: tuple[Gpu, ...]) -> BarChart:
    """The bar of `estimate` and a line at each GPU's capacity, on one byte scale."""
    per_byte = units_per_byte(estimate.total_bytes, *(gpu.capacity_bytes for gpu in gpus))
    lines = tuple(CapacityLine(gpu, gpu.capacity_bytes * per_byte) for gpu in gpus)
    named = parts(estimate)
    return BarChart(stack(named, per_byte, palette_styles([(n, n) for n, _ in named])), lines,
                    estimate.total_bytes, estimate.total_bytes * per_byte)
