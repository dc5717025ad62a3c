"""`/api/v1/fit` and `/api/v1/activations`.

- `fit`: the object `vramplan fit --json` prints (`serialize.fit_to_json`), for the same fields.
- `activations`: the seed rule's A from a model, batch and sequence length, as
  `vramplan estimate --model M --batch B --seq-len T` computes it (one full fine-tuning step in
  mixed precision with SDPA).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from vramplan.requests.answers import fit_answer
from vramplan.requests.reading import Inputs
from vramplan.requests.seed import simple_activations
from vramplan.requests.vocabulary import ACTIVATIONS_FORM, FIT
from vramplan.serialize import activations_to_json
from vramplan.shapes import ActivationsOut, FitOut
from vramplan.web.api.common import ERRORS, FastJSONResponse, calculator_router, query_reader
from vramplan.web.api.schemas import answer_doc
from vramplan.web.compute import compute

router = APIRouter(prefix="/api/v1", tags=["v1"])


fit_router = calculator_router(
    "/fit", FIT, fit_answer, FitOut,
    get_doc="Will a training run fit on GPUs of a type, and what to change if not, from "
    "query-string text.",
    post_doc="The same from a JSON body (JSON numbers and lists of names, known fields).")


@router.get("/activations", response_model=None,
            responses={200: answer_doc(ActivationsOut), **ERRORS})
async def get_activations(
        inputs: Annotated[Inputs, Depends(query_reader(ACTIVATIONS_FORM))]) -> JSONResponse:
    """The seed rule's activation memory A from batch and sequence length (detailed model: full
    fine-tuning, mixed precision, SDPA, no checkpointing)."""
    result = await compute(simple_activations, inputs)
    return FastJSONResponse(activations_to_json(result))
