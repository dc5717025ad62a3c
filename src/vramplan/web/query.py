"""Reading the seed calculator's query parameters, for the page and the API's GET alike.

Query strings are text: each number is read with the same `NumberField` rules as the CLI, so `7,5`
and `7.5` both mean 7.5. Parameter names are the CLI's options without dashes: `params`,
`optimizer`, `bytes_per_param`, `activations` (and `gpu` on the API).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from vramplan.errors import MissingValue, VramplanError
from vramplan.inputs import ACTIVATIONS_GB, BYTES_PER_PARAM, PARAMS_BILLION
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.seed import SeedInputs, resolve_optimizer, seed_inputs

CUSTOM = "custom"
"""The page's `optimizer` value for "custom value": same as omitting `optimizer` and giving
`bytes_per_param`, as on the CLI."""

_T = TypeVar("_T")

SEED_FIELDS = ("params", "optimizer", "bytes_per_param", "activations")


@dataclass(frozen=True, slots=True)
class SeedForm:
    """The seed fields as typed, before any parsing. The defaults are the seed page's."""

    params: str = "7"
    optimizer: str = OptimizerPreset.ADAM_MIXED.value
    bytes_per_param: str = ""
    activations: str = "0"

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> SeedForm:
        """The form a query describes; a query naming no seed field gets the seed's defaults."""
        if not any(name in query for name in SEED_FIELDS):
            return cls()
        return cls(**{name: query.get(name, "").strip() for name in SEED_FIELDS})

    @property
    def is_custom(self) -> bool:
        return self.optimizer == CUSTOM or (not self.optimizer and bool(self.bytes_per_param))


@dataclass(frozen=True, slots=True)
class SeedReading:
    """What a form says: inputs when every field is good, else one error per bad field."""

    inputs: SeedInputs | None
    errors: dict[str, VramplanError] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """The parameter count is missing (the page then asks for a value)."""
        missing = self.errors.get("params")
        return isinstance(missing, MissingValue)

    def require(self) -> SeedInputs:
        """The inputs, or the first field's error raised (the API answers one error at a time)."""
        if self.inputs is None:
            raise next(iter(self.errors.values()), MissingValue("params"))
        return self.inputs


def read_seed(form: SeedForm) -> SeedReading:
    """Parse every field, collecting one error per field, then validate them together."""
    errors: dict[str, VramplanError] = {}
    params = _attempt(errors, "params", lambda: _required_params(form.params))
    optimizer = _attempt(errors, "optimizer", lambda: _optimizer(form.optimizer))
    bytes_per_param = _attempt(errors, "bytes_per_param", lambda: _custom_bytes(form))
    activations = _attempt(
        errors, "activations",
        lambda: ACTIVATIONS_GB.parse(form.activations) if form.activations else 0.0,
    )
    if errors or params is None or activations is None:
        return SeedReading(None, errors)
    try:
        inputs = seed_inputs(params, optimizer, bytes_per_param, activations)
    except VramplanError as error:
        return SeedReading(None, {error.field: error})
    return SeedReading(inputs)


def _attempt(errors: dict[str, VramplanError], name: str, parse: Callable[[], _T]) -> _T | None:
    """`parse()`, or None with its error recorded under `name`."""
    try:
        return parse()
    except VramplanError as error:
        errors[name] = error
        return None


def _required_params(raw: str) -> float:
    if not raw:
        raise MissingValue("params")
    return PARAMS_BILLION.parse(raw)


def _optimizer(raw: str) -> OptimizerPreset | None:
    return None if raw in ("", CUSTOM) else resolve_optimizer(raw)


def _custom_bytes(form: SeedForm) -> float | None:
    if form.optimizer == CUSTOM and not form.bytes_per_param:
        raise MissingValue("bytes_per_param")
    return BYTES_PER_PARAM.parse(form.bytes_per_param) if form.bytes_per_param else None
