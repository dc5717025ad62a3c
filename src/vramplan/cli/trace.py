"""`vramplan trace`: one real training step on fake tensors, counted byte by byte.

Only argparse and the message catalogue at module level: torch, transformers and peft are imported
when a trace runs, and the command says what to install when they are missing.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from vramplan.cli.options import add_common_flags, add_fields, read_options
from vramplan.cli.render import table, to_json_text
from vramplan.errors import MissingExtra, missing_packages
from vramplan.i18n import Lang, translate
from vramplan.i18n.catalogue.trace import trace_label_key
from vramplan.requests.trace import trace_setup
from vramplan.requests.vocabulary import TRACE
from vramplan.serialize import trace_to_json
from vramplan.tracer.result import Breakdown, TraceResult
from vramplan.tracer.setup import TraceSetup
from vramplan.units import format_gb, format_gib, format_number
from vramplan.vocab import Method

EXTRA_PACKAGES = ("torch", "transformers", "peft", "numpy")
"""What `pip install '.[trace]'` brings (pyproject.toml [project.optional-dependencies])."""
EXIT_USAGE = 2
EXIT_TRACE_FAILED = 1
"""The traced model's own code (transformers, peft, torch) raised: said in one line, with no
traceback, apart from bad input (`EXIT_USAGE`)."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    parser = commands.add_parser("trace", help=translate("help.trace", lang),
                                 description=translate("help.trace", lang))
    add_fields(parser, TRACE.fields, lang, detailed)
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    setup = trace_setup(read_options(args, TRACE))
    missing = missing_packages(EXTRA_PACKAGES)
    if missing:
        raise MissingExtra("trace", missing)
    result = _run_with_progress(setup, lang)
    if isinstance(result, int):
        return result
    if args.json:
        out.write(to_json_text(trace_to_json(result)) + "\n")
    else:
        out.write(report(result, lang) + "\n")
    return 0


def _run_with_progress(setup: TraceSetup, lang: Lang) -> TraceResult | int:
    """The trace, or the exit code after saying why there is none."""
    import time

    from vramplan.errors import VramplanError
    from vramplan.tracer.run import run_trace
    from vramplan.vocab import Device

    if setup.device is Device.CUDA:
        import torch

        if not torch.cuda.is_available():
            sys.stderr.write(translate("cli.error_prefix", lang) + translate("trace.no_cuda", lang)
                             + "\n")
            return EXIT_USAGE
    start = time.perf_counter()

    def progress(stage: str) -> None:
        sys.stderr.write(translate(f"trace.progress.{stage}", lang, model=setup.model_name) + "\n")
        sys.stderr.flush()

    try:
        result = run_trace(setup, progress=progress)
    except VramplanError:
        raise
    except Exception as error:  # the traced libraries' own failure, said in one line
        sys.stderr.write(translate("cli.error_prefix", lang) + translate(
            "trace.failed", lang, model=setup.model_name,
            error=f"{type(error).__name__}: {error}") + "\n")
        return EXIT_TRACE_FAILED
    seconds = f"{time.perf_counter() - start:.1f}"
    sys.stderr.write(translate("trace.progress.done", lang, seconds=seconds) + "\n")
    return result


def report(result: TraceResult, lang: Lang) -> str:
    """The human-readable trace: setup, peak, breakdown at the peak, peak of each phase."""
    kind = translate("trace.kind.real" if result.real else "trace.kind.fake", lang)
    lines = [translate("trace.title", lang, model=result.setup.model_name, kind=kind),
             _setup_line(result),
             translate("trace.params", lang, total=format_number(result.params_total, lang, 0),
                       trainable=format_number(result.params_trainable, lang, 0)),
             "",
             translate("trace.peak", lang, gb=format_gb(result.peak_bytes, lang),
                       gib=format_gib(result.peak_bytes, lang),
                       phase=translate(f"trace.phase.{result.peak_phase.value}", lang)),
             _breakdown_table(result.breakdown, lang),
             "",
             translate("trace.per_phase", lang),
             _phase_table(result, lang)]
    if result.allocator is not None:
        peaks = result.allocator
        lines += ["", translate(
            "trace.allocator", lang, reserved=format_gb(peaks.reserved_peak_bytes, lang),
            reserved_gib=format_gib(peaks.reserved_peak_bytes, lang),
            allocated=format_gb(peaks.allocated_peak_bytes, lang),
            cached=format_gb(peaks.cached_at_peak_bytes, lang),
            share=format_number(100 * peaks.fragmentation, lang, 1))]
    if result.paged_bytes:
        lines.append(translate("trace.paged", lang, gb=format_gb(result.paged_bytes, lang)))
    lines += [translate("trace.emulated", lang, what=_label(what, lang))
              for what in result.emulated]
    lines += [translate("trace.not_traced", lang, what=_label(what, lang))
              for what in result.not_traced]
    if result.cuda is not None:
        lines.append(translate("trace.cuda", lang, name=result.cuda.device_name,
                               allocated=format_gb(result.cuda.max_allocated_bytes, lang),
                               reserved=format_gb(result.cuda.max_reserved_bytes, lang)))
    lines += ["", translate("trace.notice", lang)]
    return "\n".join(lines)


def _setup_line(result: TraceResult) -> str:
    """The setup in the case format's own words (the same in every language)."""
    setup = result.setup
    alignment = setup.alignment
    parts = [f"method={setup.method.value}"] if alignment is None else [
        f"method={alignment.method.value} policy={setup.method.value}"]
    if alignment is not None and alignment.method is Method.DPO:
        parts.append(f"precompute_ref={str(alignment.precompute_ref).lower()}")
    if alignment is not None and alignment.method is Method.GRPO:
        parts.append(f"beta={alignment.beta:g} completion_len={alignment.completion_tokens}")
    if setup.uses_lora:
        parts.append(f"lora_r={setup.lora_r} lora_targets={','.join(setup.lora_targets)}")
        if setup.adapters_fp32:
            parts.append("adapters_fp32=true")
    if setup.quant.value != "none":
        parts.append(f"quant={setup.quant.value}")
    if setup.method.value == "freeze":
        parts.append(f"train_layers={setup.train_layers}")
    parts += [f"precision={setup.precision.value}", f"optimizer={setup.optimizer.value}",
              f"optimizer_impl={setup.optimizer_impl.value}", f"batch={setup.batch}",
              f"seq_len={setup.seq_len}", f"checkpointing={setup.checkpointing.value}",
              f"attention={setup.attention.value}"]
    if setup.tiled_mlp:
        parts.append("tiled_mlp=true")
    return "  " + " ".join(parts)


def _breakdown_table(parts: Breakdown, lang: Lang) -> str:
    rows = [[translate(part.label_key, lang), format_gb(n_bytes, lang),
             format_gib(n_bytes, lang)] for part, n_bytes in parts.bytes_by_part]
    rows.append([translate("trace.total", lang), format_gb(parts.total_bytes, lang),
                 format_gib(parts.total_bytes, lang)])
    return table(rows, right_align=frozenset({1, 2}))


def _phase_table(result: TraceResult, lang: Lang) -> str:
    rows = [[translate(f"trace.phase.{peak.phase.value}", lang), format_gb(peak.peak_bytes, lang),
             format_gib(peak.peak_bytes, lang)] for peak in result.phases]
    return table(rows, right_align=frozenset({1, 2}))


def _label(label: str, lang: Lang) -> str:
    """A tracer label (English in the result and its JSON) in `lang`."""
    key = trace_label_key(label)
    return translate(key, lang) if key is not None else label
