"""The JSON API against its own OpenAPI document: schemathesis generates valid and invalid
requests for every operation and checks status codes, content types, headers and response shapes
(the documented 200 object and the one 4xx error shape). In process: no server, no network."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from vramplan.web.app import create_app

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())

TEXT_QUERY = ("GET", "/api/v1/estimate")
"""Its query values are text read by the CLI's rules: the schema gives their syntax (a pattern)
but cannot give their range, so a schema-valid `params=0` or `optimizer=custom` without
`bytes_per_param` is rightly refused with 422. Every other check still runs on it, and the POST
body, whose ranges the schema does state, keeps `positive_data_acceptance` too."""


SISTER_TEXT = {("GET", "/api/v1/inference"), ("POST", "/api/v1/inference"), ("GET", "/api/v1/lora"),
               ("POST", "/api/v1/lora")}
"""The sister calculators: a model name is free text (any registry name or Hugging Face repo),
and some schema-valid combinations are rightly refused (a prompt longer than the context, a
llama.cpp KV type with another engine, more tensor-parallel GPUs than heads divide into)."""


FIT_TEXT = {("GET", "/api/v1/fit"), ("GET", "/api/v1/activations")}
"""`vramplan fit`'s options as query text: some schema-valid combinations are rightly refused,
as on the CLI (`quant=int8` with `method=full`, `gpus` not a multiple of tensor x pipeline)."""


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case: schemathesis.Case) -> None:
    excluded = ([positive_data_acceptance]
                if (case.method, case.path) == TEXT_QUERY or (case.method, case.path) in SISTER_TEXT
                else [])
    if (case.method, case.path) in FIT_TEXT:
        excluded = [positive_data_acceptance]
    case.call_and_validate(excluded_checks=excluded)
