"""`vramplan infer`: inference VRAM per GPU, verdicts, longest context and largest batch."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags, add_fields, read_options
from vramplan.cli.render import table, to_json_text
from vramplan.i18n import Lang, translate
from vramplan.inference.estimate import InferenceEstimate, estimate_inference
from vramplan.inference.limits import InferenceVerdict, inference_verdicts
from vramplan.requests.inference import inference_request
from vramplan.requests.vocabulary import INFERENCE
from vramplan.serialize import inference_to_json
from vramplan.units import format_gb, format_gib, format_number

LIMIT_COLUMNS = ("max_context", "max_batch")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser(
        "infer", help=translate("help.infer", lang), description=translate("help.infer", lang),
        epilog=translate("help.infer_examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_fields(parser, INFERENCE.fields, lang, detailed)
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    request = inference_request(read_options(args, INFERENCE))
    estimate = estimate_inference(request.inputs)
    verdicts = inference_verdicts(estimate, request.gpus, request.limits)
    if args.json:
        payload = inference_to_json(estimate, verdicts, beyond_context=request.beyond_context)
        out.write(to_json_text(payload) + "\n")
    else:
        columns = LIMIT_COLUMNS if request.limits else ()
        if request.beyond_context:
            out.write(translate("infer.beyond_context", lang, context=request.inputs.context,
                                trained=request.model.arch.max_position_embeddings) + "\n\n")
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
    rows = [[translate(f"infer.group.{part.group.value}", lang), part.storage,
             format_number(part.params, lang, 0), format_gb(part.bytes, lang),
             "" if part.on_gpu else translate("infer.host", lang)]
            for part in estimate.weights.parts]
    return (translate("infer.weights_breakdown", lang) + "\n"
            + table(rows, right_align=frozenset({2, 3})))


def _parts_table(estimate: InferenceEstimate, lang: Lang) -> str:
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
            + table(rows, header, right_align=frozenset({1, 2, 4, 5, 6})))
