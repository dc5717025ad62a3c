"""End to end in real headless Chromium (Debian's `chromium`, driven by Playwright; no browser
download): live results, empty state, inline errors, language switch, shared URLs, the back
button, the page without JavaScript, and no request leaving 127.0.0.1. Screenshots of both
languages go to test-output/."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
OUTPUT = Path(__file__).parents[1] / "test-output"
NBSP = "\u00a0"
TIMEOUT_MS = 10_000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app served by uvicorn on a free loopback port, in a thread."""
    import uvicorn

    from vramplan.web.app import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    assert CHROMIUM.exists(), "Debian's chromium is missing: run `make browser`"
    from playwright.sync_api import expect, sync_playwright

    # `expect` waits 5 s by default, whatever the page's timeout: a verdict the server computes
    # (a fit replays its allocator) can take longer on a loaded 2-core machine
    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Session:
    """One browser context that records every URL it requests and blocks all but the app's."""

    def __init__(self, browser: object, base_url: str, javascript: bool = True) -> None:
        self.base_url = base_url
        self.requested: list[str] = []
        self.context = browser.new_context(  # type: ignore[attr-defined]
            java_script_enabled=javascript, viewport={"width": 1280, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: message.type == "error"
                     and self.errors.append(message.text))

    def _route(self, route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        self.requested.append(url)
        if url.startswith(self.base_url + "/"):
            route.continue_()  # type: ignore[attr-defined]
        else:
            route.abort()  # type: ignore[attr-defined]

    def open(self, path: str) -> object:
        self.page.goto(self.base_url + path)
        return self.page

    def close(self) -> None:
        self.context.close()
        assert all(url.startswith(self.base_url + "/") for url in self.requested), self.requested
        assert self.errors == []


@pytest.fixture
def session(browser: object, base_url: str) -> Iterator[Session]:
    opened = Session(browser, base_url)
    yield opened
    opened.close()


def total(page: object) -> object:
    return page.locator('[data-result="total"]')  # type: ignore[attr-defined]


def test_initial_result_then_live_activations(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    expect(total(page)).to_have_text(f"112{NBSP}Go")
    page.fill("#activations", "20")
    expect(total(page)).to_have_text(f"132{NBSP}Go")
    expect(page).to_have_url(f"{session.base_url}/?params=7&optimizer=adam-mixed&activations=20")
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "page-fr.png"), full_page=True)


def test_clearing_parameters_shows_the_seed_sentence(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.fill("#params", "")
    expect(page.locator("#results .empty")).to_have_text(
        "Saisissez une valeur pour afficher les résultats.")
    page.fill("#params", "7,5")
    expect(total(page)).to_have_text(f"120{NBSP}Go")  # 7.5 × 16


def test_bad_value_shows_its_message_next_to_the_field(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.fill("#params", "abc")
    error = page.locator("#params-error")
    expect(error).to_contain_text("« abc » n'est pas un nombre")
    expect(page.locator("#params")).to_have_attribute("aria-invalid", "true")
    page.fill("#params", "13")
    expect(error).to_have_text("")
    expect(total(page)).to_have_text(f"208{NBSP}Go")  # 13 × 16


def test_custom_bytes_per_param(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    expect(page.locator("#bytes_per_param")).to_be_hidden()
    page.select_option("#optimizer", "custom")
    page.fill("#bytes_per_param", "10")
    expect(total(page)).to_have_text(f"70{NBSP}Go")
    page.select_option("#optimizer", "sgd-momentum")
    expect(total(page)).to_have_text(f"56{NBSP}Go")  # 7 × 8
    expect(page.locator("#bytes_per_param")).to_be_hidden()


def test_language_switch_keeps_the_inputs(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.fill("#activations", "20")
    expect(total(page)).to_have_text(f"132{NBSP}Go")
    page.click("[data-lang-switch]")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page).to_have_title("VRAM calculator for LLM training")
    expect(total(page)).to_have_text(f"132{NBSP}GB")
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "page-en.png"), full_page=True)
    page.click("[data-lang-switch]")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("#activations")).to_have_value("20")


def test_shared_url_restores_its_state(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/?params=13&optimizer=adam-8bit&activations=5")
    expect(page.locator("#params")).to_have_value("13")
    expect(page.locator("#optimizer")).to_have_value("adam-8bit")
    expect(page.locator("#activations")).to_have_value("5")
    expect(total(page)).to_have_text(f"161{NBSP}GB")  # 13 × 12 + 5


def test_back_button_returns_to_the_previous_inputs(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/")
    page.fill("#params", "13")
    page.locator("#params").blur()
    expect(total(page)).to_have_text(f"208{NBSP}Go")
    page.select_option("#optimizer", "adam-8bit")
    expect(total(page)).to_have_text(f"156{NBSP}Go")
    page.go_back()
    expect(page.locator("#optimizer")).to_have_value("adam-mixed")
    expect(total(page)).to_have_text(f"208{NBSP}Go")
    page.go_back()
    expect(page.locator("#params")).to_have_value("7")
    expect(total(page)).to_have_text(f"112{NBSP}Go")


def test_works_without_javascript(browser: object, base_url: str) -> None:
    from playwright.sync_api import expect

    session = Session(browser, base_url, javascript=False)
    page = session.open("/")
    expect(total(page)).to_have_text(f"112{NBSP}Go")  # on first paint, from the server
    page.fill("#activations", "20")
    page.click("button[type=submit]")
    expect(total(page)).to_have_text(f"132{NBSP}Go")
    assert "activations=20" in page.url  # type: ignore[attr-defined]
    session.close()


def test_phone_width_has_no_horizontal_scroll(browser: object, base_url: str) -> None:
    session = Session(browser, base_url)
    session.page.set_viewport_size({"width": 360, "height": 740})
    page = session.open("/?params=7&activations=20")
    width = page.evaluate("document.documentElement.scrollWidth")  # type: ignore[attr-defined]
    assert width <= 360
    session.close()


def test_model_picker_fills_the_parameters(session: Session) -> None:
    from playwright.sync_api import expect

    page = session.open("/en/")
    page.fill("#model", "llama-2-7b")
    expect(page.locator("#params")).to_have_value("6.738415616")
    expect(page.locator('[data-result="model_states"]')).to_have_text(f"107.81{NBSP}GB")
    assert "model=llama-2-7b" in page.url  # type: ignore[attr-defined]
    page.fill("#params", "7")  # typing a count takes over from the model
    expect(page.locator("#model")).to_have_value("")
    expect(total(page)).to_have_text(f"112{NBSP}GB")
