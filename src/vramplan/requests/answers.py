"""A typed request to the JSON answer every interface gives for it: the objects `vramplan
estimate|fit|infer|lora --json` print, which the JSON API returns and the pages render."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vramplan.inference.estimate import estimate_inference
from vramplan.inference.limits import inference_verdicts
from vramplan.lora_calculator import estimate_lora
from vramplan.planner.report import fit_report
from vramplan.requests.inference import inference_request
from vramplan.requests.lora import lora_request
from vramplan.requests.reading import Inputs
from vramplan.requests.seed import seed_request
from vramplan.requests.training import fit_request
from vramplan.seed import estimate_seed
from vramplan.serialize import (
    fit_to_json,
    inference_to_json,
    lora_to_json,
    model_to_json,
    seed_to_json,
)
from vramplan.verdict import verdicts

if TYPE_CHECKING:
    from vramplan.shapes import EstimateOut, FitOut, InferenceOut, LoraOut


def seed_answer(inputs: Inputs) -> EstimateOut:
    """`vramplan estimate --json`."""
    seed = seed_request(inputs)
    estimate = estimate_seed(seed.inputs)
    payload = seed_to_json(estimate, verdicts(estimate.total_bytes, seed.gpus))
    if seed.model is not None:
        payload["model"] = model_to_json(seed.model.preset, seed.model.arch)
    return payload


def fit_answer(inputs: Inputs) -> FitOut:
    """`vramplan fit --json`."""
    fit = fit_request(inputs)
    return fit_to_json(fit_report(fit.setup, fit.gpu, fit.usable_share))


def inference_answer(inputs: Inputs) -> InferenceOut:
    """`vramplan infer --json`."""
    inference = inference_request(inputs)
    estimate = estimate_inference(inference.inputs)
    return inference_to_json(estimate,
                             inference_verdicts(estimate, inference.gpus, inference.limits),
                             beyond_context=inference.beyond_context)


def lora_answer(inputs: Inputs) -> LoraOut:
    """`vramplan lora --json`."""
    return lora_to_json(estimate_lora(lora_request(inputs)))
