"""The seed page, whole and in its words: the French page carries every heading, paragraph,
formula, question and answer of the seed file (`../shared/seed/000_b66ea8bb2f66a3c3.txt`, copied
into `tests/fixtures/seed_page.txt`), in the seed's order, each sentence exactly; what the page
adds comes after, never instead. The English page carries the same structure, translated.

How the seed file was extracted from its page, and how the comparison reads ours the same way:
- inline formulas were dropped ("Avec paramètres en milliards et octets par paramètre"): our
  inline `<math>` elements are left out of the text;
- display formulas were kept, glued to the next paragraph ("M=N⋅B GoLa valeur de référence"):
  they are split off by `SEED_FORMULAS`;
- the worked example's aligned pair came out column by column ("MV=7×16=112 Go=112+0=112 Go",
  the way KaTeX lays out an `aligned` block): it stands for the two rows listed beside it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from vramplan.web.details import worked_example

SEED = Path(__file__).parent / "fixtures" / "seed_page.txt"
SHARED_SEED = Path(__file__).parents[1].parent / "shared" / "seed" / "000_b66ea8bb2f66a3c3.txt"
SEED_FORMULAS = {
    "M=N⋅B Go": ("M=N⋅B Go",),
    "V=M+A": ("V=M+A",),
    "MV=7×16=112 Go=112+0=112 Go": ("M=7×16=112 Go", "V=112+0=112 Go"),
}
"""Each display formula as the seed file has it, and the formulas it stands for on the page."""
SEED_BODY_START = 6
"""The file opens with the page's title and a summary of the form's initial values (lines 1-6,
checked by `test_the_seed_form_summary`); the page itself starts on line 7."""
EMPTY_STATE = "Saisissez une valeur pour afficher les résultats."
BLOCKS = frozenset({"h1", "h2", "h3", "p", "legend", "summary", "li", "dt", "dd", "label",
                    "th", "td", "caption", "figcaption", "option", "button", "a"})
SKIPPED = frozenset({"script", "style", "title", "desc", "template", "datalist", "select"})
SPACES = re.compile(r"[\s\u00a0\u202f]+")


def normalized(text: str) -> str:
    """Spaces as the seed file writes them: French no-break spaces become plain, runs collapse."""
    return SPACES.sub(" ", text).strip()


class Blocks(HTMLParser):
    """The page's text as a list of blocks (headings, paragraphs, list items, display formulas),
    inline formulas left out, as the seed file was extracted."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[str, str]] = []
        self._open: list[tuple[str, list[str]]] = []
        self._skip = 0
        self._inline_math = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self._skip += 1
        elif tag == "math" and ("display", "block") not in attrs:
            self._inline_math += 1
        elif tag in BLOCKS or tag == "math":
            self._open.append((tag, []))

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._skip -= 1
        elif tag == "math" and self._inline_math:
            self._inline_math -= 1
        elif (tag in BLOCKS or tag == "math") and self._open and self._open[-1][0] == tag:
            name, chunks = self._open.pop()
            text = normalized("".join(chunks))
            if text:
                self.blocks.append((name, text))

    def handle_data(self, data: str) -> None:
        if self._skip or self._inline_math or not self._open:
            return
        if self._open[-1][0] == "a" and len(self._open) > 1:  # a link inside a paragraph
            self._open[-2][1].append(data)
        self._open[-1][1].append(data)


def blocks(html: str) -> list[tuple[str, str]]:
    parser = Blocks()
    parser.feed(html)
    return parser.blocks


def seed_items(lines: list[str]) -> list[str]:
    """The seed page's blocks in order: headings, paragraphs, and formulas split off."""
    items: list[str] = []
    for line in lines:
        text = normalized(line)
        formula = next((f for f in SEED_FORMULAS if text.startswith(f)), None)
        if formula is not None:
            items.extend(f"math:{row}" for row in SEED_FORMULAS[formula])
            text = text[len(formula):].strip()
        if text:
            items.append(text)
    return items


def seed_lines() -> list[str]:
    return SEED.read_text(encoding="utf-8").splitlines()


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.?!])\s+(?=[A-ZÀ-Ý«])", text)


def page_items(html: str) -> list[str]:
    """Our blocks, display formulas marked as such."""
    return [("math:" if tag == "math" else "") + text for tag, text in blocks(html)]


def assert_in_order(expected: list[str], found: list[str]) -> None:
    """Every expected block, sentence by sentence, appears among `found` in the same order."""
    position = 0
    for item in expected:
        try:
            position = found.index(item, position) + 1
        except ValueError:
            near = [text for text in found if item[:30] in text or text[:30] in item]
            for sentence in sentences(item):
                assert any(sentence in text for text in found), \
                    f"seed sentence missing from the page: {sentence!r}"
            pytest.fail(f"seed block not found as a block of its own, in order: {item!r}; "
                        f"closest on the page: {near!r}")


def test_fixture_is_the_shared_seed_file() -> None:
    if SHARED_SEED.exists():  # the project's copy must stay byte-identical to the shared one
        assert SEED.read_bytes() == SHARED_SEED.read_bytes()


def test_french_page_carries_the_seed_text_in_order(client: TestClient) -> None:
    html = client.get("/", params={"params": ""}).text  # the seed's empty results state
    expected = seed_items(seed_lines()[SEED_BODY_START:])
    assert EMPTY_STATE in expected and len(expected) >= 30  # the reader finds the blocks
    assert_in_order(expected, page_items(html))


def test_with_results_only_the_empty_state_sentence_is_gone(client: TestClient) -> None:
    html = client.get("/").text
    expected = [item for item in seed_items(seed_lines()[SEED_BODY_START:])
                if item != EMPTY_STATE]
    found = page_items(html)
    assert EMPTY_STATE not in found
    assert_in_order(expected, found)


def test_the_seed_form_summary(client: TestClient) -> None:
    """Lines 1-6: the title, "Données", and the form's fields with their initial values."""
    lines = seed_lines()[:SEED_BODY_START]
    assert lines[0] == "Calculateur de VRAM pour l'entraînement de LLM"
    html = client.get("/").text
    rows = dict(re.findall(r"\| ([^|]+) \| ([^|]+) \|", "\n".join(lines[2:])))
    assert rows.pop("---", None) is None
    assert rows == {"Paramètres": "7",
                    "Mémoire par paramètre": "Adam en précision mixte (16 octets/param)",
                    "Mémoire d'activations": "0"}
    assert re.search(r'<label for="params">Paramètres ', html)
    assert re.search(r'id="params" name="params"[^>]*value="7"', html)
    assert '<label for="optimizer">Mémoire par paramètre</label>' in html
    assert ('<option value="adam-mixed" selected>Adam en précision mixte (16 octets/param)'
            '</option>') in html
    assert re.search(r'<label for="activations">Mémoire d&#39;activations ', html)
    assert re.search(r'id="activations" name="activations"[^>]*value="0"', html)


def _headings(html: str, tag: str) -> list[str]:
    return [text for name, text in blocks(html) if name == tag]


def test_sections_and_headings_follow_the_seed(client: TestClient) -> None:
    html = client.get("/").text
    found = blocks(html)
    assert _headings(html, "h1") == ["Calculateur de VRAM pour l'entraînement de LLM"]
    h2 = _headings(html, "h2")
    seed_h2 = ["Données", "Résultats", "Détails", "Questions fréquentes (FAQ)",
               "Mentions légales"]
    assert [title for title in h2 if title in seed_h2] == seed_h2
    legends = [text for name, text in found if name == "legend"]
    assert legends[:2] == ["Modèle", "Activations"]  # the seed's two groups come first
    details = h2.index("Détails")
    h3_after = [text for name, text in found[[b for b in found].index(("h2", h2[details])):]
                if name == "h3"]
    assert h3_after[:5] == ["VRAM pour l'entraînement de LLM", "Les états du modèle dominent",
                            "Les activations sont saisies séparément", "Exemple chiffré",
                            "Pourquoi LoRA change la donne"]
    questions = [text for name, text in found if name == "summary"]
    faq = questions.index("D'où viennent les 16 octets par paramètre ?")
    assert questions[faq:faq + 3] == ["D'où viennent les 16 octets par paramètre ?",
                                      "Pourquoi LoRA demande-t-il beaucoup moins de mémoire ?",
                                      "Comment estimer la mémoire d'activations ?"]


@pytest.mark.parametrize(("path", "inference", "lora"), [
    ("/", "/inference", "/lora"), ("/en/", "/en/inference", "/en/lora")])
def test_the_seed_links_to_its_two_sister_calculators(client: TestClient, path: str,
                                                       inference: str, lora: str) -> None:
    html = client.get(path).text
    details = html[html.index('id="details"'):html.index('id="legal"')]
    assert details.count(f'href="{inference}"') >= 2  # in the worked example and the list
    assert details.count(f'href="{lora}"') >= 3  # LoRA paragraph, FAQ answer, and the list


def test_the_worked_example_is_the_cores(client: TestClient) -> None:
    """The seed says the 112 Go of model states are "already beyond" one 80 Go accelerator and
    that 132 Go do not fit on one consumer GPU: the core agrees."""
    example = worked_example()
    assert not example.states_verdict.fits
    assert not example.total_verdict.fits
    assert example.model_states.activations_bytes == 0  # V = 112 + 0 = 112 Go


def test_english_page_is_the_same_page_translated(client: TestClient) -> None:
    french = blocks(client.get("/", params={"params": ""}).text)
    english = blocks(client.get("/en/", params={"params": ""}).text)
    assert [tag for tag, _ in french] == [tag for tag, _ in english]
    formulas = [text for tag, text in french if tag == "math"]
    assert [text.replace("GB", "Go") for tag, text in english if tag == "math"] == formulas
    shown = " ".join(text for _, text in english)
    for words in ("Estimate the GPU VRAM needed to fully fine-tune a large language model",
                  "Where do the 16 bytes per parameter come from?", "Legal notice",
                  "Why does LoRA need so much less memory?",
                  "How do I estimate the activation memory?", "VRAM for LLM training",
                  "Enter a value to see the results."):
        assert words in shown, words
