"""The sister calculators on the web, in process: `/inference` and `/lora` in both languages as a
browser without JavaScript gets them, their fragments, inline errors, and the JSON API, whose
objects must be exactly what `vramplan infer --json` and `vramplan lora --json` print."""

from __future__ import annotations

import html as html_lib
import io
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from tests.helpers import inference_json, lora_json
from vramplan.cli.main import main
from vramplan.web.sister_view import InferenceForm, chart_parts, inference_chart

NBSP = "\u00a0"
NNBSP = "\u202f"


def cli_json(*argv: str) -> Any:
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, "--json"], out, err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def text(html: str) -> str:
    """The visible text, tags removed, entities decoded, spaces collapsed."""
    body = re.sub(r"<(script|style|title)[^>]*>.*?</\1>", " ", html, flags=re.S)
    plain = html_lib.unescape(re.sub(r"<[^>]+>", " ", body))
    return re.sub(r"[ \n\t]+", " ", plain.replace(NBSP, " ").replace(NNBSP, " "))


def result(html: str, name: str) -> str:
    found = re.search(rf'data-result="{name}">([^<]*)<', html)
    assert found, name
    return html_lib.unescape(found.group(1))


def error_of(html: str, field: str) -> str:
    found = re.search(rf'<p class="error" id="{field}-error"[^>]*>([^<]*)</p>', html)
    assert found, field
    return html_lib.unescape(found.group(1)).replace(NBSP, " ").replace(NNBSP, " ")


# --- pages, as served without JavaScript ---------------------------------------------------------

@pytest.mark.parametrize(("path", "lang", "title"), [
    ("/inference", "fr", "Calculateur de VRAM pour l'inférence LLM"),
    ("/en/inference", "en", "VRAM calculator for LLM inference"),
    ("/lora", "fr", "Calculateur de paramètres LoRA"),
    ("/en/lora", "en", "LoRA parameter calculator"),
])
def test_pages_in_both_languages(client: TestClient, path: str, lang: str, title: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    page = response.text
    assert f'<html lang="{lang}">' in page
    found = re.search(r"<title>(.*?)</title>", page)
    assert found and html_lib.unescape(found.group(1)) == title
    assert f"<h1>{title}</h1>" in html_lib.unescape(page)
    # the live region is the short summary, not the whole results panel
    assert "aria-live" not in page and '<p class="summary" id="summary" role="status">' in page
    assert "<script src=\"/static/app.js" in page
    assert "http://" not in page and "https://" not in page  # no external request of any kind
    assert "unsafe-inline" not in response.headers["content-security-policy"]


def test_inference_results_on_first_paint(client: TestClient) -> None:
    page = client.get("/inference").text
    payload = inference_json(InferenceForm().api_query())
    assert result(page, "total") == f"{payload['device_gb']:.2f}".replace(".", ",") + f"{NBSP}Go"
    shown = text(page)
    assert "Tient sur NVIDIA GeForce RTX 4090" in shown
    assert "llama-3.1-8b (8 030 261 248 paramètres)" in shown
    styles = re.findall(r'class="seg seg-(p\d+)"', page)
    assert len(styles) == len(set(styles)) >= 3  # a colour per part, the CUDA context included


def test_inference_query_in_english(client: TestClient) -> None:
    page = client.get("/en/inference", params={
        "model": "mistral-7b-v0.1", "weights": "q4_k_m", "context": "8192", "batch": "1",
        "kv_dtype": "fp16", "gpu": "rtx-4090-24gb", "engine": "", "tensor_parallel": "1"}).text
    payload = inference_json({"model": "mistral-7b-v0.1", "weights": "q4_k_m",
                                 "context": "8192", "gpu": "rtx-4090-24gb", "limits": "1"})
    assert result(page, "total") == f"{payload['device_gb']:.2f}{NBSP}GB"
    verdict = payload["verdicts"][0]
    assert verdict["max_context"] == verdict["context_cap"] == 32_768  # config.json's maximum
    assert "Longest context: 32,768 tokens for 1 sequence(s) (the model's maximum). At most " \
        f"{verdict['max_batch']} sequence(s) of 8,192 tokens." in text(page)
    assert page.count('class="cap line-') == 1  # one GPU asked for: one line
    assert 'value="q4_k_m"' in page  # the form shows what the URL says


def test_chart_stacks_the_device_total() -> None:
    payload = inference_json({"model": "llama-3.1-8b", "weights": "nf4", "limits": "1"})
    chart = inference_chart(payload)
    assert sum(size for _, size in chart_parts(payload)) == payload["device_bytes"]
    last = chart.segments[-1]
    assert last.name == "cuda_context"
    assert last.x + last.width == pytest.approx(chart.total_x)
    assert [line.display_name for line in chart.lines] == ["NVIDIA GeForce RTX 4090",
                                                           "NVIDIA H100 80GB"]


def test_lora_results_on_first_paint(client: TestClient) -> None:
    page = client.get("/en/lora", params=[("model", "llama-2-7b"), ("lora_r", "8"),
                                          ("lora_targets", "q"), ("lora_targets", "v")]).text
    # Hu et al. 2021 (arXiv:2106.09685) adapt W_q and W_v; Llama 2 7B: 32 layers of 4096 x 4096,
    # so 8 x (4096 + 4096) x 2 x 32 = 4,194,304 trainable parameters.
    assert result(page, "trainable") == "4,194,304"
    assert result(page, "share") == "0.0622%"
    assert re.search(r'value="q" checked', page) and re.search(r'value="v" checked', page)
    assert not re.search(r'value="k" checked', page)


def test_lora_targets_as_one_text_or_boxes_agree(client: TestClient) -> None:
    boxes = client.get("/lora", params=[("model", "llama-2-7b"), ("lora_targets", "q"),
                                        ("lora_targets", "k"), ("dora", "1")]).text
    joined = client.get("/lora", params={"model": "llama-2-7b", "lora_targets": "q,k",
                                         "dora": "1"}).text
    assert result(boxes, "trainable") == result(joined, "trainable")
    expected = lora_json({"model": "llama-2-7b", "lora_targets": "q,k", "dora": "1"})
    assert result(boxes, "trainable") == f"{expected['trainable_params']:,}".replace(",", NNBSP)
    assert "Vecteurs de magnitude DoRA" in text(boxes)


def test_lora_links_the_main_calculator_with_the_setup(client: TestClient) -> None:
    page = client.get("/lora", params={"model": "llama-2-7b", "lora_r": "8",
                                       "lora_targets": "q,v"}).text
    href = html_lib.unescape(re.search(r'<a href="([^"]+)" data-training-link', page).group(1))
    url = urlsplit(href)
    assert url.path == "/"
    assert parse_qs(url.query) == {"model": ["llama-2-7b"], "method": ["lora"],
                                   "lora_r": ["8"], "lora_targets": ["q", "v"]}  # the boxes' way


def test_pages_link_each_other_and_back(client: TestClient) -> None:
    main_page = client.get("/").text
    assert '<a href="/inference">' in main_page and '<a href="/lora">' in main_page
    inference = client.get("/en/inference").text
    assert '<a href="/en/">' in inference and '<a href="/en/lora">' in inference
    lora = client.get("/lora").text
    assert '<a href="/">' in lora and '<a href="/inference">' in lora


def test_language_switch_keeps_the_query(client: TestClient) -> None:
    page = client.get("/inference", params={"model": "qwen2.5-7b", "context": "2048"}).text
    switch = re.search(r'<a href="([^"]+)" hreflang="en"[^>]*data-lang-switch', page)
    assert switch and html_lib.unescape(switch.group(1)) == "/en/inference?model=qwen2.5-7b" \
        "&context=2048"


# --- errors, empty state -------------------------------------------------------------------------

def test_bad_value_gets_its_message_next_to_the_field(client: TestClient) -> None:
    response = client.get("/inference", params={"model": "llama-3.1-8b", "context": "abc"})
    assert response.status_code == 200
    page = response.text
    assert error_of(page, "context") == (
        "Contexte : « abc » n'est pas un nombre ; indiquez le contexte en jetons (invite + "
        "génération), un nombre entier de 1 à 10 000 000")
    assert re.search(r'id="context"[^>]*aria-invalid="true"', page)
    assert "Corrigez la valeur signalée" in text(page)
    assert 'value="abc"' in page  # kept as typed


def test_fragment_carries_the_errors_for_the_script(client: TestClient) -> None:
    response = client.get("/inference/fragment", params={
        "model": "llama-3.1-8b", "tensor_parallel": "0", "lang": "en"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert '<li data-field="tensor_parallel">Tensor parallelism: 0 is out of range' \
        in response.text
    assert "<html" not in response.text


def test_lora_fragment_and_no_target(client: TestClient) -> None:
    good = client.get("/lora/fragment", params={"model": "llama-2-7b", "lora_targets": "all"})
    assert 'data-result="trainable"' in good.text
    none = client.get("/lora", params={"model": "llama-2-7b", "lora_r": "8"}).text
    assert error_of(none, "lora_targets").startswith("Modules cibles : valeur manquante")
    bad_rank = client.get("/en/lora", params={"model": "llama-2-7b", "lora_r": "0",
                                              "lora_targets": "q"}).text
    assert error_of(bad_rank, "lora_r").startswith("Rank r: 0 is out of range")


@pytest.mark.parametrize("path", ["/inference", "/lora"])
def test_empty_model_asks_for_one(client: TestClient, path: str) -> None:
    page = client.get(path, params={"model": ""}).text
    assert "Choisissez un modèle pour afficher les résultats." in text(page)
    assert error_of(page, "model") == ""


def test_unknown_model_and_escaping(client: TestClient) -> None:
    page = client.get("/en/lora", params={"model": "<script>x</script>"}).text
    assert "<script>x</script>" not in page
    assert error_of(page, "model") == ("Model: unknown name '<script>x</script>'; pick a name "
                                       "from the field's list, or give a Hugging Face repo id "
                                       "(org/name).")


# --- JSON API: the CLI's objects -----------------------------------------------------------------

INFER_CASES = [
    ({"model": "llama-3.1-8b", "weights": "nf4", "context": "8192"},
     ["--model", "llama-3.1-8b", "--weights", "nf4", "--context", "8192"]),
    ({"model": "llama-3.1-70b", "weights": "awq-4bit-g128", "engine": "vllm",
      "tensor_parallel": "2"},
     ["--model", "llama-3.1-70b", "--weights", "awq-4bit-g128", "--engine", "vllm", "--tp", "2"]),
    ({"model": "mistral-7b-v0.1", "weights": "q4_k_m", "gpu": "rtx-4090", "limits": "1"},
     ["--model", "mistral-7b-v0.1", "--weights", "q4_k_m", "--gpu", "rtx-4090",
      "--limits"]),
    ({"model": "qwen2.5-7b", "kv_dtype": "fp8", "batch": "4", "gpu": "h100"},
     ["--model", "qwen2.5-7b", "--kv-dtype", "fp8", "--batch", "4", "--gpu", "h100"]),
]


@pytest.mark.parametrize(("query", "argv"), INFER_CASES, ids=lambda v: str(v)[:40])
def test_inference_api_equals_cli_json(client: TestClient, query: dict[str, str],
                                       argv: list[str]) -> None:
    response = client.get("/api/v1/inference", params=query)
    assert response.status_code == 200
    assert response.json() == cli_json("infer", *argv)


def test_inference_post_equals_get(client: TestClient) -> None:
    body = {"model": "llama-3.1-8b", "weights": "nf4", "context": 8192, "batch": 2,
            "limits": True}
    posted = client.post("/api/v1/inference", json=body)
    assert posted.status_code == 200
    got = client.get("/api/v1/inference", params={**{k: str(v) for k, v in body.items()},
                                                  "limits": "1"})
    assert posted.json() == got.json()
    assert posted.json()["verdicts"][0]["max_context"] is not None


LORA_CASES = [
    ({"model": "llama-2-7b", "lora_r": "8", "lora_targets": "q,v"},
     ["--model", "llama-2-7b", "--lora-r", "8", "--lora-targets", "q,v"]),
    ({"model": "llama-3.1-8b", "lora_r": "16", "lora_targets": "all", "dora": "1"},
     ["--model", "llama-3.1-8b", "--lora-r", "16", "--lora-targets", "all", "--dora"]),
    ({"model": "mistral-7b-v0.1", "lora_r": "64", "lora_targets": "all;head", "rslora": "1"},
     ["--model", "mistral-7b-v0.1", "--lora-r", "64", "--lora-targets", "all;head", "--rslora"]),
]


@pytest.mark.parametrize(("query", "argv"), LORA_CASES, ids=lambda v: str(v)[:40])
def test_lora_api_equals_cli_json(client: TestClient, query: dict[str, str],
                                  argv: list[str]) -> None:
    response = client.get("/api/v1/lora", params=query)
    assert response.status_code == 200
    assert response.json() == cli_json("lora", *argv)


def test_lora_post_equals_cli(client: TestClient) -> None:
    posted = client.post("/api/v1/lora", json={"model": "llama-2-7b", "lora_r": 8,
                                                "lora_targets": ["q", "v"], "dora": True})
    assert posted.status_code == 200
    assert posted.json() == cli_json("lora", "--model", "llama-2-7b", "--lora-r", "8",
                                     "--lora-targets", "q,v", "--dora")


@pytest.mark.parametrize("case", [
    ("get", "/api/v1/inference", {"params": {"model": "llama-3.1-8b", "context": "abc"}},
     "not_a_number", "context"),
    ("get", "/api/v1/inference", {"params": {}}, "missing", "model"),
    ("get", "/api/v1/inference", {"params": {"model": "x", "colour": "red"}},
     "unknown_field", "colour"),
    ("get", "/api/v1/lora", {"params": {"model": "llama-2-7b", "lora_targets": "q,zz"}},
     "unknown_name", "lora_targets"),
    ("post", "/api/v1/lora", {"json": {"model": "llama-2-7b", "lora_r": "8"}},
     "not_an_integer", "lora_r"),
    ("post", "/api/v1/lora", {"json": {"model": "llama-2-7b", "lora_r": True}},
     "not_an_integer", "lora_r"),
    ("post", "/api/v1/lora", {"json": {"model": "llama-2-7b", "dora": "yes"}},
     "not_a_flag", "dora"),
    ("get", "/api/v1/lora", {"params": {"model": "llama-2-7b", "rslora": "nan"}},
     "not_a_flag", "rslora"),
    ("post", "/api/v1/inference", {"json": {"model": "llama-3.1-8b", "foo": 1}},
     "unknown_field", "foo"),
    ("post", "/api/v1/inference", {"json": [1]}, "not_json", "body"),
    ("post", "/api/v1/inference", {"json": {"model": "llama-3.1-8b", "tensor_parallel": 0}},
     "out_of_range", "tensor_parallel"),
])
def test_api_errors_have_the_one_shape(client: TestClient, case: tuple[Any, ...]) -> None:
    method, path, kwargs, code, field = case
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == 422
    error = response.json()["error"]
    assert set(error) == {"code", "field", "value", "message", "lang"}
    assert (error["code"], error["field"], error["lang"]) == (code, field, "en")
    assert field in error["message"]


def test_api_error_in_french(client: TestClient) -> None:
    response = client.get("/api/v1/inference", params={"model": "llama-3.1-8b", "batch": "0",
                                                       "lang": "fr"})
    assert response.json()["error"]["message"].startswith("batch : 0 est hors limites")


def test_unknown_query_field_lists_the_endpoint_fields(client: TestClient) -> None:
    message = client.get("/api/v1/lora", params={"model": "llama-2-7b", "rank": "8"}).json()
    assert "lora_r" in message["error"]["message"] and "params" not in message["error"]["message"]


def test_openapi_documents_both_endpoints(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    for path in ("/api/v1/inference", "/api/v1/lora"):
        assert set(schema["paths"][path]) == {"get", "post"}
        post = schema["paths"][path]["post"]
        assert post["requestBody"]["content"]["application/json"]["schema"][
            "additionalProperties"] is False
    assert "InferenceOut" in schema["components"]["schemas"]
    assert "LoraOut" in schema["components"]["schemas"]
    assert "/api/v1/inference" in client.get("/api/docs").text


def test_fields_left_out_of_a_shared_url_show_their_defaults(client: TestClient) -> None:
    page = client.get("/inference", params={"model": "qwen2.5-7b", "context": "2048"}).text
    assert re.search(r'id="batch"[^>]*value="1"', page)
    assert re.search(r'id="tensor_parallel"[^>]*value="1"', page)
    assert '<option value="fp16" selected>' in page
    assert '<option value="" selected>' not in page.split('id="kv_dtype"')[1].split("</select>")[0]
    lora = client.get("/lora", params={"model": "llama-2-7b", "lora_targets": "q"}).text
    assert re.search(r'id="lora_r"[^>]*value="8"', lora)
    assert not re.search(r'name="dora" value="1" checked', lora)
