"""`vramplan models` (the registry) and `vramplan model NAME` (one architecture, exact counts).

Also `model_for_estimate`, which `vramplan estimate --model/--config` calls to fill N. Like every
command module, only argparse and the message catalogue are imported at module level.
"""

from __future__ import annotations

import argparse

from vramplan.cli.options import add_common_flags
from vramplan.i18n import Lang, translate

TYPE_CHECKING = False  # as typing.TYPE_CHECKING; importing typing costs ~2 ms of CLI start-up
if TYPE_CHECKING:
    from typing import TextIO

    from vramplan.model.architecture import Architecture
    from vramplan.model.hf_config import SafetensorsCheck
    from vramplan.model.resolve import ResolvedModel
    from vramplan.presets.models import ModelPreset


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang) -> None:
    listing = commands.add_parser("models", help=translate("help.models", lang),
                                  description=translate("help.models", lang))
    add_common_flags(listing, lang)
    listing.set_defaults(handler=run_models)

    detail = commands.add_parser("model", help=translate("help.model", lang),
                                 description=translate("help.model", lang))
    detail.add_argument("name", nargs="?", metavar="NAME", help=translate("help.model_name", lang))
    detail.add_argument("--config", metavar="PATH", help=translate("help.model_config", lang))
    add_common_flags(detail, lang)
    detail.set_defaults(handler=run_model)


# --- vramplan models --------------------------------------------------------------------------


def run_models(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    from vramplan.cli.render import to_json_text
    from vramplan.presets.models import MODELS, architecture_of
    from vramplan.serialize import preset_to_json

    rows = [(preset, architecture_of(preset)) for preset in MODELS]
    if args.json:
        payload = {"models": [preset_to_json(preset, arch) for preset, arch in rows]}
        out.write(to_json_text(payload) + "\n")
        return 0
    from vramplan.cli.render import table

    header = [translate(f"models.col_{name}", lang)
              for name in ("name", "family", "params", "source")]
    lines = [[preset.name, preset.family, _billions(arch.params_total, lang), preset.source]
             for preset, arch in rows]
    out.write(table(lines, header, right_align=frozenset({2}), indent="") + "\n")
    return 0


def _billions(params: int, lang: Lang) -> str:
    from vramplan.units import format_number

    return translate("report.billion", lang, n=format_number(params / 10**9, lang, 2))


# --- vramplan model NAME ----------------------------------------------------------------------


def run_model(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    from vramplan.cli.render import to_json_text
    from vramplan.serialize import model_to_json

    resolved = _resolved(args.name, args.config)
    preset, arch = resolved.preset, resolved.arch
    check = _safetensors_check(args.config, arch) if args.config is not None else None
    if args.json:
        payload = model_to_json(preset, arch)
        payload["config"] = dict(resolved.config)
        payload["source"] = resolved.source
        payload["safetensors_check"] = _check_to_json(check)
        out.write(to_json_text(payload) + "\n")
        return 0
    out.write(model_report(preset, arch, lang, check) + "\n")
    return 0


def _resolved(name: str | None, config: str | None) -> ResolvedModel:
    """A preset, a Hugging Face repo id or a local config.json (`vramplan.model.resolve`)."""
    from vramplan.errors import ConflictingOptions, MissingValue

    if name is not None and config is not None:
        raise ConflictingOptions("model", "config")
    if config is not None:
        from vramplan.model.resolve import resolve_config_path

        return resolve_config_path(config)
    if name is None:
        raise MissingValue("model")
    from vramplan.model.resolve import resolve_model

    return resolve_model(name)


def _resolve(name: str | None, config: str | None) -> tuple[ModelPreset | None, Architecture]:
    resolved = _resolved(name, config)
    return resolved.preset, resolved.arch


def _safetensors_check(path: str, arch: Architecture) -> SafetensorsCheck | None:
    from vramplan.model.hf_config import DTYPE_BYTES, check_safetensors_index

    if arch.dtype is None or arch.dtype not in DTYPE_BYTES:
        return None
    return check_safetensors_index(path, arch, DTYPE_BYTES[arch.dtype])


def _check_to_json(check: SafetensorsCheck | None) -> dict[str, object] | None:
    if check is None:
        return None
    return {
        "total_size_bytes": check.total_size_bytes,
        "dtype_bytes": check.dtype_bytes,
        "params_from_index": check.params_from_index,
        "params_from_config": check.params_from_config,
        "difference": check.difference,
        "matches": check.matches,
    }


def model_report(preset: ModelPreset | None, arch: Architecture, lang: Lang,
                 check: SafetensorsCheck | None = None) -> str:
    """The human-readable spec and counts of one model."""
    from vramplan.cli.render import table

    name = preset.display_name if preset is not None else arch.family
    parts = [_labelled("report.model", name, lang), translate("model.spec", lang),
             table(_spec_rows(arch, lang)), translate("model.counts", lang),
             table(_count_rows(arch, lang), right_align=frozenset({1}))]
    if preset is not None:
        parts.append(_labelled("model.source", preset.source, lang))
        if preset.read_from:
            parts.append(_labelled("model.read_from", preset.read_from, lang))
    if check is not None:
        parts.append(_check_text(check, lang))
    return "\n\n".join(parts)


def _labelled(key: str, value: str, lang: Lang) -> str:
    """"Label: value", with the space French typography puts before the colon."""
    colon = " : " if lang is Lang.FR else ": "
    return translate(key, lang) + colon + value


def _yes_no(value: bool, lang: Lang) -> str:
    return translate("spec.yes" if value else "spec.no", lang)


def _spec_rows(arch: Architecture, lang: Lang) -> list[list[str]]:
    from vramplan.units import format_number

    def n(value: int) -> str:
        return format_number(value, lang, 0)

    window = (translate("spec.window_layers", lang, window=n(arch.sliding_window),
                        layers=n(arch.sliding_window_layers))
              if arch.sliding_window else translate("spec.none", lang))
    rows = [
        ("spec.family", arch.family),
        ("spec.n_layers", n(arch.n_layers)),
        ("spec.hidden_size", n(arch.hidden_size)),
        ("spec.intermediate_size", n(arch.expert_intermediate_size)),
        ("spec.heads", f"{arch.n_heads} / {arch.n_kv_heads}"),
        ("spec.head_dim", n(arch.head_dim)),
        ("spec.vocab_size", n(arch.vocab_size)),
        ("spec.tied_embeddings", _yes_no(arch.tied_embeddings, lang)),
        ("spec.mlp", f"{arch.mlp.value} ({arch.activation})"),
        ("spec.norm", f"{arch.norm.value} x {arch.norms_per_block}"),
        ("spec.position", arch.position.value),
        ("spec.max_position_embeddings", n(arch.max_position_embeddings)),
        ("spec.sliding_window", window),
    ]
    if arch.is_moe:
        rows.append(("spec.experts", f"{arch.n_experts} ({arch.experts_per_token})"))
    if arch.dtype:
        rows.append(("spec.dtype", arch.dtype))
    return [[translate(key, lang), value] for key, value in rows]


def _count_rows(arch: Architecture, lang: Lang) -> list[list[str]]:
    from vramplan.units import format_number

    rows = [[translate(f"count.{group.value}", lang), format_number(count, lang, 0)]
            for group, count in arch.params_by_component().items() if count]
    rows += [
        [translate(key, lang), format_number(count, lang, 0)]
        for key, count in (("count.total", arch.params_total),
                           ("count.non_embedding", arch.params_non_embedding),
                           ("count.per_block", arch.params_per_block))
    ]
    if arch.is_moe:
        rows.append([translate("count.active", lang), format_number(arch.params_active, lang, 0)])
    return rows


def _check_text(check: SafetensorsCheck, lang: Lang) -> str:
    from vramplan.units import format_number

    total = format_number(check.total_size_bytes, lang, 0)
    line = translate("model.safetensors", lang, total=total,
                     dtype_bytes=check.dtype_bytes,
                     implied=format_number(check.params_from_index, lang, 1),
                     count=format_number(check.params_from_config, lang, 0))
    verdict = (translate("model.safetensors_match", lang) if check.matches else
               translate("model.safetensors_differ", lang,
                         difference=format_number(check.difference, lang, 1)))
    return f"{line} ; {verdict}" if lang is Lang.FR else f"{line}; {verdict}"


# --- vramplan estimate --model / --config -----------------------------------------------------


def model_for_estimate(model: str | None, config: str | None
                       ) -> tuple[ModelPreset | None, Architecture] | None:
    """The model named by `estimate --model` or `--config` (None when neither is given)."""
    if model is None and config is None:
        return None
    return _resolve(model, config)


def params_for_estimate(params: str | None, model: tuple[ModelPreset | None, Architecture] | None,
                        model_option: str, model_text: str) -> float:
    """N in billions: `--params` when given (checked against the model, if any), else the model's
    exact count; `model_option` names the option the model came from (`model` or `config`) and
    `model_text` is what the user typed there."""
    from vramplan.bounds import PARAMS_BILLION
    from vramplan.errors import MissingValue

    if params is None:
        if model is None:
            raise MissingValue("params")
        return model[1].params_total / 10**9
    params_billion = PARAMS_BILLION.parse(params)
    if model is not None:
        from vramplan.model.architecture import check_params_agree  # only when a model is given

        check_params_agree(model[1], params_billion, params, model=model_text,
                           other=model_option)
    return params_billion


def model_line(preset: ModelPreset | None, arch: Architecture, lang: Lang) -> str:
    """One line naming the model an estimate used, with its exact count."""
    from vramplan.units import format_number

    name = preset.display_name if preset is not None else arch.family
    count = format_number(arch.params_total, lang, 0)
    return _labelled("report.model", f"{name} ({count})", lang)
