"""Reading the seed calculator's query parameters, for the page and the API's GET alike.

Query strings are text: each number is read with the same `NumberField` rules as the CLI, so `7,5`
and `7.5` both mean 7.5. Parameter names are the CLI's options without dashes: `params`,
`optimizer`, `bytes_per_param`, `activations` (and `gpu` on the API).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple, TypeVar

from vramplan.bounds import ACTIVATIONS_GB, BYTES_PER_PARAM, PARAMS_BILLION
from vramplan.errors import MissingValue, VramplanError
from vramplan.presets.models import ModelPreset, architecture_of, find_model
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.seed import SeedInputs, resolve_optimizer, seed_inputs
from vramplan.units import PARAMS_PER_BILLION

CUSTOM = "custom"
"""The page's `optimizer` value for "custom value": same as omitting `optimizer` and giving
`bytes_per_param`, as on the CLI."""

_T = TypeVar("_T")
_A = TypeVar("_A")

SEED_FIELDS = ("model", "params", "optimizer", "bytes_per_param", "activations")
"""`model` is the page's model picker: a registry preset whose exact count replaces `params`."""


class SeedForm(NamedTuple):
    """The seed fields as typed, before any parsing. The defaults are the seed page's.

    A NamedTuple, not a frozen dataclass: built at every API estimate, it costs half as much."""

    params: str = "7"
    optimizer: str = OptimizerPreset.ADAM_MIXED.value
    model: str = ""
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
    model: ModelPreset | None = None
    """The preset picked, whose exact parameter count is `inputs.params_billion`."""
    model_params: int | None = None
    """That preset's exact parameter count."""

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
    model = _attempt(errors, "model", _model, form.model)
    model_params = params_total(model) if model is not None else None
    params = (model_params / PARAMS_PER_BILLION if model_params is not None
              else _attempt(errors, "params", _required_params, form.params))
    optimizer = _attempt(errors, "optimizer", _optimizer, form.optimizer)
    bytes_per_param = _attempt(errors, "bytes_per_param", _custom_bytes, form)
    activations = _attempt(errors, "activations", _activations, form.activations)
    if errors or params is None or activations is None:
        return SeedReading(None, errors, model, model_params)
    try:
        inputs = seed_inputs(params, optimizer, bytes_per_param, activations)
    except VramplanError as error:
        return SeedReading(None, {error.field: error}, model, model_params)
    return SeedReading(inputs, {}, model, model_params)


@cache
def params_total(model: ModelPreset) -> int:
    """The preset's exact parameter count (its architecture is read once per preset)."""
    return architecture_of(model).params_total


def params_text(params: int) -> str:
    """A count in billions as the params field shows it: plain decimals, no grouping, so that
    it reads back exactly (8030261248 -> `8.030261248`)."""
    return f"{params / PARAMS_PER_BILLION:.12f}".rstrip("0").rstrip(".")


def _attempt(errors: dict[str, VramplanError], name: str, parse: Callable[[_A], _T],
             raw: _A) -> _T | None:
    """`parse(raw)`, or None with its error recorded under `name`."""
    try:
        return parse(raw)
    except VramplanError as error:
        errors[name] = error
        return None


def _model(raw: str) -> ModelPreset | None:
    return find_model(raw) if raw else None


def _activations(raw: str) -> float:
    return ACTIVATIONS_GB.parse(raw) if raw else 0.0


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
