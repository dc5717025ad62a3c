"""EMULATION of bitsandbytes storage: 4-bit base weights (QLoRA) and 8-bit / paged optimizers.

bitsandbytes needs a GPU, so a trace reproduces what it *allocates*, tensor for tensor, without its
kernels; the arithmetic is not bitsandbytes' and the values are meaningless. Read from
bitsandbytes-foundation/bitsandbytes (functional.py `quantize_4bit`, `dequantize_4bit`;
autograd/_functions.py `MatMul4Bit`; nn/modules.py `Linear4bit`; optim/optimizer.py
`Optimizer2State.init_state`):

- a 4-bit weight of n values is a uint8 tensor of ceil(n/2) bytes, plus an fp32 absmax per block of
  64 values and a 16-entry fp32 code; with double quantization (`-dq`) the absmax is itself uint8
  (blockwise, 256 per block) with an fp32 absmax per 256, a scalar fp32 offset, and the shared
  256-entry fp32 dynamic map;
- `MatMul4Bit` dequantizes the whole weight to the compute dtype in forward and again in backward
  (a transient out×in tensor), and saves only the packed weight, not the input;
- 8-bit Adam keeps two uint8 states per value and two fp32 absmax per block of 256 values; tensors
  under 4096 values (`min_8bit_size`) keep fp32 states; the signed and unsigned maps (256 fp32
  each) are shared; the update is one fused in-place kernel (no temporaries);
- paged optimizers put states in CUDA managed memory, outside PyTorch's allocator.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from torch import nn

from vramplan.i18n import Lang, translate
from vramplan.units import ceil_div
from vramplan.vocab import Quant

BLOCK_4BIT = 64
"""functional.py quantize_4bit: blocksize=64 (the default used by transformers' bnb config)."""
BLOCK_NESTED = 256
"""functional.py quantize_4bit, compress_statistics: quantize_blockwise(absmax, blocksize=256)."""
BLOCK_8BIT_OPTIMIZER = 256
"""optim/optimizer.py Optimizer2State.init_state: blocks = ceil(n / 256)."""
MIN_8BIT_SIZE = 4096
"""optim/optimizer.py: min_8bit_size=4096; smaller tensors keep 32-bit states."""
CODE_4BIT_ENTRIES = 16
DYNAMIC_MAP_ENTRIES = 256

LABEL_4BIT = translate("trace.label.4bit", Lang.EN)
LABEL_8BIT = translate("trace.label.8bit", Lang.EN)
LABEL_PAGED = translate("trace.label.paged", Lang.EN)


class _SharedMaps:
    """bitsandbytes keeps one dynamic map per device (functional.name2qmap); so do we, per run."""

    def __init__(self) -> None:
        self._maps: dict[str, torch.Tensor] = {}

    def get(self, name: str) -> torch.Tensor:
        if name not in self._maps:
            self._maps[name] = torch.zeros(DYNAMIC_MAP_ENTRIES, dtype=torch.float32)
        return self._maps[name]


class _Dequantize4bitMatmul(torch.autograd.Function):
    """MatMul4Bit: dequantize, linear; backward dequantizes again for the input gradient."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, layer: Linear4bitEmulated) -> torch.Tensor:
        ctx.layer = layer
        weight = layer.dequantized_weight(x.dtype)
        return nn.functional.linear(x, weight, layer.bias)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor, None]:
        weight = ctx.layer.dequantized_weight(grad_output.dtype)
        return torch.matmul(grad_output, weight), None


class Linear4bitEmulated(nn.Module):
    """bnb.nn.Linear4bit's storage and memory behaviour, for a frozen base weight."""

    offset: torch.Tensor

    def __init__(self, in_features: int, out_features: int, bias: torch.Tensor | None, *,
                 quant: Quant, compute_dtype: torch.dtype, maps: _SharedMaps) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.compute_dtype = compute_dtype
        n = in_features * out_features
        blocks = ceil_div(n, BLOCK_4BIT)
        # Params4bit: packed uint8 of shape ((n + 1) // 2, 1), frozen.
        self.weight = nn.Parameter(torch.zeros(((n + 1) // 2, 1), dtype=torch.uint8),
                                   requires_grad=False)
        self.bias = None if bias is None else nn.Parameter(bias.detach(), requires_grad=False)
        self.register_buffer("code", torch.zeros(CODE_4BIT_ENTRIES, dtype=torch.float32))
        self.nested = quant in (Quant.NF4_DQ, Quant.FP4_DQ)
        if self.nested:
            self.register_buffer("absmax", torch.zeros(blocks, dtype=torch.uint8))
            self.register_buffer("absmax2", torch.zeros(ceil_div(blocks, BLOCK_NESTED),
                                                        dtype=torch.float32))
            self.register_buffer("offset", torch.zeros((), dtype=torch.float32))
            self.register_buffer("code2", maps.get("dynamic"))
        else:
            self.register_buffer("absmax", torch.zeros(blocks, dtype=torch.float32))
        self._blocks = blocks

    def dequantized_weight(self, dtype: torch.dtype) -> torch.Tensor:
        """dequantize_4bit: an out×in tensor in the compute dtype (nested: fp32 absmax first)."""
        if self.nested:
            absmax = torch.zeros(self._blocks, dtype=torch.float32)  # dequantize_blockwise output
            absmax += self.offset
            del absmax
        return torch.full((self.out_features, self.in_features), 1e-3, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        input_dtype = x.dtype
        x = x.to(self.compute_dtype)
        out: torch.Tensor = _Dequantize4bitMatmul.apply(x, self)  # type: ignore[no-untyped-call]
        return out.to(input_dtype)


def quantize_linears(blocks: nn.Module, quant: Quant, compute_dtype: torch.dtype) -> None:
    """Replace every linear layer in `blocks` (and LoRA's base layers) by its 4-bit emulation,
    as transformers' bitsandbytes integration does (the output head stays 16-bit)."""
    maps = _SharedMaps()
    for parent in list(blocks.modules()):
        for name, child in list(parent.named_children()):
            shape = _linear_shape(child)
            if shape is None or any(p.requires_grad for p in child.parameters()):
                continue
            in_features, out_features, bias = shape
            setattr(parent, name, Linear4bitEmulated(in_features, out_features, bias, quant=quant,
                                                     compute_dtype=compute_dtype, maps=maps))


def adapters_as_on_bitsandbytes(model: nn.Module) -> None:
    """Give each peft LoRA layer over an emulated 4-bit base the forward of peft's own layer
    for bitsandbytes' 4-bit linears, which peft picks on a GPU (src/peft/tuners/lora/bnb.py
    `Linear4bit.forward`, read at peft 0.21.2): the base's output cloned ("for 4bit, we need
    to defensively clone here"), the input cast to the adapters' dtype and their output back to
    the base's only when autocast is off (`requires_conversion = not
    torch.is_autocast_enabled()`), then a sum in the base's dtype. peft's plain `Linear.forward`
    casts whatever autocast does and sums in the promoted dtype."""
    from peft.tuners.lora import Linear as LoraLinear

    for module in model.modules():
        if isinstance(module, LoraLinear) \
                and isinstance(module.get_base_layer(), Linear4bitEmulated):
            module.forward = _bnb_lora_forward.__get__(module)  # type: ignore[method-assign]


def _bnb_lora_forward(self: Any, x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    result = self.base_layer(x, *args, **kwargs).clone()
    for name in self.active_adapters:
        if name not in self.lora_A:
            continue
        lora_a, lora_b = self.lora_A[name], self.lora_B[name]
        # on a GPU `torch.is_autocast_enabled()` reads CUDA's autocast; a CPU trace runs the CPU's
        converts = not torch.is_autocast_enabled(x.device.type)
        if converts:
            expected = result.dtype
            x = self._cast_input_dtype(x, lora_a.weight.dtype)
        output = lora_b(lora_a(self.lora_dropout[name](x))) * self.scaling[name]
        if converts:
            output = output.to(expected)
        result = result + output
    return cast(torch.Tensor, result)


def _linear_shape(module: nn.Module) -> tuple[int, int, torch.Tensor | None] | None:
    """(in, out, bias) of an nn.Linear or a GPT-2 style Conv1D (weight stored in×out)."""
    if isinstance(module, nn.Linear):
        return module.in_features, module.out_features, module.bias
    if type(module).__name__ == "Conv1D":
        weight = cast(torch.Tensor, module.weight)
        return int(weight.shape[0]), int(weight.shape[1]), cast(torch.Tensor | None, module.bias)
    return None


class Adam8bitEmulated(torch.optim.Optimizer):
    """bitsandbytes (Paged)AdamW8bit / PagedAdamW storage; the update is an in-place placeholder
    (bitsandbytes updates in one fused kernel with no temporaries, and so does this)."""

    def __init__(self, params: Any, *, eight_bit: bool, lr: float = 1e-5) -> None:
        super().__init__(params, {"lr": lr})
        self.eight_bit = eight_bit
        self._maps = _SharedMaps()

    @torch.no_grad()
    def step(self, closure: Any = None) -> None:  # type: ignore[override]
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if not state:
                    self._init_state(param, state)
                state["step"] += 1
                param.add_(param.grad, alpha=-group["lr"])

    def _init_state(self, param: torch.Tensor, state: dict[str, Any]) -> None:
        state["step"] = 0
        if not self.eight_bit or param.numel() < MIN_8BIT_SIZE:
            state["state1"] = torch.zeros_like(param, dtype=torch.float32)
            state["state2"] = torch.zeros_like(param, dtype=torch.float32)
            return
        blocks = ceil_div(param.numel(), BLOCK_8BIT_OPTIMIZER)
        state["state1"] = torch.zeros_like(param, dtype=torch.uint8)
        state["qmap1"] = self._maps.get("dynamic")
        state["state2"] = torch.zeros_like(param, dtype=torch.uint8)
        state["qmap2"] = self._maps.get("udynamic")
        state["absmax1"] = torch.zeros(blocks, dtype=torch.float32)
        state["absmax2"] = torch.zeros(blocks, dtype=torch.float32)
