"""The page in a real browser: time from a keystroke to the painted result, and the page's weight.

The app runs in its own uvicorn process on a free 127.0.0.1 port; Debian's chromium (headless,
driven by Playwright, as the browser tests drive it) opens the page and presses one key at a
time, waiting for the result each time. The time is measured inside the page, from the
`keydown` event to the second animation frame after the new panels are in the DOM (the frame
that shows them): it includes the script's debounce, the request, the server's computation and
the browser's layout. Two cases: a typed parameter count (the seed rule, the activations field)
and a preset model (the detailed model: 2048 becomes 20481, 2048, 20483, 2048... every other
length is new and the planner computes its report, the others it has just seen).

Run: `.venv/bin/python benchmarks/page_keystroke.py [--keys 40]`. Prints p50 and p95 per case,
and the weight (HTML + CSS + JS + icon) of the lightest and the heaviest page.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

CHROMIUM = Path("/usr/bin/chromium")
PAGE_WEIGHT_LIMIT = 100_000
ASSETS = ("/static/app.css", "/static/app.js", "/static/favicon.svg")
LIGHT = "/?params=7&activations=20"
HEAVY = "/?model=llama-3.1-70b&gpu=t4-16gb&method=lora"
"""Every table and change of the detailed model: the heaviest page a user gets."""
PROBE = """() => {
    window.__down = 0;
    window.__latency = [];
    document.addEventListener('keydown', () => { window.__down = performance.now(); }, true);
    document.addEventListener('vramplan:painted', () => {
        const down = window.__down;
        requestAnimationFrame(() => requestAnimationFrame(() => {
            window.__latency.push(performance.now() - down);
        }));
    });
}"""


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    field: str
    keys: tuple[str, ...]
    """Pressed in turn, one at a time: each makes a new value."""


def _digits(count: int) -> tuple[str, ...]:
    """Type digits then delete them, so that every value differs from the last."""
    keys: list[str] = []
    while len(keys) < count:
        keys += [*"123456", *["Backspace"] * 5]
    return tuple(keys[:count])


def _lengths(start: str, count: int, longest: int = 5) -> tuple[str, ...]:
    """Keys that keep a sequence length between 1 and `longest` digits: a digit is added while
    there is room, else the last one is deleted; the added digits cycle, so that half the values
    are new to the server (its planner computes them) and half were seen just before."""
    keys: list[str] = []
    length, digit = len(start), 0
    while len(keys) < count:
        if length < longest:
            keys.append("13579"[digit % 5])
            digit, length = digit + 1, length + 1
        else:
            keys.append("Backspace")
            length -= 1
    return tuple(keys)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_server(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "vramplan.web.app:create_app", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--no-access-log"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1)
            return server
        except httpx.HTTPError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("the server did not start")


def measure(page: object, base: str, case: Case) -> list[float]:
    page.goto(base + case.path)  # type: ignore[attr-defined]
    page.evaluate(PROBE)  # type: ignore[attr-defined]
    page.click(f"#{case.field}")  # type: ignore[attr-defined]
    page.keyboard.press("End")  # type: ignore[attr-defined]
    for index, key in enumerate(case.keys):
        page.keyboard.press(key)  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "(count) => window.__latency.length > count", arg=index)
    latency: list[float] = page.evaluate("window.__latency")  # type: ignore[attr-defined]
    return latency


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def page_weights(base: str) -> dict[str, int]:
    assets = sum(len(httpx.get(base + path).content) for path in ASSETS)
    return {path: len(httpx.get(base + path).content) + assets for path in (LIGHT, HEAVY)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=40, help="keystrokes per case")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    cases = (
        Case("typed count, seed rule (activations field)", "/?params=7", "activations",
             _digits(args.keys)),
        Case("preset model, detailed model (sequence length)", "/?model=llama-3.1-8b",
             "seq_len", _lengths("2048", args.keys)),
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            measure(page, base, Case("warm-up", "/?model=llama-3.2-1b", "activations",
                                     _digits(4)))
            results = {case.name: measure(page, base, case) for case in cases}
            browser.close()
        weights = page_weights(base)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print("keystroke to painted result, in Chromium (debounce, request, server, layout):")
    for name, latency in results.items():
        print(f"  {name:50s} p50 {statistics.median(latency):6.1f} ms   "
              f"p95 {percentile(latency, 0.95):6.1f} ms   max {max(latency):6.1f} ms   "
              f"({len(latency)} keys)")
    worst = max(weights.values())
    for path, size in weights.items():
        print(f"  page weight {path:48s} {size:8d} bytes (HTML + CSS + JS + icon)")
    within = "under" if worst < PAGE_WEIGHT_LIMIT else "OVER"
    print(f"heaviest page: {worst} bytes ({within} {PAGE_WEIGHT_LIMIT})")
    return 0 if worst < PAGE_WEIGHT_LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
