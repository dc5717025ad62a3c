"""The one verdict at the top of Résultats: does it fit on the GPUs picked in Données?

It is computed once per request and shown once, from one of two sources, each labelled:
- with a preset model, the detailed model's: the planner's per-GPU peak against the usable share
  of the card (`vramplan.planner.report`, the same report as the detailed card below, whose
  numbers it shows);
- with a typed parameter count, the seed rule's: V = M + A against the whole capacity of the card
  (`vramplan.verdict.GpuVerdict`), and on several cards its lower bound on how many it takes.
The page never shows both verdicts: the seed rule's figures stay, labelled as what they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vramplan.i18n import Lang, translate
from vramplan.units import format_gb, format_gib, format_number
from vramplan.verdict import GpuVerdict
from vramplan.web.view import PageRequest, typeset


class VerdictSource(StrEnum):
    """Where the verdict comes from."""

    DETAILED = "detailed"
    """The planner's per-GPU peak against the usable share (a preset model is picked)."""
    SEED = "seed"
    """The seed rule's V against the whole capacity of the card."""


class VerdictState(StrEnum):
    """What the verdict says (its message is `web.verdict.<source>.<state>`)."""

    FITS = "fits"
    TIGHT = "tight"
    """Within the capacity but beyond the safety margin (detailed model only)."""
    NO_FIT = "nofit"
    SPLIT = "split"
    """Seed rule on several cards: enough of them if V were split evenly (a lower bound)."""
    NO_SPLIT = "nosplit"
    """Seed rule on several cards: not enough of them, even split evenly."""


@dataclass(frozen=True, slots=True)
class PageVerdict:
    source: VerdictSource
    verdict: GpuVerdict
    """What one GPU must hold against what it may use (the seed rule: all of it)."""
    gpus: int

    @property
    def state(self) -> VerdictState:
        v = self.verdict
        if self.source is VerdictSource.DETAILED:
            return VerdictState.FITS if v.fits else (
                VerdictState.TIGHT if v.fits_at_capacity else VerdictState.NO_FIT)
        if self.gpus == 1:
            return VerdictState.FITS if v.fits else VerdictState.NO_FIT
        return VerdictState.SPLIT if v.min_gpus_lower_bound <= self.gpus else \
            VerdictState.NO_SPLIT

    @property
    def positive(self) -> bool:
        return self.state in (VerdictState.FITS, VerdictState.SPLIT)

    @property
    def key(self) -> str:
        return f"web.verdict.{self.source.value}.{self.state.value}"


def page_verdict(request: PageRequest) -> PageVerdict | None:
    """The verdict of the request's inputs, or None when a field is bad or empty."""
    fit = request.fit
    report = fit.report
    if report is not None:
        return PageVerdict(VerdictSource.DETAILED, report.verdict,
                           report.setup.parallelism.gpus)
    result = request.seed_result
    if request.seed_reading.model is not None or result is None or fit.gpu is None \
            or fit.gpus is None:
        return None
    return PageVerdict(VerdictSource.SEED, GpuVerdict(fit.gpu, result.estimate.total_bytes),
                       fit.gpus)


def _percent(share: float, lang: Lang) -> str:
    return format_number(share * 100, lang.value, 1)


def verdict_words(verdict: PageVerdict, lang: Lang) -> dict[str, str]:
    """The placeholders of every verdict message, each quantity in one unit with the other in
    parentheses where a line needs both."""
    v, code = verdict.verdict, lang.value
    missing = max(-v.headroom_bytes, 0)
    return {
        "gpus": str(verdict.gpus), "gpu": v.gpu.display_name,
        "count": str(v.min_gpus_lower_bound),
        "required_gb": format_gb(v.required_bytes, code),
        "required_gib": format_gib(v.required_bytes, code),
        "headroom_gb": format_gb(max(v.headroom_bytes, 0), code),
        "headroom_gib": format_gib(max(v.headroom_bytes, 0), code),
        "missing_gb": format_gb(missing, code), "missing_gib": format_gib(missing, code),
        "usable_gib": format_gib(v.usable_bytes, code),
        "capacity_gb": format_gb(v.capacity_bytes, code),
        "capacity_gib": format_gib(v.capacity_bytes, code, 0),
        "share": _percent(v.usable_share, lang),
        "sold": translate("web.sold_as", lang, size=format_number(v.gpu.memory_gib, code, 0)),
    }


def summary_text(verdict: PageVerdict | None, request: PageRequest) -> str:
    """The short live summary (the verdict and the total) that screen readers hear on every
    change, instead of the whole results panel."""
    lang = request.lang
    if verdict is None:
        reading = request.seed_reading
        key = "web.empty" if reading.empty else "web.fix_inputs"
        return typeset(translate(key, lang), lang)
    words = verdict_words(verdict, lang)
    head = translate(f"web.summary.{verdict.state.value}", lang, **words)
    if verdict.source is VerdictSource.DETAILED:
        text = translate("web.summary.detailed", lang, verdict=head, peak=words["required_gib"])
    else:
        text = translate("web.summary.seed", lang, verdict=head, total=words["required_gb"])
    return typeset(text, lang)
