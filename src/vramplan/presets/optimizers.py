"""The seed calculator's memory-per-parameter presets, with the components behind each figure.

The seed page gives three figures: 16 bytes/param for Adam in mixed precision, about 12 for 8-bit
Adam and about 8 for SGD with momentum. 16 is exact; 12 and 8 are round planning figures. Each
preset lists its physical components; where they sum to less than the seed figure, the rest is
shown as a planning margin rather than hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vramplan.parts import Component, PartKind


class OptimizerPreset(StrEnum):
    """Memory-per-parameter presets of the seed calculator (CLI `--optimizer`, API `optimizer`)."""

    ADAM_MIXED = "adam-mixed"
    """Adam(W) in mixed precision: 16 bytes/param."""
    ADAM_8BIT = "adam-8bit"
    """8-bit Adam (bitsandbytes): the seed's ~12 bytes/param."""
    SGD_MOMENTUM = "sgd-momentum"
    """SGD with momentum: the seed's ~8 bytes/param."""


@dataclass(frozen=True, slots=True)
class PerParamPart:
    """One physical component of the per-parameter memory, in bytes per parameter."""

    kind: PartKind
    bytes_per_param: float

    @property
    def component(self) -> Component:
        return self.kind.component


@dataclass(frozen=True, slots=True)
class OptimizerSpec:
    """A preset: the seed's figure, the parts behind it, and where both come from."""

    preset: OptimizerPreset
    bytes_per_param: float
    """The figure the seed calculator uses (and that `vramplan estimate` multiplies by N)."""
    parts: tuple[PerParamPart, ...]
    """Physical components; their sum is at most `bytes_per_param`."""
    source: str

    @property
    def physical_bytes_per_param(self) -> float:
        """Sum of the physical components (10 for 8-bit Adam with an fp32 master copy)."""
        return sum(part.bytes_per_param for part in self.parts)

    @property
    def margin_bytes_per_param(self) -> float:
        """What the seed's round figure adds on top of the physical components."""
        return self.bytes_per_param - self.physical_bytes_per_param


_WEIGHT_16 = PerParamPart(PartKind.WEIGHTS_16BIT, 2)
_GRAD_16 = PerParamPart(PartKind.GRADIENTS_16BIT, 2)
_MASTER_32 = PerParamPart(PartKind.MASTER_FP32, 4)

OPTIMIZERS: dict[OptimizerPreset, OptimizerSpec] = {
    # Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
    # Models", arXiv:1910.02054, section 3.1: mixed-precision Adam holds 2Ψ (fp16 weights) + 2Ψ
    # (fp16 gradients) + KΨ with K = 12 (fp32 weights, momentum, variance): 16Ψ bytes.
    OptimizerPreset.ADAM_MIXED: OptimizerSpec(
        preset=OptimizerPreset.ADAM_MIXED,
        bytes_per_param=16,
        parts=(
            _WEIGHT_16,
            _GRAD_16,
            _MASTER_32,
            PerParamPart(PartKind.ADAM_M_FP32, 4),
            PerParamPart(PartKind.ADAM_V_FP32, 4),
        ),
        source="Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054, section 3.1 (16 bytes/param)",
    ),
    # Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization", arXiv:2110.02861:
    # both Adam moments in 8 bits (1 byte each) plus one fp32 scale per block. With 16-bit weights
    # and gradients and an fp32 master copy that is 2 + 2 + 4 + 1 + 1 = 10 bytes/param; the seed's
    # 12 is a round planning figure.
    OptimizerPreset.ADAM_8BIT: OptimizerSpec(
        preset=OptimizerPreset.ADAM_8BIT,
        bytes_per_param=12,
        parts=(
            _WEIGHT_16,
            _GRAD_16,
            _MASTER_32,
            PerParamPart(PartKind.ADAM_M_8BIT, 1),
            PerParamPart(PartKind.ADAM_V_8BIT, 1),
        ),
        source=(
            "seed calculator (≈ 12, a round figure); components from Dettmers et al. 2022, "
            "8-bit Optimizers via Block-wise Quantization, arXiv:2110.02861 (10 bytes/param)"
        ),
    ),
    # torch.optim.SGD keeps one `momentum_buffer` per parameter, in the parameter's dtype
    # (https://pytorch.org/docs/stable/generated/torch.optim.SGD.html). 16-bit weights and
    # gradients plus an fp32 momentum make the seed's 8; an fp32 master copy would add 4 (12).
    OptimizerPreset.SGD_MOMENTUM: OptimizerSpec(
        preset=OptimizerPreset.SGD_MOMENTUM,
        bytes_per_param=8,
        parts=(
            _WEIGHT_16,
            _GRAD_16,
            PerParamPart(PartKind.SGD_MOMENTUM_FP32, 4),
        ),
        source=(
            "seed calculator (≈ 8); components: torch.optim.SGD momentum_buffer, "
            "https://pytorch.org/docs/stable/generated/torch.optim.SGD.html"
        ),
    ),
}
