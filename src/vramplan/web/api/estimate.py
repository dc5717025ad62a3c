"""`/api/v1/estimate`: the seed rule M = N·B, V = M + A with GPU verdicts, the object
`vramplan estimate --json` prints (docs/json.md)."""

from __future__ import annotations

from vramplan.requests.answers import seed_answer
from vramplan.requests.vocabulary import SEED
from vramplan.shapes import EstimateOut
from vramplan.web.api.common import calculator_router

router = calculator_router(
    "/estimate", SEED, seed_answer, EstimateOut,
    get_doc="Training VRAM by the seed rule, from query-string text (`7,5` = 7.5).",
    post_doc="Training VRAM by the seed rule, from a JSON body (JSON numbers, known fields).")
