"""The JSON API in process: the same object as `vramplan estimate --json`, strict inputs, one
error shape for every 4xx with a message in the requested language, headers, OpenAPI."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import conform
from vramplan.cli.main import main
from vramplan.shapes import ErrorOut, EstimateOut, GpusOut, ModelsOut


def cli_json(*argv: str) -> Any:
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, "--json"], out, err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def error_of(response: Any, status: int = 422) -> dict[str, Any]:
    """The response's error object, after checking status and the one documented shape."""
    assert response.status_code == status, response.text
    body = response.json()
    conform(ErrorOut, body)
    error: dict[str, Any] = body["error"]
    return error


# --- the estimate object -----------------------------------------------------------------------

def test_get_gives_the_seed_example(client: TestClient) -> None:
    body = client.get("/api/v1/estimate", params={"params": "7", "activations": "20"}).json()
    conform(EstimateOut, body)
    assert body["model_states_gb"] == 112.0  # seed page: 7 × 16 = 112 GB
    assert body["total_gb"] == 132.0  # seed page: + 20 GB of activations = 132 GB
    assert body["total_bytes"] == 132 * 10**9
    h100 = next(v for v in body["verdicts"] if v["gpu"] == "h100-80gb")
    assert h100["fits"] is False and h100["min_gpus_lower_bound"] == 2


@pytest.mark.parametrize("argv", [
    ("--params", "7", "--activations", "20"),
    ("--params", "7,5", "--optimizer", "adam-8bit", "--gpu", "h100-80gb"),
    ("--params", "13", "--bytes-per-param", "10"),
], ids=["seed-example", "8bit-h100", "custom-bytes"])
def test_get_and_post_equal_the_cli_json(client: TestClient, argv: tuple[str, ...]) -> None:
    expected = cli_json("estimate", *argv)
    names = [flag.removeprefix("--").replace("-", "_") for flag in argv[::2]]
    query = dict(zip(names, argv[1::2], strict=True))
    assert client.get("/api/v1/estimate", params=query).json() == expected
    body = {name: (value if name in ("optimizer", "gpu") else float(value.replace(",", ".")))
            for name, value in query.items()}
    assert client.post("/api/v1/estimate", json=body).json() == expected


def test_query_accepts_french_decimals(client: TestClient) -> None:
    french = client.get("/api/v1/estimate", params={"params": "7,5"}).json()
    english = client.get("/api/v1/estimate", params={"params": "7.5"}).json()
    assert french == english
    assert french["params_billion"] == 7.5


def test_a_custom_figure_is_bytes_per_param_alone(client: TestClient) -> None:
    custom = client.get("/api/v1/estimate", params={"params": "7", "bytes_per_param": "10"})
    assert custom.json() == cli_json("estimate", "--params", "7", "--bytes-per-param", "10")
    # the page's "custom value" choice is the page's own: the API names the optimizers
    refused = error_of(client.get("/api/v1/estimate", params={"params": "7",
                                                              "optimizer": "custom"}))
    assert (refused["code"], refused["field"]) == ("unknown_name", "optimizer")


def test_gpus_equal_the_cli_json(client: TestClient) -> None:
    body = client.get("/api/v1/gpus").json()
    conform(GpusOut, body)
    assert body == cli_json("gpus")


def test_health(client: TestClient) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


# --- strict inputs and the one error shape -----------------------------------------------------

@pytest.mark.parametrize(("body", "code", "field"), [
    ({"params": "7"}, "not_a_number", "params"),  # no coercion of "7" to 7
    ({"params": False}, "not_a_number", "params"),  # nor of false to 0
    ({"params": True}, "not_a_number", "params"),
    ({"params": 7, "activations": "20"}, "not_a_number", "activations"),
    ({"params": 0}, "out_of_range", "params"),
    ({"params": -7}, "out_of_range", "params"),
    ({"params": 100_001}, "out_of_range", "params"),
    ({"params": 7, "bytes_per_param": 1001}, "out_of_range", "bytes_per_param"),
    ({"params": 7, "activations": -1}, "out_of_range", "activations"),
    ({}, "missing", "params"),
    ({"params": 7, "optimizer": "adamax"}, "unknown_name", "optimizer"),
    ({"params": 7, "gpu": "h1000"}, "unknown_name", "gpu"),
    ({"params": 7, "optimizer": "adam-mixed", "bytes_per_param": 10}, "conflicting", "optimizer"),
    ({"params": 7, "activation": 20}, "unknown_field", "activation"),
    ([7], "not_json", "body"),
], ids=lambda value: json.dumps(value) if not isinstance(value, str) else value)
def test_post_refuses_bad_bodies(client: TestClient, body: Any, code: str, field: str) -> None:
    error = error_of(client.post("/api/v1/estimate", json=body))
    assert (error["code"], error["field"]) == (code, field)
    assert field in error["message"]


@pytest.mark.parametrize("text", ['{"params": NaN}', '{"params": Infinity}'])
def test_post_refuses_non_finite_numbers(client: TestClient, text: str) -> None:
    response = client.post("/api/v1/estimate", content=text,
                           headers={"content-type": "application/json"})
    assert error_of(response)["code"] in ("not_finite", "out_of_range")


def test_post_refuses_broken_json(client: TestClient) -> None:
    response = client.post("/api/v1/estimate", content="{params: 7",
                           headers={"content-type": "application/json"})
    assert error_of(response)["code"] == "not_json"


@pytest.mark.parametrize(("query", "code", "field"), [
    ({"params": "abc"}, "not_a_number", "params"),
    ({"params": "nan"}, "not_finite", "params"),
    ({"params": "0"}, "out_of_range", "params"),
    ({"params": ""}, "missing", "params"),
    ({"activations": "20"}, "missing", "params"),
    ({"params": "7", "params ": "8"}, "unknown_field", "params "),
    ({"params": "7", "optimizer": "adam-8bit", "bytes_per_param": "10"}, "conflicting",
     "optimizer"),
    ({"params": "7", "activation": "20"}, "unknown_field", "activation"),
    ({"params": "7", "lang": "de"}, "unknown_name", "lang"),
], ids=lambda value: json.dumps(value) if not isinstance(value, str) else value)
def test_get_refuses_bad_queries(client: TestClient, query: dict[str, str], code: str,
                                 field: str) -> None:
    error = error_of(client.get("/api/v1/estimate", params=query))
    assert (error["code"], error["field"]) == (code, field)


def test_error_message_in_the_requested_language(client: TestClient) -> None:
    by_query = error_of(client.get("/api/v1/estimate", params={"params": "abc", "lang": "fr"}))
    by_header = error_of(client.get("/api/v1/estimate", params={"params": "abc"},
                                    headers={"accept-language": "fr-FR,fr;q=0.9,en;q=0.8"}))
    english = error_of(client.get("/api/v1/estimate", params={"params": "abc"}))
    assert by_query == by_header
    assert by_query["lang"] == "fr" and english["lang"] == "en"
    assert by_query["message"] == (
        "params : « abc » n'est pas un nombre ; indiquez le nombre de paramètres en milliards, "
        "plus de 0 et au plus 100\u202f000 (par exemple 7 ou 7,5)"
    )
    assert english["message"].startswith("params: 'abc' is not a number")


def test_unknown_path_and_method_have_the_error_shape(client: TestClient) -> None:
    missing = error_of(client.get("/api/v1/nothing-here"), 404)
    assert (missing["code"], missing["field"]) == ("not_found", "path")
    response = client.delete("/api/v1/estimate")
    refused = error_of(response, 405)
    assert refused["code"] == "method_not_allowed"
    assert response.headers["allow"] == "GET, POST"


# --- headers, OpenAPI and docs -------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/en/", "/api/v1/health", "/api/docs", "/static/app.css"])
def test_content_security_policy_everywhere(client: TestClient, path: str) -> None:
    policy = client.get(path).headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "default-src 'none'" in policy


def test_a_null_field_is_read_as_left_out_and_the_schema_says_so(client: TestClient) -> None:
    """A JSON `null` is an empty field, as on the page (schemathesis sent `"gpu": null`, which
    the schema then called a string only)."""
    assert client.post("/api/v1/estimate", json={"params": 7, "gpu": None}).json() \
        == client.post("/api/v1/estimate", json={"params": 7}).json()
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/api/v1/estimate"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]
    assert {"type": "null"} in body["properties"]["gpu"]["anyOf"]


def test_openapi_documents_every_endpoint(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/v1/estimate", "/api/v1/gpus", "/api/v1/health", "/api/v1/models",
        "/api/v1/inference", "/api/v1/lora", "/api/v1/fit", "/api/v1/activations",
    }
    assert set(schema["paths"]["/api/v1/estimate"]) == {"get", "post"}
    error_ref = schema["paths"]["/api/v1/estimate"]["post"]["responses"]["422"]
    assert error_ref["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorOut")


def test_openapi_documents_every_answer_and_its_references_resolve(client: TestClient) -> None:
    """Each route's 200 answer refers to a shape among the components, and every reference of
    the document (the shapes nest others) resolves."""
    schema = client.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
            assert answer["$ref"].removeprefix("#/components/schemas/") in components, (path,
                                                                                         method)
    references = re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(schema))
    assert set(references) <= set(components)
    assert {"EstimateOut", "FitOut", "PerGpuOut", "FitSetupOut", "ErrorOut"} <= set(references)


def test_docs_are_served_without_any_cdn(client: TestClient) -> None:
    assert client.get("/docs").status_code == 404  # Swagger UI would load from a CDN
    assert client.get("/redoc").status_code == 404
    page = client.get("/api/docs")
    assert page.status_code == 200
    assert "/api/v1/estimate" in page.text
    assert "cdn" not in page.text.lower()
    assert "<script src=\"http" not in page.text


def test_models_equal_the_cli_json(client: TestClient) -> None:
    body = client.get("/api/v1/models").json()
    conform(ModelsOut, body)
    assert body == cli_json("models")
    llama = next(model for model in body["models"] if model["name"] == "llama-2-7b")
    # Llama 2 7B: 6,738,415,616 parameters (the count transformers gives on the meta device, as
    # tests/test_param_counts_meta.py checks for every preset)
    assert llama["params"] == 6_738_415_616
