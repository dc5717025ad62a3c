"""The JSON API, version 1: `/api/v1/estimate` (GET and POST), `/api/v1/gpus`, `/api/v1/health`.

Answers are built by `vramplan.serialize`, the serializer of `vramplan estimate --json`, and sent
as they are (no second pass through pydantic). Every 4xx has the shape of `schemas.ErrorOut`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from vramplan import __version__
from vramplan.fit import verdicts
from vramplan.presets.gpus import COMMON_GPUS, GPUS, find_gpu
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.seed import estimate_seed, seed_inputs
from vramplan.serialize import gpu_to_json, seed_to_json
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
)

router = APIRouter(prefix="/api/v1", tags=["v1"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    422: {"model": ErrorOut, "description": "A bad value: the message names field and value."},
}
BODY_FIELDS = tuple(EstimateRequest.model_fields)
"""What a POST body may hold, listed when it holds something else."""
FIELDS_BY_LOCATION = {"body": BODY_FIELDS, "query": tuple(EstimateQuery.model_fields)}


def _check_lang(query: LangQuery) -> None:
    """An unknown `lang` is an error (answered in the Accept-Language language)."""
    if query.lang is not None:
        parse_lang(query.lang)


def _answer(params_billion: float, optimizer: OptimizerPreset | None,
            bytes_per_param: float | None, activations_gb: float, gpu: str | None) -> JSONResponse:
    inputs = seed_inputs(params_billion, optimizer, bytes_per_param, activations_gb)
    gpus = (find_gpu(gpu),) if gpu is not None else COMMON_GPUS
    estimate = estimate_seed(inputs)
    return JSONResponse(seed_to_json(estimate, verdicts(estimate.total_bytes, gpus)))


@router.get("/estimate", response_model=None, responses={200: {"model": EstimateOut}, **_ERRORS})
def get_estimate(query: Annotated[EstimateQuery, Query()]) -> JSONResponse:
    """Training VRAM by the seed rule M = N·B, V = M + A, from query-string text."""
    _check_lang(query)
    form = SeedForm(params=query.params.strip(), optimizer=(query.optimizer or "").strip(),
                    bytes_per_param=(query.bytes_per_param or "").strip(),
                    activations=(query.activations or "").strip())
    inputs = read_seed(form).require()
    return _answer(inputs.params_billion, inputs.optimizer, inputs.bytes_per_param,
                   inputs.activations_gb, query.gpu)


@router.post("/estimate", response_model=None, responses={200: {"model": EstimateOut}, **_ERRORS})
def post_estimate(body: EstimateRequest, query: Annotated[LangQuery, Query()]) -> JSONResponse:
    """Training VRAM by the seed rule, from a strict JSON body (JSON numbers, known fields)."""
    _check_lang(query)
    return _answer(body.params, body.optimizer, body.bytes_per_param, body.activations, body.gpu)


@router.get("/gpus", response_model=None, responses={200: {"model": GpusOut}, **_ERRORS})
def get_gpus(query: Annotated[LangQuery, Query()]) -> JSONResponse:
    """The GPU catalogue, as `vramplan gpus --json` prints it."""
    _check_lang(query)
    return JSONResponse({"gpus": [gpu_to_json(gpu) for gpu in GPUS]})


@router.get("/health", response_model=None, responses={200: {"model": HealthOut}})
def health() -> JSONResponse:
    """Liveness: answers as soon as the app serves requests, computes nothing."""
    return JSONResponse({"status": "ok", "version": __version__})
