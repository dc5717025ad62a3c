"""The seed calculator's request: N (or a model), B (an optimizer's preset or a figure), A (a
figure, or computed from a model's batch and sequence length), and the GPUs to compare with."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.errors import ConflictingOptions, MissingValue, VramplanError
from vramplan.presets.gpus import COMMON_GPUS, Gpu, find_gpu
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.requests.models import ModelChoice, model_choice, optional_model, tokens_for
from vramplan.requests.reading import Inputs, check_tokens
from vramplan.requests.vocabulary import (
    ACTIVATIONS,
    BATCH,
    BYTES_PER_PARAM,
    GPU,
    OPTIMIZER,
    PARAMS,
    SEQ_LEN,
)
from vramplan.seed import SeedInputs, seed_inputs
from vramplan.units import PARAMS_PER_BILLION, bytes_to_gb
from vramplan.vocab import Optimizer

SEED_PRESETS = {
    Optimizer.ADAMW: OptimizerPreset.ADAM_MIXED,
    Optimizer.PAGED_ADAMW: OptimizerPreset.ADAM_MIXED,
    Optimizer.ADAMW_8BIT: OptimizerPreset.ADAM_8BIT,
    Optimizer.PAGED_ADAMW_8BIT: OptimizerPreset.ADAM_8BIT,
    Optimizer.SGD_MOMENTUM: OptimizerPreset.SGD_MOMENTUM,
}
"""The seed figure of each optimizer: the seed rule assumes mixed precision (16-bit weights and
gradients, an fp32 master copy), so AdamW is its "Adam in mixed precision". Paged optimizers hold
the same states (in unified memory)."""


class NoSeedFigure(VramplanError):
    """An optimizer the seed rule has no bytes-per-parameter figure for."""

    key = "error.no_seed_figure"


@dataclass(frozen=True, slots=True)
class SeedRequest:
    inputs: SeedInputs
    model: ModelChoice | None
    """The model whose exact count is N, or whose batch and sequence give A."""
    gpus: tuple[Gpu, ...]
    activations_shape: tuple[int, int] | None = None
    """(batch, seq_len) when A was computed from the model."""


def seed_preset(optimizer: Optimizer) -> OptimizerPreset:
    """The seed figure for `optimizer`, or an error saying there is none."""
    preset = SEED_PRESETS.get(optimizer)
    if preset is None:
        raise NoSeedFigure(OPTIMIZER.name, optimizer.value, other=BYTES_PER_PARAM.name)
    return preset


def seed_request(inputs: Inputs) -> SeedRequest:
    """Read N, B, A and the GPUs. N is `params`, or the exact count of `model`/`config`
    (giving both is refused); B is the optimizer's seed figure (default: Adam in mixed precision),
    or `bytes_per_param`; A is `activations`, or, with `batch` or `seq_len`, the activation
    memory of one full fine-tuning step of the model (`activations_for_simple_mode`)."""
    model = optional_model(inputs)
    if inputs.given(PARAMS) and model is not None:
        raise ConflictingOptions(PARAMS.name, model.field)
    if not inputs.given(PARAMS) and model is None:
        raise MissingValue(PARAMS.name)
    params_billion = (inputs.require(PARAMS) if model is None
                      else model.arch.params_total / PARAMS_PER_BILLION)
    if inputs.given(OPTIMIZER) and inputs.given(BYTES_PER_PARAM):
        raise ConflictingOptions(OPTIMIZER.name, BYTES_PER_PARAM.name)
    preset = None if inputs.given(BYTES_PER_PARAM) else seed_preset(inputs.require(OPTIMIZER))
    shape = _activations_shape(inputs, model)
    activations_gb = (inputs.require(ACTIVATIONS) if shape is None or model is None
                      else _activations_gb(model, *shape))
    gpu = inputs.get(GPU)
    return SeedRequest(
        inputs=seed_inputs(params_billion, preset, inputs.get(BYTES_PER_PARAM), activations_gb),
        model=model, gpus=(find_gpu(gpu),) if gpu is not None else COMMON_GPUS,
        activations_shape=shape)


def _activations_shape(inputs: Inputs, model: ModelChoice | None) -> tuple[int, int] | None:
    """(batch, seq_len) when A is to be computed from the model."""
    shape_field = next((f for f in (SEQ_LEN, BATCH) if inputs.given(f)), None)
    if shape_field is None:
        return None
    if inputs.given(ACTIVATIONS):
        raise ConflictingOptions(ACTIVATIONS.name, shape_field.name)
    if model is None:
        raise MissingValue("model")
    check_tokens(inputs, BATCH, SEQ_LEN)
    return inputs.require(BATCH), tokens_for(inputs, SEQ_LEN, model)


def _activations_gb(model: ModelChoice, batch: int, seq_len: int) -> float:
    from vramplan.training.estimate import activations_for_simple_mode

    return bytes_to_gb(activations_for_simple_mode(model.arch, batch, seq_len))


@dataclass(frozen=True, slots=True)
class SimpleActivations:
    """The seed rule's A for a model's batch and sequence length."""

    model: ModelChoice
    batch: int
    seq_len: int
    activations_bytes: int


def simple_activations(inputs: Inputs) -> SimpleActivations:
    """A from `model`, `batch` and `seq_len` (the `activations` form of the page and the API):
    one full fine-tuning step in mixed precision with SDPA (`activations_for_simple_mode`)."""
    from vramplan.training.estimate import activations_for_simple_mode

    model = model_choice(inputs)
    check_tokens(inputs, BATCH, SEQ_LEN)
    batch, seq_len = inputs.require(BATCH), tokens_for(inputs, SEQ_LEN, model)
    return SimpleActivations(model, batch, seq_len,
                             activations_for_simple_mode(model.arch, batch, seq_len))
