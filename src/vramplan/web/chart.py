"""The stacked bar of a result: where each part of the VRAM goes, against GPU capacity lines.

Pure geometry in chart units (0 to `WIDTH`); the template draws it as inline SVG, so the chart is
made on the server from the same `SeedEstimate` as the numbers beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from vramplan.parts import Component
from vramplan.presets.gpus import Gpu
from vramplan.seed import SeedEstimate

WIDTH = 1000.0
"""Chart width in SVG user units (the viewBox scales it to the screen)."""
SCALE_MARGIN = 1.08
"""The axis ends 8% past the largest of the total and the capacity lines, so both show."""
MODEL_STATES = "model_states"
"""Segment name of a custom B, which has no per-component breakdown."""


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
    """CSS class suffix (`seg-…`) where it is not `name`."""


def units_per_byte(*sizes: int) -> float:
    """Chart units per byte, so that the largest of `sizes` ends `SCALE_MARGIN` before the edge."""
    return WIDTH / (max(sizes) * SCALE_MARGIN)


def stack(parts: Iterable[tuple[str, int]], per_byte: float,
          styles: Mapping[str, str] | None = None) -> tuple[Segment, ...]:
    """The parts side by side from 0, in order, `per_byte` chart units per byte."""
    segments = []
    offset = 0
    for name, size in parts:
        style = (styles or {}).get(name, "")
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
    return BarChart(stack(parts(estimate), per_byte), lines, estimate.total_bytes,
                    estimate.total_bytes * per_byte)
