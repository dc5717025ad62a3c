"""The JSON API's answers in its OpenAPI document: JSON Schemas that pydantic generates from the
TypedDicts of `vramplan.shapes`, where each shape is declared once (and `vramplan.serialize`
builds it). schemathesis checks that answers conform (tests/test_api_schemathesis.py).

pydantic reads a TypedDict's config from the class itself (a `TypeAdapter` refuses one for a
TypedDict), so the shapes are given it here, where pydantic is imported, rather than in the core:
a key the shape does not declare is refused (`additionalProperties: false`), and an attribute
docstring is the field's description.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import is_typeddict

from vramplan import shapes
from vramplan.shapes import (
    ActivationsOut,
    ErrorOut,
    EstimateOut,
    FitOut,
    GpusOut,
    HealthOut,
    InferenceOut,
    LoraOut,
    ModelsOut,
)

SHAPE_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)
REF_TEMPLATE = "#/components/schemas/{model}"

ANSWERS: tuple[type[object], ...] = (EstimateOut, FitOut, ActivationsOut, InferenceOut, LoraOut,
                                  GpusOut, ModelsOut, HealthOut, ErrorOut)
"""The objects the API answers with: components of its document, with the shapes they nest."""


def _configure_shapes() -> None:
    for value in vars(shapes).values():
        if is_typeddict(value):
            with_config(SHAPE_CONFIG)(value)


_configure_shapes()


def adapter(shape: type[object]) -> TypeAdapter[Any]:
    """pydantic's validator and JSON Schema of one shape of `vramplan.shapes`, configured above."""
    return TypeAdapter(shape)


def _document() -> tuple[dict[str, str], dict[str, Any]]:
    """Each answer's `$ref` by its name, and the components they refer to, by name."""
    refs, definitions = TypeAdapter.json_schemas(
        [(shape.__name__, "serialization", adapter(shape)) for shape in ANSWERS],
        ref_template=REF_TEMPLATE)
    return {name: schema["$ref"] for (name, _), schema in refs.items()}, definitions["$defs"]


_REFS, COMPONENTS = _document()
"""`COMPONENTS`: the document's `components.schemas` (`vramplan.web.app` adds them)."""


def answer_doc(shape: type[object], description: str | None = None) -> dict[str, Any]:
    """An OpenAPI response whose JSON body is `shape`."""
    schema = {"$ref": _REFS[shape.__name__]}
    doc: dict[str, Any] = {"content": {"application/json": {"schema": schema}}}
    if description is not None:
        doc["description"] = description
    return doc
