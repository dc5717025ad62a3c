"""Shared fixtures: one in-process client of the web app (no server, no network)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def client() -> Iterator[object]:
    from fastapi.testclient import TestClient

    from vramplan.web.app import create_app

    with TestClient(create_app()) as test_client:
        yield test_client
