"""`vramplan serve`: the web calculator and the JSON API on http://127.0.0.1:8000 by default."""

from __future__ import annotations

import argparse

from vramplan.i18n import Lang, translate

TYPE_CHECKING = False  # as typing.TYPE_CHECKING; importing typing costs ~2 ms of CLI start-up
if TYPE_CHECKING:
    from typing import TextIO

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = "8000"


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
    from vramplan.bounds import PORT

    port = PORT.parse_int(args.port)
    import uvicorn  # lazy: the other commands never load the web stack

    from vramplan.web.app import create_app

    out.write(translate("serve.listening", lang, host=args.host, port=port) + "\n")
    out.flush()
    uvicorn.run(create_app(), host=args.host, port=port, log_level="info")
    return 0
