"""The sister calculators end to end in real headless Chromium (Debian's `chromium` through
Playwright, as in test_browser.py, whose server, browser and recording session are reused): live
results as the user types, a bad value's message, the language switch, a shared URL restoring
its state, and no request leaving 127.0.0.1. Screenshots of both pages in both languages go to
test-output/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from test_browser import OUTPUT, Session, base_url, browser
from tests.helpers import inference_json, lora_json

__all__ = ["base_url", "browser"]  # the module-scoped fixtures of test_browser.py, reused here

pytestmark = pytest.mark.browser

NBSP = "\u00a0"
NNBSP = "\u202f"


@pytest.fixture
def session(browser: object, base_url: str) -> Iterator[Session]:
    opened = Session(browser, base_url)
    yield opened
    opened.close()  # asserts that every request stayed on the app and no script error occurred


def total(page: object) -> object:
    return page.locator('[data-result="total"]')  # type: ignore[attr-defined]


def device_gb(query: dict[str, str], lang: str) -> str:
    """The total per GPU the page must show, from the same request layer as the API."""
    value = f"{inference_json({**query, 'limits': '1'})['device_gb']:.2f}"
    value = value.rstrip("0").rstrip(".")
    return (value.replace(".", ",") + f"{NBSP}Go") if lang == "fr" else f"{value}{NBSP}GB"


def screenshot(page: object, name: str) -> None:
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / name), full_page=True)  # type: ignore[attr-defined]


def test_inference_updates_live_as_the_context_is_typed(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/inference")
    expect(total(page)).to_have_text(device_gb({"model": "llama-3.1-8b"}, "fr"))
    screenshot(page, "inference-fr.png")
    page.fill("#context", "32768")
    expect(total(page)).to_have_text(device_gb({"model": "llama-3.1-8b", "context": "32768"},
                                               "fr"))
    assert "context=32768" in page.url  # type: ignore[attr-defined]
    page.select_option("#kv_dtype", "fp8")
    expect(total(page)).to_have_text(device_gb(
        {"model": "llama-3.1-8b", "context": "32768", "kv_dtype": "fp8"}, "fr"))


def test_inference_bad_value_shows_its_message(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/inference")
    page.fill("#batch", "abc")
    error = page.locator("#batch-error")
    expect(error).to_contain_text("Concurrent sequences: 'abc' is not a number")
    expect(page.locator("#batch")).to_have_attribute("aria-invalid", "true")
    page.fill("#batch", "4")
    expect(error).to_have_text("")
    expect(page.locator("#batch")).not_to_have_attribute("aria-invalid", "true")
    expect(total(page)).to_have_text(device_gb({"model": "llama-3.1-8b", "batch": "4"}, "en"))


def test_inference_language_switch_and_shared_url(session: Session) -> None:
    from playwright.sync_api import expect

    query = {"model": "mistral-7b-v0.1", "weights": "q4_k_m", "context": "8192",
             "gpu": "rtx-4090-24gb"}
    page = session.open("/inference?model=mistral-7b-v0.1&weights=q4_k_m&context=8192"
                        "&gpu=rtx-4090-24gb")
    expect(page.locator("#weights")).to_have_value("q4_k_m")
    expect(page.locator("#gpu")).to_have_value("rtx-4090-24gb")
    expect(total(page)).to_have_text(device_gb(query, "fr"))
    page.click("[data-lang-switch]")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page).to_have_title("VRAM calculator for LLM inference")
    expect(page.locator("#context")).to_have_value("8192")
    expect(page.locator("#batch")).to_have_value("1")  # left out of the URL: the default
    expect(page.locator("#kv_dtype")).to_have_value("fp16")
    expect(total(page)).to_have_text(device_gb(query, "en"))
    expect(page.locator("[data-limits]")).to_contain_text("Longest context: 32,768 tokens")
    screenshot(page, "inference-en.png")


def test_lora_ticking_a_target_updates_live(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/lora?model=llama-2-7b&lora_r=8&lora_targets=q&lora_targets=v")
    trainable = page.locator('[data-result="trainable"]')
    expect(trainable).to_have_text("4,194,304")  # 8 × (4096 + 4096) × 2 × 32, Hu et al. 2021
    screenshot(page, "lora-en.png")
    page.check("input[name=lora_targets][value=k]")
    expected = lora_json({"model": "llama-2-7b", "lora_r": "8", "lora_targets": "q,k,v"})
    expect(trainable).to_have_text(f"{expected['trainable_params']:,}")
    assert "lora_targets=k" in page.url  # type: ignore[attr-defined]
    page.fill("#lora_r", "16")
    doubled = lora_json({"model": "llama-2-7b", "lora_r": "16", "lora_targets": "q,k,v"})
    expect(trainable).to_have_text(f"{doubled['trainable_params']:,}")
    link = page.locator("[data-training-link]")
    expect(link).to_have_attribute("href", "/en/?model=llama-2-7b&method=lora&lora_r=16"
                                   "&lora_targets=q&lora_targets=k&lora_targets=v")


def test_lora_bad_rank_and_no_target(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/lora")
    page.fill("#lora_r", "0")
    expect(page.locator("#lora_r-error")).to_contain_text("Rang r : 0 est hors limites")
    page.fill("#lora_r", "8")
    expect(page.locator("#lora_r-error")).to_have_text("")
    for target in ("q", "v"):
        page.uncheck(f"input[name=lora_targets][value={target}]")
    expect(page.locator("#lora_targets-error")).to_contain_text("valeur manquante")
    page.check("input[name=lora_targets][value=all]")
    expect(page.locator("#lora_targets-error")).to_have_text("")
    expected = lora_json({"model": "llama-3.1-8b", "lora_r": "8", "lora_targets": "all"})
    expect(page.locator('[data-result="trainable"]')).to_have_text(
        f"{expected['trainable_params']:,}".replace(",", NNBSP))


def test_lora_language_switch_and_back_button(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/lora")
    screenshot(page, "lora-fr.png")
    page.check("input[name=dora]")
    expect(page.locator(".panel-body")).to_contain_text("Vecteurs de magnitude DoRA")
    page.go_back()
    expect(page.locator("input[name=dora]")).not_to_be_checked()
    expect(page.locator(".panel-body")).not_to_contain_text("Vecteurs de magnitude DoRA")
    page.go_forward()
    expect(page.locator("input[name=dora]")).to_be_checked()
    page.click("[data-lang-switch]")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("input[name=dora]")).to_be_checked()
    expect(page.locator(".panel-body")).to_contain_text("DoRA magnitude vectors")


def test_sister_pages_work_without_javascript(browser: object, base_url: str) -> None:
    from playwright.sync_api import expect

    session = Session(browser, base_url, javascript=False)
    page = session.open("/en/lora")
    page.fill("#lora_r", "8")
    page.click("button[type=submit]")
    expect(page.locator('[data-result="trainable"]')).to_have_text(
        f"{lora_json({'model': 'llama-3.1-8b', 'lora_r': '8'})['trainable_params']:,}")
    assert "lora_targets=q&lora_targets=v" in page.url  # type: ignore[attr-defined]
    page = session.open("/")
    page.click("a[href='/inference']")  # the main page's "Calculateurs associés" link
    expect(page).to_have_title("Calculateur de VRAM pour l'inférence LLM")
    session.close()


@pytest.mark.parametrize("path", ["/inference", "/en/lora?model=llama-3.1-8b&lora_targets=all"])
def test_phone_width_has_no_horizontal_scroll(browser: object, base_url: str, path: str) -> None:
    session = Session(browser, base_url)
    session.page.set_viewport_size({"width": 360, "height": 740})
    page = session.open(path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360  # type: ignore[attr-defined]
    session.close()
