"""What every Hugging Face config.json reader shares: typed access to the mapping (`ConfigKeys`),
the errors that name a key, and the Llama-like layout most families start from.

Part of the only layer that knows HF key names (`vramplan.model.hf_config` and its family modules).
Pure: no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypedDict

from vramplan.errors import VramplanError
from vramplan.i18n import Lang, translate
from vramplan.model.architecture import Architecture, MlpKind, NormKind, PositionKind

# --- errors ---------------------------------------------------------------------------------------

class ConfigError(VramplanError):
    """A config.json that cannot be turned into an architecture."""

    def __init__(self, value: str, **params: object) -> None:
        super().__init__("config", value, **params)


class MissingConfigKey(ConfigError):
    """A key the family needs is absent (or null)."""

    key = "error.config_missing_key"

    def __init__(self, config_key: str, model_type: str) -> None:
        super().__init__(config_key, model_type=model_type)

class InvalidConfigValue(ConfigError):
    """A key with a value of the wrong type, or an option that changes the layout in a way this
    reader does not model."""

    key = "error.config_value"

    def __init__(self, config_key: str, value: object, expected: str, **expected_params: object
                 ) -> None:
        self.expected = expected
        """Message key of what is accepted (`expect.positive_int`, ...)."""
        self.expected_params = expected_params
        super().__init__(config_key, got=json.dumps(value))

    def message(self, lang: Lang, label: Callable[[str], str] | None = None) -> str:
        self.params["expected"] = translate(self.expected, lang, **self.expected_params)
        return super().message(lang, label)


class ConfigFileError(ConfigError):
    """The path is missing, not a regular file, unreadable, too large, not JSON, or not a JSON
    object."""

    def __init__(self, path: str, reason: str, **params: object) -> None:
        self.key = f"error.config_file_{reason}"
        self.reason = reason
        super().__init__(path, **params)


# --- JSON text ------------------------------------------------------------------------------------

MAX_CONFIG_BYTES = 4 * 2**20
"""A config.json is a few kilobytes (DeepSeek-V3's: 1.7 KB; the largest with id2label tables, tens
of kilobytes); 4 MiB bounds what a reader holds and parses."""
MAX_INT_DIGITS = 30
"""Integers with more digits than this are read as infinite: every bound of `vramplan.bounds`
refuses them with the key's name, and none reaches Python's 4,300-digit conversion limit."""


def json_object(text: str | bytes, label: str) -> dict[str, Any]:
    """The JSON object in `text` (a UTF-8 BOM allowed, as Windows editors write it); `label`
    names it in errors. Nesting deeper than Python's recursion limit and oversized integers are
    refused or bounded, never raised as tracebacks."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigFileError(label, "not_json") from None
    try:
        data = json.loads(text.removeprefix("\ufeff"), parse_int=_bounded_int)
    except json.JSONDecodeError:
        raise ConfigFileError(label, "not_json") from None
    except RecursionError:
        raise ConfigFileError(label, "too_deep") from None
    if not isinstance(data, dict):
        raise ConfigFileError(label, "not_object")
    return data


def _bounded_int(digits: str) -> int | float:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        return -math.inf if digits.startswith("-") else math.inf
    return int(digits)

# --- a typed view of the mapping ------------------------------------------------------------------


class ConfigKeys:
    """Typed access to a config mapping; errors name the key and the model_type. A nested
    config (`text_config`, `vision_config` of a multimodal checkpoint) is read through `sub`, and
    its errors name the key with its path (`text_config.hidden_size`)."""

    def __init__(self, config: Mapping[str, Any], model_type: str, prefix: str = "") -> None:
        self.config = config
        self.model_type = model_type
        self.prefix = prefix

    def _first(self, names: tuple[str, ...]) -> tuple[str, Any]:
        for name in names:
            if self.config.get(name) is not None:
                return name, self.config[name]
        return names[0], None

    def path(self, name: str) -> str:
        """`name` as errors show it: with the path of the nested config it is in."""
        return self.prefix + name

    def sub(self, name: str) -> ConfigKeys:
        """The nested config `name` (a JSON object), required."""
        value = self.config.get(name)
        if value is None:
            raise MissingConfigKey(self.path(name), self.model_type)
        if not isinstance(value, Mapping):
            raise InvalidConfigValue(self.path(name), value, "expect.object")
        return ConfigKeys(value, self.model_type, f"{self.path(name)}.")

    def get_int_list(self, name: str) -> tuple[int, ...]:
        """A list of non-negative ints (layer indices); absent or null is empty."""
        value = self.config.get(name)
        if value is None:
            return ()
        valid = isinstance(value, list) and all(
            isinstance(item, int) and not isinstance(item, bool) and item >= 0 for item in value)
        if not valid:
            raise InvalidConfigValue(self.path(name), value, "expect.int_list")
        return tuple(value)

    def require_key(self, name: str) -> Any:
        """The value of a key that must be present (null allowed): a class default that is a
        constant of the reference model would be a guess for another one."""
        if name not in self.config:
            raise MissingConfigKey(self.path(name), self.model_type)
        return self.config[name]

    def get_int(self, *names: str, default: int | None = None) -> int:
        """The first present key among `names` (HF aliases), as a positive int."""
        name, value = self._first(names)
        if value is None:
            if default is None:
                raise MissingConfigKey(self.path(name), self.model_type)
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise InvalidConfigValue(self.path(name), value, "expect.positive_int")
        return value

    def get_opt_int(self, *names: str) -> int | None:
        name, value = self._first(names)
        return None if value is None else self.get_int(name)

    def get_bool(self, name: str, default: bool) -> bool:
        value = self.config.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InvalidConfigValue(self.path(name), value, "expect.bool")
        return value

    def get_float(self, name: str, default: float) -> float:
        value = self.config.get(name)
        if value is None:
            return default
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise InvalidConfigValue(self.path(name), value, "expect.number")
        return float(value)

    def get_opt_float(self, name: str, default: float | None) -> float | None:
        """`default` when the key is absent (the config class's default), None when it is
        null, else a positive number."""
        if name not in self.config:
            return default
        value = self.config[name]
        if value is None:
            return None
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value <= 0:
            raise InvalidConfigValue(self.path(name), value, "expect.number")
        return float(value)

    def get_str(self, *names: str, default: str) -> str:
        name, value = self._first(names)
        if value is None:
            return default
        if not isinstance(value, str):
            raise InvalidConfigValue(self.path(name), value, "expect.string")
        return value

    def dtype(self) -> str | None:
        value = self.config.get("torch_dtype", self.config.get("dtype"))
        return value if isinstance(value, str) else None

    def require_false(self, name: str) -> None:
        """Refuse an option that adds parameters this reader does not model (never ignore it)."""
        if self.config.get(name):
            raise InvalidConfigValue(self.path(name), self.config[name],
                                     "expect.unsupported_option")


def head_dim_of(keys: ConfigKeys, hidden: int, heads: int) -> int:
    """An explicit `head_dim`, else hidden_size / num_attention_heads."""
    explicit = keys.get_opt_int("head_dim")
    if explicit is not None:
        return explicit
    return derived_head_dim(keys, hidden, heads)


def derived_head_dim(keys: ConfigKeys, hidden: int, heads: int) -> int:
    """hidden_size / num_attention_heads, which must divide it."""
    if hidden % heads:
        raise InvalidConfigValue(keys.path("num_attention_heads"), heads, "expect.divisor",
                                 n=hidden)
    return hidden // heads


# --- what most families share -------------------------------------------------------------------

def llama_like(keys: ConfigKeys, *, qkv_bias: bool, attn_out_bias: bool, mlp_bias: bool,
               tied_default: bool, kv_heads_default_mha: bool = False,
               vocab_default: int | None = None,
               max_position_default: int | None = None) -> Architecture:
    """Llama, Mistral, Qwen2, TinyLlama, Code Llama (transformers models/llama/modeling_llama.py,
    mistral/, qwen2/): q/k/v/o, gate/up/down (SwiGLU), two RMSNorms per block, final RMSNorm.

    `num_key_value_heads`: LlamaConfig, PhiConfig, Phi3Config and OlmoConfig default it to
    `num_attention_heads` (`kv_heads_default_mha`); the Mistral, Mixtral, Qwen2, Gemma, Gemma 2 and
    StableLM classes default it to a constant of their reference model (8, 8, 32, 16, 4, 32), which
    would be a guess for another model, so there the key is required."""
    hidden = keys.get_int("hidden_size")
    heads = keys.get_int("num_attention_heads")
    layers = keys.get_int("num_hidden_layers")
    return Architecture(
        family=keys.model_type,
        n_layers=layers,
        hidden_size=hidden,
        intermediate_size=keys.get_int("intermediate_size"),
        n_heads=heads,
        n_kv_heads=keys.get_int("num_key_value_heads",
                                default=heads if kv_heads_default_mha else None),
        head_dim=head_dim_of(keys, hidden, heads),
        vocab_size=keys.get_int("vocab_size", default=vocab_default),
        tied_embeddings=keys.get_bool("tie_word_embeddings", tied_default),
        mlp=MlpKind.GATED,
        activation=keys.get_str("hidden_act", default="silu"),
        qkv_bias=qkv_bias,
        attn_out_bias=attn_out_bias,
        mlp_bias=mlp_bias,
        norm=NormKind.RMSNORM,
        norm_bias=False,
        position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("max_position_embeddings",
                                             default=max_position_default),
        rope_theta=keys.get_float("rope_theta", 10000.0),
        longrope_positions=longrope_positions(keys),
        dtype=keys.dtype(),
        # on the probabilities (`eager_attention_forward`'s dropout, SDPA's dropout_p); 0.0 by
        # default in LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig,
        # Gemma2Config, Phi3Config, StableLmConfig and OlmoConfig
        attention_dropout=keys.get_float("attention_dropout", 0.0),
    )


def longrope_positions(keys: ConfigKeys) -> int | None:
    """`original_max_position_embeddings` under LongRoPE (`rope_scaling` of type or rope_type
    "longrope" or "su"; Phi3Config's default 4096), else None."""
    scaling = keys.config.get("rope_scaling")
    if not isinstance(scaling, Mapping):
        return None
    if scaling.get("rope_type", scaling.get("type")) not in ("longrope", "su"):
        return None
    return keys.get_int("original_max_position_embeddings", default=4096)


def with_window(arch: Architecture, window: int | None, first_layer: int = 0) -> Architecture:
    """`arch` with local attention of `window` tokens on layers `first_layer` and after."""
    if window is None:
        return arch
    return replace_fields(arch, sliding_window=window,
                          sliding_window_layers=max(0, arch.n_layers - first_layer))

class Dropout(TypedDict, total=False):
    """A family's dropout rates, as `Architecture` names them (typed for `**` into it)."""

    embedding_dropout: float
    attention_dropout: float
    attention_output_dropout: float
    mlp_output_dropout: float

def replace_fields(arch: Architecture, **changes: Any) -> Architecture:
    return replace(arch, **changes)


def rotary_factor(rotary_dim: int, head_dim: int) -> float:
    """The `partial_rotary_factor` whose `Architecture.rotary_dim`, int(head_dim x factor), is
    `rotary_dim`: the quotient can fall a hair short when multiplied back (30 / 88 x 88 < 30)."""
    factor = rotary_dim / head_dim
    while int(head_dim * factor) < rotary_dim:
        factor = math.nextafter(factor, math.inf)
    return factor


LOCAL_LAYER_TYPES = frozenset({"sliding_attention", "chunked_attention"})
"""transformers' `layer_types` values of layers whose attention is bounded (a sliding window, or
Llama 4's chunks); `full_attention` layers see the whole context."""
_LAYER_TYPES = LOCAL_LAYER_TYPES | {"full_attention"}


def local_layer_count(keys: ConfigKeys, n_layers: int, default: Callable[[int], bool]) -> int:
    """Layers with bounded attention: from the config's `layer_types` when it lists them (the key
    transformers reads first in every family here), else `default(layer)`, the config class's own
    rule for a missing `layer_types`."""
    types = keys.config.get("layer_types")
    if types is None:
        return sum(1 for layer in range(n_layers) if default(layer))
    valid = (isinstance(types, list) and len(types) == n_layers
             and all(isinstance(kind, str) and kind in _LAYER_TYPES for kind in types))
    if not valid:
        raise InvalidConfigValue(keys.path("layer_types"), types, "expect.layer_types",
                                 n=n_layers)
    return sum(1 for kind in types if kind in LOCAL_LAYER_TYPES)


def checkpoint_format(keys: ConfigKeys) -> str | None:
    """The weight format named by `quantization_config`, when vramplan knows it: `fp8-block128`
    (`quant_method` fp8 with `weight_block_size` [128, 128], DeepSeek-V3 and Kimi K2's
    block-scaled e4m3), `mxfp4` (gpt-oss). Other methods return None: the count is that of the
    logical, unquantized model either way."""
    quant = keys.config.get("quantization_config")
    if not isinstance(quant, Mapping):
        return None
    method = quant.get("quant_method")
    if method == "mxfp4":
        return "mxfp4"
    if method == "fp8" and quant.get("weight_block_size") == [128, 128]:
        return "fp8-block128"
    return None
