"""The sister calculators: their pages, live fragments and JSON API.

- `/inference` (French), `/en/inference` (English): "Calculateur de VRAM pour l'inférence LLM";
  `/lora`, `/en/lora`: "Calculateur de paramètres LoRA". With JavaScript off the form's GET renders
  the whole page; with it on, the page's script fetches `/inference/fragment` (or
  `/lora/fragment`) with the same query and swaps the HTML in.
- `GET`/`POST /api/v1/inference` and `/api/v1/lora`: the objects `vramplan infer --json` and
  `vramplan lora --json` print, built by `vramplan.sister_api` (the same code as the CLI's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ValidationError

from vramplan.i18n import Lang
from vramplan.sister_api import inference_payload, lora_payload
from vramplan.web.api import FastJSONResponse, query_fields, query_parameters, validated
from vramplan.web.errors import from_validation
from vramplan.web.pages import HOME, model_choices, page_lang
from vramplan.web.schemas import ErrorOut, LangQuery
from vramplan.web.sister_schemas import (
    InferenceOut,
    InferenceQuery,
    InferenceRequest,
    LoraOut,
    LoraQuery,
    LoraRequest,
)
from vramplan.web.sister_view import (
    ENGINE_CHOICES,
    KV_CHOICES,
    TARGET_CHOICES,
    WEIGHT_CHOICES,
    InferenceForm,
    LoraForm,
    Reading,
    gpu_choices,
    inference_chart,
    inference_chart_label,
    page_query,
    part_label,
    read_inference,
    read_lora,
    training_link,
)
from vramplan.web.view import base_context, environment

router = APIRouter()
_templates = environment()

INFERENCE = {Lang.FR: "/inference", Lang.EN: "/en/inference"}
LORA = {Lang.FR: "/lora", Lang.EN: "/en/lora"}


def _other(lang: Lang) -> Lang:
    return Lang.EN if lang is Lang.FR else Lang.FR


def _inference_results(reading: Reading, lang: Lang) -> dict[str, Any]:
    payload = reading.payload
    chart = inference_chart(payload) if payload is not None else None
    return {
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


# --- JSON API ------------------------------------------------------------------------------------

_Q = TypeVar("_Q", bound=LangQuery)
_B = TypeVar("_B", bound=BaseModel)
_ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorOut, "description": "A bad value: the message names field and value."},
}


def _read_query(request: Request, model: type[_Q]) -> dict[str, str]:
    """The query's fields, checked against `model` (names, `lang`); values stay text for
    `sister_api`, which reads them like the CLI does."""
    fields = query_fields(request)
    validated(fields, model)
    fields.pop("lang", None)
    return fields


async def _read_body(request: Request, model: type[_B]) -> _B:
    """The body as `model`, strictly (its schema is in the OpenAPI document, inline)."""
    body = await request.body()
    try:
        return model.model_validate_json(body)
    except ValidationError as invalid:
        errors = [{**error, "loc": ("body", *error["loc"])} for error in invalid.errors()]
        raise from_validation(errors, {"body": tuple(model.model_fields)}) from None


def _body_doc(model: type[BaseModel], query: type[BaseModel]) -> dict[str, Any]:
    return {
        **query_parameters(query),
        "requestBody": {"required": True, "content": {
            "application/json": {"schema": model.model_json_schema()}}},
    }


def _as_query(body: BaseModel) -> dict[str, str]:
    """A body's fields as the query text `sister_api` reads (lists joined by commas, flags as
    `1`/`0`): the same values, so the same object as the GET and the CLI."""
    query = {}
    for name, value in body.model_dump(exclude_none=True).items():
        if isinstance(value, bool):
            query[name] = "1" if value else "0"
        elif isinstance(value, list):
            query[name] = ",".join(value)
        else:
            query[name] = str(value)
    return query


@router.get("/api/v1/inference", tags=["v1"], response_model=None,
            responses={200: {"model": InferenceOut}, **_ERRORS},
            openapi_extra=query_parameters(InferenceQuery))
async def get_inference(request: Request) -> JSONResponse:
    """Inference VRAM (weights, KV cache, prefill, CUDA context) and GPU verdicts, as
    `vramplan infer --json` prints them, from query-string text."""
    return FastJSONResponse(inference_payload(_read_query(request, InferenceQuery)))


@router.post("/api/v1/inference", tags=["v1"], response_model=None,
             responses={200: {"model": InferenceOut}, **_ERRORS},
             openapi_extra=_body_doc(InferenceRequest, LangQuery))
async def post_inference(request: Request) -> JSONResponse:
    """Inference VRAM from a strict JSON body (JSON integers and booleans, known fields)."""
    _read_query(request, LangQuery)
    body = await _read_body(request, InferenceRequest)
    return FastJSONResponse(inference_payload(_as_query(body)))


@router.get("/api/v1/lora", tags=["v1"], response_model=None,
            responses={200: {"model": LoraOut}, **_ERRORS},
            openapi_extra=query_parameters(LoraQuery))
async def get_lora(request: Request) -> JSONResponse:
    """LoRA trainable parameters (exact), share of the model and adapter file sizes, as
    `vramplan lora --json` prints them, from query-string text."""
    return FastJSONResponse(lora_payload(_read_query(request, LoraQuery)))


@router.post("/api/v1/lora", tags=["v1"], response_model=None,
             responses={200: {"model": LoraOut}, **_ERRORS},
             openapi_extra=_body_doc(LoraRequest, LangQuery))
async def post_lora(request: Request) -> JSONResponse:
    """LoRA parameters from a strict JSON body (`lora_targets` a list of names)."""
    _read_query(request, LangQuery)
    body = await _read_body(request, LoraRequest)
    return FastJSONResponse(lora_payload(_as_query(body)))

