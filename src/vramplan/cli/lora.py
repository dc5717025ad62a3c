"""`vramplan lora`: trainable LoRA parameters, share of the model, adapter file, training memory."""

from __future__ import annotations

import argparse

from vramplan.cli.options import add_common_flags
from vramplan.i18n import Lang, translate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from vramplan.lora_calculator import LoraResult


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang) -> None:
    parser = commands.add_parser(
        "lora", help=translate("help.lora", lang), description=translate("help.lora", lang),
        epilog=translate("help.lora_examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", metavar="NAME", help=translate("help.infer_model", lang))
    parser.add_argument("--config", metavar="PATH", help=translate("help.config_option", lang))
    parser.add_argument("--rank", "--lora-r", "-r", dest="rank", default="16", metavar="R",
                        help=translate("help.lora_rank", lang))
    parser.add_argument("--targets", "--lora-targets", dest="targets", default="q,v",
                        metavar="LIST",
                        help=translate("help.lora_targets", lang))
    parser.add_argument("--dora", action="store_true", help=translate("help.lora_dora", lang))
    parser.add_argument("--rslora", action="store_true", help=translate("help.lora_rslora", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    from vramplan.bounds import LORA_RANK
    from vramplan.cli.models import model_for_estimate
    from vramplan.errors import MissingValue
    from vramplan.lora_calculator import estimate_lora, lora_inputs
    from vramplan.model.lora_targets import parse_lora_targets

    model = model_for_estimate(args.model, args.config)
    if model is None:
        raise MissingValue("model")
    preset, arch = model
    result = estimate_lora(lora_inputs(
        arch, LORA_RANK.parse_int(args.rank), parse_lora_targets(args.targets),
        dora=args.dora, rslora=args.rslora,
        model_name=preset.name if preset is not None else ""))
    if args.json:
        from vramplan.cli.render import to_json_text
        from vramplan.serialize import lora_to_json

        out.write(to_json_text(lora_to_json(result)) + "\n")
    else:
        out.write(report(result, lang) + "\n")
    return 0


def report(result: LoraResult, lang: Lang) -> str:
    """The human-readable LoRA report."""
    from vramplan.cli.render import table
    from vramplan.lora_calculator import AdapterDtype
    from vramplan.units import format_number

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
    from vramplan.units import format_number

    return translate("lora.megabytes", lang, value=format_number(n_bytes / 10**6, lang, 2))
