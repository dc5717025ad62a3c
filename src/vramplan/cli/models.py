"""`vramplan models` (the registry) and `vramplan model NAME` (one architecture, exact counts)."""

from __future__ import annotations

import argparse
from typing import TextIO

from vramplan.cli.options import add_common_flags, add_fields, read_options
from vramplan.cli.render import table, to_json_text
from vramplan.errors import ConflictingOptions
from vramplan.i18n import Lang, translate
from vramplan.model.architecture import Architecture, LocalAttention
from vramplan.model.hf_config import DTYPE_BYTES, SafetensorsCheck, check_safetensors_index
from vramplan.presets.models import MODELS, ModelPreset, architecture_of
from vramplan.requests.models import model_choice
from vramplan.requests.vocabulary import CONFIG, MODEL, Form
from vramplan.serialize import model_to_json, models_to_json, safetensors_check_to_json
from vramplan.units import format_number

MODEL_FORM = Form("model", (MODEL, CONFIG))


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser], lang: Lang,
             detailed: bool = True) -> None:
    listing = commands.add_parser("models", help=translate("help.models", lang),
                                  description=translate("help.models", lang))
    add_common_flags(listing, lang)
    listing.set_defaults(handler=run_models)

    detail = commands.add_parser("model", help=translate("help.model", lang),
                                 description=translate("help.model", lang))
    detail.add_argument("name", nargs="?", metavar="NAME", help=translate("help.model_name", lang))
    add_fields(detail, MODEL_FORM.fields, lang, detailed)
    add_common_flags(detail, lang)
    detail.set_defaults(handler=run_model)


# --- vramplan models --------------------------------------------------------------------------


def run_models(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    rows = [(preset, architecture_of(preset)) for preset in MODELS]
    if args.json:
        out.write(to_json_text(models_to_json(rows)) + "\n")
        return 0
    header = [translate(f"models.col_{name}", lang)
              for name in ("name", "family", "params", "source")]
    lines = [[preset.name, preset.family, _billions(arch.params_total, lang), preset.source]
             for preset, arch in rows]
    out.write(table(lines, header, right_align=frozenset({2}), indent="") + "\n")
    return 0


def _billions(params: int, lang: Lang) -> str:
    return translate("report.billion", lang, n=format_number(params / 10**9, lang, 2))


# --- vramplan model NAME ----------------------------------------------------------------------


def run_model(args: argparse.Namespace, lang: Lang, out: TextIO) -> int:
    if args.name is not None:
        if args.model is not None:
            raise ConflictingOptions(MODEL.name, MODEL.name, args.model, "model_twice",
                                     name=args.name)
        args.model = args.name
    choice = model_choice(read_options(args, MODEL_FORM))
    preset, arch = choice.preset, choice.arch
    check = _safetensors_check(choice.text, arch) if choice.field == CONFIG.name else None
    if args.json:
        payload = model_to_json(preset, arch, choice.resolved)
        payload["safetensors_check"] = safetensors_check_to_json(check)
        out.write(to_json_text(payload) + "\n")
        return 0
    out.write(model_report(preset, arch, lang, check) + "\n")
    return 0


def _safetensors_check(path: str, arch: Architecture) -> SafetensorsCheck | None:
    if arch.dtype is None or arch.dtype not in DTYPE_BYTES:
        return None
    return check_safetensors_index(path, arch, DTYPE_BYTES[arch.dtype])


def model_report(preset: ModelPreset | None, arch: Architecture, lang: Lang,
                 check: SafetensorsCheck | None = None) -> str:
    """The human-readable spec and counts of one model."""
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
    def n(value: int) -> str:
        return format_number(value, lang, 0)

    window_key = ("spec.chunk_layers" if arch.local_attention is LocalAttention.CHUNKED
                  else "spec.window_layers")
    window = (translate(window_key, lang, window=n(arch.sliding_window),
                        layers=n(arch.sliding_window_layers))
              if arch.sliding_window else translate("spec.none", lang))
    rows = [
        ("spec.family", arch.family),
        ("spec.n_layers", n(arch.n_layers)),
        ("spec.hidden_size", n(arch.hidden_size)),
        ("spec.intermediate_size", n(arch.intermediate_size)),
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
    latent = arch.latent_attention
    if latent is not None:
        rows.append(("spec.latent_attention", " / ".join(
            n(size) if size else "-" for size in (latent.kv_lora_rank, latent.q_lora_rank,
                                                   latent.qk_rope_head_dim, latent.v_head_dim))))
    if arch.attention_sinks:
        rows.append(("spec.attention_sinks", _yes_no(True, lang)))
    if arch.is_moe:
        rows += [("spec.experts", f"{arch.n_experts} ({arch.experts_per_token})"),
                 ("spec.expert_size", n(arch.expert_intermediate_size)),
                 ("spec.moe_layers", f"{n(arch.n_moe_layers)} / {n(arch.n_dense_layers)}")]
        if arch.n_shared_experts:
            rows.append(("spec.shared_experts", n(arch.n_shared_experts)))
    if arch.vision is not None:
        rows.append(("spec.vision_label", translate(
            "spec.vision", lang, params=n(arch.vision.params),
            tokens=n(arch.vision.tokens_per_image))))
    if arch.mtp_layers:
        rows.append(("spec.mtp_layers", n(arch.mtp_layers)))
    if arch.dtype:
        rows.append(("spec.dtype", arch.dtype))
    if arch.checkpoint_format:
        rows.append(("spec.checkpoint_format", arch.checkpoint_format))
    return [[translate(key, lang), value] for key, value in rows]


def _count_rows(arch: Architecture, lang: Lang) -> list[list[str]]:
    rows = [[translate(f"count.{group.value}", lang), format_number(count, lang, 0)]
            for group, count in arch.params_by_component().items() if count]
    rows += [
        [translate(key, lang), format_number(count, lang, 0)]
        for key, count in (("count.total", arch.params_total),
                           ("count.non_embedding", arch.params_non_embedding),
                           ("count.per_block", arch.params_per_block))
    ]
    if arch.params_text != arch.params_total:
        rows.append([translate("count.text", lang), format_number(arch.params_text, lang, 0)])
    if arch.is_moe:
        rows.append([translate("count.active", lang), format_number(arch.params_active, lang, 0)])
    return rows


def _check_text(check: SafetensorsCheck, lang: Lang) -> str:
    total = format_number(check.total_size_bytes, lang, 0)
    line = translate("model.safetensors", lang, total=total,
                     dtype_bytes=check.dtype_bytes,
                     implied=format_number(check.params_from_index, lang, 1),
                     count=format_number(check.params_from_config, lang, 0))
    verdict = (translate("model.safetensors_match", lang) if check.matches else
               translate("model.safetensors_differ", lang,
                         difference=format_number(check.difference, lang, 1)))
    return f"{line} ; {verdict}" if lang is Lang.FR else f"{line}; {verdict}"


# --- the model line of other reports ------------------------------------------------------


def model_line(preset: ModelPreset | None, arch: Architecture, lang: Lang) -> str:
    """One line naming the model an estimate used, with its exact count."""
    name = preset.display_name if preset is not None else arch.family
    count = format_number(arch.params_total, lang, 0)
    return _labelled("report.model", f"{name} ({count})", lang)
