"""The page's live panels. A panel is one partial template plus one entry here: the page renders
it in place, and `GET /fragments/{name}` renders it alone, which the page's script swaps in as
the inputs change.

To add one (say "fit"): write `templates/partials/fit.html` (it sees the page's context plus what
`context` returns), add `Panel("fit", "web_fit.title", fit_context)` to `PANELS`, and its strings
to `vramplan/i18n/catalogue/web.py`. Inputs of its own go in the form (or outside it with
`form="calculator"`) so they travel in the shared URL query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from vramplan.web.fit_panel import PAGE_FIELDS as FIT_PAGE_FIELDS
from vramplan.web.fit_panel import activations_context, fit_context
from vramplan.web.verdict_panel import VerdictSource, page_verdict, summary_text, verdict_words
from vramplan.web.view import PageRequest, chart_label


@dataclass(frozen=True, slots=True)
class Panel:
    name: str
    """The section's id, its template `partials/{name}.html` and its route `/fragments/{name}`."""
    title_key: str
    """Message key of the panel's heading."""
    context: Callable[[PageRequest], Mapping[str, Any]]
    inputs_template: str = ""
    """Inputs of its own, rendered above its live region (not swapped: typing keeps focus)."""
    card: bool = True
    """A card of its own on the page; else a template places it (the Activations estimate in
    the Données form, the live summary of the verdict)."""

    @property
    def template(self) -> str:
        return f"partials/{self.name}.html"

    @property
    def fragment_url(self) -> str:
        return f"/fragments/{self.name}"


def results_context(request: PageRequest) -> Mapping[str, Any]:
    """The verdict first, then the seed rule's figures (its chart's line is the GPU picked,
    drawn only when the verdict is the seed rule's: the detailed card draws its own)."""
    result = request.seed_result
    reading = request.seed_reading
    verdict = page_verdict(request)
    seed_verdict = verdict is not None and verdict.source is VerdictSource.SEED
    chart = result.chart((verdict.verdict.gpu,) if verdict and seed_verdict else ()) \
        if result else None
    return {
        "reading": reading,
        "model_params_text": request.display_form.params if reading.model else "",
        "result": result,
        "verdict": verdict,
        "words": verdict_words(verdict, request.lang) if verdict else {},
        "seed_verdict": seed_verdict,
        "chart": chart,
        "field_errors": request.field_errors,
        "chart_label": chart_label(result.estimate, chart, request.lang)
        if result and chart else "",
        "fit_other_errors": [text for name, text in request.fit.messages().items()
                             if name not in FIT_PAGE_FIELDS],
        "summary": summary_text(verdict, request),
    }


def summary_context(request: PageRequest) -> Mapping[str, Any]:
    return {"summary": summary_text(page_verdict(request), request)}


PANELS: tuple[Panel, ...] = (
    Panel("results", "web.results", results_context),
    Panel("activations", "web_fit.act_title", activations_context, card=False),
    Panel("fit", "web_fit.title", fit_context, inputs_template="partials/fit_inputs.html"),
    Panel("summary", "web.verdict", summary_context, card=False),
)
PANELS_BY_NAME = {panel.name: panel for panel in PANELS}
