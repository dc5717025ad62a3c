"""The JSON API's side of the request vocabulary: query and body models built from a form's
fields, and the reading of a request into the form's typed values.

- A query string is text, read like the CLI's options (`7,5` = 7.5, `q,v` for a list, `true` or
  `false` for a flag). Its model is a FastAPI query model (every field a string), so the OpenAPI
  document lists the parameters and an unknown one is refused; a parameter given twice is
  refused too (Starlette would keep the last).
- A JSON body holds typed values (numbers, booleans, lists of names), read without a round trip
  through text; its schema is generated from the same fields.
Every bad value answers 422 in the one error shape (`vramplan.web.errors`).
"""

# No `from __future__ import annotations` here: FastAPI reads the routes' annotations, and those of
# `calculator_router` name a dependency built from the function's own arguments, which must be
# evaluated where they are written.

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, create_model

from vramplan.errors import UnknownName, VramplanError
from vramplan.i18n import Lang, translate
from vramplan.requests.fields import ChoiceField
from vramplan.requests.fields import Field as VocabularyField
from vramplan.requests.reading import Inputs, read
from vramplan.requests.vocabulary import LOCAL_ONLY, Form
from vramplan.shapes import ErrorOut
from vramplan.text import EXCERPT_CHARACTERS, excerpt
from vramplan.web.api.schemas import answer_doc
from vramplan.web.compute import compute
from vramplan.web.errors import NotJson
from vramplan.web.lang import parse_lang

ERRORS: dict[int | str, dict[str, Any]] = {
    422: answer_doc(ErrorOut, "A bad value: the message names field and value."),
}
LANG_DESCRIPTION = "Language of error messages, `fr` or `en` (else Accept-Language)."


class RepeatedParameter(VramplanError):
    """A query parameter given more than once."""

    key = "error.repeated_parameter"


class FastJSONResponse(JSONResponse):
    """JSON encoded by orjson: compact UTF-8, the same values as `json.dumps` (floats shortest
    round-trip); NaN and infinities never reach it (every input is checked finite)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def api_fields(form: Form) -> tuple[VocabularyField[Any], ...]:
    """The form's fields the API takes (not a path on the server's disk)."""
    return tuple(field for field in form.fields if field.name not in LOCAL_ONLY)


def _description(field: VocabularyField[Any]) -> str:
    text = translate(field.help_key, Lang.EN)
    default = field.default_text()
    if default is not None:
        text += f" Default: {default}."
    return text + " Accepted: " + field.accepted(Lang.EN) + "."


def query_model(form: Form) -> type[BaseModel]:
    """A FastAPI query model of the form: every field (and alias) a string, and `lang`. Other
    names pass through to the form's reader, which refuses them listing the form's own."""
    fields: dict[str, Any] = {"lang": (str | None, Field(
        None, description=LANG_DESCRIPTION,
        json_schema_extra={"enum": ["", *(lang.value for lang in Lang)]}))}
    for field in api_fields(form):
        schema = field.json_schema()
        # an empty value is a field not given (as a web form sends it): its default applies
        extra: dict[str, Any] | None = (
            {"enum": ["", *schema["enum"]]} if "enum" in schema else None)
        for name in field.names:
            fields[name] = (str | None, Field(None, description=_description(field),
                                              json_schema_extra=extra))
    model: type[BaseModel] = create_model(
        f"{form.name.capitalize()}Query", __config__=ConfigDict(extra="allow"), **fields)
    return model


def body_schema(form: Form) -> dict[str, Any]:
    """The JSON Schema of the form's body: typed values, every field optional, nothing else. A
    field given `null` (or an empty string) is read as left out, as an empty field of the page
    is (`reading._empty`): the schema says so."""
    properties = {}
    for field in api_fields(form):
        for name in field.names:
            properties[name] = {"anyOf": [field.json_schema(), {"type": "null"}],
                                "description": _description(field) + " null: as if left out."}
    return {"title": f"{form.name.capitalize()}Body", "type": "object", "properties": properties,
            "additionalProperties": False}


def body_doc(form: Form) -> dict[str, Any]:
    """The OpenAPI `requestBody` of a POST route taking the form as JSON."""
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": body_schema(form)}}}}


def query_reader(form: Form) -> Callable[..., Awaitable[Inputs]]:
    """A FastAPI dependency reading the request's query as the form's typed values: its
    signature carries the form's query model, so FastAPI documents the parameters and refuses
    unknown ones before the route runs."""
    model = query_model(form)

    async def read_form_query(request: Request, query: BaseModel) -> Inputs:
        repeated = _repeated(request)
        if repeated is not None:
            raise RepeatedParameter(repeated, str(request.query_params[repeated]))
        values = query.model_dump(exclude_none=True)
        lang = values.pop("lang", "")
        if lang:
            _check_listed("lang", lang, [code.value for code in Lang])
            parse_lang(lang)
        _check_choices(form, values)
        return read(form, values, text=True)

    read_form_query.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
        inspect.Parameter("query", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          annotation=Annotated[model, Query()]),
    ])
    return read_form_query


LANG_ONLY = Form("lang", ())
"""The query of routes that take nothing but `lang`."""


def _repeated(request: Request) -> str | None:
    seen: set[str] = set()
    for name, _ in request.query_params.multi_items():
        if name in seen:
            return name
        seen.add(name)
    return None


async def read_body(request: Request, form: Form) -> Inputs:
    """The JSON body as the form's typed values (JSON numbers, booleans and lists)."""
    raw = await request.body()
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise NotJson(_excerpt(raw)) from None
    if not isinstance(data, dict):
        raise NotJson(_excerpt(raw))
    api_names = {name for field in api_fields(form) for name in field.names}
    values = {name: value for name, value in data.items() if name in api_names}
    unknown = [name for name in data if name not in api_names]
    if unknown:
        from vramplan.errors import UnknownField

        raise UnknownField(unknown[0], tuple(sorted(api_names)))
    _check_choices(form, values)
    return read(form, values, text=False)


def _check_choices(form: Form, values: dict[str, Any]) -> None:
    """The API's schema lists each choice's names (`enum`): a name in another case or with
    spaces around it, which the CLI and the pages read, is refused here as the schema says."""
    for name, value in values.items():
        field = form.field(name)
        if isinstance(field, ChoiceField) and isinstance(value, str) and value:
            _check_listed(name, value, field.json_schema()["enum"])


def _check_listed(name: str, value: str, names: list[str]) -> None:
    if value not in names:
        raise UnknownName(name, value, names)


def _excerpt(raw: bytes) -> str:
    return excerpt(raw[: 4 * EXCERPT_CHARACTERS].decode("utf-8", "replace"))


def calculator_router(path: str, form: Form, answer: Callable[[Inputs], Mapping[str, Any]],
                      shape: type[object], *, get_doc: str, post_doc: str) -> APIRouter:
    """`GET path` from query-string text and `POST path` from a JSON body, both answering
    `answer(inputs)` (the object the CLI's `--json` prints, a `shape` of `vramplan.shapes`). The
    computation runs in the computing thread (`vramplan.web.compute`), never on the event loop."""
    router = APIRouter(prefix="/api/v1", tags=["v1"])
    responses: dict[int | str, dict[str, Any]] = {200: answer_doc(shape), **ERRORS}

    @router.get(path, response_model=None, responses=responses, description=get_doc)
    async def get(inputs: Annotated[Inputs, Depends(query_reader(form))]) -> JSONResponse:
        return FastJSONResponse(await compute(answer, inputs))

    @router.post(path, response_model=None, responses=responses, description=post_doc,
                 openapi_extra=body_doc(form))
    async def post(request: Request,
                   _: Annotated[Inputs, Depends(query_reader(LANG_ONLY))]) -> JSONResponse:
        inputs = await read_body(request, form)
        return FastJSONResponse(await compute(answer, inputs))

    get.__name__ = f"get_{form.name}"
    post.__name__ = f"post_{form.name}"
    return router
