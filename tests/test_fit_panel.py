"""The page's Activations estimate and "Will it fit?" section, and their API routes, in process:
both languages, the results the core computes, inline errors, and `/api/v1/fit` equal to
`vramplan fit --json` for the same options."""

from __future__ import annotations

import html as html_lib
import io
import json
import re
from typing import Any

import pytest

from vramplan.cli.main import main
from vramplan.planner.report import fit_report
from vramplan.presets.gpus import find_gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.requests.reading import read
from vramplan.requests.training import fit_request
from vramplan.requests.vocabulary import FIT
from vramplan.training.estimate import activations_for_simple_mode
from vramplan.units import bytes_to_gb, format_gib

NBSP = "\u00a0"


def element(html: str, name: str) -> str:
    """The text of the element marked `data-result="name"` (one line, no markup inside)."""
    found = re.search(rf'data-result="{name}">([^<]*)<', html)
    assert found, name
    return html_lib.unescape(found.group(1))


def cli_json(*argv: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main([*argv, "--json"], out, err) == 0, err.getvalue()
    loaded: dict[str, Any] = json.loads(out.getvalue())
    return loaded


FIT_CASES = {
    "full-8b-h100": ("llama-3.1-8b", "h100-80gb", {"batch": "4", "seq_len": "4096"}),
    "qlora-8b-4090": ("llama-3.1-8b", "rtx-4090-24gb",
                      {"method": "qlora", "quant": "nf4", "checkpointing": "full"}),
    "zero3-70b-8xh100": ("llama-3.1-70b", "h100-80gb",
                         {"gpus": "8", "sharding": "zero3", "margin": "90"}),
    "lora-1b-t4": ("llama-3.2-1b", "t4-16gb",
                   {"method": "lora", "lora_r": "8", "lora_targets": "q,v", "precision": "mixed",
                    "optimizer": "adamw-8bit", "seq_len": "1024"}),
}


@pytest.mark.parametrize("case", FIT_CASES.values(), ids=FIT_CASES.keys())
def test_api_fit_equals_the_cli_json(client: Any, case: tuple[str, str, dict[str, str]]) -> None:
    model, gpu, options = case
    argv = ["fit", "--model", model, "--gpu", gpu]
    for name, value in options.items():
        argv += ["--" + name.replace("_", "-"), value]
    response = client.get("/api/v1/fit", params={"model": model, "gpu": gpu, **options})
    assert response.status_code == 200, response.text
    assert response.json() == cli_json(*argv)


def test_api_fit_errors_have_the_one_shape(client: Any) -> None:
    response = client.get("/api/v1/fit", params={"model": "llama-3.1-8b", "gpu": "h100-80gb",
                                                  "batch": "abc", "lang": "fr"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert (error["code"], error["field"], error["value"]) == ("not_a_number", "batch", "abc")
    assert "« abc » n'est pas un nombre" in error["message"]
    missing = client.get("/api/v1/fit", params={"model": "llama-3.1-8b"}).json()["error"]
    assert (missing["code"], missing["field"]) == ("missing", "gpu")
    unknown = client.get("/api/v1/fit", params={"model": "llama-3.1-8b", "gpu": "h100-80gb",
                                                "colour": "red"}).json()["error"]
    assert unknown["field"] == "colour" and "seq_len" in unknown["message"]
    margin = client.get("/api/v1/fit", params={"model": "llama-3.1-8b", "gpu": "h100-80gb",
                                               "margin": "0"}).json()["error"]
    assert (margin["code"], margin["field"]) == ("out_of_range", "margin")


def test_api_activations_is_the_cli_estimate(client: Any) -> None:
    response = client.get("/api/v1/activations", params={
        "model": "llama-3.2-1b", "batch": "2", "seq_len": "1024"})
    assert response.status_code == 200
    body = response.json()
    expected = activations_for_simple_mode(architecture_of(find_model("llama-3.2-1b")), 2, 1024)
    assert body["activations_bytes"] == expected
    estimate = cli_json("estimate", "--model", "llama-3.2-1b", "--batch", "2", "--seq-len",
                        "1024")
    assert estimate["activations_bytes"] == round(bytes_to_gb(expected) * 10**9)
    refused = client.get("/api/v1/activations", params={"model": "llama-3.2-1b",
                                                        "method": "lora"})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "method"


def test_openapi_documents_both_routes(client: Any) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    names = {p["name"] for p in paths["/api/v1/fit"]["get"]["parameters"]}
    assert {"model", "gpu", "gpus", "sharding", "margin", "seq_len", "tensor_parallel"} <= names
    assert "/api/v1/activations" in paths


def _report(model: str, gpu: str, share: float = 0.8, **texts: str) -> Any:
    fit = fit_request(read(FIT, {"model": model, "gpu": gpu, **texts}, text=True))
    return fit_report(fit.setup, find_gpu(gpu), share)


def test_page_shows_the_verdict_chart_and_ranked_changes_in_french(client: Any) -> None:
    html = client.get("/", params={"model": "llama-3.1-8b", "batch": "4",
                                   "seq_len": "4096"}).text
    report = _report("llama-3.1-8b", "h100-80gb", batch="4", seq_len="4096",
                     precision="mixed", optimizer="adamw")
    peak = format_gib(report.verdict.required_bytes, "fr")
    missing = format_gib(-report.verdict.headroom_bytes, "fr")
    verdict = element(html, "verdict")
    assert verdict == (f"Ça ne tient pas sur 1 × NVIDIA H100 80GB\u00a0: {peak} par GPU au pic, "
                       "pour 64\u00a0Gio utilisables (80\u00a0% de 80\u00a0Gio)\u202f; il manque "
                       f"{missing}.")
    # the detailed card below shows the same numbers, and no second verdict
    assert element(html, "fit_peak") == (f"Pic par GPU\u00a0: {peak}, pour 64\u00a0Gio "
                                         "utilisables (80\u00a0% de 80\u00a0Gio).")
    assert html.count('data-result="verdict"') == 1 and "fit_verdict" not in html
    assert html.count('class="seg seg-') >= len([p for p in report.estimate.peak.parts
                                                  if p.memory_bytes])
    rows = re.findall(r'<tr data-change="([a-z_0-9]+)">', html)
    ranked = [c.kind.value for c in report.changes] + [c.kind.value for c in report.combined]
    assert rows == ranked and rows
    assert "Plus grand micro-lot qui tient" in html
    assert "Fujii et al. 2024" in html
    # planned on the device metric: the cache is that of steps of one shape
    assert "une même forme" in html and "expandable_segments:True" in html


def test_page_in_english_fits_with_qlora_on_a_big_card(client: Any) -> None:
    html = client.get("/en/", params={"model": "llama-3.1-8b", "method": "qlora",
                                      "gpu": "b200-180gb"}).text
    report = _report("llama-3.1-8b", "b200-180gb", method="qlora", precision="mixed")
    assert element(html, "verdict").startswith(
        f"It fits on 1 × NVIDIA B200: {format_gib(report.verdict.required_bytes, 'en')} per GPU "
        "at the peak, for 144\u00a0GiB usable (80% of 180\u00a0GiB).")
    assert "Detailed model: peak per GPU and what to change" in html
    rows = re.findall(r'<tr data-change="([a-z_0-9]+)">', html)
    assert rows == [c.kind.value for c in report.changes]
    assert ("No change reduces the memory." in html) == (not report.changes)
    assert "Changes combined" not in html  # it fits: nothing to combine
    assert "for steps of one shape" in html  # the page plans on the device metric


def test_margin_is_visible_and_adjustable(client: Any) -> None:
    html = client.get("/en/", params={"model": "llama-3.2-1b", "margin": "50"}).text
    assert "plan for at most 50% of the GPU's memory" in html.replace("&#39;", "'")
    assert "40\u00a0GiB usable (50% of 80\u00a0GiB)" in html


def test_without_a_model_the_section_asks_for_one(client: Any) -> None:
    html = client.get("/").text
    assert "demande un modèle pré-défini\u00a0: choisissez-en un dans «\u00a0Données\u00a0»" in html
    fragment = client.get("/fragments/fit", params={"lang": "en"}).text
    assert "needs a preset model: pick one in" in fragment


def test_bad_values_show_inline_messages(client: Any) -> None:
    html = client.get("/en/", params={"model": "llama-3.2-1b", "gpus": "two", "margin": "150",
                                      "gpu": "nope"}).text
    errors = dict(re.findall(r'data-error-for="(\w+)">([^<]+)<', html))
    assert "&#39;two&#39; is not a number" in errors["gpus"]
    assert "150 is out of range" in errors["margin"]
    assert "unknown name &#39;nope&#39;" in errors["gpu"]
    assert re.search(r'id="gpus" name="gpus"[^>]*aria-invalid="true"', html)
    fragment = client.get("/fragments/fit", params={"model": "llama-3.2-1b", "seq_len": "0"})
    assert '<li data-field="seq_len">' in fragment.text
    no_model = client.get("/fragments/fit", params={"gpu": "nope", "margin": "0"}).text
    assert '<li data-field="gpu">' in no_model and '<li data-field="margin">' in no_model


def test_activations_panel_estimates_a_and_offers_to_use_it(client: Any) -> None:
    html = client.get("/en/", params={"model": "llama-3.2-1b", "batch": "2",
                                      "seq_len": "1024"}).text
    expected = activations_for_simple_mode(architecture_of(find_model("llama-3.2-1b")), 2, 1024)
    value = f"{bytes_to_gb(expected):.2f}"
    assert f'data-value="{value}"' in html
    link = re.search(r'<a class="button" href="([^"]+)" data-fill="activations"', html)
    assert link is not None
    filled = client.get(link.group(1).replace("&amp;", "&")).text
    assert f'id="activations" name="activations" type="text" inputmode="decimal" ' \
           f'autocomplete="off" spellcheck="false" value="{value}"' in filled
    french = client.get("/", params={"model": "llama-3.2-1b"}).text
    assert "Estimer à partir du lot et de la longueur de séquence" in french
    assert "Utiliser" in french and "comme A" in french
    assert "Choisissez un modèle pré-défini pour estimer A" in client.get("/").text


def test_fragments_render_alone(client: Any) -> None:
    for name in ("fit", "activations"):
        response = client.get(f"/fragments/{name}", params={"model": "gpt2", "lang": "en"})
        assert response.status_code == 200
        assert "<html" not in response.text


@pytest.mark.parametrize(("query", "optimizer"), [
    ({"model": "llama-3.1-8b", "method": "qlora", "gpu": "rtx-4090-24gb", "margin": "90"},
     "adamw"),
    ({"model": "llama-3.1-70b", "gpus": "8", "sharding": "fsdp", "optimizer": "adam-8bit",
      "checkpointing": "full", "seq_len": "8192"}, "adamw-8bit"),
    ({"model": "qwen2.5-0.5b", "optimizer": "sgd-momentum", "activations": "oops"},
     "sgd-momentum"),
], ids=["qlora-4090", "fsdp-70b-adam8bit", "sgd-with-a-bad-seed-field"])
def test_the_json_link_gives_what_the_page_shows(client: Any, query: dict[str, str],
                                                 optimizer: str) -> None:
    html = client.get("/en/", params=query).text
    link = re.search(r'<a href="(/api/v1/fit\?[^"]+)" data-json-link>This result as JSON', html)
    assert link is not None
    body = client.get(link.group(1).replace("&amp;", "&")).json()
    peak = format_gib(body["verdict"]["peak_bytes"], "en")
    assert f": {peak} per GPU at the peak" in element(html, "verdict")
    assert element(html, "fit_peak").startswith(f"Peak per GPU: {peak}, for ")
    assert body["setup"]["precision"] == "mixed"  # the page's default, as the seed's Adam
    assert body["setup"]["optimizer"] == optimizer  # the seed's preset, as a training optimizer
