"""The MLP's saved tensors (plain, gated, tiled) and what its activation function keeps and
allocates in backward."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from vramplan.model.architecture import BLOOM_GELU, PYTHON_TANH_GELUS, Architecture, MlpKind
from vramplan.training.activations.moe import moe_layer
from vramplan.training.activations.ops import adapter_tail, linear
from vramplan.training.activations.spec import (
    FP32,
    MLP_TARGETS,
    Activation,
    BlockSpec,
    Ledger,
    dropout_mask,
    unsloth_lora_kernels,
)
from vramplan.vocab import Framework, LoraTarget


def mlp_or_tiled(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation,
                 input_needs_grad: bool) -> None:
    """The MLP's saved tensors (`_mlp`), or under a tiled MLP (`BlockSpec.mlp_tile_share`) its
    input alone, which `TiledMLP` saves whole for its backward."""
    if spec.mlp_tile_share is None:
        _mlp(ledger, arch, spec, n2, input_needs_grad)
    elif input_needs_grad or spec.weights_train or spec.lora_targets & MLP_TARGETS:
        ledger.keep(n2.name, n2.itemsize * arch.hidden_size)


def tiled_mlp_backward(arch: Architecture, spec: BlockSpec, share: Fraction) -> int:
    """Per token of the step, what a tiled MLP's backward holds beyond the block's saved
    tensors: the incoming gradient of its output, which the function's backward holds through
    every tile (the compute dtype), the gradient of its input, made whole before the first tile
    (`torch.zeros_like(x)`, the input's dtype), and the largest tile run again with its
    gradient: what the MLP saves for that tile (less its input, a view of the saved one) and
    the MLP's backward tensors (`mlp_backward_tensors`), that tile's share of the step's
    tokens. Traced (`vramplan.tracer.tiled_mlp` on a Llama block, LoRA and full fine-tuning,
    with and without full checkpointing): the peak holds these beside the saved tensors."""
    n2 = Activation("norm_2_out", spec.residual_bytes)
    untiled = replace(spec, mlp_tile_share=None)
    if unsloth_lora_kernels(arch, spec):
        tile_saved = 2 * spec.compute_bytes * arch.intermediate_size  # `LoRA_MLP`: e and g
    else:
        ledger = Ledger()
        _mlp(ledger, arch, untiled, n2, True)
        tile_saved = sum(item.bytes_per_token for item in ledger.items()
                         if item.name != n2.name)
    tile_backward = mlp_backward_tensors(arch, untiled) * mlp_backward_itemsize(arch, untiled) \
        * arch.expert_intermediate_size
    whole = (n2.itemsize + spec.compute_bytes) * arch.hidden_size
    return whole + int((tile_saved + tile_backward) * share)


def _mlp(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation,
         input_needs_grad: bool) -> None:
    h = arch.hidden_size
    if not (input_needs_grad or spec.weights_train or spec.lora_targets & MLP_TARGETS):
        return  # the MLP of a parallel first block reads a tensor that needs no gradient
    if arch.is_moe and spec.framework is not Framework.LITGPT:
        moe_layer(ledger, arch, spec, n2, input_needs_grad)
        return
    f = arch.token_mlp_width
    targets = spec.lora_targets
    if arch.mlp is MlpKind.GATED:
        _gated_mlp(ledger, arch, spec, n2, input_needs_grad)
    else:
        linear(ledger, spec, n2, h, lora=int(LoraTarget.UP in targets), prefix="up",
               needs_grad=input_needs_grad)
        m = mlp_hidden_itemsize(spec, n2.itemsize)
        if LoraTarget.UP in targets:
            ledger.moment(adapter_tail(spec, m, f))
        if input_needs_grad or spec.weights_train or LoraTarget.UP in targets:
            # else (the first block, down's adapter alone) up's output needs no gradient and the
            # activation saves nothing: down's adapter keeps its input
            for name, itemsize in _activation_saved_tensors(arch, spec):
                ledger.keep(name, max(itemsize, m) * f)
        down_projection(ledger, spec, Activation("act_out", m), f, h)
    dropout_mask(ledger, spec, "mlp_out_dropout_mask", arch.mlp_output_dropout, h)
    if arch.is_moe:
        ledger.keep("router_probs", FP32 * arch.n_experts)


def _gated_mlp(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation,
               input_needs_grad: bool) -> None:
    """A gated MLP's saved tensors: down(act(gate(x)) * up(x))."""
    h, f = arch.hidden_size, arch.token_mlp_width
    targets = spec.lora_targets
    lora_in = int(LoraTarget.GATE in targets) + int(LoraTarget.UP in targets)
    megatron = spec.framework is Framework.MEGATRON
    fused_gate_up = (arch.fused_gate_up or megatron) and spec.framework is not Framework.LITGPT
    if arch.fused_gate_up and spec.lora_on_modules:
        lora_in = min(lora_in, 1)  # peft's one adapter on the fused gate_up nn.Linear
    linear(ledger, spec, n2, h, lora=lora_in, prefix="gate_up", needs_grad=input_needs_grad,
           readers=1 if fused_gate_up else 2)
    m = mlp_hidden_itemsize(spec, n2.itemsize)
    if lora_in and (fused_gate_up or LoraTarget.UP not in targets):
        # the fused gate_up's adapter, or gate's alone, ends before act(gate) exists
        ledger.moment(adapter_tail(spec, m, 2 * f if fused_gate_up else f))
    # act(gate) keeps its input when gate's output needs a gradient, and act * up keeps each
    # factor for the other's gradient (grad_up = grad * act, grad_act = grad * up). Past the
    # first trained block the input needs a gradient and so does everything; in the first,
    # only what an adapter or a trained weight makes need one (with down's adapter alone,
    # nothing: it keeps the product itself; traced, tests/test_trace_agreement.py). Compiled,
    # act(gate) is recomputed from gate in backward (COMPILED_SAVES); Megatron-LM's
    # linear_fc1 makes gate and up as one tensor and its fused SwiGLU saves only that input
    # (megatron/core/fusions/fused_bias_swiglu.py `SwiGLUFunction`); Liger's SiLU-mul saves
    # gate and up, not the activation (`BlockSpec.liger_kernels`)
    trained = input_needs_grad or spec.weights_train
    gate_grad = trained or LoraTarget.GATE in targets or (fused_gate_up and lora_in > 0)
    up_grad = trained or LoraTarget.UP in targets or (fused_gate_up and lora_in > 0)
    # Megatron's and Liger's act(gate) * up are one autograd function, which saves both its
    # inputs once either needs a gradient; compiled, up's gradient recomputes act(gate) from
    # gate's output
    one_function = megatron or spec.liger_kernels
    if gate_grad or (up_grad and (one_function or spec.compiled)):
        ledger.keep("gate_out", m * f)
    if up_grad and not (one_function or spec.compiled):
        ledger.keep("act_out", m * f)
    if LoraTarget.UP in targets and not fused_gate_up:
        # up's adapter ends beside gate's output and act(gate)
        ledger.moment(adapter_tail(spec, m, f))
    if gate_grad or (up_grad and one_function):
        ledger.keep("up_out", m * f)
    down_projection(ledger, spec, Activation("mlp_hidden", m), f, h)


def mlp_hidden_itemsize(spec: BlockSpec, input_itemsize: int) -> int:
    """Bytes per element of the MLP's intermediate-wide tensors (gate, activation, product): a
    quantized base hands its outputs back in its input's dtype, and the activation and the
    product, not autocast's ops, stay in it; else the compute dtype."""
    return input_itemsize if spec.base_output_in_input_dtype else spec.compute_bytes


def down_projection(ledger: Ledger, spec: BlockSpec, product: Activation, width: int,
                    hidden: int = 0) -> None:
    """What the MLP's down projection keeps, reading the product act(gate) * up of a gated MLP
    or the activation's output; with `hidden` (its output's width), the moment its adapter
    ends, its input alive beside it."""
    adapted = LoraTarget.DOWN in spec.lora_targets
    linear(ledger, spec, product, width, lora=int(adapted), prefix="down", out_width=hidden)
    if adapted and hidden:
        product_alive = 0 if ledger.has(product.name) else product.itemsize * width
        ledger.moment(product_alive + adapter_tail(spec, spec.compute_bytes, hidden))


_SAVES_OUTPUT = frozenset({"relu"})
"""Activations whose backward reads their output, not their input: transformers' "relu" is
`nn.ReLU`, and PyTorch's `tools/autograd/derivatives.yaml` gives `relu: threshold_backward(grad,
result, 0)`, so autograd saves the result, which the next linear (fc2) saves anyway."""


def _activation_saved(arch: Architecture) -> str:
    """The intermediate-wide tensor a plain MLP's activation saves: its input (SiLU, GELU) or,
    for ReLU, its output."""
    return "act_out" if arch.activation in _SAVES_OUTPUT else "up_out"


def _activation_saved_tensors(arch: Architecture, spec: BlockSpec) -> tuple[tuple[str, int], ...]:
    """What a plain MLP's activation saves, each intermediate-wide: name and bytes per element.

    transformers' tanh GELU in Python under autocast (`amp`) on CUDA: `torch.pow` is on CUDA
    autocast's fp32 list (aten/src/ATen/autocast_mode.h `AT_FORALL_FP32`; docs/source/amp.rst
    "CUDA Ops that can autocast to float32"), so pow casts the 16-bit input to fp32 and saves
    that copy (the 16-bit input itself is saved by nothing), the sum it joins is fp32 by type
    promotion, and so are the tanh output and `1 + tanh(...)`; only `0.5 * x` stays 16-bit. The
    product `0.5 * x * (1 + tanh)` is fp32, cast back to 16 bits by the next linear (counted
    there). Without autocast every tensor of the chain is in the compute dtype."""
    c = spec.compute_bytes
    if _fp32_gelu_chain(arch, spec):
        return (("up_out_fp32", FP32), ("act_tanh", FP32), ("act_half_x", c),
                ("act_one_plus_tanh", FP32))
    return ((_activation_saved(arch), c),
            *((f"act_intermediate_{index}", c)
              for index in range(_activation_extra_tensors(arch, spec))))


def _fp32_gelu_chain(arch: Architecture, spec: BlockSpec) -> bool:
    """A Python tanh GELU under autocast: on CUDA its chain runs in fp32 from `pow` on
    (`_activation_saved_tensors`)."""
    return spec.autocast and _activation_extra_tensors(arch, spec) > 0


def _activation_extra_tensors(arch: Architecture, spec: BlockSpec) -> int:
    """Intermediate-wide tensors an activation saves beyond its input (compiled: none, the
    pointwise chain is recomputed from its input, COMPILED_SAVES)."""
    if spec.compiled:
        return 0
    # transformers' tanh GELU in Python (`PYTHON_TANH_GELUS`): autograd saves the tanh output,
    # `0.5 * x` and `1 + tanh(...)` besides x. litgpt calls torch's GELU; Megatron-LM its fused
    # bias-GELU, which saves only its input (megatron/core/fusions/fused_bias_gelu.py
    # `GeLUFunction`)
    if spec.framework not in (Framework.LITGPT, Framework.MEGATRON) \
            and arch.activation in PYTHON_TANH_GELUS:
        return 3
    return 0


BLOOM_GELU_BACKWARD_TENSORS = 6
"""Intermediate-wide tensors alive at the peak of BloomGelu's backward (models/bloom/
modeling_bloom.py `bloom_gelu_back`, written out in Python): the incoming gradient, `tanh_out`,
`0.5 * x`, `1 - tanh_out * tanh_out`, `0.79788456 + 0.1070322243 * x * x` and their product;
traced (vramplan.tracer, bloom full fp32, 2 x 128 tokens), the step's peak holds these six."""


def mlp_backward_tensors(arch: Architecture, spec: BlockSpec) -> int:
    """Intermediate-wide tensors the MLP's backward holds at once: d(act*up), d(act), d(up)
    in a gated MLP; d(act) and d(up) in a plain one whose activation is one ATen kernel (ReLU,
    `gelu` with or without tanh: `threshold_backward`/`gelu_backward` read the incoming
    gradient and one saved tensor); three through a Python tanh GELU, whose chain of
    elementwise ops backpropagates through an intermediate of its own;
    `BLOOM_GELU_BACKWARD_TENSORS` for BLOOM's own GELU. Traced (vramplan.tracer, StarCoder2 and
    OPT under full checkpointing, 2 x 128 tokens): the recomputed block's MLP backward holds
    two beside its saved tensors. One under Liger-Kernel's SwiGLU."""
    if arch.activation == BLOOM_GELU:
        return BLOOM_GELU_BACKWARD_TENSORS
    if arch.mlp is MlpKind.GATED and spec.liger_kernels:
        # Liger-Kernel's SwiGLU backward writes the gradients of gate and up over the saved
        # gate and up (liger_kernel/ops/swiglu.py `swiglu_backward`: `_swiglu_backward_kernel`
        # stores into a and b, `return a, b`, since 45055fed): d(act*up) alone is new
        return 1
    if arch.mlp is MlpKind.PLAIN and not _activation_extra_tensors(arch, spec):
        return 2
    return 3


def mlp_backward_itemsize(arch: Architecture, spec: BlockSpec) -> int:
    """Bytes per element of the MLP's backward tensors: fp32 through a Python tanh GELU under
    autocast, whose chain runs in fp32 on CUDA (`_activation_saved_tensors`), so its gradients
    do too (traced with `vramplan.tracer.cuda_autocast`: three fp32 intermediate-wide tensors
    beside the saved ones at the peak of Phi's MLP backward); and the dtype of the MLP's
    intermediate tensors where a quantized base hands them back in its input's (fp32 under
    `amp`, `mlp_hidden_itemsize`; traced, QLoRA under `amp` and full checkpointing: the
    recomputed MLP's backward peaks with three fp32 intermediate-wide tensors, the product's
    gradient, the product and the first gradient of its backward). Dense MLPs only: a routed
    expert's backward under a quantized base is not traced (the tracer's grouped experts run in
    bf16 alone)."""
    if _fp32_gelu_chain(arch, spec):
        return FP32
    if arch.is_moe:
        return spec.compute_bytes
    return max(spec.compute_bytes, mlp_hidden_itemsize(spec, spec.residual_bytes))
