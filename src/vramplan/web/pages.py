"""The calculator page (`/` in French, `/en/` in English), its live fragments and the API docs.

With JavaScript off, the form's GET renders everything here; with it on, the script fetches
`/fragments/{panel}` with the same query and swaps the HTML in. Nothing is computed in the browser.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from vramplan.errors import VramplanError
from vramplan.i18n import Lang
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.web.details import worked_example
from vramplan.web.errors import NotFound
from vramplan.web.lang import parse_lang
from vramplan.web.panels import PANELS, PANELS_BY_NAME
from vramplan.web.query import CUSTOM
from vramplan.web.routing import serves
from vramplan.web.view import PageRequest, base_context, environment

router = APIRouter(include_in_schema=False)
_templates = environment()

HOME = {Lang.FR: "/", Lang.EN: "/en/"}
"""Each language's page. The query string is the same on both."""
SISTERS = (("inference", "/inference"), ("lora", "/lora"))
"""Sister calculators: linked once their route exists, shown as coming until then."""


def page_lang(request: Request, path_lang: Lang) -> Lang:
    """`?lang=` when valid, else the path's language (a page never fails on a bad `lang`)."""
    try:
        return parse_lang(request.query_params.get("lang", "")) if "lang" in request.query_params \
            else path_lang
    except VramplanError:
        return path_lang


def _query(request: Request) -> dict[str, str]:
    return {key: value for key, value in request.query_params.items() if key != "lang"}


def _other(lang: Lang) -> Lang:
    return Lang.EN if lang is Lang.FR else Lang.FR


def render_page(request: Request, path_lang: Lang) -> HTMLResponse:
    lang = page_lang(request, path_lang)
    query = _query(request)
    page = PageRequest(query, lang)
    suffix = "?" + urlencode(query) if query else ""
    context: dict[str, Any] = {
        **base_context(lang),
        "other_lang": _other(lang).value,
        "other_url": HOME[_other(lang)] + suffix,
        "alternates": {code.value: HOME[code] + suffix for code in Lang},
        "form_action": HOME[lang],
        "form": page.seed_form,
        "errors": page.field_errors,
        "presets": [preset.value for preset in OptimizerPreset],
        "custom": CUSTOM,
        "panels": PANELS,
        "example": worked_example(),
        "sisters": [(name, path, serves(request.app, "GET", path)) for name, path in SISTERS],
    }
    for panel in PANELS:
        context.update(panel.context(page))
    html = _templates.get_template("page.html").render(context)
    return HTMLResponse(html)


@router.api_route("/", methods=["GET", "HEAD"])
def page_fr(request: Request) -> HTMLResponse:
    return render_page(request, Lang.FR)


@router.api_route("/en/", methods=["GET", "HEAD"])
def page_en(request: Request) -> HTMLResponse:
    return render_page(request, Lang.EN)


@router.get("/en")
def page_en_redirect(request: Request) -> Response:
    suffix = "?" + request.url.query if request.url.query else ""
    return RedirectResponse("/en/" + suffix, status_code=308)


@router.get("/fragments/{name}")
def fragment(request: Request, name: str) -> HTMLResponse:
    """One panel alone, for the page's script: same query, `lang` says which language."""
    panel = PANELS_BY_NAME.get(name)
    if panel is None:
        raise NotFound(request.url.path)
    lang = page_lang(request, Lang.FR)
    page = PageRequest(_query(request), lang)
    context = {**base_context(lang), **panel.context(page)}
    html = _templates.get_template(panel.template).render(context)
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


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
