"""`vramplan lora`: trainable LoRA parameters, share of the model, adapter file, training memory."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags, add_fields, read_options
from vramplan.cli.render import table, to_json_text
from vramplan.i18n import Lang, translate
from vramplan.lora_calculator import AdapterDtype, LoraResult, estimate_lora
from vramplan.requests.lora import lora_request
from vramplan.requests.vocabulary import LORA
from vramplan.serialize import lora_to_json
from vramplan.units import format_number


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser(
        "lora", help=translate("help.lora", lang), description=translate("help.lora", lang),
        epilog=translate("help.lora_examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_fields(parser, LORA.fields, lang, detailed)
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    result = estimate_lora(lora_request(read_options(args, LORA)))
    if args.json:
        out.write(to_json_text(lora_to_json(result)) + "\n")
    else:
        out.write(report(result, lang) + "\n")
    return 0


def report(result: LoraResult, lang: Lang) -> str:
    """The human-readable LoRA report."""
    inputs = result.inputs
    title = translate("lora.title", lang, model=inputs.model_name or "?", rank=inputs.rank)
    rows = [[m.target.value, f"{m.in_features} → {m.out_features}",
             format_number(m.copies, lang, 0), format_number(m.params, lang, 0)]
            for m in result.matrices]
    header = [translate(f"lora.col_{name}", lang)
              for name in ("target", "shape", "copies", "params")]
    matrices = table(rows, header, right_align=frozenset({2, 3}))
    totals = [
        [translate("lora.lora_params", lang), format_number(result.lora_params, lang, 0)],
        [translate("lora.dora_params", lang), format_number(result.dora_params, lang, 0)],
        [translate("lora.trainable", lang), format_number(result.trainable_params, lang, 0)],
        [translate("lora.share", lang),
         format_number(100 * result.share_of_model, lang, 4) + "\u00a0%"],
    ]
    files = [[translate("lora.file", lang, dtype=dtype.value),
              _megabytes(result.adapter_file(dtype).total_bytes, lang)] for dtype in AdapterDtype]
    training = translate("lora.training", lang, value=_megabytes(result.training_bytes, lang))
    setup = result.training_setup()
    link = translate("lora.link", lang, model=setup["model"] or "?", rank=setup["lora_r"],
                     targets=str(setup["lora_targets"]).replace(";", ","))
    notes = [translate("lora.rslora_note", lang)] if inputs.rslora else []
    if inputs.dora:
        notes.append(translate("lora.dora_note", lang))
    return "\n\n".join((title, matrices,
                        table(totals, right_align=frozenset({1}), indent=""),
                        table(files, right_align=frozenset({1}), indent=""),
                        "\n".join((training, link, *notes))))


def _megabytes(n_bytes: int, lang: Lang) -> str:
    """Decimal megabytes (10**6 bytes), the size adapters are usually quoted in."""
    return translate("lora.megabytes", lang, value=format_number(n_bytes / 10**6, lang, 2))
