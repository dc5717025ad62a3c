"""The JSON API against its own OpenAPI document: schemathesis generates valid and invalid
requests for every operation and checks status codes, content types, headers and response shapes
(the documented 200 object and the one 4xx error shape). In process: no server, no network."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from vramplan.web.app import create_app

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())

CALCULATORS = frozenset({"/api/v1/estimate", "/api/v1/fit", "/api/v1/activations",
                         "/api/v1/inference", "/api/v1/lora"})
"""Their fields go together by rules a JSON Schema does not state (`params` or `model`, not both;
`optimizer` or `bytes_per_param`; a prompt within the context; `quant` only under QLoRA; GPUs a
multiple of tensor x pipeline parallelism...), so a schema-valid request may be rightly refused
with 422: `positive_data_acceptance` is left out for them. Every other check runs: status codes,
content types, headers, and the documented 200 object or the one error shape."""


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case) -> None:
    excluded = [positive_data_acceptance] if case.path in CALCULATORS else []
    case.call_and_validate(excluded_checks=excluded)
