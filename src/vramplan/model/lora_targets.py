"""LoRA parameter counting, exact, from the architecture's linear layers.

A LoRA adapter on a linear layer W (d_out x d_in) adds A (r x d_in) and B (d_out x r): r x (d_in +
d_out) trainable parameters (Hu et al. 2021, "LoRA", arXiv:2106.09685, section 4.1). Fused
projections count as their logical parts: litgpt's `LoRAQKVLinear` holds `lora_A` of
(r x n, d_in) and `lora_B` of (sum of the enabled widths, r) for n enabled parts of q/k/v
(litgpt/lora.py), which is the same sum. peft's `LoraLayer` adds one A and one B per targeted
`nn.Linear`, so on transformers' fused modules (GPT-2's and Qwen's `c_attn`, Falcon's and
GPT-NeoX's `query_key_value`, MPT's `Wqkv`, Phi-3's `qkv_proj` and `gate_up_proj`) one adapter
of r x (hidden + the fused width) stands for all of q, k and v (`fused_modules`).

Routed experts are no `nn.Linear` in transformers 5: each layer stores them as two 3-D parameters
(`experts.gate_up_proj`, `experts.down_proj`), which peft adapts through `target_parameters`
(`ParamWrapper`, peft/tuners/lora/layer.py: `lora_A` of (r x E, in), `lora_B` of (out, r x E)),
so a gate or up target adapts the fused gate_up parameter once: r x E x (hidden + 2 x width) per
layer. (Given `target_modules` gate_proj/up_proj/down_proj instead, peft 0.21 converts them for
these models, peft/utils/transformers_weight_conversion.py: the fused gate_up gets rank 2r, and
dense and shared MLPs get no adapter; vramplan counts the target_parameters adapters.)

Multi-head latent attention's projections take the q target (`q_a_proj`, `q_b_proj`, or `q_proj`)
and the k and v targets (`kv_a_proj_with_mqa`, `kv_b_proj`, shared by keys and values).

Stable API (the LoRA calculator builds on it): `parse_lora_targets`, `lora_breakdown`,
`lora_params`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from vramplan.errors import OutOfRange, UnknownName
from vramplan.model.architecture import Architecture, LinearRole, LinearSpec
from vramplan.vocab import BLOCK_TARGETS, LORA_TARGET_GROUPS, LoraTarget, member_named, spelling


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
    """`q;v`, `q,v` or `all;head` as a set of targets, `all` expanded to the block linears; also
    as peft prints its `target_modules` (`['q_proj', 'v_proj']`, `{'q_proj', 'v_proj'}`) or
    with spaces between the names (`q_proj v_proj`, while `all linear` is one name), under the
    names other stacks and architectures give them (`vramplan.vocab.OTHER_SPELLINGS`: torchtune's
    `output_proj`, litgpt's `lora_query`, OPT's `fc1`), and the names of several
    (`vramplan.vocab.LORA_TARGET_GROUPS`: Falcon's fused `query_key_value`, `mlp`)."""
    listed = raw.strip().strip("[]{}()").replace("'", " ").replace('"', " ")
    if ";" not in listed and "," not in listed and member_named(LoraTarget, listed) is None:
        listed = ";".join(listed.split())
    names = [name.strip().lower() for name in listed.replace(",", ";").split(";")
             if name.strip()]
    if raw.strip() and not names:  # `[]`: brackets that list nothing
        raise UnknownName("lora_targets", raw, [t.value for t in LoraTarget])
    targets: set[LoraTarget] = set()
    for name in names:
        target = member_named(LoraTarget, name)  # peft's `q_proj`, torchtune's `w1` too
        if target is not None:
            targets |= BLOCK_TARGETS if target is LoraTarget.ALL else {target}
        elif (group := LORA_TARGET_GROUPS.get(spelling(name))) is not None:
            targets |= group  # a fused linear, a module
        else:
            raise UnknownName("lora_targets", name, [t.value for t in LoraTarget])
    return frozenset(targets)


def lora_breakdown(arch: Architecture, rank: int, targets: frozenset[LoraTarget], *,
                   fused_modules: bool = False) -> tuple[LoraMatrix, ...]:
    """One entry per adapted kind of linear, in block order (dense blocks' first in a model with
    both kinds), then the head. `fused_modules`: adapters sit on the checkpoint's own modules, as
    peft puts them on transformers' (a fused q/k/v or gate/up `nn.Linear` gets one); else on the
    logical linears, as litgpt's `LoRAQKVLinear` counts them."""
    if rank < 1:
        raise OutOfRange("lora_r", str(rank))
    wanted = BLOCK_TARGETS & targets if LoraTarget.ALL not in targets else BLOCK_TARGETS
    matrices: list[LoraMatrix] = []
    for kind in arch.block_kinds():
        linears = _as_modules(arch, kind.linears) if fused_modules else kind.linears
        for linear in _adaptable(linears):
            target = _target_of(linear.role, wanted)
            if target is not None:
                matrices.append(_matrix(linear, rank, kind.layers * linear.count, target))
    if LoraTarget.HEAD in targets:
        matrices.append(_matrix(arch.head_linear(), rank, 1, LoraTarget.HEAD))
    return tuple(matrices)


_ROLE_TARGETS: dict[str, tuple[LoraTarget, ...]] = {
    "q": (LoraTarget.Q,), "k": (LoraTarget.K,), "v": (LoraTarget.V,), "o": (LoraTarget.O,),
    "gate": (LoraTarget.GATE,), "up": (LoraTarget.UP,), "down": (LoraTarget.DOWN,),
    "q_a": (LoraTarget.Q,), "q_b": (LoraTarget.Q,),
    "kv_a": (LoraTarget.K, LoraTarget.V), "kv_b": (LoraTarget.K, LoraTarget.V),
    "gate_up": (LoraTarget.GATE, LoraTarget.UP),
    "qkv": (LoraTarget.Q, LoraTarget.K, LoraTarget.V),
}
"""The targets that adapt a linear of each role; a linear shared by two targets is adapted once
when either is asked for."""


def _target_of(role: str, wanted: frozenset[LoraTarget]) -> LoraTarget | None:
    """The first of `role`'s targets asked for (None: the linear gets no adapter)."""
    return next((target for target in _ROLE_TARGETS.get(role, ()) if target in wanted), None)


def _as_modules(arch: Architecture, linears: tuple[LinearSpec, ...]) -> tuple[LinearSpec, ...]:
    """A block's dense linears as the checkpoint's modules: q, k and v as one `qkv` linear where
    the model fuses them (`Architecture.fused_qkv`), gate and up as one `gate_up` where it fuses
    those (`Architecture.fused_gate_up`)."""
    groups: dict[str, LinearRole] = {"q": "qkv", "k": "qkv", "v": "qkv"} if arch.fused_qkv \
        else {}
    if arch.fused_gate_up:
        groups |= {"gate": "gate_up", "up": "gate_up"}
    merged: list[LinearSpec] = []
    for linear in linears:
        role = groups.get(linear.role)
        if role is None or linear.routed:
            merged.append(linear)
            continue
        first = next((i for i, seen in enumerate(merged) if seen.role == role), None)
        if first is None:
            merged.append(replace(linear, role=role))
        else:
            seen = merged[first]
            merged[first] = replace(seen, out_features=seen.out_features + linear.out_features,
                                    bias=seen.bias or linear.bias)
    return tuple(merged)


def _adaptable(linears: tuple[LinearSpec, ...]) -> tuple[LinearSpec, ...]:
    """A block's linears as adapters see them: without the router, and with the routed gate and
    up merged into the one 3-D gate_up parameter they are in transformers 5."""
    adaptable: list[LinearSpec] = []
    for linear in linears:
        if linear.role == "router" or (linear.routed and linear.role == "up"
                                       and any(other.routed and other.role == "gate"
                                               for other in linears)):
            continue
        fused = linear.routed and linear.role == "gate"
        adaptable.append(replace(linear, role="gate_up", out_features=2 * linear.out_features)
                         if fused else linear)
    return tuple(adaptable)


def lora_params(arch: Architecture, rank: int, targets: frozenset[LoraTarget], *,
                fused_modules: bool = False) -> int:
    """Trainable LoRA parameters: the sum of r x (d_in + d_out) over every adapted matrix."""
    return sum(matrix.params for matrix in lora_breakdown(arch, rank, targets,
                                                          fused_modules=fused_modules))


def _matrix(linear: LinearSpec, rank: int, copies: int, target: LoraTarget) -> LoraMatrix:
    return LoraMatrix(target, linear.in_features, linear.out_features, copies, rank)
