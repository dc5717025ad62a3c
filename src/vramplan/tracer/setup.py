"""What a trace runs: the training setup, as typed, validated data (no torch here).

The option names and values are those of the measured-case format (docs/cases-format.md), so a case
row can be traced as it is written. Values the trace cannot run say so by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

from vramplan.allocator import AllocatorConfig, parse_alloc_conf
from vramplan.errors import ConflictingOptions, OutOfRange, UnknownName, VramplanError
from vramplan.training.setup import GRPO_COMPLETION_LEN, AlignmentSetup
from vramplan.vocab import (
    PEFT_LORA_RANK,
    PEFT_LORA_TARGETS,
    POLICY_METHODS,
    Attention,
    Checkpointing,
    Device,
    FsdpVersion,
    Method,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)
from vramplan.vocab import choice as setup_choice

E = TypeVar("E", bound=StrEnum)

NOT_TRACEABLE: frozenset[StrEnum] = frozenset({
    Method.INFERENCE,            # a trace runs a training step
    Optimizer.NONE,
    OptimizerImpl.IN_BACKWARD,   # not one of torch.optim's step implementations
    Quant.INT8,                  # only bitsandbytes' 4-bit storage is emulated
    Checkpointing.SELECTIVE,     # transformers checkpoints whole blocks only
})
"""Values of the shared setup vocabulary (vramplan.vocab) that a trace cannot run. StrEnum members
compare as their strings (Optimizer.NONE == Quant.NONE), so test with `_traceable`, not `in`."""


def _traceable(member: StrEnum) -> bool:
    return not any(member is refused for refused in NOT_TRACEABLE)


TRACED_ALIGNMENT = (Method.DPO, Method.GRPO)
"""Preference and RL methods a trace runs (`vramplan.tracer.alignment`); ORPO, SimPO, KTO and PPO
are estimated by `vramplan fit` only."""


class MethodNotTraced(VramplanError):
    """A preference or RL method that the trace does not run."""

    key = "trace.error.method_not_traced"

    def __init__(self, value: str, accepted: list[str]) -> None:
        super().__init__("method", value, accepted=", ".join(accepted))


class UnsupportedAttention(VramplanError):
    """transformers has no such attention implementation for this model class."""

    key = "trace.error.attention_unsupported"

    def __init__(self, value: str, model_class: str) -> None:
        super().__init__("attention", value, model_class=model_class)


LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down", "head", "all")
"""Adapter target names of the case format; `all` is every linear layer of the blocks."""

DEFAULT_LORA_R = PEFT_LORA_RANK
"""A trace has no framework: peft's rank, on peft's modules (`PEFT_LORA_TARGETS`)."""
DEFAULT_TRAIN_LAYERS = 1


TRACED_OPTIMIZER_IMPL = OptimizerImpl.FOREACH
"""The AdamW a trace steps unless told: torch.optim.AdamW's own default on CUDA (`foreach`,
torch/optim/optimizer.py `_default_to_fused_or_foreach`), not a framework's; an analytic setup
compared with a trace names it."""

TRACED_ADAPTERS_FP32 = False
"""Whether a trace's LoRA adapters are upcast to fp32: peft's `get_peft_model` does it by default
since v0.12.0 (`vramplan.presets.frameworks.peft_bnb.PEFT_UPCASTS_ADAPTERS_SINCE`); the trace builds
them in the model's dtype (`autocast_adapter_dtype=False`) unless its setup asks
(`TraceSetup.adapters_fp32`) or trains QLoRA, and an analytic setup compared with a trace says
which (`TrainingSetup.adapters_fp32`)."""


@dataclass(frozen=True)
class TraceSetup:
    """One training step to trace. `model_config` is the model's config.json key/values."""

    model_name: str
    model_config: Mapping[str, Any] = field(repr=False, compare=False)
    method: Method = Method.FULL
    precision: Precision = Precision.BF16_TRUE
    optimizer: Optimizer = Optimizer.ADAMW
    optimizer_impl: OptimizerImpl = TRACED_OPTIMIZER_IMPL
    quant: Quant = Quant.NONE
    lora_r: int | None = None
    lora_targets: tuple[str, ...] = ()
    train_layers: int = DEFAULT_TRAIN_LAYERS
    batch: int = 1
    seq_len: int = 512
    checkpointing: Checkpointing = Checkpointing.NONE
    reentrant_checkpointing: bool = False
    """Full checkpointing with `use_reentrant=True` (transformers' default before v5.0.0)."""
    tiled_mlp: bool = False
    """Each block's MLP runs tiled (`vramplan.tracer.tiled_mlp`), with the tiles
    `vramplan.training.specs.mlp_tile_tokens` gives a transformers run."""
    attention: Attention = Attention.SDPA
    """`flash` runs transformers' `sdpa`: flash-attn's kernels need CUDA, and PyTorch's fused SDPA
    kernels save what FlashAttention saves (q, k, v, the output and the log-sum-exp per row; Dao
    et al. 2022, arXiv:2205.14135, section 3.1)."""
    device: Device = Device.CPU
    alloc_conf: AllocatorConfig = field(default_factory=AllocatorConfig)
    """`PYTORCH_CUDA_ALLOC_CONF` of the simulated caching allocator (default: PyTorch's)."""
    gpus: int = 1
    """Data-parallel ranks; the trace is rank 0's (vramplan.tracer.parallel)."""
    sharding: Scheme = Scheme.NONE
    """`ddp` or `fsdp` on several GPUs."""
    fsdp_version: FsdpVersion = FsdpVersion.FSDP2
    peft_wrap: bool = True
    """FSDP1 with LoRA: peft's `fsdp_auto_wrap_policy` (adapters in units of their own), or
    False: the blocks as units mixing frozen and trainable weights (litgpt's policy)."""
    adapters_fp32: bool = TRACED_ADAPTERS_FP32
    """LoRA's adapters upcast to fp32, as peft's `get_peft_model(autocast_adapter_dtype=True)`,
    its default, makes them over a 16-bit model; each adapter then copies its input to fp32
    (`vramplan.training.setup.peft_casts_adapter_input`). Always under QLoRA (`make_setup`),
    where peft leaves them fp32 on bitsandbytes' layers. Unused by the other methods."""
    alignment: AlignmentSetup | None = None
    """DPO or GRPO around the policy, which trains as `method` says (full, LoRA or QLoRA); only
    `precompute_ref`, `beta` and `completion_len` apply (generation is not traced)."""

    @property
    def uses_lora(self) -> bool:
        return self.method.uses_lora

    @property
    def attn_implementation(self) -> str:
        """transformers' `attn_implementation` for the attention kernel."""
        return "sdpa" if self.attention is Attention.FLASH else self.attention.value

    @property
    def paged(self) -> bool:
        return self.optimizer in (Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT)


def choice(enum: type[E], field_name: str, value: str | E | None, default: E) -> E:
    """The member named `value` (`default` when empty); an error listing the names a trace can
    run when it is unknown or not traceable."""
    member = setup_choice(enum, field_name, None if value is None else str(value), default)
    if not _traceable(member):
        accepted = [m.value for m in enum if _traceable(m)]
        raise UnknownName(field_name, member.value, accepted)
    return member


def parse_lora_targets(raw: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """`q,v`, `q;v` or a sequence; each name one of LORA_TARGETS."""
    if raw is None or raw == "":
        return ()
    names = raw.replace(";", ",").split(",") if isinstance(raw, str) else list(raw)
    targets = tuple(dict.fromkeys(name.strip().lower() for name in names if name.strip()))
    for name in targets:
        if name not in LORA_TARGETS:
            raise UnknownName("lora_targets", name, LORA_TARGETS)
    return targets


def make_setup(model_name: str, model_config: Mapping[str, Any], *,
               method: str | Method | None = None, precision: str | Precision | None = None,
               optimizer: str | Optimizer | None = None,
               optimizer_impl: str | OptimizerImpl | None = None,
               quant: str | Quant | None = None, lora_r: int | None = None,
               lora_targets: str | tuple[str, ...] | list[str] | None = None,
               train_layers: int | None = None, batch: int = 1, seq_len: int = 512,
               checkpointing: str | Checkpointing | None = None,
               reentrant_checkpointing: bool = False, tiled_mlp: bool = False,
               attention: str | Attention | None = None,
               device: str | Device | None = None, alloc_conf: str | None = None,
               gpus: int = 1, sharding: str | Scheme | None = None,
               fsdp_version: str | FsdpVersion | None = None,
               peft_wrap: bool = True, adapters_fp32: bool = TRACED_ADAPTERS_FP32,
               policy: str | Method | None = None,
               precompute_ref: bool = False, beta: float = 0.0,
               completion_len: int | None = None) -> TraceSetup:
    """A checked TraceSetup from names as the case format writes them; empty means the default.
    With `method` dpo or grpo, the policy trains as `policy` says (full by default)."""
    asked = _traced_method(method)
    alignment = _alignment(asked, precompute_ref, beta, completion_len, seq_len)
    if alignment is None and policy not in (None, ""):
        raise ConflictingOptions("policy", "method", str(policy))
    trained = _policy(policy) if alignment is not None else asked
    setup = TraceSetup(
        model_name=model_name,
        model_config=model_config,
        method=trained,
        precision=choice(Precision, "precision", precision, Precision.BF16_TRUE),
        optimizer=choice(Optimizer, "optimizer", optimizer, Optimizer.ADAMW),
        optimizer_impl=choice(OptimizerImpl, "optimizer_impl", optimizer_impl,
                              TRACED_OPTIMIZER_IMPL),
        quant=_quant(trained, quant),
        lora_r=lora_r,
        lora_targets=parse_lora_targets(lora_targets),
        train_layers=DEFAULT_TRAIN_LAYERS if train_layers is None else train_layers,
        batch=batch,
        seq_len=seq_len,
        checkpointing=choice(Checkpointing, "checkpointing", checkpointing, Checkpointing.NONE),
        reentrant_checkpointing=reentrant_checkpointing,
        tiled_mlp=tiled_mlp,
        attention=choice(Attention, "attention", attention, Attention.SDPA),
        device=choice(Device, "device", device, Device.CPU),
        alloc_conf=parse_alloc_conf(alloc_conf or ""),
        gpus=gpus,
        sharding=_sharding(sharding, gpus),
        fsdp_version=setup_choice(FsdpVersion, "fsdp_version",
                                  None if fsdp_version is None else str(fsdp_version),
                                  FsdpVersion.FSDP2),
        peft_wrap=peft_wrap,
        adapters_fp32=adapters_fp32,
        alignment=alignment,
    )
    return _with_lora_defaults(_checked(setup, optimizer_impl))


def _traced_method(value: str | Method | None) -> Method:
    """The method asked for: a way to train the model, or DPO or GRPO; the other preference and
    RL methods are refused, with what a trace runs."""
    member = choice(Method, "method", value, Method.FULL)
    if member.is_alignment and member not in TRACED_ALIGNMENT:
        accepted = [m.value for m in Method if _traceable(m)
                    and (not m.is_alignment or m in TRACED_ALIGNMENT)]
        raise MethodNotTraced(member.value, accepted)
    return member


def _policy(value: str | Method | None) -> Method:
    member = choice(Method, "policy", value, Method.FULL)
    if member not in POLICY_METHODS:
        raise UnknownName("policy", member.value, sorted(m.value for m in POLICY_METHODS))
    return member


def _alignment(method: Method, precompute_ref: bool, beta: float, completion_len: int | None,
               seq_len: int) -> AlignmentSetup | None:
    """DPO's or GRPO's settings; each refused for the methods it does not concern."""
    if not method.is_alignment:
        for name, given in (("precompute_ref", precompute_ref), ("beta", beta != 0),
                            ("completion_len", completion_len is not None)):
            if given:
                raise ConflictingOptions(name, "method", method.value)
        return None
    if precompute_ref and method is not Method.DPO:
        raise ConflictingOptions("precompute_ref", "method", method.value)
    if method is not Method.GRPO and (beta != 0 or completion_len is not None):
        raise ConflictingOptions("beta" if beta != 0 else "completion_len", "method",
                                 method.value)
    if not 0 <= beta < float("inf"):
        raise OutOfRange("beta", str(beta))
    completion = completion_len if completion_len is not None else GRPO_COMPLETION_LEN
    if method is Method.GRPO and not 0 < completion < seq_len:
        raise OutOfRange("completion_len", str(completion))
    return AlignmentSetup(method=method, precompute_ref=precompute_ref, beta=beta,
                          completion_len=completion_len)


TRACEABLE_SCHEMES = (Scheme.NONE, Scheme.DDP, Scheme.FSDP)
"""Data-parallel schemes a trace runs under the fake process group (vramplan.tracer.parallel);
ZeRO needs DeepSpeed, HSDP and SHARD_GRAD_OP are not traced yet."""


def _sharding(value: str | Scheme | None, gpus: int) -> Scheme:
    """`ddp` by default on several GPUs; a scheme a trace can run, and GPUs to run it on."""
    if gpus < 1:
        raise OutOfRange("gpus", str(gpus))
    default = Scheme.DDP if gpus > 1 else Scheme.NONE
    scheme = setup_choice(Scheme, "sharding", None if value is None else str(value), default)
    if scheme not in TRACEABLE_SCHEMES:
        raise UnknownName("sharding", scheme.value, [s.value for s in TRACEABLE_SCHEMES])
    if (scheme is Scheme.NONE) != (gpus == 1):
        raise ConflictingOptions("sharding", "gpus", scheme.value)
    return scheme


def _quant(method: Method, quant: str | Quant | None) -> Quant:
    """nf4 by default for QLoRA, none otherwise."""
    return choice(Quant, "quant", quant, Quant.NF4 if method is Method.QLORA else Quant.NONE)


def _checked(setup: TraceSetup, impl_given: object) -> TraceSetup:
    for name, value in (("batch", setup.batch), ("seq_len", setup.seq_len),
                        ("train_layers", setup.train_layers)):
        if value < 1:
            raise OutOfRange(name, str(value))
    if setup.alignment is not None and setup.gpus > 1:
        raise ConflictingOptions("gpus", "method", str(setup.gpus))
    if setup.lora_r is not None and setup.lora_r < 1:
        raise OutOfRange("lora_r", str(setup.lora_r))
    if (setup.method is Method.QLORA) != (setup.quant is not Quant.NONE):
        raise ConflictingOptions("quant", "method", setup.quant.value)
    if not setup.uses_lora and (setup.lora_r is not None or setup.lora_targets):
        raise ConflictingOptions("lora_r" if setup.lora_r is not None else "lora_targets",
                                 "method", setup.method.value)
    torch_optimizer = setup.optimizer in (Optimizer.ADAMW, Optimizer.SGD, Optimizer.SGD_MOMENTUM)
    if impl_given not in (None, "") and not torch_optimizer:
        raise ConflictingOptions("optimizer_impl", "optimizer", setup.optimizer.value)
    return setup


def _with_lora_defaults(setup: TraceSetup) -> TraceSetup:
    """peft's defaults for a LoRA setup: its rank and targets, and fp32 adapters over a 4-bit
    base, which peft builds in torch's default dtype and leaves there (bitsandbytes' weight is
    uint8 storage: `vramplan.training.setup.adapters_in_fp32`)."""
    if not setup.uses_lora:
        return setup
    return replace(setup, lora_r=setup.lora_r or DEFAULT_LORA_R,
                   lora_targets=setup.lora_targets or tuple(t.value for t in PEFT_LORA_TARGETS),
                   adapters_fp32=setup.adapters_fp32 or setup.method is Method.QLORA)

