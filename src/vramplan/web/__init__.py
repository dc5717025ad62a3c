"""The web layer: the calculator page and the JSON API, an ASGI app over the pure core.

Import `vramplan.web.app.create_app` only where FastAPI is wanted (the `serve` command imports it
lazily); nothing here computes memory: every number comes from `vramplan.seed` and `vramplan.seed`.
"""
