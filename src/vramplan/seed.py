"""The seed calculator's rule, kept exactly as the "simple" mode.

M = N·B and V = M + A, where N is the parameter count in billions, B the bytes per parameter and
A the activation memory in GB (10**9 bytes). N billion parameters at B bytes each are N·B·10**9
bytes, so M in GB is simply N·B: 7 billion x 16 bytes = 112 GB; with 20 GB of activations, 132 GB.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.bounds import ACTIVATIONS_GB, BYTES_PER_PARAM, PARAMS_BILLION
from vramplan.errors import ConflictingOptions, OutOfRange
from vramplan.parts import Component, PartKind
from vramplan.presets.optimizers import OPTIMIZERS, OptimizerPreset, OptimizerSpec, PerParamPart
from vramplan.units import PARAMS_PER_BILLION, gb_to_bytes


@dataclass(frozen=True, slots=True)
class SeedInputs:
    """The seed calculator's inputs. Exactly one of `optimizer` or a custom `bytes_per_param`."""

    params_billion: float
    optimizer: OptimizerPreset | None = OptimizerPreset.ADAM_MIXED
    bytes_per_param: float | None = None
    """A custom figure, used when `optimizer` is None."""
    activations_gb: float = 0.0


@dataclass(frozen=True, slots=True)
class BreakdownItem:
    """One line of the per-parameter breakdown, with its total over all parameters."""

    kind: PartKind
    bytes_per_param: float
    memory_bytes: int

    @property
    def component(self) -> Component:
        return self.kind.component


@dataclass(frozen=True, slots=True)
class SeedEstimate:
    """The seed rule's result. Bytes are integers; convert only to display."""

    inputs: SeedInputs
    params: int
    """N as a whole number of parameters."""
    bytes_per_param: float
    breakdown: tuple[BreakdownItem, ...]
    """Per-parameter parts of B (empty for a custom B); their bytes sum to `model_states_bytes`."""
    model_states_bytes: int
    """M = N·B."""
    activations_bytes: int
    """A, as entered."""

    @property
    def total_bytes(self) -> int:
        """V = M + A."""
        return self.model_states_bytes + self.activations_bytes


def seed_inputs(
    params_billion: float,
    optimizer: OptimizerPreset | None = None,
    bytes_per_param: float | None = None,
    activations_gb: float = 0.0,
) -> SeedInputs:
    """Validated inputs: ranges checked; optimizer and custom B exclusive (default: Adam)."""
    if optimizer is not None and bytes_per_param is not None:
        raise ConflictingOptions("optimizer", "bytes_per_param", optimizer.value)
    if bytes_per_param is not None:
        BYTES_PER_PARAM.check(bytes_per_param)
    elif optimizer is None:
        optimizer = OptimizerPreset.ADAM_MIXED
    if round(PARAMS_BILLION.check(params_billion) * PARAMS_PER_BILLION) < 1:
        raise OutOfRange(PARAMS_BILLION.name, repr(params_billion))  # not even one parameter
    return SeedInputs(
        params_billion=PARAMS_BILLION.check(params_billion), optimizer=optimizer,
        bytes_per_param=bytes_per_param, activations_gb=ACTIVATIONS_GB.check(activations_gb),
    )


def _seed_parts(spec: OptimizerSpec) -> tuple[PerParamPart, ...]:
    """The preset's physical parts, then its planning margin when the seed's figure is rounder."""
    margin = spec.margin_bytes_per_param
    if margin > 0:
        planning = PerParamPart(PartKind.PLANNING_MARGIN, margin)
        return (*spec.parts, planning)
    return spec.parts


_PARTS = {preset: _seed_parts(spec) for preset, spec in OPTIMIZERS.items()}
"""Each preset's breakdown lines, built once: every API estimate reads them."""


def estimate_seed(inputs: SeedInputs) -> SeedEstimate:
    """Apply M = N·B and V = M + A."""
    params = round(inputs.params_billion * PARAMS_PER_BILLION)
    if inputs.optimizer is not None:
        bytes_per_param = OPTIMIZERS[inputs.optimizer].bytes_per_param
        parts = _PARTS[inputs.optimizer]
    elif inputs.bytes_per_param is not None:
        bytes_per_param = inputs.bytes_per_param
        parts = ()
    else:
        raise ValueError("SeedInputs needs an optimizer or a bytes_per_param")
    breakdown = tuple(
        BreakdownItem(p.kind, p.bytes_per_param, round(params * p.bytes_per_param))
        for p in parts
    )
    model_states = (
        sum(item.memory_bytes for item in breakdown) if breakdown
        else round(params * bytes_per_param)
    )
    return SeedEstimate(
        inputs=inputs, params=params, bytes_per_param=bytes_per_param, breakdown=breakdown,
        model_states_bytes=model_states, activations_bytes=gb_to_bytes(inputs.activations_gb),
    )
