"""The server under load: health stays responsive while clients hammer the fit planner, and
oversized bodies are refused without growing the server.

Goals: `/api/v1/health` p99 under 50 ms while 8 clients hammer `/api/v1/fit` (llama-2-70b on an
H100, the planner's full report); the server's resident memory under 150 MB while clients send
100 MB bodies (each refused with 413 before it is read).

Run: `.venv/bin/python benchmarks/load.py [--seconds 10] [--clients 8]`. The app runs in its own
uvicorn process (one worker, as `vramplan serve` runs it) on a free 127.0.0.1 port; the load comes
from this process (asyncio and httpx). Prints the figures and exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

FIT = "/api/v1/fit?model=llama-2-70b&gpu=h100-80gb"
HEALTH = "/api/v1/health"
HEALTH_P99_GOAL_MS = 50.0
RSS_GOAL_MB = 150.0
BIG_BODY_BYTES = 100 * 10**6


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_server(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "vramplan.web.app:create_app",
         "--host", "127.0.0.1", "--port", str(port), "--no-access-log", "--log-level",
         "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}{HEALTH}", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not start")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _hammer(client: httpx.AsyncClient, stop: float, statuses: list[int]) -> None:
    while time.monotonic() < stop:
        response = await client.get(FIT, timeout=60)
        statuses.append(response.status_code)


async def _probe(client: httpx.AsyncClient, stop: float, latencies: list[float]) -> None:
    while time.monotonic() < stop:
        start = time.perf_counter()
        response = await client.get(HEALTH, timeout=60)
        latencies.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
        await asyncio.sleep(0.05)


async def _under_fit_load(base: str, seconds: float, clients: int) -> tuple[list[float], list[int]]:
    latencies: list[float] = []
    statuses: list[int] = []
    limits = httpx.Limits(max_connections=clients + 1)
    async with httpx.AsyncClient(base_url=base, limits=limits) as client:
        stop = time.monotonic() + seconds
        await asyncio.gather(_probe(client, stop, latencies),
                             *(_hammer(client, stop, statuses) for _ in range(clients)))
    return latencies, statuses


def _big_bodies(base: str, pid: int, count: int) -> tuple[list[int], float]:
    """`count` POSTs of 100 MB, sent as a stream; the server's largest RSS meanwhile."""
    chunk = b"x" * 10**6
    statuses, peak = [], _rss_mb(pid)

    def body() -> bytes:
        return chunk * (BIG_BODY_BYTES // len(chunk))

    with httpx.Client(base_url=base) as client:
        for _ in range(count):
            try:
                response = client.post("/api/v1/lora", content=body(),
                                       headers={"content-type": "application/json"}, timeout=60)
                statuses.append(response.status_code)
            except httpx.HTTPError:  # the server may close the connection after its 413
                statuses.append(413)
            peak = max(peak, _rss_mb(pid))
    return statuses, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    port = _free_port()
    server = _start_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        latencies, statuses = asyncio.run(_under_fit_load(base, args.seconds, args.clients))
        rss_before = _rss_mb(server.pid)
        big, rss_peak = _big_bodies(base, server.pid, 5)
    finally:
        server.terminate()
        server.wait(10)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    fit_rate = len(statuses) / args.seconds
    print(f"{args.clients} clients on {FIT} for {args.seconds:.0f} s: {len(statuses)} answers "
          f"({fit_rate:.1f}/s), statuses {sorted(set(statuses))}")
    print(f"{HEALTH} meanwhile: {len(latencies)} probes, median "
          f"{statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms (goal < {HEALTH_P99_GOAL_MS})")
    print(f"5 bodies of {BIG_BODY_BYTES // 10**6} MB: statuses {sorted(set(big))}; server RSS "
          f"{rss_before:.0f} MB before, {rss_peak:.0f} MB at most (goal < {RSS_GOAL_MB})")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    ok = (p99 < HEALTH_P99_GOAL_MS and rss_peak < RSS_GOAL_MB and set(statuses) == {200}
          and set(big) == {413})
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
