"""`/api/v1/gpus`, `/api/v1/models` and `/api/v1/health`: the catalogues, and liveness."""

from __future__ import annotations

from functools import cache
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from vramplan import __version__
from vramplan.presets.gpus import GPUS
from vramplan.presets.models import MODELS, architecture_of
from vramplan.requests.reading import Inputs
from vramplan.serialize import gpus_to_json, models_to_json
from vramplan.shapes import GpusOut, HealthOut, ModelsOut
from vramplan.web.api.common import ERRORS, LANG_ONLY, FastJSONResponse, query_reader
from vramplan.web.api.schemas import answer_doc

router = APIRouter(prefix="/api/v1", tags=["v1"])


@router.get("/gpus", response_model=None, responses={200: answer_doc(GpusOut), **ERRORS})
async def get_gpus(_: Annotated[Inputs, Depends(query_reader(LANG_ONLY))]) -> JSONResponse:
    """The GPU catalogue, as `vramplan gpus --json` prints it."""
    return FastJSONResponse(gpus_to_json(GPUS))


@cache
def _models_json() -> ModelsOut:
    return models_to_json((preset, architecture_of(preset)) for preset in MODELS)


@router.get("/models", response_model=None, responses={200: answer_doc(ModelsOut), **ERRORS})
async def get_models(_: Annotated[Inputs, Depends(query_reader(LANG_ONLY))]) -> JSONResponse:
    """The model registry with exact parameter counts, as `vramplan models --json` lists it."""
    return FastJSONResponse(_models_json())


@router.get("/health", response_model=None, responses={200: answer_doc(HealthOut)})
async def health() -> JSONResponse:
    """Liveness: answers as soon as the app serves requests, computes nothing."""
    body: HealthOut = {"status": "ok", "version": __version__}
    return FastJSONResponse(body)
