"""The ASGI app: the page, its fragments, static files and the JSON API, behind strict headers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vramplan import __version__
from vramplan.errors import VramplanError
from vramplan.i18n import Lang
from vramplan.web import pages, sister
from vramplan.web.api import ROUTERS
from vramplan.web.api.schemas import COMPONENTS
from vramplan.web.errors import (
    BodyTooLarge,
    InternalError,
    MethodNotAllowed,
    NotFound,
    NotJson,
    error_json,
    from_validation,
    status_of,
)
from vramplan.web.lang import from_accept_language, request_lang
from vramplan.web.routing import allowed_methods

STATIC = Path(__file__).parent / "static"

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'none'",
    "script-src 'self'",  # one external file, /static/app.js: no inline script at all
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
))
SECURITY_HEADERS = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
)

BODY_LIMIT_BYTES = 64 * 1024
"""The largest request body: a calculator's JSON fields take under a kilobyte, a pasted config.json
a few (the largest published ones, with a layer list, under 20 KB)."""

DESCRIPTION = """Training VRAM by the seed rule M = N·B, V = M + A, with GPU verdicts.

The estimate object is the one `vramplan estimate --json` prints (docs/json.md). POST bodies are
strict JSON (numbers are JSON numbers; unknown fields are refused); GET query strings are text,
read like the CLI's options (`7,5` = `7.5`). Every 4xx answer is `{"error": {...}}` with a message
in the language of `lang` or Accept-Language; a body over 64 KiB answers 413 in the same shape."""

LOG = logging.getLogger("vramplan.web")


class SecurityHeaders:
    """Adds `SECURITY_HEADERS` to every HTTP response (a plain ASGI middleware: no buffering)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimit:
    """Refuses a request body over `BODY_LIMIT_BYTES`: at once when its Content-Length says so
    (nothing of it is read), else as soon as the bytes read pass the limit, in the one error
    shape either way."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _declared_length(scope) > BODY_LIMIT_BYTES:
            error = BodyTooLarge(BODY_LIMIT_BYTES)
            response = JSONResponse(error_json(error, error_lang(Request(scope))),
                                    status_code=status_of(error), headers={"connection": "close"})
            await response(scope, receive, send)
            return
        received = 0

        async def receive_within_limit() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > BODY_LIMIT_BYTES:
                raise BodyTooLarge(BODY_LIMIT_BYTES)  # answered by the VramplanError handler
            return message

        await self.app(scope, receive_within_limit, send)


def _declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() and len(text) < 20 else BODY_LIMIT_BYTES + 1
    return 0


class DocumentedApp(FastAPI):
    """FastAPI whose OpenAPI document holds the answers' schemas, generated from
    `vramplan.shapes` (`web.api.schemas`), which the routes' responses refer to."""

    def openapi(self) -> dict[str, Any]:
        generated = self.openapi_schema is None
        document = super().openapi()
        if generated:
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(COMPONENTS)
        return document


def create_app() -> FastAPI:
    app = DocumentedApp(
        title="vramplan", version=__version__, description=DESCRIPTION,
        docs_url=None, redoc_url=None, openapi_url="/openapi.json",
    )
    app.add_middleware(BodyLimit)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(pages.router)
    app.include_router(sister.router)
    app.add_exception_handler(VramplanError, _on_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _on_validation)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _on_http)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _on_unexpected)
    return app


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def error_lang(request: Request) -> Lang:
    """Errors speak `lang`, else Accept-Language; default English on the API, else the page's."""
    path = request.url.path
    default = Lang.EN if _is_api(request) or path.startswith("/en") else Lang.FR
    accept = request.headers.get("accept-language")
    try:
        return request_lang(request.query_params.get("lang"), accept, default)
    except VramplanError:
        return from_accept_language(accept, default)


def _respond(request: Request, error: VramplanError) -> Response:
    lang = error_lang(request)
    if isinstance(error, NotFound) and not _is_api(request):
        return pages.not_found_page(lang, error.message(lang))
    return JSONResponse(error_json(error, lang), status_code=status_of(error))


async def _on_error(request: Request, error: VramplanError) -> Response:
    return _respond(request, error)


async def _on_validation(request: Request, error: RequestValidationError) -> Response:
    return _respond(request, from_validation(error.errors()))


async def _on_http(request: Request, error: HTTPException) -> Response:
    if error.status_code == 405:
        response = _respond(request, MethodNotAllowed(request.method))
        # RFC 9110, section 15.5.6: a 405 lists the methods the resource supports.
        response.headers["allow"] = ", ".join(allowed_methods(request.app, request.url.path))
        return response
    if error.status_code == 404:
        return _respond(request, NotFound(request.url.path))
    if error.status_code == 400:  # a body that is not even text ("error parsing the body")
        return _respond(request, NotJson())
    ours = VramplanError("request", str(error.detail))
    return JSONResponse(error_json(ours, error_lang(request)), status_code=error.status_code)


async def _on_unexpected(request: Request, error: Exception) -> Response:
    """Any error no handler expects: logged with its traceback on the server, answered 500 in the
    one error shape with the security headers (Starlette sends this response from outside the
    app's middleware, so the headers are set here), the connection kept usable."""
    LOG.error("unexpected error on %s %s", request.method, request.url.path, exc_info=error)
    ours = InternalError()
    return JSONResponse(error_json(ours, error_lang(request)), status_code=500,
                        headers=dict(SECURITY_HEADERS))
