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

from vramplan.web.fit_panel import activations_context, fit_context
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
    in_form: bool = False
    """Rendered inside the Données form by `partials/inputs.html`, not as a card of its own."""

    @property
    def template(self) -> str:
        return f"partials/{self.name}.html"

    @property
    def fragment_url(self) -> str:
        return f"/fragments/{self.name}"


def results_context(request: PageRequest) -> Mapping[str, Any]:
    result = request.seed_result
    reading = request.seed_reading
    return {
        "reading": reading,
        "model_params_text": request.display_form.params if reading.model else "",
        "result": result,
        "field_errors": request.field_errors,
        "chart_label": chart_label(result, request.lang) if result else "",
    }


PANELS: tuple[Panel, ...] = (
    Panel("results", "web.results", results_context),
    Panel("activations", "web_fit.act_title", activations_context, in_form=True),
    Panel("fit", "web_fit.title", fit_context, inputs_template="partials/fit_inputs.html"),
)
PANELS_BY_NAME = {panel.name: panel for panel in PANELS}
