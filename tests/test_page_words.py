"""French everywhere on `/`, English everywhere on `/en/`: every option and setting in words (no
raw codes such as `none`, `mixed`, `zero3`, `cadre hf`, `mesure device`), grammar that agrees
("Plus longue séquence qui tient : aucune"), the change sources in the page's language with the
core's citations."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest

from vramplan.i18n import Lang, translate
from vramplan.planner.changes import CHANGE_COSTS
from vramplan.web.labels import OPTION_KEYS, setting_text

NBSP, NNBSP = "\u00a0", "\u202f"
HEAVY = {"model": "llama-3.1-70b", "gpu": "t4-16gb", "method": "lora"}
"""A run that fits nowhere: every table, limit and change of the detailed model is shown."""
CODES = ("bf16-true", "ddp", "zero1", "zero2", "zero3", "fsdp-grad-op", "params-optimizer",
         "sdpa", "hf", "adamw", "nf4-dq", "paged-adamw", "sgd-momentum", "adamw-8bit")
"""The vocabulary's codes that are no word in any language: neither page shows them."""
ENGLISH_CODES = ("none", "mixed", "amp", "full", "freeze", "eager", "allocated", "reserved",
                 "device", "generic", "standard", "chunked", "all", "offload", "sharding")
"""Codes that are English words: the French page never shows them."""
SAME_IN_FRENCH = frozenset({"activations"})
"""Option codes that are French words too (`offload=activations`: "activations")."""
FRENCH_WORDS = ("aucun", "aucune", "tient", "mémoire", "partage", "déchargement", "jetons",
                "utilisables", "octets", "Règle", "soit", "Gio", "Go")
ENGLISH_WORDS = ("the", "fits", "none", "usable", "sharding", "offload", "tokens", "bytes",
                 "GiB", "GB", "setting", "framework", "metric", "cadre", "mesure")


def visible(html: str) -> str:
    """The text a reader sees: no script, style, SVG title, datalist (model names) or hidden
    lists; entities decoded; French spaces made plain."""
    html = re.sub(r"<(script|style|title|desc|datalist|template)[^>]*>.*?</\1>", " ", html,
                  flags=re.S)
    html = re.sub(r"<ul hidden[^>]*>.*?</ul>", " ", html, flags=re.S)
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", html))
    return re.sub(r"\s+", " ", text.replace(NBSP, " ").replace(NNBSP, " "))


def words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-zÀ-ÿ0-9][\w.+-]*[A-Za-zÀ-ÿ0-9]|\w", text))


def _results(client: Any, path: str) -> str:
    """The page's calculator (Données, Résultats, the detailed card), without the seed's prose,
    whose French uses "framework" as the seed does."""
    html = client.get(path, params=HEAVY).text
    return visible(html[html.index('<div class="calculator">'):html.index('id="details"')])


@pytest.mark.parametrize("path", ["/", "/en/"])
def test_no_raw_code_on_either_page(client: Any, path: str) -> None:
    found = words(_results(client, path))
    assert not [code for code in CODES if code in found]


def test_french_page_has_no_english_word(client: Any) -> None:
    found = words(_results(client, "/"))
    assert not [word for word in (*ENGLISH_WORDS, *ENGLISH_CODES) if word in found]


def test_english_page_has_no_french_word(client: Any) -> None:
    found = words(_results(client, "/en/"))
    assert not [word for word in FRENCH_WORDS if word in found]


def test_every_option_of_the_french_page_is_in_words(client: Any) -> None:
    html = client.get("/", params=HEAVY).text
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', html)
    checked = [(value, label) for value, label in options
               if value and value not in SAME_IN_FRENCH]
    assert len(checked) > 30  # the selects' options, not the model list (a datalist)
    for value, label in checked:
        assert html_lib.unescape(label) != value, value


def test_none_agrees_with_its_noun(client: Any) -> None:
    shown = _results(client, "/")
    assert "Plus grand micro-lot qui tient : aucun " in shown
    assert "Plus longue séquence qui tient : aucune " in shown
    english = _results(client, "/en/")
    assert "Longest sequence that fits: none" in english


def test_a_change_names_its_settings_in_words() -> None:
    from vramplan.vocab import Offload, Scheme

    settings = (("sharding", Scheme.ZERO3), ("offload", Offload.PARAMS_OPTIMIZER))
    assert setting_text(settings, Lang.FR) == (
        f"Partage entre GPU{NBSP}: ZeRO-3 (+ poids partagés){NNBSP}; Déchargement vers le "
        f"CPU{NBSP}: paramètres et optimiseur")
    assert setting_text((("batch", 2),), Lang.EN) == "Micro-batch (sequences): 2"


@pytest.mark.parametrize("kind", list(CHANGE_COSTS), ids=lambda kind: kind.value)
def test_change_sources_in_both_languages_cite_the_cores(kind: Any) -> None:
    source = CHANGE_COSTS[kind].source
    english = translate(f"web_fit.source.{kind.value}", Lang.EN)
    french = translate(f"web_fit.source.{kind.value}", Lang.FR)
    assert english == source  # the core's words, kept in step
    citations = re.findall(r"arXiv:\d{4}\.\d{4,5}|[A-Z][a-z]+ et al\. \d{4}", source)
    assert re.findall(r"arXiv:\d{4}\.\d{4,5}|[A-Z][a-z]+ et al\. \d{4}", french) == citations


def test_option_keys_cover_the_selects() -> None:
    assert {"method", "precision", "sharding", "offload", "checkpointing"} <= set(OPTION_KEYS)
