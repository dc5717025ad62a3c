"""Mixture-of-experts layers: the router, the routed tokens' copies, the experts (grouped or one
by one, with their LoRA adapters) and the shared experts."""

from __future__ import annotations

from vramplan.model.architecture import Architecture, MlpKind
from vramplan.training.activations.ops import linear
from vramplan.training.activations.spec import (
    FP32,
    GATE_UP_TARGETS,
    MLP_TARGETS,
    Activation,
    BlockSpec,
    Ledger,
)
from vramplan.vocab import Framework, LoraTarget

ROUTING_INDEX_VECTORS = 4
"""int64 vectors of experts_per_token entries a token leaves in a transformers MoE layer's graph:
the top-k indices, and the sort permutation, its inverse and the gather index of
`grouped_mm_experts_forward` (integrations/moe.py), which index ops keep for backward."""


def moe_layer(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation,
              input_needs_grad: bool) -> None:
    """A transformers 5 mixture-of-experts layer (the `grouped_mm` experts path, the default,
    integrations/moe.py `grouped_mm_experts_forward`), per token with k routed experts: the
    router's probabilities (fp32 softmax or sigmoid) and, when it trains, its input (an fp32 copy
    for DeepSeek's and GLM's routers); the gathered input of each routed copy when the experts
    train (grouped_mm keeps its input for the weight's gradient); the gate_up output (act(gate)
    keeps the gate half, a view that keeps it whole; gpt-oss's clamped gate keeps four
    intermediate-wide tensors); act(gate) * up; the down projection's input when the experts
    train; its output and the routing weights (`proj_out * sample_weights`: both need a gradient
    once the layer's input does); the routing indices. Shared experts are a dense MLP on the
    layer's input. Llama 4's experts see every token (`experts_see_every_token`): n_experts
    copies of each, and `routed_in * router_scores` keeps the repeated input. Megatron-LM's
    experts keep no act(gate) (its fused SwiGLU, as in `_mlp`), and since April 2025 no down
    projection output (`BlockSpec.moe_output_weighted`).

    transformers' per-expert loop before v5.0.0 (`BlockSpec.moe_expert_loop`; transformers
    v4.48.1 models/mixtral/modeling_mixtral.py `MixtralSparseMoeBlock.forward`) saves the same
    tensors, and more: the routing weights are cast to the layer's input's dtype
    (`routing_weights.to(hidden_states.dtype)`), so the weighted output `expert_layer(
    current_state) * routing_weights[top_x, idx, None]` is in that dtype too, and
    `final_hidden_states.index_add_(0, top_x, ...)` saves it whole (torch v2.4.1
    tools/autograd/derivatives.yaml `index_add`: the source's gradient is `grad.index_select(dim,
    index).expand_as(source)`, and the generated `IndexAddBackward0` keeps `source_`). Under QLoRA
    each expert's linears are `Linear4bit` modules, which cast their input to the compute dtype
    and their output back (`out.to(inp_dtype)`, bitsandbytes 0.43.3 nn/modules.py
    `Linear4bit.forward`): behind a norm kept in fp32, w1's and w3's outputs, act(w1) and w2's
    output are fp32 too (autocast casts neither `silu` nor `mul`)."""
    c, h = spec.compute_bytes, arch.hidden_size
    # the experts' tensors: the compute dtype, or their input's when the loop's experts are
    # Linear4bit modules; the loop's routing weights and weighted outputs: the input's dtype
    loop = spec.moe_expert_loop
    e = n2.itemsize if loop and spec.base_output_in_input_dtype else c
    weights = FP32 if arch.router_fp32 else n2.itemsize if loop else c
    width = arch.expert_intermediate_size
    train = spec.weights_train
    routed = arch.n_experts if arch.experts_see_every_token else arch.experts_per_token
    if arch.shared_experts_first:
        _shared_experts_mlp(ledger, arch, spec, n2, e=e, input_needs_grad=input_needs_grad)
    _router(ledger, arch, spec, n2)
    # peft's adapters on the fused experts (`BlockSpec.experts_merged_per_token`): the merged
    # weight's gradient needs the matmul's input, as a trained weight's does
    merged = spec.experts_merged_per_token > 0
    adapted = spec.lora_targets if merged else frozenset()
    gate_up_adapted = bool(GATE_UP_TARGETS & adapted)
    if train or gate_up_adapted:
        # Megatron-Core all-gathers the routed tokens over the expert-tensor-parallel group
        # before its grouped fc1, which keeps them (`BlockSpec.experts_gathered`): counted that
        # many times, so the per-GPU split over tensor parallelism leaves them whole
        ledger.keep("routed_input", c * routed * h * spec.experts_gathered)
    if merged:
        ledger.keep("experts_merged_weights", spec.experts_merged_per_token)
    gated = arch.mlp is MlpKind.GATED
    ledger.keep("experts_gate_up_out", e * routed * width * (2 if gated else 1))
    # Megatron-LM's experts run its fused SwiGLU as its dense MLP does (`_mlp`): only the
    # fc1 output is saved, not act(gate)
    megatron = spec.framework is Framework.MEGATRON
    glu_tensors = 4 if arch.swiglu_limit is not None else 1
    if not megatron:
        ledger.keep("experts_act_out", e * routed * width * glu_tensors)
    if grouped_experts_combine(arch, spec):
        _activated_copies(ledger, arch, spec, routed_input_kept=train or gate_up_adapted,
                          product_kept=train or LoraTarget.DOWN in adapted)
    elif arch.experts_see_every_token:
        # Llama4TextExperts.forward's down projection (`torch.bmm((up * act(gate)), down)`):
        # its output beside the product and the weighted input (locals unless saved) and, in
        # the forward a checkpoint recomputes, the sum's gradient made contiguous (one copy
        # per expert each). Traced (Llama 4, LoRA, full checkpointing, 2 x 128 tokens): the
        # recomputed block peaks at that bmm
        kept_in, kept_product = train or gate_up_adapted, train or LoraTarget.DOWN in adapted
        ledger.moment(2 * _routed_output_bytes(arch, spec)
                      + (0 if kept_in else c * routed * h)
                      + (0 if kept_product else e * routed * width))
    if train or LoraTarget.DOWN in adapted:
        ledger.keep("experts_down_input", e * routed * width)
    if not arch.experts_see_every_token:
        if spec.moe_output_weighted:
            ledger.keep("experts_down_out", e * routed * h)
        ledger.keep("routing_weights", weights * routed)
    if grouped_experts_combine(arch, spec):
        _reordered_copies(ledger, arch, spec, routed_input_kept=train or gate_up_adapted)
    if loop:
        ledger.keep("experts_weighted_out", n2.itemsize * routed * h)
        _loop_expert_adapters(ledger, arch, spec, n2, e=e, routed=routed)
    if not arch.shared_experts_first:
        _shared_experts_mlp(ledger, arch, spec, n2, e=e, input_needs_grad=input_needs_grad)
    _shared_expert_gate(ledger, arch, e=e)


def _router(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation) -> None:
    """What `moe_layer`'s router keeps: its input when it trains (an fp32 copy for DeepSeek's
    and GLM's), its fp32 probabilities, the routing indices (but the inverse permutation, made
    last: `_reordered_copies`), and Llama 4's repeated input and weights."""
    c, h = spec.compute_bytes, arch.hidden_size
    if spec.weights_train:
        ledger.keep(n2.name, n2.itemsize * h)  # the router's (and shared experts') input
        if arch.router_fp32:
            ledger.keep("router_input_fp32", FP32 * h)
    ledger.keep("router_probs", FP32 * arch.n_experts)
    if arch.experts_see_every_token:
        # Llama4Router: top-k indices; `routed_in * router_scores` keeps both factors
        ledger.keep("routing_indices", 8 * arch.experts_per_token)
        ledger.keep("routed_in_repeated", c * arch.n_experts * h)
        ledger.keep("routing_weights", c * arch.n_experts)
    else:
        vectors = ROUTING_INDEX_VECTORS - int(grouped_experts_combine(arch, spec))
        ledger.keep("routing_indices", 8 * vectors * arch.experts_per_token)


def grouped_experts_combine(arch: Architecture, spec: BlockSpec) -> bool:
    """The layer's experts run transformers 5's `grouped_mm_experts_forward`
    (integrations/moe.py, v5.25), whose last steps weight the routed copies' outputs
    (`weighted_out = proj_out * sample_weights_g`), put them back in token order
    (`weighted_out[inv_perm]`) and sum each token's copies: not the per-expert loop of earlier
    releases (`BlockSpec.moe_expert_loop`), Megatron-LM's dispatcher, nor Llama 4's experts that
    see every token."""
    return arch.is_moe and not spec.moe_expert_loop and not arch.experts_see_every_token \
        and spec.framework is not Framework.MEGATRON


def routed_weights_itemsize(arch: Architecture, spec: BlockSpec) -> int:
    """Bytes per element of the weighted routed outputs: the routing weights' dtype wins the
    product's type promotion, fp32 where the router hands back fp32 top-k weights (DeepSeek's
    and GLM's routers compute in fp32: `Architecture.router_fp32`), else the compute dtype
    (Qwen's, OLMoE's and gpt-oss's cast their top-k values to the logits' dtype)."""
    return FP32 if arch.router_fp32 else spec.compute_bytes


def _activated_copies(ledger: Ledger, arch: Architecture, spec: BlockSpec, *,
                      routed_input_kept: bool, product_kept: bool) -> None:
    """The moment `grouped_mm_experts_forward` (`grouped_experts_combine`) makes act(gate) *
    up over the routed copies: beyond what is saved, the gathered input (unless the experts'
    matmul saved it), the gate/up biases gathered for every copy where the experts have biases
    (`self.gate_up_proj_bias[expert_ids_g]`, a local: gpt-oss), the product unless the down
    projection saves it, and, in the forward a non-reentrant checkpoint recomputes, the
    gradient the sum's backward handed back (`_reordered_copies`); then, with biases, the
    moment the down projection's are gathered. Traced (gpt-oss, LoRA, full checkpointing, 2 x
    128 tokens): 4 routed copies of 16 experts of width 128, the step peaks at that product; 2
    copies of 8 experts of width 96, at the down projection's biases."""
    c, k, h = spec.compute_bytes, arch.experts_per_token, arch.hidden_size
    width = arch.expert_intermediate_size
    gathered = 0 if routed_input_kept else c * k * h
    gated = 2 if arch.mlp is MlpKind.GATED else 1
    biases = c * k * gated * width if arch.mlp_bias else 0
    product = 0 if product_kept else c * k * width
    # gpt-oss's `_apply_gate` keeps its clamped `up` in a local that nothing saves (`up + 1`
    # is what the product keeps)
    clamped_up = c * k * width if arch.swiglu_limit is not None else 0
    incoming = routed_weights_itemsize(arch, spec) * k * h
    ledger.moment(gathered + biases + product + clamped_up + incoming)
    if arch.mlp_bias:
        # the down projection's biases gathered for every copy, before `selected_biases` lets
        # go of the gate/up ones
        ledger.moment(gathered + biases + c * k * h + product + incoming)


def _reordered_copies(ledger: Ledger, arch: Architecture, spec: BlockSpec, *,
                      routed_input_kept: bool) -> None:
    """The end of `grouped_mm_experts_forward` (`grouped_experts_combine`): the weighted
    outputs (`routed_weights_itemsize`), then the inverse permutation (`inv_perm[perm] =
    arange(...)`, which the reordering `weighted_out[inv_perm]` saves) and the reordered copy.
    When the inverse permutation is made, the gathered input (a local of the function, unless
    the experts' matmul saved it) and the weighted outputs are alive beyond what was saved, and
    one more copy-wide tensor: the reordered copy in a forward, or, in the forward a
    non-reentrant checkpoint recomputes, the gradient the sum's backward handed back before the
    reordering's backward unpacked the permutation (the recomputation stops there: nothing is
    saved after it). Traced (vramplan.tracer, Qwen3-MoE, 8 routed copies, LoRA, full
    checkpointing, 2 x 128 tokens): the step peaks at that `arange`, with the gathered input,
    the weighted outputs and the sum's gradient beside the recomputed saved tensors (gpt-oss:
    and its gathered down-projection biases)."""
    c, k, h = spec.compute_bytes, arch.experts_per_token, arch.hidden_size
    gathered = 0 if routed_input_kept else c * k * h
    # experts with biases gather the down projection's bias for every copy
    # (`self.down_proj_bias[expert_ids_g]`, gpt-oss), a local too
    biases = c * k * h if arch.mlp_bias else 0
    ledger.moment(gathered + biases + 2 * routed_weights_itemsize(arch, spec) * k * h)
    ledger.keep("routing_inverse_permutation", 8 * k)


def _loop_expert_adapters(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation, *,
                          e: int, routed: int) -> None:
    """peft's adapters on the `nn.Linear` experts of transformers' per-expert loop (before
    v5.0.0: `BlockSpec.moe_expert_loop`), as on a dense MLP's linears (`linear`): lora_A keeps
    the expert's rows (`current_state = hidden_states[None, top_x]`, one gathered copy per
    routed copy of a token, which its gate and up adapters share), or each adapter its own fp32
    copy of them, and the down adapter the product act(gate) * up; each lora_A output is per row.
    Measured on the CPU (2026-12-06, transformers 4.48.3, peft 0.14.0, a 2-layer Mixtral of 8
    experts, top-2, hidden 128, width 352, 2 x 128 tokens, r 8, bf16 weights, no autocast): 2,016
    bytes a token a layer more with w1, w2 and w3 adapted than with q and v alone, 5,056 with
    fp32 adapters, what these terms give."""
    targets = spec.lora_targets if spec.lora_on_modules else frozenset()
    if not targets & MLP_TARGETS:
        return
    h, width = arch.hidden_size, arch.expert_intermediate_size
    gated = arch.mlp is MlpKind.GATED
    lora_in = int(LoraTarget.UP in targets) + int(gated and LoraTarget.GATE in targets)
    if arch.fused_gate_up:
        lora_in = min(lora_in, 1)  # one adapter on a fused gate_up nn.Linear
    linear(ledger, spec, Activation("routed_input", n2.itemsize), routed * h, lora=lora_in,
           prefix="experts_gate_up", readers=1 if arch.fused_gate_up or not gated else 2,
           copies=routed)
    linear(ledger, spec, Activation("experts_down_input", e), routed * width,
           lora=int(LoraTarget.DOWN in targets), prefix="experts_down", copies=routed)


def _routed_output_bytes(arch: Architecture, spec: BlockSpec) -> int:
    """Per token, Llama 4's routed experts' output: one compute-dtype copy per expert."""
    return spec.compute_bytes * arch.n_experts * arch.hidden_size


SHARED_EXPERTS_PREFIX = "shared_"
"""The prefix of the names `_shared_experts_mlp` saves under."""


def _shared_experts_mlp(ledger: Ledger, arch: Architecture, spec: BlockSpec, n2: Activation, *,
                        e: int, input_needs_grad: bool) -> None:
    """A MoE layer's shared experts (`moe_layer`): a dense MLP on the layer's input whose tensors
    are `e` bytes per value, in the forward's order: before the router and the routed experts
    where the model runs them first (`Architecture.shared_experts_first`: Qwen2-MoE, whose
    recomputed layer then reaches the routed experts' moments with them saved; traced, its
    LoRA under full checkpointing with 8 routed copies peaks at the reordering with the shared
    expert's tensors made), after them otherwise."""
    if arch.n_shared_experts:
        h = arch.hidden_size
        shared = arch.shared_experts_width
        targets = spec.lora_targets
        lora_in = int(LoraTarget.GATE in targets) + int(LoraTarget.UP in targets)
        linear(ledger, spec, n2, h, lora=lora_in, prefix="shared_gate_up",
               needs_grad=input_needs_grad, readers=2)
        ledger.keep("shared_gate_out", e * shared)
        if spec.framework is not Framework.MEGATRON:  # its fused SwiGLU keeps no act(gate)
            ledger.keep("shared_act_out", e * shared)
        if arch.experts_see_every_token:
            # Llama4TextMoe.forward runs its shared expert while the routed experts' output, a
            # copy of every token per expert, waits for the sum (`out.add_(routed_out...sum(0))`):
            # at act(gate) * up, up's output and the product are alive beside it, and, in the
            # forward a checkpoint recomputes, the sum's gradient made contiguous, as wide as
            # that output (the reshape's backward). Traced (Llama 4, full fine-tuning, full
            # checkpointing, 2 x 128 tokens): the recomputed block peaks there
            ledger.moment(2 * _routed_output_bytes(arch, spec) + 2 * e * shared)
        ledger.keep("shared_up_out", e * shared)
        linear(ledger, spec, Activation("shared_hidden", e), shared,
               lora=int(LoraTarget.DOWN in targets), prefix="shared_down")


def _shared_expert_gate(ledger: Ledger, arch: Architecture, *, e: int) -> None:
    """Qwen2-MoE's sigmoid gate on the shared expert's output, after the routed experts, its
    tensors `e` bytes per value."""
    if arch.shared_expert_gate:
        h = arch.hidden_size
        # Qwen2MoeSparseMoeBlock.forward (transformers models/qwen2_moe/modeling_qwen2_moe.py):
        # `F.sigmoid(self.shared_expert_gate(x)) * shared_expert_output`: sigmoid saves its
        # output, the product both factors (the gate's input is the layer's input, kept above)
        ledger.keep("shared_gate_sigmoid", e)
        ledger.keep("shared_expert_out", e * h)
