"""The JSON API, version 1: one module per area, each with its router."""

from __future__ import annotations

from fastapi import APIRouter

from vramplan.web.api import catalogue, estimate, fit, inference, lora

ROUTERS: tuple[APIRouter, ...] = (estimate.router, fit.fit_router, fit.router, inference.router,
                                  lora.router, catalogue.router)
