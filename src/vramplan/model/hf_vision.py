"""The `vision_config` of a vision-language config.json -> `VisionTower`.

Part of the config.json layer (`vramplan.model.hf_config`); the count formulas and their sources are
in `vramplan.model.vision`. Pure: no I/O.
"""

from __future__ import annotations

from vramplan.model.hf_common import ConfigKeys, InvalidConfigValue
from vramplan.model.vision import VisionKind, VisionTower


def siglip_tower(keys: ConfigKeys, text_hidden: int, tokens_per_image: int) -> VisionTower:
    """`siglip_vision_model` (transformers models/siglip/configuration_siglip.py
    `SiglipVisionConfig`). Its size defaults (768 wide, 12 layers, 224 px, 16 px patches) are those
    of one SigLIP model: required here. `vision_use_head` (default true) adds an attention-pooling
    head that Gemma 3 turns off; a tower with the head is refused, not counted without it."""
    _require_model_type(keys, "siglip_vision_model")
    if keys.get_bool("vision_use_head", True):
        raise InvalidConfigValue(keys.path("vision_use_head"), True,
                                 "expect.unsupported_option")
    return VisionTower(
        kind=VisionKind.SIGLIP,
        n_layers=keys.get_int("num_hidden_layers"),
        hidden_size=keys.get_int("hidden_size"),
        intermediate_size=keys.get_int("intermediate_size"),
        n_heads=keys.get_int("num_attention_heads"),
        image_size=keys.get_int("image_size"),
        patch_size=keys.get_int("patch_size"),
        channels=keys.get_int("num_channels", default=3),
        text_hidden_size=text_hidden,
        tokens_per_image=tokens_per_image,
    )


def llama4_tower(keys: ConfigKeys, text_hidden: int) -> VisionTower:
    """`llama4_vision_model` (models/llama4/configuration_llama4.py `Llama4VisionConfig`; sizes
    required, as above). An image tile becomes (image_size / patch_size)^2 patches, of which pixel
    shuffle keeps `pixel_shuffle_ratio`^2 (`Llama4VisionPixelShuffleMLP`): 144 tokens for a
    336-pixel tile at ratio 0.5."""
    _require_model_type(keys, "llama4_vision_model")
    image, patch = keys.get_int("image_size"), keys.get_int("patch_size")
    ratio = keys.get_float("pixel_shuffle_ratio", 0.5)
    if not 0 < ratio <= 1:
        raise InvalidConfigValue(keys.path("pixel_shuffle_ratio"), ratio, "expect.number")
    return VisionTower(
        kind=VisionKind.LLAMA4,
        n_layers=keys.get_int("num_hidden_layers"),
        hidden_size=keys.get_int("hidden_size"),
        intermediate_size=keys.get_int("intermediate_size"),
        n_heads=keys.get_int("num_attention_heads"),
        image_size=image,
        patch_size=patch,
        channels=keys.get_int("num_channels", default=3),
        text_hidden_size=text_hidden,
        tokens_per_image=int((image // patch) ** 2 * ratio * ratio),
        projector_input_dim=keys.get_int("projector_input_dim"),
        projector_output_dim=keys.get_int("projector_output_dim"),
        vision_output_dim=keys.get_int("vision_output_dim"),
    )


def _require_model_type(keys: ConfigKeys, expected: str) -> None:
    model_type = keys.config.get("model_type", expected)
    if model_type != expected:
        raise InvalidConfigValue(keys.path("model_type"), model_type, "expect.model_type",
                                 name=expected)
