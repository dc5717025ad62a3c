"""The calculator page (`/` in French, `/en/` in English), its live fragments and the API docs.

With JavaScript off, the form's GET renders everything here; with it on, the script fetches
`/fragments/live` with the same query, which answers every live panel at once (the detailed model
is computed once for the verdict and its card), and swaps the HTML in. Nothing is computed in the
browser. Pages and fragments are rendered in the computing thread (`vramplan.web.compute`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from vramplan.errors import VramplanError
from vramplan.i18n import Lang
from vramplan.model.hf_config import parse_config_text
from vramplan.presets.models import MODELS
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.web.compute import compute
from vramplan.web.details import worked_example
from vramplan.web.errors import NotFound
from vramplan.web.lang import parse_lang
from vramplan.web.panels import PANELS, PANELS_BY_NAME, Panel
from vramplan.web.query import CUSTOM, params_text, params_total
from vramplan.web.routing import serves
from vramplan.web.view import PageRequest, base_context, environment, page_query

router = APIRouter(include_in_schema=False)
_templates = environment()

HOME = {Lang.FR: "/", Lang.EN: "/en/"}
"""Each language's page. The query string is the same on both."""
SISTERS = {"inference": {Lang.FR: "/inference", Lang.EN: "/en/inference"},
           "lora": {Lang.FR: "/lora", Lang.EN: "/en/lora"}}
"""Sister calculators, in each language: linked once their route exists, shown as coming until
then."""


def page_lang(request: Request, path_lang: Lang) -> Lang:
    """`?lang=` when valid, else the path's language (a page never fails on a bad `lang`)."""
    try:
        return parse_lang(request.query_params.get("lang", "")) if "lang" in request.query_params \
            else path_lang
    except VramplanError:
        return path_lang


def _query(request: Request) -> dict[str, str]:
    """The query's fields without `lang`, a repeated one's values joined (`lora_targets`)."""
    return page_query(request.query_params.multi_items())


def _other(lang: Lang) -> Lang:
    return Lang.EN if lang is Lang.FR else Lang.FR


@lru_cache(maxsize=1)
def model_choices() -> tuple[tuple[str, str, int], ...]:
    """(name, display name, exact parameter count) of every registry preset, for the datalist."""
    return tuple((preset.name, preset.display_name, params_total(preset)) for preset in MODELS)


def render_page(request: Request, path_lang: Lang, *, query: dict[str, str] | None = None,
                config_text: str = "", config_error: str = "", status: int = 200
                ) -> HTMLResponse:
    lang = page_lang(request, path_lang)
    query = _query(request) if query is None else query
    page = PageRequest(query, lang)
    suffix = "?" + urlencode(query) if query else ""
    context: dict[str, Any] = {
        **base_context(lang),
        "other_lang": _other(lang).value,
        "other_url": HOME[_other(lang)] + suffix,
        "alternates": {code.value: HOME[code] + suffix for code in Lang},
        "form_action": HOME[lang],
        "live_url": LIVE,
        "form": page.display_form,
        "config_carried": {name: query[name] for name in CARRIED if name in query},
        "models": model_choices(),
        "config_text": config_text,
        "config_error": config_error,
        "errors": page.field_errors,
        "presets": [preset.value for preset in OptimizerPreset],
        "custom": CUSTOM,
        "panels": PANELS,
        "example": worked_example(),
        "sister_urls": {name: paths[lang] if serves(request.app, "GET", paths[lang]) else ""
                        for name, paths in SISTERS.items()},
    }
    for panel in PANELS:
        context.update(panel.context(page))
    html = _templates.get_template("page.html").render(context)
    return HTMLResponse(html, status_code=status)


@router.api_route("/", methods=["GET", "HEAD"])
async def page_fr(request: Request) -> HTMLResponse:
    return await compute(render_page, request, Lang.FR)


@router.api_route("/en/", methods=["GET", "HEAD"])
async def page_en(request: Request) -> HTMLResponse:
    return await compute(render_page, request, Lang.EN)


@router.get("/en")
def page_en_redirect(request: Request) -> Response:
    suffix = "?" + request.url.query if request.url.query else ""
    return RedirectResponse("/en/" + suffix, status_code=308)


CONFIG_LIMIT_BYTES = 1_000_000
"""A config.json is a few kilobytes; a megabyte is surely something else."""
CARRIED = ("optimizer", "bytes_per_param", "activations", "batch", "seq_len", "method",
           "lora_r", "lora_targets", "gpu", "gpus", "sharding", "offload", "precision",
           "checkpointing", "margin")
"""Fields the config form carries back to the page with the count it read (every input but the
model and the count it replaces)."""
LIVE = "/fragments/live"
"""Every live panel at once, for the page's script."""


@router.post("/config")
async def read_pasted_config(request: Request) -> Response:
    """The config.json form (works without JavaScript): count its parameters exactly with
    `vramplan.model.hf_config`, then show the page with that count in the params field."""
    body = await request.body()
    fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    path_lang = Lang.EN if fields.get("lang") == Lang.EN.value else Lang.FR
    carried = {name: fields[name] for name in CARRIED if fields.get(name)}
    text = fields.get("config", "")
    page = PageRequest(carried, path_lang)
    try:
        if len(body) > CONFIG_LIMIT_BYTES:
            raise ConfigTooLarge()
        count = parse_config_text(text, "config.json").params_total
    except VramplanError as error:
        message = (error.message(path_lang) if isinstance(error, ConfigTooLarge)
                   else page.error_text(error))
        return await compute(render_page, request, path_lang, query=carried,
                             config_text=text[:20_000], config_error=message, status=422)
    query = {"params": params_text(count), **carried}
    return RedirectResponse(HOME[path_lang] + "?" + urlencode(query), status_code=303)


class ConfigTooLarge(VramplanError):
    key = "web.config_too_large"

    def __init__(self) -> None:
        super().__init__("config", "", limit="1 MB")


def _panel_html(panel: Panel, page: PageRequest) -> str:
    context = {**base_context(page.lang), **panel.context(page)}
    return _templates.get_template(panel.template).render(context)


def render_live(request: Request) -> HTMLResponse:
    """Every live panel of one query, each in a `<template data-panel>`: one request per change,
    one computation of the detailed model for the verdict and its card."""
    page = PageRequest(_query(request), page_lang(request, Lang.FR))
    html = "".join(f'<template data-panel="{panel.name}">{_panel_html(panel, page)}</template>'
                   for panel in PANELS)
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


def render_fragment(request: Request, panel: Panel) -> HTMLResponse:
    page = PageRequest(_query(request), page_lang(request, Lang.FR))
    return HTMLResponse(_panel_html(panel, page), headers={"Cache-Control": "no-store"})


@router.get(LIVE)
async def live_fragments(request: Request) -> HTMLResponse:
    return await compute(render_live, request)


@router.get("/fragments/{name}")
async def fragment(request: Request, name: str) -> HTMLResponse:
    """One panel alone: same query, `lang` says which language."""
    panel = PANELS_BY_NAME.get(name)
    if panel is None:
        raise NotFound(request.url.path)
    return await compute(render_fragment, request, panel)


@router.get("/api/docs")
def api_docs(request: Request) -> HTMLResponse:
    """The OpenAPI document as a plain page: no Swagger UI, nothing from a CDN."""
    lang = page_lang(request, Lang.EN)
    schema = request.app.openapi()
    html = _templates.get_template("api_docs.html").render(
        **base_context(lang), schema=schema, home=HOME[lang]
    )
    return HTMLResponse(html)


def not_found_page(lang: Lang, message: str) -> HTMLResponse:
    html = _templates.get_template("not_found.html").render(
        **base_context(lang), message=message, home=HOME[lang]
    )
    return HTMLResponse(html, status_code=404)
