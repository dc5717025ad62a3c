"""The vision tower of a vision-language checkpoint: its exact parameter count and the tokens an
image takes in the language model's context.

Two towers are modelled, each as its transformers module builds it:
- SigLIP (`siglip_vision_model`, Gemma 3 4B/12B/27B): transformers models/siglip/modeling_siglip.py
  `SiglipVisionEmbeddings` (a Conv2d patch embedding with bias, a learned position table of
  (image_size / patch_size)^2 rows), `SiglipEncoderLayer` (two LayerNorms with bias, q/k/v/out
  projections with bias, fc1/fc2 with bias), `post_layernorm`; and Gemma 3's projector
  (models/gemma3/modeling_gemma3.py `Gemma3MultiModalProjector`: `mm_input_projection_weight`
  [vision hidden, text hidden] and the RMSNorm `mm_soft_emb_norm` [vision hidden]), which pools
  each image to `mm_tokens_per_image` tokens.
- Llama 4 (`llama4_vision_model`): models/llama4/modeling_llama4.py `Llama4VisionModel` (an unfolded
  patch projection without bias, a class embedding, (image_size / patch_size)^2 + 1 positions,
  `layernorm_pre`/`layernorm_post`, encoder layers with biased q/k/v/o and fc1/fc2 and two
  LayerNorms), its `vision_adapter` (`Llama4VisionMLP2`: fc1 intermediate -> projector_input_dim,
  fc2 projector_output_dim -> projector_output_dim, no bias) and `Llama4MultiModalProjector`
  (`linear_1` vision_output_dim -> text hidden, no bias). Pixel shuffle keeps
  `pixel_shuffle_ratio`^2 of each tile's patches as tokens.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class VisionKind(StrEnum):
    """Which vision tower a checkpoint carries."""

    SIGLIP = "siglip"
    """SigLIP (Zhai et al. 2023, arXiv:2303.15343) as in Gemma 3."""
    LLAMA4 = "llama4"
    """Llama 4's vision encoder with its pixel-shuffle adapter."""


@dataclass(frozen=True, slots=True)
class VisionTower:
    """A vision encoder and the projector into the language model, in transformers' layout."""

    kind: VisionKind
    n_layers: int
    hidden_size: int
    intermediate_size: int
    n_heads: int
    image_size: int
    patch_size: int
    channels: int
    text_hidden_size: int
    """Width of the language model the projector feeds."""
    tokens_per_image: int
    """Tokens one image (one tile for Llama 4) adds to the language model's context."""
    projector_input_dim: int = 0
    """Llama 4: `projector_input_dim` (the adapter's fc1 output)."""
    projector_output_dim: int = 0
    """Llama 4: `projector_output_dim` (the adapter's fc2)."""
    vision_output_dim: int = 0
    """Llama 4: `vision_output_dim`, the projector's input."""

    @property
    def patches_per_side(self) -> int:
        return self.image_size // self.patch_size

    @property
    def patch_values(self) -> int:
        """Inputs of the patch embedding: channels x patch_size^2."""
        return self.channels * self.patch_size ** 2

    @property
    def params_encoder_layer(self) -> int:
        """One encoder layer: q/k/v/o with biases, fc1/fc2 with biases, two LayerNorms with
        biases (SiglipEncoderLayer, Llama4VisionEncoderLayer)."""
        h, i = self.hidden_size, self.intermediate_size
        return 4 * (h * h + h) + (h * i + i) + (i * h + h) + 2 * 2 * h

    @property
    def params_tower(self) -> int:
        """The vision encoder (`vision_tower` / `vision_model`), adapter included."""
        h = self.hidden_size
        layers = self.n_layers * self.params_encoder_layer
        positions = self.patches_per_side ** 2
        if self.kind is VisionKind.SIGLIP:
            # Conv2d patch embedding with bias, position table, post_layernorm
            return self.patch_values * h + h + positions * h + layers + 2 * h
        # unfolded patch linear (no bias), class embedding, positions + the class token,
        # layernorm_pre/post, vision_adapter fc1 and fc2 (no bias)
        adapter = (self.intermediate_size * self.projector_input_dim
                   + self.projector_output_dim ** 2)
        return (self.patch_values * h + h + (positions + 1) * h + 2 * 2 * h + layers
                + adapter)

    @property
    def params_projector(self) -> int:
        """The projector into the language model's width."""
        if self.kind is VisionKind.SIGLIP:
            # mm_input_projection_weight and mm_soft_emb_norm's scale
            return self.hidden_size * self.text_hidden_size + self.hidden_size
        return self.vision_output_dim * self.text_hidden_size

    @property
    def params(self) -> int:
        """Tower and projector."""
        return self.params_tower + self.params_projector
