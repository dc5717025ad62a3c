"""`vramplan infer`: inference VRAM per GPU, verdicts, longest context and largest batch."""

from __future__ import annotations

import argparse

from vramplan.cli.options import add_common_flags
from vramplan.i18n import Lang, translate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from vramplan.inference.estimate import InferenceEstimate
    from vramplan.inference.limits import InferenceVerdict


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang) -> None:
    parser = commands.add_parser(
        "infer", help=translate("help.infer", lang), description=translate("help.infer", lang),
        epilog=translate("help.infer_examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", metavar="NAME", help=translate("help.infer_model", lang))
    parser.add_argument("--config", metavar="PATH", help=translate("help.config_option", lang))
    parser.add_argument("--weights", metavar="FORMAT",
                        help=translate("help.infer_weights", lang))
    parser.add_argument("--context", metavar="TOKENS",
                        help=translate("help.infer_context", lang))
    parser.add_argument("--prompt", metavar="TOKENS", help=translate("help.infer_prompt", lang))
    parser.add_argument("--batch", metavar="N",
                        help=translate("help.infer_batch", lang))
    parser.add_argument("--kv-dtype", metavar="DTYPE",
                        help=translate("help.infer_kv_dtype", lang))
    parser.add_argument("--dtype", metavar="DTYPE",
                        help=translate("help.infer_dtype", lang))
    parser.add_argument("--engine", metavar="ENGINE", help=translate("help.infer_engine", lang))
    parser.add_argument("--tp", "--tensor-parallel", dest="tensor_parallel", metavar="N",
                        help=translate("help.infer_tp", lang))
    parser.add_argument("--attention", metavar="KERNEL",
                        help=translate("help.infer_attention", lang))
    parser.add_argument("--images", metavar="N", help=translate("help.infer_images", lang))
    parser.add_argument("--mtp", action="store_true", default=None,
                        help=translate("help.infer_mtp", lang))
    parser.add_argument("--gpu", metavar="NAME", help=translate("help.gpu", lang))
    limits = parser.add_mutually_exclusive_group()
    limits.add_argument("--max-context", action="store_true",
                        help=translate("help.infer_max_context", lang))
    limits.add_argument("--max-batch", action="store_true",
                        help=translate("help.infer_max_batch", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


INFERENCE_FIELDS = ("weights", "context", "prompt", "batch", "kv_dtype", "dtype", "engine",
                    "tensor_parallel", "attention", "gpu", "images", "mtp")
"""Options read by `vramplan.sister_api.inference_request`, the pages' and API's reader too."""


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    from vramplan.cli.models import model_for_estimate
    from vramplan.errors import MissingValue
    from vramplan.sister_api import inference_request

    model = model_for_estimate(args.model, args.config)
    if model is None:
        raise MissingValue("model")
    preset, arch = model
    query = {field: str(value) for field in INFERENCE_FIELDS
             if (value := getattr(args, field)) is not None}
    if args.max_context or args.max_batch:
        query["limits"] = "1"
    name = preset.name if preset is not None else (args.config or args.model or "")
    estimate, verdicts = inference_request(query, arch, name)
    if args.json:
        from vramplan.cli.render import to_json_text
        from vramplan.serialize import inference_to_json

        out.write(to_json_text(inference_to_json(estimate, verdicts)) + "\n")
    else:
        columns = ("max_context",) if args.max_context else ("max_batch",) if args.max_batch else ()
        out.write(report(estimate, verdicts, lang, columns) + "\n")
    return 0


def report(estimate: InferenceEstimate, verdicts: tuple[InferenceVerdict, ...], lang: Lang,
           limit_columns: tuple[str, ...] = ()) -> str:
    """The human-readable report of one inference estimate."""
    return "\n\n".join((
        _title(estimate, lang),
        _weights_table(estimate, lang),
        _parts_table(estimate, lang),
        _verdict_table(estimate, verdicts, lang, limit_columns),
        translate("infer.notice", lang),
    ))


def _title(estimate: InferenceEstimate, lang: Lang) -> str:
    from vramplan.units import format_number

    inputs = estimate.inputs
    title = translate("infer.title", lang, model=inputs.model_name or "?",
                      weights=inputs.weights.name, engine=inputs.profile.display_name)
    setup = translate(
        "infer.setup", lang, context=format_number(inputs.context, lang, 0),
        prompt=format_number(inputs.prompt_tokens, lang, 0),
        batch=format_number(inputs.batch, lang, 0), kv=inputs.kv_dtype.value,
        dtype=inputs.compute_dtype.value, tp=inputs.tensor_parallel)
    return title + "\n" + setup


def _weights_table(estimate: InferenceEstimate, lang: Lang) -> str:
    from vramplan.cli.render import table
    from vramplan.units import format_gb, format_number

    rows = [[translate(f"infer.group.{part.group.value}", lang), part.storage,
             format_number(part.params, lang, 0), format_gb(part.bytes, lang),
             "" if part.on_gpu else translate("infer.host", lang)]
            for part in estimate.weights.parts]
    return (translate("infer.weights_breakdown", lang) + "\n"
            + table(rows, right_align=frozenset({2, 3})))


def _parts_table(estimate: InferenceEstimate, lang: Lang) -> str:
    from vramplan.cli.render import table
    from vramplan.units import format_gb, format_gib, format_number

    rows = [[translate(item.part.label_key, lang), format_gb(item.bytes, lang),
             format_gib(item.bytes, lang)] for item in estimate.items
            if item.bytes or item.part.value in ("weights", "kv_cache")]
    totals = [[translate(key, lang), format_gb(n, lang), format_gib(n, lang)] for key, n in (
        ("infer.allocated", estimate.allocated_bytes),
        ("infer.cuda_context", estimate.cuda_context_bytes),
        ("infer.device", estimate.device_bytes))]
    per_token = translate("infer.kv_per_token", lang,
                          value=format_number(estimate.kv_bytes_per_token / 1024, lang, 2))
    return (translate("infer.per_gpu", lang) + "\n"
            + table([*rows, *totals], right_align=frozenset({1, 2})) + "\n" + per_token)


def _verdict_table(estimate: InferenceEstimate, verdicts: tuple[InferenceVerdict, ...],
                   lang: Lang, limit_columns: tuple[str, ...]) -> str:
    from vramplan.cli.render import table
    from vramplan.units import format_gib, format_number

    share = estimate.engine_reserve_share
    reserve = "" if share is None else translate(
        "infer.reserve", lang, share=format_number(100 * share, lang, 0))
    header = [translate("report.col_gpu", lang), translate("report.col_capacity", lang),
              translate("infer.col_usable", lang), translate("report.col_fits", lang),
              translate("report.col_headroom", lang),
              *(translate(f"infer.col_{name}", lang) for name in limit_columns)]
    rows = []
    for line in verdicts:
        v = line.verdict
        row = [v.gpu.display_name, format_gib(v.gpu.capacity_bytes, lang, 0),
               format_gib(v.usable_bytes, lang), translate("report.yes" if v.fits else "report.no",
                                                           lang),
               format_gib(v.headroom_bytes, lang)]
        if line.limits is not None:
            row += [format_number(getattr(line.limits, name), lang, 0) for name in limit_columns]
        rows.append(row)
    return (translate("infer.verdict", lang, reserve=reserve) + "\n"
            + table(rows, header, right_align=frozenset({1, 2, 4, 5})))
