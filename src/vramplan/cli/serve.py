"""`vramplan serve`: the web calculator and the JSON API on http://127.0.0.1:8000 by default."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.bounds import PORT
from vramplan.errors import MissingExtra, missing_packages
from vramplan.i18n import Lang, translate

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = "8000"
WEB_PACKAGES = ("fastapi", "uvicorn", "jinja2", "pydantic", "orjson")
"""What `pip install '.[web]'` brings (pyproject.toml [project.optional-dependencies])."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser("serve", help=translate("help.serve", lang),
                                 description=translate("help.serve", lang))
    parser.add_argument("--host", default=DEFAULT_HOST, help=translate("help.host", lang))
    parser.add_argument("--port", default=DEFAULT_PORT, metavar="PORT",
                        help=translate("help.port", lang))
    parser.add_argument("--lang", choices=[choice.value for choice in Lang],
                        help=translate("help.lang", lang))
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    port = PORT.parse_int(args.port)
    missing = missing_packages(WEB_PACKAGES)
    if missing:
        raise MissingExtra("web", missing)
    import uvicorn  # the web stack, imported by this command only

    from vramplan.web.app import create_app

    if not _loopback(args.host):
        out.write(translate("serve.public", lang, host=args.host) + "\n")
    out.write(translate("serve.listening", lang, host=args.host, port=port) + "\n")
    out.flush()
    uvicorn.run(create_app(), host=args.host, port=port, log_level="info")
    return 0


def _loopback(host: str) -> bool:
    """Whether `host` is this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
