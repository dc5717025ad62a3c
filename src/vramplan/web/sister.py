"""The sister calculators: their pages, live fragments and JSON API.

- `/inference` (French), `/en/inference` (English): "Calculateur de VRAM pour l'inférence LLM";
  `/lora`, `/en/lora`: "Calculateur de paramètres LoRA". With JavaScript off the form's GET renders
  the whole page; with it on, the page's script fetches `/inference/fragment` (or
  `/lora/fragment`) with the same query and swaps the HTML in.
The results are the objects `vramplan infer --json` and `vramplan lora --json` print, which
`/api/v1/inference` and `/api/v1/lora` answer too (`vramplan.requests.answers`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from vramplan.i18n import Lang, translate
from vramplan.units import format_gb, format_gib, format_number
from vramplan.web.pages import HOME, model_choices, page_lang
from vramplan.web.sister_view import (
    ENGINE_CHOICES,
    JSON,
    KV_CHOICES,
    TARGET_CHOICES,
    WEIGHT_CHOICES,
    InferenceForm,
    LoraForm,
    Reading,
    gpu_choices,
    inference_chart,
    inference_chart_label,
    part_label,
    read_inference,
    read_lora,
    training_link,
)
from vramplan.web.view import base_context, environment, page_query, typeset

router = APIRouter()
_templates = environment()

INFERENCE = {Lang.FR: "/inference", Lang.EN: "/en/inference"}
LORA = {Lang.FR: "/lora", Lang.EN: "/en/lora"}


def _other(lang: Lang) -> Lang:
    return Lang.EN if lang is Lang.FR else Lang.FR


def _summary(reading: Reading, lang: Lang, text: Callable[[JSON], str]) -> str:
    """The short live summary of a sister page's result (what screen readers hear)."""
    if reading.payload is not None:
        return typeset(text(reading.payload), lang)
    return typeset(translate("sister.empty" if reading.empty else "web.fix_inputs", lang), lang)


def _inference_results(reading: Reading, lang: Lang) -> dict[str, Any]:
    payload = reading.payload
    chart = inference_chart(payload) if payload is not None else None
    return {
        "summary": _summary(reading, lang, lambda p: translate(
            "sister.infer.summary", lang, total=format_gb(int(p["device_bytes"]), lang.value),
            total_gib=format_gib(int(p["device_bytes"]), lang.value))),
        "reading": reading,
        "payload": payload,
        "field_errors": reading.errors,
        "chart": chart,
        "chart_label": inference_chart_label(chart, lang) if chart is not None else "",
        "part_label": lambda name: part_label(name, lang),
    }


def _lora_results(reading: Reading, lang: Lang) -> dict[str, Any]:
    payload = reading.payload
    return {
        "summary": _summary(reading, lang, lambda p: translate(
            "sister.lora.summary", lang, count=format_number(p["trainable_params"], lang.value, 0),
            share=translate("sister.percent", lang,
                            value=format_number(p["share_of_model"] * 100, lang.value, 4)))),
        "reading": reading,
        "payload": payload,
        "field_errors": reading.errors,
        "training_url": training_link(HOME[lang], payload) if payload is not None else "",
    }


@dataclass(frozen=True)
class _Calculator:
    """What differs between the two sister pages; everything else is shared."""

    key: str
    """Message-key part (`sister.{key}.title`)."""
    partials: str
    """Template name part (`partials/{partials}_inputs.html`) and URL segment."""
    paths: dict[Lang, str]
    form_of: Callable[[Mapping[str, str]], Any]
    """The page's form (InferenceForm or LoraForm) from the query."""
    read: Callable[[Any, Lang], Reading]
    results: Callable[[Reading, Lang], dict[str, Any]]
    choices: Callable[[], dict[str, Any]]
    """The inputs' option lists."""


_INFERENCE = _Calculator(
    "infer", "inference", INFERENCE, InferenceForm.from_query, read_inference, _inference_results,
    lambda: {"weight_choices": WEIGHT_CHOICES, "kv_choices": KV_CHOICES,
             "engine_choices": ENGINE_CHOICES, "gpu_choices": gpu_choices()})
_LORA = _Calculator(
    "lora", "lora", LORA, LoraForm.from_query, read_lora, _lora_results,
    lambda: {"target_choices": TARGET_CHOICES})
_SIBLING = {_INFERENCE.key: _LORA, _LORA.key: _INFERENCE}


def _html(html: str, status: int = 200, fragment: bool = False) -> HTMLResponse:
    return HTMLResponse(html, status_code=status,
                        headers={"Cache-Control": "no-store"} if fragment else None)


def _page(request: Request, path_lang: Lang, calculator: _Calculator) -> HTMLResponse:
    """The whole page, server-rendered: language links carrying the query, inputs, results."""
    lang = page_lang(request, path_lang)
    query = page_query(request.query_params.multi_items())
    form = calculator.form_of(query)
    reading = calculator.read(form, lang)
    suffix = "?" + urlencode(query) if query else ""
    other = _other(lang)
    sibling = _SIBLING[calculator.key]
    context = {
        **base_context(lang),
        "title_key": f"sister.{calculator.key}.title",
        "description_key": f"sister.{calculator.key}.description",
        "intro_key": f"sister.{calculator.key}.intro",
        "partials": calculator.partials,
        "other_lang": other.value,
        "other_url": calculator.paths[other] + suffix,
        "alternates": {code.value: calculator.paths[code] + suffix for code in Lang},
        "form_action": calculator.paths[lang],
        "fragment_url": f"/{calculator.partials}/fragment",
        "home": HOME[lang],
        "sibling": sibling.paths[lang],
        "sibling_key": f"web.sister.{sibling.partials}",
        "models": model_choices(),
        "form": form,
        "errors": reading.errors,
        **calculator.choices(),
        **calculator.results(reading, lang),
    }
    return _html(_templates.get_template("sister.html").render(context))


def _fragment(request: Request, calculator: _Calculator) -> HTMLResponse:
    """The results alone, for the page's script: same query, `lang` says which language."""
    lang = page_lang(request, Lang.FR)
    form = calculator.form_of(page_query(request.query_params.multi_items()))
    reading = calculator.read(form, lang)
    context = {**base_context(lang), **calculator.results(reading, lang)}
    template = f"partials/{calculator.partials}_results.html"
    return _html(_templates.get_template(template).render(context), fragment=True)


@router.api_route("/inference", methods=["GET", "HEAD"], include_in_schema=False)
def inference_fr(request: Request) -> HTMLResponse:
    return _page(request, Lang.FR, _INFERENCE)


@router.api_route("/en/inference", methods=["GET", "HEAD"], include_in_schema=False)
def inference_en(request: Request) -> HTMLResponse:
    return _page(request, Lang.EN, _INFERENCE)


@router.get("/inference/fragment", include_in_schema=False)
def inference_fragment(request: Request) -> HTMLResponse:
    return _fragment(request, _INFERENCE)


@router.api_route("/lora", methods=["GET", "HEAD"], include_in_schema=False)
def lora_fr(request: Request) -> HTMLResponse:
    return _page(request, Lang.FR, _LORA)


@router.api_route("/en/lora", methods=["GET", "HEAD"], include_in_schema=False)
def lora_en(request: Request) -> HTMLResponse:
    return _page(request, Lang.EN, _LORA)


@router.get("/lora/fragment", include_in_schema=False)
def lora_fragment(request: Request) -> HTMLResponse:
    return _fragment(request, _LORA)


@router.get("/en/inference/", include_in_schema=False)
@router.get("/en/lora/", include_in_schema=False)
@router.get("/inference/", include_in_schema=False)
@router.get("/lora/", include_in_schema=False)
def trailing_slash(request: Request) -> Response:
    suffix = "?" + request.url.query if request.url.query else ""
    return RedirectResponse(request.url.path.rstrip("/") + suffix, status_code=308)
