"""The page at a glance, in real headless Chromium (Debian's `chromium` through Playwright, as in
test_browser.py, whose server, browser and recording session are reused): one verdict for the
GPUs picked, state that survives (the LoRA hand-off, the URL, the JSON link, the copy button),
errors and the network (close names, stale and failed responses), accessibility (focus ring,
short live summary), charts (a colour per part, labels that fit) and a phone's width (the verdict
in sight, stacked tables, whole select labels). Screenshots of the four pages at 1280 and 390
pixels go to test-output/."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from test_browser import NBSP, OUTPUT, Session, base_url, browser
from vramplan.units import format_gib

__all__ = ["base_url", "browser"]  # the module-scoped fixtures of test_browser.py, reused here

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
HEAVY = "/?model=llama-3.1-70b&gpu=t4-16gb&method=lora"
"""A run that fits nowhere: every table and change of the detailed model is on the page."""
LIVE = "**/fragments/live?*"


@pytest.fixture
def session(browser: object, base_url: str) -> Iterator[Session]:
    opened = Session(browser, base_url)
    yield opened
    opened.close()


@pytest.fixture
def phone(browser: object, base_url: str) -> Iterator[Session]:
    opened = Session(browser, base_url)
    opened.page.set_viewport_size(PHONE)
    yield opened
    opened.close()


def total(page: Any) -> Any:
    return page.locator('[data-result="total"]')


def verdict(page: Any) -> Any:
    return page.locator('[data-result="verdict"]')


# --- one verdict ---------------------------------------------------------------------------------

def test_the_gpu_picker_answers_for_a_typed_count(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/?params=7")
    expect(verdict(page)).to_have_text(
        f"Ça ne tient pas sur 1 × NVIDIA H100 80GB{NBSP}: il manque 26,1{NBSP}Go "
        f"(24,31{NBSP}Gio).")  # 112 Go against 85.9 Go (80 Gio)
    page.select_option("#gpu", "rtx-3090-24gb")
    expect(verdict(page)).to_contain_text("Ça ne tient pas sur 1 × NVIDIA GeForce RTX 3090")
    expect(page).to_have_url(re.compile(r"gpu=rtx-3090-24gb"))
    page.fill("#gpus", "8")
    expect(verdict(page)).to_contain_text("Ça pourrait tenir sur 8 × NVIDIA GeForce RTX 3090")
    expect(verdict(page)).to_contain_text("au moins 5")  # ⌈104.31 / 24⌉
    expect(page.locator('[data-result="verdict"]')).to_have_count(1)


def test_with_a_model_the_verdict_is_the_detailed_cards(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/?model=llama-3.1-8b")
    line = verdict(page)
    expect(line).to_contain_text("par GPU au pic")
    peak = re.search(r"pic par GPU\u00a0: ([\d\u202f,]+\u00a0Gio)",
                     page.locator('[data-result="fit_peak"]').inner_text().replace(
                         "Pic", "pic"))
    assert peak is not None
    expect(line).to_contain_text(peak.group(1))  # the same number as the card below
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "detailed")
    expect(page.locator('[data-result="verdict"]')).to_have_count(1)
    expect(page.locator("#results")).to_contain_text("Affinage complet de tous les poids")
    # one request per change: every panel comes back at once
    before = len([url for url in session.requested if "/fragments/" in url])
    page.select_option("#gpu", "h200-141gb")
    expect(line).to_contain_text("NVIDIA H200 141GB")
    after = [url for url in session.requested if "/fragments/" in url]
    assert len(after) == before + 1 and "/fragments/live?" in after[-1]


# --- state that survives -------------------------------------------------------------------------

def test_the_lora_hand_off_survives_edits_the_url_and_the_json_link(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/lora?model=llama-2-7b&lora_r=256&lora_targets=all")
    page.click("[data-training-link]")
    expect(page.locator("#method")).to_have_value("lora")
    expect(page.locator("#lora_r")).to_have_value("256")
    blocks = ["q", "k", "v", "o", "gate", "up", "down"]  # "all": every linear layer of a block
    for target in blocks:
        expect(page.locator(f"input[name=lora_targets][value={target}]")).to_be_checked()
    expect(page.locator("input[name=lora_targets][value=head]")).not_to_be_checked()
    api = page.request.get(session.base_url + "/api/v1/fit?model=llama-2-7b&gpu=h100-80gb"
                           "&method=lora&lora_r=256&lora_targets=all&precision=mixed").json()
    expect(verdict(page)).to_contain_text(format_gib(api["verdict"]["peak_bytes"], "fr"))
    page.fill("#batch", "2")  # an edit keeps every LoRA setting in the URL
    expect(page).to_have_url(re.compile(r"batch=2"))
    query = parse_qs(urlsplit(page.url).query)
    assert query["lora_r"] == ["256"] and query["lora_targets"] == blocks
    assert query["method"] == ["lora"]
    expect(page.locator("[data-json-link]")).to_have_attribute("href", re.compile(r"batch=2"))
    link = page.locator("[data-json-link]").get_attribute("href")
    assert link is not None
    linked = parse_qs(urlsplit(link).query)
    assert linked["lora_r"] == ["256"] and linked["lora_targets"] == [",".join(blocks)]
    assert linked["batch"] == ["2"]
    body = page.request.get(session.base_url + link).json()
    expect(verdict(page)).to_contain_text(format_gib(body["verdict"]["peak_bytes"], "fr"))
    for target in blocks:  # no box ticked: said so, not guessed
        page.uncheck(f"input[name=lora_targets][value={target}]")
    expect(page.locator("#lora_targets-error")).to_contain_text("Modules adaptés")
    expect(page).to_have_url(re.compile(r"lora_targets=(&|$)"))


def test_picking_a_model_leaves_no_stale_count_in_the_url(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.fill("#params", "13")
    expect(page).to_have_url(re.compile(r"params=13"))
    page.fill("#model", "qwen2.5-7b")
    page.locator("#model").dispatch_event("change")
    expect(page).to_have_url(re.compile(r"model=qwen2.5-7b"))
    assert "params=" not in page.url
    expect(page.locator("#params")).not_to_have_value("13")  # the model's exact count


def test_copy_link_copies_the_address_with_every_input(session: Session) -> None:
    from playwright.sync_api import expect

    session.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                      origin=session.base_url)
    page = session.open("/")
    page.fill("#activations", "20")
    expect(total(page)).to_have_text(f"132{NBSP}Go")
    page.click("[data-copy-link]")
    expect(page.locator("[data-copy-status]")).to_contain_text("Lien copié")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url and "activations=20" in copied


def test_without_javascript_there_is_no_copy_button(browser: object, base_url: str) -> None:
    from playwright.sync_api import expect

    session = Session(browser, base_url, javascript=False)
    page = session.open("/")
    expect(page.locator("[data-copy-link]")).to_be_hidden()
    expect(verdict(page)).to_contain_text("Ça ne tient pas sur 1 × NVIDIA H100 80GB")
    session.close()


# --- errors and the network ----------------------------------------------------------------------

def test_an_unknown_model_gets_one_line_with_close_names(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.fill("#model", "lama-3.1-8b")
    page.locator("#model").dispatch_event("change")
    error = page.locator("#model-error")
    expect(error).to_contain_text("noms proches")
    text = error.inner_text()
    names = re.search(r"noms proches\u00a0: (.*?)\u202f; sinon", text)
    assert names is not None and names.group(1).split(", ")[0] == "llama-3.1-8b"
    assert len(names.group(1).split(", ")) <= 3 and "config.json" in text
    box = error.bounding_box()
    assert box is not None and box["height"] < 5 * 22  # a short message, not 55 names


def test_only_the_latest_request_paints(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    held: list[Any] = []

    def hold_the_first(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(LIVE, hold_the_first)
    page.fill("#params", "1")
    while not held:
        page.wait_for_timeout(20)
    page.fill("#params", "13")
    expect(total(page)).to_have_text(f"208{NBSP}Go")
    with contextlib.suppress(Exception):  # ...or the page has already aborted it
        held[0].continue_()  # the stale answer arrives last...
    page.wait_for_timeout(300)
    expect(total(page)).to_have_text(f"208{NBSP}Go")  # ...and does not paint
    expect(page.locator("#params")).to_have_value("13")


def test_a_failed_request_says_so_and_marks_the_old_result_stale(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    status = page.locator("[data-live-status]")
    expect(status).to_be_hidden()
    page.route(LIVE, lambda route: route.abort())
    page.fill("#activations", "20")
    expect(status).to_be_visible()
    expect(status).to_contain_text("Le serveur n'a pas répondu")
    expect(page.locator('[data-panel="results"]')).to_have_attribute("data-stale", "")
    expect(total(page)).to_have_text(f"112{NBSP}Go")  # the old result, marked as such
    page.unroute(LIVE)
    page.fill("#activations", "21")
    expect(total(page)).to_have_text(f"133{NBSP}Go")
    expect(status).to_be_hidden()
    expect(page.locator('[data-panel="results"]')).not_to_have_attribute("data-stale", "")
    # the aborted request is logged by the browser; no script error escaped
    session.errors = [e for e in session.errors if "Failed to load resource" not in e]


def test_a_server_error_is_not_painted_as_a_result(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/")
    page.route(LIVE, lambda route: route.fulfill(status=500, body="Internal Server Error",
                                                 content_type="text/plain"))
    page.fill("#activations", "20")
    expect(page.locator("[data-live-status]")).to_contain_text("The server did not answer")
    expect(page.locator("#results")).not_to_contain_text("Internal Server Error")
    expect(total(page)).to_have_text(f"112{NBSP}GB")
    session.errors = [e for e in session.errors if "status of 500" not in e]


def test_a_custom_value_shows_no_error_before_it_is_typed(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.select_option("#optimizer", "custom")
    expect(page.locator("#bytes_per_param")).to_be_visible()
    expect(page.locator("#results .empty")).to_have_text(
        "Saisissez une valeur pour afficher les résultats.")
    expect(page.locator("#bytes_per_param-error")).to_have_text("")
    expect(page.locator("#bytes_per_param")).not_to_have_attribute("aria-invalid", "true")
    page.fill("#bytes_per_param", "10")
    expect(total(page)).to_have_text(f"70{NBSP}Go")


# --- accessibility -------------------------------------------------------------------------------

def _luminance(css: str) -> float:
    """WCAG 2.2 relative luminance of an `rgb(r, g, b)` colour."""
    channels = [int(value) / 255 for value in re.findall(r"\d+", css)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    high, low = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("target", ["#params", "#optimizer", "button[type=submit]",
                                    "[data-lang-switch]"])
def test_the_focus_ring_contrasts_3_to_1(session: Session, target: str) -> None:
    page = session.open("/")
    page.focus(target)
    page.keyboard.press("Shift+Tab")  # a keyboard focus, for :focus-visible
    page.keyboard.press("Tab")
    ring = page.evaluate("""() => {
        const element = document.activeElement, style = getComputedStyle(element);
        const card = element.closest('.card, header') || document.body;
        return [style.outlineStyle, style.outlineWidth, style.outlineColor,
                getComputedStyle(card).backgroundColor,
                getComputedStyle(document.documentElement).backgroundColor];
    }""")
    style, width, colour, card, page_background = ring
    assert style == "solid" and float(width.removesuffix("px")) >= 2
    backgrounds = [bg for bg in (card, page_background) if "rgba(0, 0, 0, 0)" not in bg]
    assert backgrounds and all(contrast(colour, bg) >= 3 for bg in backgrounds), ring


def test_the_live_region_is_a_short_summary(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    assert page.locator("[aria-live]").count() == 0  # the panels are not live regions
    summary = page.locator("#summary[role=status]")
    expect(summary).to_have_text(f"Ça ne tient pas sur 1 × NVIDIA H100 80GB — V = 112{NBSP}Go")
    page.fill("#activations", "20")
    expect(summary).to_have_text(f"Ça ne tient pas sur 1 × NVIDIA H100 80GB — V = 132{NBSP}Go")
    assert summary.locator("table").count() == 0
    page.fill("#params", "")
    expect(summary).to_have_text("Saisissez une valeur pour afficher les résultats.")


# --- charts --------------------------------------------------------------------------------------

CHART_FACTS = """() => Array.from(document.querySelectorAll('svg.bar')).map((svg) => {
    const box = svg.getBoundingClientRect();
    const figure = svg.closest('figure');
    const fills = Array.from(svg.querySelectorAll('rect.seg'), (r) => getComputedStyle(r).fill);
    const lines = Array.from(svg.querySelectorAll('line.cap'), (l) => {
        const s = getComputedStyle(l); return s.stroke + ' ' + s.strokeDasharray; });
    const labels = Array.from(svg.querySelectorAll('text'), (t) => {
        const r = t.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                size: parseFloat(getComputedStyle(t).fontSize)}; });
    const legend = figure.querySelectorAll('.legend li').length;
    const swatches = Array.from(figure.querySelectorAll('.legend .line-swatch'), (s) => {
        const c = getComputedStyle(s); return c.borderTopColor + ' ' + c.borderTopStyle; });
    return {left: box.left, right: box.right, fills, lines, labels, legend, swatches,
            root: parseFloat(getComputedStyle(document.documentElement).fontSize)};
})"""


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] \
        and b["top"] < a["bottom"]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("path", ["/?params=70&gpu=rtx-4090-24gb", "/?model=llama-3.1-8b",
                                  HEAVY, "/inference"])
def test_charts_have_a_colour_per_part_and_labels_that_fit(browser: object, base_url: str,
                                                           path: str, width: int) -> None:
    session = Session(browser, base_url)
    session.page.set_viewport_size({"width": width, "height": 900})
    page = session.open(path)
    charts = page.evaluate(CHART_FACTS)
    assert charts
    for chart in charts:
        assert len(set(chart["fills"])) == len(chart["fills"])  # a colour per part
        assert len(set(chart["lines"])) == len(chart["lines"])  # a style per line
        assert chart["legend"] == len(chart["fills"]) + len(chart["lines"])  # an entry each
        assert len(set(chart["swatches"])) == len(chart["swatches"]) == len(chart["lines"])
        for label in chart["labels"]:
            assert chart["left"] - 1 <= label["left"] and label["right"] <= chart["right"] + 1
            assert 11 <= label["size"] <= chart["root"]  # the page's small print, not scaled
        for i, first in enumerate(chart["labels"]):
            assert not any(_overlap(first, other) for other in chart["labels"][i + 1:])
    session.close()


# --- a phone's width -----------------------------------------------------------------------------

def test_on_a_phone_the_verdict_is_in_sight(phone: Session) -> None:
    from playwright.sync_api import expect

    page = phone.open("/?model=llama-3.1-8b")
    summary = page.locator("#summary")
    box = summary.bounding_box()
    assert box is not None and box["height"] > 20  # shown, not only read out
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"]  # in the first screen
    expect(summary).to_contain_text("Ça ne tient pas sur 1 × NVIDIA H100 80GB")
    page.click("#summary a")  # leads to the verdict itself...
    expect(verdict(page)).to_be_in_viewport()
    expect(summary).to_have_class(re.compile("verdict-in-view"))  # ...and steps aside
    box = summary.bounding_box()
    assert box is not None and box["height"] <= 1


SELECT_FIT = """() => {
    const context = document.createElement('canvas').getContext('2d');
    const cut = [];
    for (const select of document.querySelectorAll('select')) {
        if (!select.offsetParent) continue;
        const s = getComputedStyle(select);
        context.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
        const room = select.clientWidth - parseFloat(s.paddingLeft)
            - parseFloat(s.paddingRight) - 24;  // the arrow
        for (const option of select.options) {
            const width = context.measureText(option.text).width;
            if (width > room) cut.push([select.id, option.text, Math.round(width), room]);
        }
    }
    return cut;
}"""


@pytest.mark.parametrize("path", ["/", "/en/", HEAVY, "/en" + HEAVY, "/inference", "/en/lora"])
def test_on_a_phone_selects_show_their_whole_labels(phone: Session, path: str) -> None:
    page = phone.open(path)
    assert page.evaluate(SELECT_FIT) == []


@pytest.mark.parametrize("path", [HEAVY, "/en" + HEAVY, "/inference?model=llama-3.1-8b",
                                  "/lora?model=llama-3.1-8b&lora_targets=all"])
def test_on_a_phone_tables_become_stacked_cards(phone: Session, path: str) -> None:
    page = phone.open(path)
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    facts = page.evaluate("""() => Array.from(document.querySelectorAll('table.stack'), (t) => ({
        display: getComputedStyle(t.querySelector('tbody tr')).display,
        wide: t.scrollWidth > t.parentElement.clientWidth + 1,
        labelled: Array.from(t.querySelectorAll('tbody td')).every((td) => td.dataset.label),
    }))""")
    assert facts and all(fact["display"] == "block" and not fact["wide"] and fact["labelled"]
                         for fact in facts), facts
    assert page.locator("table:not(.stack)").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


# --- screenshots ---------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize(("path", "name"), [("/", "page-fr"), ("/en/?model=llama-3.1-8b",
                                                               "page-en"),
                                            ("/inference", "inference-fr"),
                                            ("/lora", "lora-fr")])
def test_screenshots(browser: object, base_url: str, path: str, name: str, width: int) -> None:
    """Looked at by the people who change the page (test-output/NAME-WIDTH.png)."""
    session = Session(browser, base_url)
    session.page.set_viewport_size({"width": width, "height": 900 if width > 600 else 844})
    page = session.open(path)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"{name}-{width}.png"), full_page=True)
    session.close()
