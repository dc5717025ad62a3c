"""What the app serves, asked through Starlette's public `BaseRoute.matches` (FastAPI may wrap
included routers, so their routes are not listed on `app.routes`)."""

from __future__ import annotations

from starlette.routing import Match
from starlette.types import ASGIApp, Scope

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def serves(app: ASGIApp, method: str, path: str) -> bool:
    """Whether some route of `app` fully matches `method` on `path`."""
    scope: Scope = {"type": "http", "method": method, "path": path, "root_path": "",
                    "path_params": {}}
    return any(route.matches(dict(scope))[0] is Match.FULL
               for route in getattr(app, "routes", ()))


def allowed_methods(app: ASGIApp, path: str) -> list[str]:
    """The methods some route serves on `path` (for a 405's `Allow` header)."""
    return [method for method in METHODS if serves(app, method, path)]
