"""`vramplan gpus`: the GPU catalogue."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags
from vramplan.cli.render import table, to_json_text
from vramplan.i18n import Lang, translate
from vramplan.presets.cuda import published_cuda_total_bytes
from vramplan.presets.gpus import GPUS, Gpu
from vramplan.serialize import gpus_to_json
from vramplan.units import format_gib


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser("gpus", help=translate("help.gpus", lang),
                                 description=translate("help.gpus", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    if args.json:
        out.write(to_json_text(gpus_to_json(GPUS)) + "\n")
        return 0
    header = [translate(f"gpus.col_{name}", lang)
              for name in ("name", "model", "memory", "cuda_total", "source")]
    rows = [[gpu.name, gpu.display_name, format_gib(gpu.capacity_bytes, lang, 0),
             _cuda_total(gpu, lang), gpu.source] for gpu in GPUS]
    out.write(table(rows, header, right_align=frozenset({2, 3}), indent="") + "\n")
    return 0


def _cuda_total(gpu: Gpu, lang: Lang) -> str:
    """What CUDA hands out on the card where a figure is published, else a dash."""
    total = published_cuda_total_bytes(gpu)
    return format_gib(total, lang) if total is not None else "-"
