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
    """The path is missing, not JSON, or not a JSON object."""

    def __init__(self, path: str, reason: str) -> None:
        self.key = f"error.config_file_{reason}"
        super().__init__(path)

# --- a typed view of the mapping ------------------------------------------------------------------


class ConfigKeys:
    """Typed access to a config mapping; errors name the key and the model_type."""

    def __init__(self, config: Mapping[str, Any], model_type: str) -> None:
        self.config = config
        self.model_type = model_type

    def _first(self, names: tuple[str, ...]) -> tuple[str, Any]:
        for name in names:
            if self.config.get(name) is not None:
                return name, self.config[name]
        return names[0], None

    def get_int(self, *names: str, default: int | None = None) -> int:
        """The first present key among `names` (HF aliases), as a positive int."""
        name, value = self._first(names)
        if value is None:
            if default is None:
                raise MissingConfigKey(name, self.model_type)
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise InvalidConfigValue(name, value, "expect.positive_int")
        return value

    def get_opt_int(self, *names: str) -> int | None:
        name, value = self._first(names)
        return None if value is None else self.get_int(name)

    def get_bool(self, name: str, default: bool) -> bool:
        value = self.config.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InvalidConfigValue(name, value, "expect.bool")
        return value

    def get_float(self, name: str, default: float) -> float:
        value = self.config.get(name)
        if value is None:
            return default
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise InvalidConfigValue(name, value, "expect.number")
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
            raise InvalidConfigValue(name, value, "expect.number")
        return float(value)

    def get_str(self, *names: str, default: str) -> str:
        name, value = self._first(names)
        if value is None:
            return default
        if not isinstance(value, str):
            raise InvalidConfigValue(name, value, "expect.string")
        return value

    def dtype(self) -> str | None:
        value = self.config.get("torch_dtype", self.config.get("dtype"))
        return value if isinstance(value, str) else None

    def require_false(self, name: str) -> None:
        """Refuse an option that adds parameters this reader does not model (never ignore it)."""
        if self.config.get(name):
            raise InvalidConfigValue(name, self.config[name], "expect.unsupported_option")


def head_dim_of(keys: ConfigKeys, hidden: int, heads: int) -> int:
    explicit = keys.get_opt_int("head_dim")
    if explicit is not None:
        return explicit
    if hidden % heads:
        raise InvalidConfigValue("num_attention_heads", heads, "expect.divisor", n=hidden)
    return hidden // heads

# --- what most families share -------------------------------------------------------------------

def llama_like(keys: ConfigKeys, *, qkv_bias: bool, attn_out_bias: bool, mlp_bias: bool,
                tied_default: bool, kv_heads_default_mha: bool = False) -> Architecture:
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
        vocab_size=keys.get_int("vocab_size"),
        tied_embeddings=keys.get_bool("tie_word_embeddings", tied_default),
        mlp=MlpKind.GATED,
        activation=keys.get_str("hidden_act", default="silu"),
        qkv_bias=qkv_bias,
        attn_out_bias=attn_out_bias,
        mlp_bias=mlp_bias,
        norm=NormKind.RMSNORM,
        norm_bias=False,
        position=PositionKind.ROPE,
        max_position_embeddings=keys.get_int("max_position_embeddings"),
        rope_theta=keys.get_float("rope_theta", 10000.0),
        dtype=keys.dtype(),
        # on the probabilities (`eager_attention_forward`'s dropout, SDPA's dropout_p); 0.0 by
        # default in LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig,
        # Gemma2Config, Phi3Config, StableLmConfig and OlmoConfig
        attention_dropout=keys.get_float("attention_dropout", 0.0),
    )


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
