"""The Activations estimate and the detailed model in real headless Chromium (Debian's
`chromium`, driven by Playwright as in test_browser.py): pick a model and a GPU, see the verdict
(at the top of Résultats) and the ranked changes update live; a bad value shows its message; the
estimate fills A. Screenshots of both languages go to test-output/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from test_browser import NBSP, OUTPUT, Session, base_url, browser

pytestmark = pytest.mark.browser
__all__ = ["base_url", "browser"]  # fixtures shared with test_browser.py


@pytest.fixture
def session(browser: object, base_url: str) -> Iterator[Session]:
    opened = Session(browser, base_url)
    yield opened
    opened.close()


def _verdict(page: object) -> object:
    return page.locator('[data-result="verdict"]')  # type: ignore[attr-defined]


def test_model_and_gpu_give_a_live_verdict_and_changes(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    expect(page.locator("#fit .empty")).to_contain_text("demande un modèle pré-défini")
    page.fill("#model", "llama-3.1-8b")
    page.locator("#model").dispatch_event("change")
    expect(_verdict(page)).to_contain_text("Ça ne tient pas sur 1 × NVIDIA H100 80GB")
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "detailed")
    expect(page.locator("#fit-changes tbody tr").first).to_be_visible()
    expect(page.locator("#fit-combined")).to_be_visible()
    # fields left at their defaults stay out of the shared URL, and so does the count the
    # model replaces
    expect(page).to_have_url(f"{session.base_url}/?optimizer=adam-mixed&model=llama-3.1-8b"
                             "&activations=0")
    page.select_option("#gpu", "b200-180gb")
    page.select_option("#method", "qlora")
    expect(_verdict(page)).to_contain_text("Ça tient sur 1 × NVIDIA B200")
    expect(_verdict(page)).to_contain_text(f"144{NBSP}Gio utilisables")  # 80% of 180 GiB
    expect(page.locator("#fit-combined")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"&method=qlora&gpu=b200-180gb$"))
    page.fill("#margin", "10")  # 18 GiB usable: within capacity, beyond the margin
    expect(_verdict(page)).to_contain_text("au-delà de la marge")
    expect(_verdict(page)).to_contain_text("(10 % de 180")
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "fit-fr.png"), full_page=True)


def test_bad_values_show_their_messages(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/?model=llama-3.2-1b")
    expect(_verdict(page)).to_be_visible()
    page.fill("#gpus", "two")
    expect(page.locator("#gpus-error")).to_contain_text("'two' is not a number")
    expect(page.locator("#gpus")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#fit .empty")).to_be_visible()
    expect(page.locator("#verdict .empty")).to_have_text(
        "Correct the value flagged in the inputs to see the verdict.")
    page.fill("#gpus", "4")
    expect(page.locator("#gpus-error")).to_have_text("")
    expect(page.locator('[data-result="fit_title"]')).to_contain_text("on 4 ×")
    page.fill("#margin", "150")
    expect(page.locator("#margin-error")).to_contain_text("150 is out of range")
    page.fill("#margin", "80")
    page.fill("#seq_len", "0")
    expect(page.locator("#seq_len-error")).to_contain_text("out of range")


def test_activations_estimate_fills_a(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/?model=llama-3.2-1b&batch=2&seq_len=1024")
    estimate = page.locator('[data-result="act_estimate"]')
    expect(estimate).to_contain_text("Estimated A:")
    button = page.locator("a[data-fill=activations]")
    value = button.get_attribute("data-value")
    assert value is not None and float(value) > 0
    page.fill("#seq_len", "2048")  # the estimate follows the sequence length
    expect(button).not_to_have_attribute("data-value", value)
    doubled = button.get_attribute("data-value")
    button.click()
    expect(page.locator("#activations")).to_have_value(str(doubled))
    expect(page.locator('[data-result="activations"]')).to_have_text(f"{doubled}{NBSP}GB")
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "fit-en.png"), full_page=True)


def test_without_javascript_the_form_and_the_fill_link_work(browser: object,
                                                            base_url: str) -> None:
    from playwright.sync_api import expect

    session = Session(browser, base_url, javascript=False)
    try:
        page = session.open("/en/?model=llama-3.2-1b")
        expect(_verdict(page)).to_be_visible()
        page.select_option("#gpu", "rtx-4090-24gb")
        page.click(".fit-submit button")
        expect(page.locator('[data-result="fit_title"]')).to_contain_text("RTX 4090")
        page.click("a[data-fill=activations]")
        expect(page.locator("#activations")).not_to_have_value("0")
    finally:
        session.close()


def test_a_preference_method_shows_its_fields_and_phases(session: Session) -> None:
    """GRPO: the policy and generation fields appear, the LoRA settings with a LoRA policy, the
    vLLM share with a colocated engine; the answer lists every phase."""
    from playwright.sync_api import expect

    page = session.open("/en/?model=qwen2.5-1.5b&gpu=rtx-4090-24gb")
    expect(page.locator("#policy")).to_be_hidden()
    page.select_option("#method", "grpo")
    expect(page.locator("#policy")).to_be_visible()
    expect(page.locator("#generation")).to_be_visible()
    expect(page.locator("#lora_r")).to_be_hidden()
    expect(page.locator("#vllm_share")).to_be_hidden()
    page.select_option("#policy", "lora")
    expect(page.locator("#lora_r")).to_be_visible()
    page.select_option("#generation", "vllm-colocate")
    expect(page.locator("#vllm_share")).to_be_visible()
    expect(page.locator('[data-result="fit_alignment"]')).to_contain_text(
        "GRPO (TRL), policy LoRA")
    expect(page.locator('[data-result="fit_phases"]')).to_contain_text("generation")
    expect(page.locator('[data-result="fit_max_completion_len"]')).to_contain_text(
        "Longest completion that fits")
    assert "generation=vllm-colocate" in page.url
    page.select_option("#method", "dpo")
    expect(page.locator("#generation")).to_be_hidden()
    expect(page.locator('[data-result="fit_phases"]')).to_contain_text("reference model's pass")
