"""`vramplan estimate`: the seed rule M = N·B, V = M + A, with a verdict per GPU.

Like every command module, it imports only argparse and the message catalogue at module level:
`vramplan.cli.main` imports every command to build the parser, so the core modules a command needs
are imported inside `run` (see tests/test_cli_startup.py).
"""

from __future__ import annotations

import argparse

from vramplan.cli.options import add_common_flags
from vramplan.i18n import Lang, translate

TYPE_CHECKING = False  # as typing.TYPE_CHECKING; importing typing costs ~2 ms of CLI start-up
if TYPE_CHECKING:
    from typing import TextIO

    from vramplan.model.architecture import Architecture


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang) -> None:
    parser = commands.add_parser(
        "estimate",
        help=translate("help.estimate", lang),
        description=translate("help.estimate", lang),
        epilog=translate("help.examples", lang),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--params", metavar="N", help=translate("help.params", lang))
    parser.add_argument("--model", metavar="NAME", help=translate("help.model_option", lang))
    parser.add_argument("--config", metavar="PATH", help=translate("help.config_option", lang))
    parser.add_argument("--optimizer", metavar="PRESET", help=translate("help.optimizer", lang)
                        + " : adam-mixed, adam-8bit, sgd-momentum")
    parser.add_argument("--bytes-per-param", metavar="B",
                        help=translate("help.bytes_per_param", lang))
    parser.add_argument("--activations", metavar="A", help=translate("help.activations", lang))
    parser.add_argument("--batch", metavar="B", help=translate("help.estimate_batch", lang))
    parser.add_argument("--seq-len", metavar="T", help=translate("help.estimate_seq_len", lang))
    parser.add_argument("--method", metavar="METHOD", help=translate("help.estimate_method", lang))
    parser.add_argument("--gpu", metavar="NAME", help=translate("help.gpu", lang))
    add_common_flags(parser, lang)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    from vramplan.bounds import ACTIVATIONS_GB, BYTES_PER_PARAM
    from vramplan.cli.models import model_for_estimate, params_for_estimate
    from vramplan.cli.render import to_json_text
    from vramplan.presets.gpus import COMMON_GPUS, find_gpu
    from vramplan.seed import estimate_seed, resolve_optimizer, seed_inputs
    from vramplan.serialize import seed_to_json
    from vramplan.verdict import verdicts

    model = model_for_estimate(args.model, args.config)
    option = "model" if args.model is not None else "config"
    params_billion = params_for_estimate(args.params, model, option, getattr(args, option) or "")
    inputs = seed_inputs(
        params_billion=params_billion,
        optimizer=resolve_optimizer(args.optimizer) if args.optimizer is not None else None,
        bytes_per_param=(
            BYTES_PER_PARAM.parse(args.bytes_per_param) if args.bytes_per_param is not None
            else None
        ),
        activations_gb=(_activations_from_shape(args, model) if args.seq_len is not None
                        else ACTIVATIONS_GB.parse(args.activations) if args.activations
                        else _activations_from_shape(args, model)),
    )
    gpus = (find_gpu(args.gpu),) if args.gpu is not None else COMMON_GPUS
    estimate = estimate_seed(inputs)
    results = verdicts(estimate.total_bytes, gpus)
    if args.json:
        payload = seed_to_json(estimate, results)
        if model is not None:
            from vramplan.serialize import model_to_json

            payload["model"] = model_to_json(*model)
        out.write(to_json_text(payload) + "\n")
    else:
        from vramplan.cli.seed_report import report

        if model is not None:
            from vramplan.cli.models import model_line

            out.write(model_line(*model, lang) + "\n\n")
        out.write(report(estimate, results, lang) + "\n")
        if args.seq_len is not None and model is not None:
            name = getattr(model[0], "name", None) or model[1].family
            out.write("\n" + translate("report.activations_from", lang, model=name,
                                        batch=args.batch or 1, seq_len=args.seq_len,
                                        method=args.method or "full") + "\n")
    return 0


def _activations_from_shape(args: argparse.Namespace,
                            model: tuple[object, Architecture] | None) -> float:
    """A in GB from --batch and --seq-len through the detailed model (0 when not asked)."""
    from vramplan.errors import ConflictingOptions, MissingValue

    if args.seq_len is None:
        if args.batch is not None or args.method is not None:
            raise MissingValue("seq_len")
        return 0.0
    if args.activations is not None:
        raise ConflictingOptions("activations", "seq_len", args.activations)
    if model is None:
        raise MissingValue("model")
    from vramplan.bounds import BATCH, SEQ_LEN
    from vramplan.training.estimate import activations_for_simple_mode
    from vramplan.units import bytes_to_gb
    from vramplan.vocab import Method, choice

    arch = model[1]
    method = choice(Method, "method", args.method, Method.FULL)
    if method is Method.INFERENCE:
        from vramplan.errors import UnknownName

        raise UnknownName("method", method.value, ["full", "freeze", "lora", "qlora"])
    batch = int(BATCH.parse_int(args.batch)) if args.batch is not None else 1
    seq_len = int(SEQ_LEN.parse_int(args.seq_len))
    return bytes_to_gb(activations_for_simple_mode(arch, batch, seq_len, method))
