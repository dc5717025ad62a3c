"""The calculator page rendered on the server (what a browser without JavaScript gets): the seed's
sections in French and English, results, empty state, inline errors, escaping, no external URL,
MathML formulas, the chart and the page's weight."""

from __future__ import annotations

import html as html_module
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from vramplan import __version__
from vramplan.i18n import Lang
from vramplan.presets.gpus import GPUS, find_gpu
from vramplan.seed import estimate_seed, seed_inputs
from vramplan.web.chart import WIDTH, parts, stacked_bar
from vramplan.web.lang import from_accept_language
from vramplan.web.view import typeset

NBSP, NNBSP = "\u00a0", "\u202f"
TEMPLATES = Path(__file__).parents[1] / "src/vramplan/web/templates"
PAGE_WEIGHT_LIMIT = 100_000
"""The page's full weight (HTML + CSS + JS) stays under 100 KB (no framework, no fonts)."""


def text(html: str) -> str:
    """The visible text of `html`, spaces collapsed (no-break spaces kept)."""
    chunks: list[str] = []

    class Collector(HTMLParser):
        def handle_data(self, data: str) -> None:
            chunks.append(data)

    Collector().feed(html)
    return re.sub(r"[ \t\n]+", " ", "".join(chunks))


def element(html: str, attribute: str) -> str:
    """The inner HTML of the first element carrying `attribute` (e.g. `data-result="total"`)."""
    match = re.search(rf"<(\w+)[^>]*{re.escape(attribute)}[^>]*>(.*?)</\1>", html, re.S)
    assert match, attribute
    return html_module.unescape(match.group(2))


def page(client: TestClient, path: str = "/", **query: str) -> str:
    response = client.get(path, params=query)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    return response.text


# --- the seed's content --------------------------------------------------------------------------

def test_french_page_has_every_seed_section(client: TestClient) -> None:
    html = page(client)
    assert '<html lang="fr">' in html
    assert "<title>Calculateur de VRAM pour l&#39;entraînement de LLM</title>" in html
    shown = text(html)
    for heading in ("Données", "Modèle", "Paramètres", "Mémoire par paramètre", "Activations",
                    "Mémoire d'activations", "Résultats", "Détails",
                    "Questions fréquentes (FAQ)", "Mentions légales"):
        assert heading in shown, heading
    for preset in ("Adam en précision mixte (16 octets/param)", "Adam 8 bits (≈ 12 octets/param)",
                   "SGD avec moment (≈ 8 octets/param)", "Valeur personnalisée"):
        assert f">{preset}</option>" in html, preset
    assert shown.count("?") >= 3  # the FAQ's three questions
    assert "Vérifiez sur une véritable étape d'entraînement avant de dimensionner" in shown


def test_initial_values_are_the_seeds(client: TestClient) -> None:
    html = page(client)
    assert re.search(r'id="params" name="params"[^>]*value="7"', html)
    assert re.search(r'id="activations" name="activations"[^>]*value="0"', html)
    assert '<option value="adam-mixed" selected>' in html
    assert element(html, 'data-result="model_states"') == f"112{NBSP}Go"
    assert element(html, 'data-result="total"') == f"112{NBSP}Go"


def test_english_page(client: TestClient) -> None:
    html = page(client, "/en/", params="7", activations="20")
    assert '<html lang="en">' in html
    assert "<title>VRAM calculator for LLM training</title>" in html
    assert '<meta name="description" content="How much GPU memory' in html
    assert element(html, 'data-result="total"') == f"132{NBSP}GB"
    assert "Frequently asked questions (FAQ)" in text(html)
    # the switch leads to the same inputs in French
    assert 'href="/?params=7&amp;activations=20" hreflang="fr"' in html


def test_lang_query_and_redirect(client: TestClient) -> None:
    assert '<html lang="en">' in page(client, "/", lang="en")
    redirect = client.get("/en?params=8", follow_redirects=False)
    assert redirect.status_code == 308
    assert redirect.headers["location"] == "/en/?params=8"


def test_results_in_gb_and_gib_with_the_breakdown(client: TestClient) -> None:
    html = page(client, params="7", activations="20")
    shown = text(html)
    assert element(html, 'data-result="total"') == f"132{NBSP}Go"
    assert f"soit 122,93{NBSP}Gio" in shown  # 132e9 / 2**30
    for part in ("poids fp16/bf16", "gradients fp16/bf16", "copie maîtresse fp32 des poids",
                 "premier moment d'Adam (fp32)", "second moment d'Adam (fp32)"):
        assert part in shown
    # one verdict, for the GPU picked (the seed's 80 GB accelerator by default), one unit per
    # line: 132 GB needed, 85.9 GB (80 GiB) held, 46.1 GB (42.93 GiB) short
    assert element(html, 'data-result="verdict"') == (
        f"Ça ne tient pas sur 1 × NVIDIA H100 80GB{NBSP}: il manque 46,1{NBSP}Go "
        f"(42,93{NBSP}Gio).")
    assert element(html, 'data-result="verdict_detail"') == (
        f"V = 132{NBSP}Go (122,93{NBSP}Gio){NNBSP}; une carte vendue «{NBSP}80{NBSP}Go{NBSP}» "
        f"contient 85,9{NBSP}Go (80{NBSP}Gio).")
    assert html.count('data-result="verdict"') == 1
    assert f"Règle de base sur un GPU de chaque type du catalogue ({len(GPUS)} GPU)" in shown


def test_french_decimal_input_and_output(client: TestClient) -> None:
    html = page(client, params="7,5", optimizer="adam-8bit")
    assert element(html, 'data-result="model_states"') == f"90{NBSP}Go"  # 7.5 × 12
    assert "<mn>7,5</mn>" in html


def test_custom_bytes_per_param(client: TestClient) -> None:
    html = page(client, params="7", optimizer="custom", bytes_per_param="10")
    assert element(html, 'data-result="model_states"') == f"70{NBSP}Go"
    assert '<option value="custom" selected>' in html
    assert "Valeur personnalisée : 10 octets/param par paramètre" in text(html).replace(NBSP, " ")


# --- empty state and bad input -------------------------------------------------------------------

def test_empty_parameters_show_exactly_the_seed_sentence(client: TestClient) -> None:
    html = page(client, params="", optimizer="adam-mixed", activations="0")
    body = element(html, 'data-panel="results"')
    assert "<p class=\"empty\">Saisissez une valeur pour afficher les résultats.</p>" in body
    assert 'data-result="total"' not in html
    assert element(html, 'data-error-for="params"') == ""  # a prompt, not an error


@pytest.mark.parametrize(("field", "value", "message"), [
    ("params", "abc", "Paramètres : « abc » n'est pas un nombre"),
    ("params", "-3", "Paramètres : -3 est hors limites"),
    ("activations", "x", "Mémoire d'activations : « x » n'est pas un nombre"),
    ("optimizer", "lion", "Mémoire par paramètre : « lion » est inconnu"),
])
def test_bad_value_gets_an_inline_message(client: TestClient, field: str, value: str,
                                          message: str) -> None:
    query = {"params": "7", "optimizer": "adam-mixed", "activations": "0", field: value}
    html = page(client, **query)
    inline = element(html, f'data-error-for="{field}"').replace(NBSP, " ").replace(NNBSP, " ")
    assert inline.startswith(message)
    assert re.search(rf'<(input|select) id="{field}"[^>]*aria-invalid="true"', html)
    assert "Corrigez la valeur signalée" in text(html)
    assert "Détails" in text(html)  # the rest of the page still renders


def test_user_input_is_escaped(client: TestClient) -> None:
    attack = '"><script>alert(1)</script>'
    html = page(client, params=attack)
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- fragments (what the script swaps in) --------------------------------------------------------

def test_fragment_is_the_results_panel_alone(client: TestClient) -> None:
    response = client.get("/fragments/results", params={"params": "7", "activations": "20",
                                                       "lang": "en"})
    assert response.status_code == 200
    assert "<html" not in response.text
    assert element(response.text, 'data-result="total"') == f"132{NBSP}GB"
    assert client.get("/fragments/nothing").status_code == 404


def test_fragment_carries_field_errors_for_the_script(client: TestClient) -> None:
    html = client.get("/fragments/results", params={"params": "abc", "lang": "en"}).text
    assert "<li data-field=\"params\">Parameters: &#39;abc&#39; is not a number" in html


# --- formulas, chart, sister links ---------------------------------------------------------------

def test_worked_example_is_computed_not_typed(client: TestClient) -> None:
    html = page(client)
    assert ("<mn>7</mn><mo>×</mo><mn>16</mn><mo>=</mo><mn>112</mn>" in html)
    assert "<mn>112</mn><mo>+</mo><mn>20</mn><mo>=</mo><mn>132</mn>" in html
    for template in TEMPLATES.rglob("*.html"):
        source = template.read_text()
        assert "112" not in source and "132" not in source, template


def test_formulas_are_mathml(client: TestClient) -> None:
    html = page(client)
    assert html.count("<math") >= 6
    assert "<mi>M</mi><mo>=</mo><mi>N</mi><mo>⋅</mo><mi>B</mi>" in html  # U+22C5, as the seed


def test_chart_segments_add_up_to_the_total() -> None:
    estimate = estimate_seed(seed_inputs(7, activations_gb=20))
    gpus = (find_gpu("rtx-4090-24gb"), find_gpu("h100-80gb"))
    chart = stacked_bar(estimate, gpus)
    assert [s.name for s in chart.segments] == [
        "weights", "gradients", "master_weights", "optimizer_states", "activations"]
    assert sum(s.memory_bytes for s in chart.segments) == estimate.total_bytes
    end = chart.segments[-1].x + chart.segments[-1].width
    assert end == pytest.approx(chart.total_x) and chart.total_x < WIDTH
    h100_line = chart.lines[1].x
    assert h100_line / chart.total_x == pytest.approx(80 * 2**30 / 132e9)


def test_every_part_of_a_chart_gets_its_own_colour() -> None:
    from vramplan.web.chart import PALETTE_SIZE, palette_styles

    # the fit chart's parts: two optimizer-state terms, two activation terms
    parts = [("part.optimizer_states", "optimizer_states"), ("part.step_temporaries",
             "optimizer_states"), ("part.activations", "activations"),
             ("part.logits_loss", "activations"), ("part.gradients", "gradients")]
    styles = palette_styles(parts)
    assert len(set(styles.values())) == len(parts)
    assert styles["part.optimizer_states"] == "p3" and styles["part.activations"] == "p4"
    many = palette_styles([(str(i), "weights") for i in range(PALETTE_SIZE)])
    assert len(set(many.values())) == PALETTE_SIZE


def test_custom_bytes_chart_is_one_model_states_segment() -> None:
    estimate = estimate_seed(seed_inputs(7, bytes_per_param=10))
    assert parts(estimate) == (("model_states", 70 * 10**9),)


def test_chart_is_inline_svg_with_capacity_lines(client: TestClient) -> None:
    html = page(client, params="7", activations="20")
    svg = element(html, 'role="img"')
    assert svg.count('class="seg ') == 5
    assert svg.count('class="cap line-0"') == 1  # the GPU picked: the seed verdict's card
    assert "activations 20" in svg.replace(NBSP, " ")  # the text alternative
    styles = re.findall(r'class="seg seg-(p\d+)"', svg)
    assert len(set(styles)) == len(styles) == 5  # a colour per part
    assert re.findall(r'class="swatch seg-(p\d+)"', element(html, 'class="legend"')) == styles


def test_sister_calculators_are_linked_once_served(client: TestClient) -> None:
    html = page(client)  # "bientôt disponible" until the app serves /inference and /lora
    assert '<a href="/inference">Calculateur de VRAM pour l&#39;inférence LLM</a>' in html
    assert '<a href="/lora">Calculateur de paramètres LoRA</a>' in html
    assert "bientôt disponible" not in text(html)


# --- accessibility, privacy, weight --------------------------------------------------------------

def test_inputs_are_labelled_and_results_live(client: TestClient) -> None:
    html = page(client)
    for field in ("params", "optimizer", "bytes_per_param", "activations"):
        assert f'<label for="{field}">' in html
    # the live region is a short summary (the verdict and the total), not the whole panel
    assert "aria-live" not in html
    summary = element(html, 'role="status" data-panel="summary"')
    assert text(summary).strip() == f"Ça ne tient pas sur 1 × NVIDIA H100 80GB — V = 112{NBSP}Go"
    assert '<meta name="viewport"' in html


def test_no_external_url_and_no_inline_script(client: TestClient) -> None:
    html = page(client, params="7", activations="20")
    for url in re.findall(r'(?:src|href|action)="([^"]*)"', html):
        assert url.startswith(("/", "#")), url
    assert re.findall(r"<script[^>]*>", html) == [
        f'<script src="/static/app.js?v={__version__}" defer>']
    assert " style=" not in html and "<style" not in html  # CSP: style-src 'self'
    assert "http://" not in html and "https://" not in html


@pytest.mark.parametrize(("query", "shown"), [
    ({"params": "7", "activations": "20"}, b'data-verdict="seed"'),
    # the heaviest: a run that fits nowhere, every table and change of the detailed model
    ({"model": "llama-3.1-70b", "gpu": "t4-16gb", "method": "lora"}, b'id="fit-combined"'),
], ids=["seed", "detailed"])
def test_page_weight_under_100_kb(client: TestClient, query: dict[str, str],
                                  shown: bytes) -> None:
    html = client.get("/", params=query).content
    assert shown in html
    assets = [client.get(path).content for path in
              ("/static/app.css", "/static/app.js", "/static/favicon.svg")]
    assert len(html) + sum(map(len, assets)) < PAGE_WEIGHT_LIMIT


def test_unknown_page_is_a_friendly_404(client: TestClient) -> None:
    response = client.get("/nothing-here")
    assert response.status_code == 404
    assert "Page introuvable" in response.text and 'href="/"' in response.text


# --- helpers -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("header", "expected"), [
    ("fr-FR,fr;q=0.9,en;q=0.8", Lang.FR),
    ("en-US,en;q=0.9,fr;q=0.8", Lang.EN),
    ("de-DE,fr;q=0.5", Lang.FR),
    ("de-DE", Lang.EN),
    ("fr;q=0, en;q=0.1", Lang.EN),
    ("fr;q=abc", Lang.EN),
    ("", Lang.EN),
])
def test_accept_language(header: str, expected: Lang) -> None:
    assert from_accept_language(header, Lang.EN) is expected


def test_french_punctuation_gets_unbreakable_spaces() -> None:
    assert typeset("Tient : oui ; « 7 » ?", Lang.FR) == \
        f"Tient{NBSP}: oui{NNBSP}; «{NBSP}7{NBSP}»{NNBSP}?"
    assert typeset("Fits: yes ; ok ?", Lang.EN) == "Fits: yes ; ok ?"


# --- the model picker and config.json -------------------------------------------------------------

def test_model_picker_fills_parameters_with_the_exact_count(client: TestClient) -> None:
    html = page(client, model="llama-2-7b", optimizer="adam-mixed", activations="0")
    assert re.search(r'id="params" name="params"[^>]*value="6,738415616"', html)
    # Llama 2 7B has 6,738,415,616 parameters: × 16 bytes = 107.81 GB
    assert element(html, 'data-result="model_states"') == f"107,81{NBSP}Go"
    assert f"Llama 2 7B (meta-llama/Llama-2-7b-hf), 6{NNBSP}738{NNBSP}415{NNBSP}616" in html
    assert html.count("<option value=\"") >= 44 + 4  # every preset in the datalist


def test_unknown_model_is_one_line_with_close_names(client: TestClient) -> None:
    html = page(client, model="lama-3.1-8b", params="7")
    message = element(html, 'data-error-for="model"').replace(NBSP, " ").replace(NNBSP, " ")
    assert message == ("Modèle pré-défini : « lama-3.1-8b » est inconnu ; noms proches : "
                       "llama-3.1-8b, llama-3-8b, llama-3.1-70b ; sinon, collez son config.json "
                       "dans « Ou votre config.json », sous le formulaire.")
    nothing_close = element(page(client, model="foo"), 'data-error-for="model"')
    assert "noms proches" not in nothing_close and "config.json" in nothing_close
    assert "qwen2.5-7b" not in nothing_close  # not the registry's whole list


def test_a_custom_value_just_chosen_asks_for_it(client: TestClient) -> None:
    html = page(client, params="7", optimizer="custom", bytes_per_param="")
    assert element(html, 'data-error-for="bytes_per_param"') == ""
    assert 'aria-invalid' not in re.search(r'<input id="bytes_per_param"[^>]*>', html).group(0)
    body = element(html, 'data-panel="results"')
    assert '<p class="empty">Saisissez une valeur pour afficher les résultats.</p>' in body


def test_pasted_config_is_counted_and_carried_to_the_page(client: TestClient) -> None:
    # GPT-2 small (https://huggingface.co/openai-community/gpt2/blob/main/config.json):
    # 124,439,808 parameters with the tied head
    config = ('{"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, '
              '"vocab_size": 50257, "n_positions": 1024}')
    response = client.post("/config", data={"config": config, "lang": "en", "activations": "20"},
                           follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/en/?params=0.124439808&activations=20"


def test_pasted_config_keeps_every_other_input(client: TestClient) -> None:
    config = ('{"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, '
              '"vocab_size": 50257, "n_positions": 1024}')
    response = client.post("/config", data={
        "config": config, "lang": "fr", "gpu": "rtx-4090-24gb", "gpus": "2", "method": "lora",
        "lora_r": "16", "lora_targets": "q,v", "margin": "90"}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == (
        "/?params=0.124439808&method=lora&lora_r=16&lora_targets=q%2Cv&gpu=rtx-4090-24gb"
        "&gpus=2&margin=90")


def test_bad_config_shows_its_message_next_to_the_text(client: TestClient) -> None:
    response = client.post("/config", data={"config": '{"model_type": "llama"}', "lang": "fr"})
    assert response.status_code == 422
    message = element(response.text, 'id="config-error"')
    assert message.startswith(f"Contenu de config.json{NBSP}:")
    assert "hidden_size" in message
    assert "model_type" in element(response.text, 'id="config"')  # the text is kept
