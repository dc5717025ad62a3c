"""LoRA parameter counting, exact, from the architecture's linear layers.

A LoRA adapter on a linear layer W (d_out x d_in) adds A (r x d_in) and B (d_out x r): r x (d_in +
d_out) trainable parameters (Hu et al. 2021, "LoRA", arXiv:2106.09685, section 4.1). Fused
projections count as their logical parts: litgpt's `LoRAQKVLinear` holds `lora_A` of
(r x n, d_in) and `lora_B` of (sum of the enabled widths, r) for n enabled parts of q/k/v
(litgpt/lora.py), which is the same sum. peft's `LoraLayer` adds one A and one B per targeted
`nn.Linear`.

Stable API (the LoRA calculator builds on it): `parse_lora_targets`, `lora_breakdown`,
`lora_params`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vramplan.errors import OutOfRange, UnknownName
from vramplan.model.architecture import Architecture, LinearSpec
from vramplan.vocab import LoraTarget

BLOCK_TARGETS = frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O,
                           LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN})
"""What `all` stands for: litgpt's lora_query/key/value/projection/mlp, peft's `all-linear`
without the head."""



@dataclass(frozen=True, slots=True)
class LoraMatrix:
    """The adapters of one kind of linear layer, over the whole model."""

    target: LoraTarget
    in_features: int
    out_features: int
    copies: int
    """Adapted matrices of this kind in the model (layers x experts; 1 for the head)."""
    rank: int

    @property
    def params_each(self) -> int:
        """r x (d_in + d_out) for one adapted matrix."""
        return self.rank * (self.in_features + self.out_features)

    @property
    def params(self) -> int:
        return self.copies * self.params_each


def expand_targets(targets: Iterable[LoraTarget]) -> frozenset[LoraTarget]:
    """The targets as a set, `all` expanded to the block linears."""
    expanded: set[LoraTarget] = set()
    for target in targets:
        expanded |= BLOCK_TARGETS if target is LoraTarget.ALL else {target}
    return frozenset(expanded)


def parse_lora_targets(raw: str) -> frozenset[LoraTarget]:
    """`q;v`, `q,v` or `all;head` as a set of targets, `all` expanded to the block linears."""
    names = [name.strip().lower() for name in raw.replace(",", ";").split(";") if name.strip()]
    targets: set[LoraTarget] = set()
    for name in names:
        try:
            target = LoraTarget(name)
        except ValueError:
            raise UnknownName("lora_targets", name, [t.value for t in LoraTarget]) from None
        targets |= BLOCK_TARGETS if target is LoraTarget.ALL else {target}
    return frozenset(targets)


def lora_breakdown(arch: Architecture, rank: int,
                   targets: frozenset[LoraTarget]) -> tuple[LoraMatrix, ...]:
    """One entry per adapted kind of linear, in block order, then the head."""
    if rank < 1:
        raise OutOfRange("lora_r", str(rank))
    wanted = BLOCK_TARGETS & targets if LoraTarget.ALL not in targets else BLOCK_TARGETS
    matrices = [
        _matrix(linear, rank, arch.n_layers * linear.count)
        for linear in arch.block_linears()
        if linear.role != "router" and LoraTarget(linear.role) in wanted
    ]
    if LoraTarget.HEAD in targets:
        matrices.append(_matrix(arch.head_linear(), rank, 1))
    return tuple(matrices)


def lora_params(arch: Architecture, rank: int, targets: frozenset[LoraTarget]) -> int:
    """Trainable LoRA parameters: the sum of r x (d_in + d_out) over every adapted matrix."""
    return sum(matrix.params for matrix in lora_breakdown(arch, rank, targets))


def _matrix(linear: LinearSpec, rank: int, copies: int) -> LoraMatrix:
    return LoraMatrix(LoraTarget(linear.role), linear.in_features, linear.out_features,
                      copies, rank)
