"""The seed page's form: the fields as typed, read through the seed calculator's vocabulary
(`vramplan.requests.vocabulary.SEED`), the same reading as the CLI's and the API's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from vramplan.errors import MissingValue, VramplanError
from vramplan.presets.models import ModelPreset, architecture_of, find_model
from vramplan.presets.optimizers import OptimizerPreset
from vramplan.requests.reading import Inputs, read_all
from vramplan.requests.seed import seed_request
from vramplan.requests.vocabulary import MODEL, SEED
from vramplan.seed import SeedInputs
from vramplan.units import PARAMS_PER_BILLION

CUSTOM = "custom"
"""The page's `optimizer` value for "custom value": same as omitting `optimizer` and giving
`bytes_per_param`, as on the CLI."""

SEED_FIELDS = ("model", "params", "optimizer", "bytes_per_param", "activations")
"""`model` is the page's model picker: a registry preset whose exact count replaces `params`."""


@dataclass(frozen=True, slots=True)
class SeedForm:
    """The seed fields as typed, before any parsing. The defaults are the seed page's."""

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
        """A value is still to be typed: the parameter count, or the custom memory per parameter
        just chosen. The page then asks for a value instead of showing an error."""
        return any(isinstance(error, MissingValue) for error in self.errors.values())


def read_seed(form: SeedForm) -> SeedReading:
    """Read every field through the seed calculator's vocabulary (`vramplan.requests`),
    collecting one error per field. Page rules: a picked model sets N (the params field then
    shows its exact count); `custom` means the figure typed in `bytes_per_param`."""
    values = {"model": form.model, "optimizer": "" if form.is_custom else form.optimizer,
              "bytes_per_param": form.bytes_per_param if form.is_custom else "",
              "activations": form.activations,
              "params": "" if form.model else form.params}
    inputs, errors = read_all(SEED, values, text=True)
    model = _attempt_model(inputs, errors)
    if form.optimizer == CUSTOM and not form.bytes_per_param:
        errors["bytes_per_param"] = MissingValue("bytes_per_param")
    if not form.model and not form.params:
        errors.setdefault("params", MissingValue("params"))
    model_params = params_total(model) if model is not None else None
    if errors:
        return SeedReading(None, errors, model, model_params)
    try:
        seed = seed_request(inputs)
    except VramplanError as error:
        return SeedReading(None, {error.field: error}, model, model_params)
    return SeedReading(seed.inputs, {}, model, model_params)


def _attempt_model(inputs: Inputs, errors: dict[str, VramplanError]) -> ModelPreset | None:
    name = inputs.get(MODEL)
    if name is None or "model" in errors:
        return None
    try:
        return find_model(name)
    except VramplanError as error:
        errors["model"] = error
        return None


@cache
def params_total(model: ModelPreset) -> int:
    """The preset's exact parameter count (its architecture is read once per preset)."""
    return architecture_of(model).params_total


def params_text(params: int) -> str:
    """A count in billions as the params field shows it: plain decimals, no grouping, so that
    it reads back exactly (8030261248 -> `8.030261248`)."""
    return f"{params / PARAMS_PER_BILLION:.12f}".rstrip("0").rstrip(".")
