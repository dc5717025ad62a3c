"""The JSON API, version 1: `/api/v1/estimate` (GET and POST), `/api/v1/gpus`, `/api/v1/health`.

Answers are built by `vramplan.serialize`, the serializer of `vramplan estimate --json`, and sent
as they are (no second pass through pydantic), encoded by orjson: the standard library's encoder
took about half of an estimate's time in the app (40 of 80 µs; benchmarks/api_throughput.py).
Every 4xx has the shape of `schemas.ErrorOut`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, TypeVar

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from vramplan import __version__
from vramplan.presets.gpus import COMMON_GPUS, GPUS, find_gpu
from vramplan.presets.models import MODELS, architecture_of
from vramplan.seed import SeedInputs, estimate_seed, seed_inputs
from vramplan.serialize import gpu_to_json, preset_to_json, seed_to_json
from vramplan.verdict import verdicts
from vramplan.web.errors import from_validation
from vramplan.web.lang import parse_lang
from vramplan.web.query import SeedForm, read_seed
from vramplan.web.schemas import (
    ErrorOut,
    EstimateOut,
    EstimateQuery,
    EstimateRequest,
    GpusOut,
    HealthOut,
    LangQuery,
    ModelsOut,
)

router = APIRouter(prefix="/api/v1", tags=["v1"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorOut, "description": "A bad value: the message names field and value."},
}
BODY_FIELDS = tuple(EstimateRequest.model_fields)
"""What a POST body may hold, listed when it holds something else."""
FIELDS_BY_LOCATION = {"body": BODY_FIELDS, "query": tuple(EstimateQuery.model_fields)}


_Q = TypeVar("_Q", bound=LangQuery)


class FastJSONResponse(JSONResponse):
    """JSON encoded by orjson: compact UTF-8, the same values as `json.dumps` (floats shortest
    round-trip); NaN and infinities never reach it (the inputs are checked finite)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def query_parameters(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI `parameters` for a query model (FastAPI's own query-model support costs about
    200 µs a request, more than the estimate itself, so the model is applied by `read_query`)."""
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    return {"parameters": [
        {"name": name, "in": "query", "required": name in required, "schema": spec,
         "description": spec.get("description", "")}
        for name, spec in schema["properties"].items()
    ]}


def query_fields(request: Request) -> dict[str, str]:
    """The query's fields as text (the last value of a repeated name). FastAPI has already parsed
    the query of every request before the endpoint runs (`solve_dependencies` reads
    `request.query_params`, which Starlette keeps on the request), so this reuses that parse
    rather than parsing the raw bytes a second time (about 4 µs of an estimate's 36)."""
    return dict(request.query_params)


def validated(fields: Mapping[str, str], model: type[_Q]) -> _Q:
    """`fields` as `model`; an unknown parameter (the message lists `model`'s) or `lang` is an
    error."""
    try:
        query = model.model_validate(fields)
    except ValidationError as invalid:
        errors = [{**error, "loc": ("query", *error["loc"])} for error in invalid.errors()]
        raise from_validation(errors, {"query": tuple(model.model_fields)}) from None
    if query.lang is not None:
        parse_lang(query.lang)
    return query


def read_query(request: Request, model: type[_Q]) -> _Q:
    """The request's query as `model` (every API route reads its query this way)."""
    return validated(query_fields(request), model)


def _answer(inputs: SeedInputs, gpu: str | None) -> JSONResponse:
    gpus = (find_gpu(gpu),) if gpu is not None else COMMON_GPUS
    estimate = estimate_seed(inputs)
    return FastJSONResponse(seed_to_json(estimate, verdicts(estimate.total_bytes, gpus)))


@router.get("/estimate", response_model=None, responses={200: {"model": EstimateOut}, **_ERRORS},
            openapi_extra=query_parameters(EstimateQuery))
async def get_estimate(request: Request) -> JSONResponse:
    """Training VRAM by the seed rule M = N·B, V = M + A, from query-string text."""
    query = read_query(request, EstimateQuery)
    form = SeedForm(params=query.params.strip(), optimizer=(query.optimizer or "").strip(),
                    bytes_per_param=(query.bytes_per_param or "").strip(),
                    activations=(query.activations or "").strip())
    return _answer(read_seed(form).require(), query.gpu)


@router.post("/estimate", response_model=None, responses={200: {"model": EstimateOut}, **_ERRORS},
             openapi_extra=query_parameters(LangQuery))
async def post_estimate(request: Request, body: EstimateRequest) -> JSONResponse:
    """Training VRAM by the seed rule, from a strict JSON body (JSON numbers, known fields)."""
    read_query(request, LangQuery)
    inputs = seed_inputs(body.params, body.optimizer, body.bytes_per_param, body.activations)
    return _answer(inputs, body.gpu)


@router.get("/gpus", response_model=None, responses={200: {"model": GpusOut}, **_ERRORS},
            openapi_extra=query_parameters(LangQuery))
async def get_gpus(request: Request) -> JSONResponse:
    """The GPU catalogue, as `vramplan gpus --json` prints it."""
    read_query(request, LangQuery)
    return FastJSONResponse({"gpus": [gpu_to_json(gpu) for gpu in GPUS]})


@lru_cache(maxsize=1)
def _models_json() -> list[dict[str, Any]]:
    return [preset_to_json(preset, architecture_of(preset)) for preset in MODELS]


@router.get("/models", response_model=None, responses={200: {"model": ModelsOut}, **_ERRORS},
            openapi_extra=query_parameters(LangQuery))
async def get_models(request: Request) -> JSONResponse:
    """The model registry with exact parameter counts, as `vramplan models --json` lists it."""
    read_query(request, LangQuery)
    return FastJSONResponse({"models": _models_json()})


@router.get("/health", response_model=None, responses={200: {"model": HealthOut}})
async def health() -> JSONResponse:
    """Liveness: answers as soon as the app serves requests, computes nothing."""
    return FastJSONResponse({"status": "ok", "version": __version__})
