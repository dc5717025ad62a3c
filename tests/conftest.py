"""Shared fixtures: one in-process client of the web app (no server, no network), and a test run
that never reaches the Hugging Face Hub (a name that looks like a repo id is answered from an
empty cache, offline)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _offline_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """tests/test_hub.py serves its own Hub on the loopback and sets these per test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_HUB_CACHE", str(tmp_path_factory.mktemp("hub-cache")))
        patch.delenv("HF_TOKEN", raising=False)
        yield


@pytest.fixture(scope="session")
def client() -> Iterator[object]:
    from fastapi.testclient import TestClient

    from vramplan.web.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client
