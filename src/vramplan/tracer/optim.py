"""The optimizer side of a step: which tensors it updates (master copies or the weights) and how."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from vramplan.tracer.bnb_emulation import Adam8bitEmulated
from vramplan.tracer.setup import TraceSetup
from vramplan.vocab import Optimizer, OptimizerImpl, Precision

LEARNING_RATE = 1e-5
SGD_MOMENTUM = 0.9


@dataclass
class OptimizerSide:
    """The optimizer, the tensors it updates and, in `mixed` precision, their fp32 masters.

    `mixed` emulates a master-weight optimizer: fp32 copies of the bf16 trainable weights; at the
    step each bf16 gradient becomes an fp32 gradient of its master (the bf16 one is freed as it is
    converted), the optimizer updates the masters, and the bf16 weights are copied back.
    """

    optimizer: torch.optim.Optimizer
    params: list[torch.Tensor]
    masters: list[torch.Tensor] = field(default_factory=list)

    def step(self, on_master_grad: Callable[[torch.Tensor], None]) -> None:
        """The optimizer step; `on_master_grad` sees each fp32 gradient made for a master."""
        if self.masters:
            self._grads_to_masters(on_master_grad)
        self.optimizer.step()
        if self.masters:
            with torch.no_grad():
                for param, master in zip(self.params, self.masters, strict=True):
                    param.copy_(master)

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)  # the masters' grads in `mixed`
        for param in self.params:
            param.grad = None

    def _grads_to_masters(self, on_master_grad: Callable[[torch.Tensor], None]) -> None:
        for param, master in zip(self.params, self.masters, strict=True):
            grad = param.grad
            param.grad = None
            if grad is not None:
                master.grad = grad.float()
                on_master_grad(master.grad)
            del grad


def make_optimizer_side(model: nn.Module, setup: TraceSetup) -> OptimizerSide:
    params: list[torch.Tensor] = [p for p in model.parameters() if p.requires_grad]
    if setup.precision is Precision.MIXED:
        masters = [p.detach().float() for p in params]
        return OptimizerSide(make_optimizer(masters, setup), params, masters)
    return OptimizerSide(make_optimizer(params, setup), params)


def make_optimizer(params: list[torch.Tensor], setup: TraceSetup) -> torch.optim.Optimizer:
    foreach = setup.optimizer_impl is OptimizerImpl.FOREACH
    fused = setup.optimizer_impl is OptimizerImpl.FUSED
    match setup.optimizer:
        case Optimizer.ADAMW:
            return torch.optim.AdamW(params, lr=LEARNING_RATE, foreach=foreach, fused=fused)
        case Optimizer.SGD_MOMENTUM:
            return torch.optim.SGD(params, lr=LEARNING_RATE, momentum=SGD_MOMENTUM,
                                   foreach=foreach, fused=fused)
        case Optimizer.SGD:
            return torch.optim.SGD(params, lr=LEARNING_RATE, foreach=foreach, fused=fused)
        case Optimizer.ADAFACTOR:
            from transformers.optimization import Adafactor

            # The HF Trainer's settings for optim="adafactor"
            # (transformers trainer.py, get_optimizer_cls_and_kwargs)
            return Adafactor(params, lr=LEARNING_RATE,  # type: ignore[no-untyped-call]
                             scale_parameter=False, relative_step=False)
        case Optimizer.ADAMW_8BIT | Optimizer.PAGED_ADAMW_8BIT:
            return Adam8bitEmulated(params, eight_bit=True, lr=LEARNING_RATE)
        case Optimizer.PAGED_ADAMW:
            return Adam8bitEmulated(params, eight_bit=False, lr=LEARNING_RATE)
        case Optimizer.NONE:  # refused by trace.setup.choice (NOT_TRACEABLE)
            raise ValueError("a trace needs an optimizer")
