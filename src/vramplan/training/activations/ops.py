"""The operations every block is made of, as autograd keeps them: norms (Python, compiled or
fused) and linear layers with their LoRA adapters. Each records what it saves in a `Ledger` and
returns its output (`Activation`)."""

from __future__ import annotations

from vramplan.model.architecture import Architecture, NormKind, QkNormKind
from vramplan.training.activations.spec import (
    DROPOUT_MASK_BYTES,
    FP32,
    Activation,
    BlockSpec,
    Ledger,
    adapter_compute_bytes,
    autocasts,
)
from vramplan.vocab import Framework

_FUSED_NORMS = frozenset({Framework.MEGATRON, Framework.UNSLOTH})
"""Frameworks whose norms are fused kernels (`norm_layer`)."""


def _norms_fused(spec: BlockSpec) -> bool:
    """The block's norms are fused kernels that keep their input and per-row statistics: its
    framework's (`_FUSED_NORMS`) or Liger-Kernel's (`BlockSpec.liger_kernels`)."""
    return spec.framework in _FUSED_NORMS or spec.liger_kernels


def norm_layer(ledger: Ledger, arch: Architecture, spec: BlockSpec, source: Activation, *,
               name: str, needs_grad: bool) -> None:
    """A norm layer reading `source`."""
    h = arch.hidden_size
    if _norms_fused(spec):
        # Megatron-LM's fused norms (Transformer Engine's LayerNormLinear / RMSNorm, Apex's
        # FusedLayerNorm / FusedRMSNorm) and Unsloth's (unsloth/kernels/rms_layernorm.py
        # `Fast_RMS_Layernorm`: `save_for_backward(X, W, r)`) save their input and per-row
        # statistics, and compute the weight's gradient from them; their output is saved by
        # the linear that reads it; Liger-Kernel's RMSNorm and LayerNorm likewise
        # (`BlockSpec.liger_kernels`)
        if needs_grad or spec.weights_train:
            ledger.keep(source.name, source.itemsize * h)
            ledger.keep(f"{name}_stats", (FP32 if arch.norm is NormKind.RMSNORM else 2 * FP32))
        return
    if arch.norm is NormKind.RMSNORM and spec.compiled:
        _compiled_rmsnorm(ledger, source, name=name, width=h,
                          needs_grad=needs_grad or spec.weights_train)
    elif arch.norm is NormKind.RMSNORM:
        # litgpt RMSNorm and transformers' LlamaRMSNorm compute in fp32: `x.float()` is a new
        # fp32 copy, saved by `x * x` and `x * rsqrt(...)` (no copy when x already is fp32).
        if needs_grad:
            if source.itemsize == FP32:
                ledger.keep(source.name, FP32 * h)
            else:
                ledger.keep(f"{name}_input_fp32", FP32 * h)
            ledger.keep(f"{name}_rstd", FP32)
        if spec.weights_train:
            # `weight * x_normed` saves x_normed for the weight's gradient: fp32 in litgpt and
            # where the scale multiplies in fp32 (Gemma, OLMo 2, gpt-oss: `norm_scale_fp32`),
            # the 16-bit cast in Llama's transformers norm (`self.weight *
            # hidden_states.to(input_dtype)`) and in litgpt's of 2024-02 to 2024-07, Gemma's
            # `x_normed * (1 + self.weight)` too
            if spec.framework is Framework.LITGPT:
                fp32 = not spec.rmsnorm_scale_after_cast
            else:
                fp32 = arch.norm_scale_fp32
            ledger.keep(f"{name}_normed", (FP32 if fp32 else spec.residual_bytes) * h)
    elif arch.norm_python_layernorm:
        _python_layernorm(ledger, spec, name, h, needs_grad)
    elif needs_grad or spec.weights_train:
        _native_layernorm(ledger, arch, source, name, h)


def _native_layernorm(ledger: Ledger, arch: Architecture, source: Activation, name: str,
                      width: int) -> None:
    """`native_layer_norm` saves its input and its fp32 mean and rstd, whatever trains: the
    fp32 copy where the norm upcasts first (`Architecture.layernorm_on_fp32_copy`; traced,
    OLMo-1B LoRA on q and v, 8 x 256 tokens: -3.9 % -> 0.0 %)."""
    if arch.layernorm_on_fp32_copy and source.itemsize != FP32:
        ledger.keep(f"{name}_input_fp32", FP32 * width)
    else:
        ledger.keep(source.name, source.itemsize * width)
    ledger.keep(f"{name}_stats", 2 * FP32)


COMPILED_SAVES = (
    "torch.compile partitions a block's joint graph with AOTAutograd's min-cut "
    "(torch/_functorch/partitioners.py `min_cut_rematerialization_partition`): pointwise "
    "ops, casts and views are recomputed in backward; a tensor that a matmul or the attention "
    "kernel reads in backward is saved (`is_materialized_backwards`), so is a reduction's "
    "small output (`ban_recompute_reductions`: 4x smaller than its input), and the cut keeps "
    "the fewest bytes among the rest")
"""Why a compiled block saves less than its operations would (`BlockSpec.compiled`)."""


def _compiled_rmsnorm(ledger: Ledger, source: Activation, *, name: str, width: int,
                      needs_grad: bool) -> None:
    """An fp32 Python RMSNorm under torch.compile (`COMPILED_SAVES`): the min-cut saves its
    input in its own dtype and the per-row inverse RMS, and recomputes in backward the fp32
    upcast and the normalized tensor that eager autograd saves (`x.float()`, `x * rsqrt(...)`);
    its output is saved by the matmuls that read it. Counted against the eager ledger, a
    torchtune Llama block under full fine-tuning keeps 8 h + 2 f bytes per token fewer
    (tests/test_activations.py)."""
    if needs_grad:
        ledger.keep(source.name, source.itemsize * width)
        ledger.keep(f"{name}_rstd", FP32)


def _python_layernorm(ledger: Ledger, spec: BlockSpec, name: str, width: int,
                      needs_grad: bool) -> None:
    """Cohere's `CohereLayerNorm` in fp32 Python (modeling_cohere.py): `(x - mean).pow(2)` keeps
    one centered copy, `(x - mean) * rsqrt(...)` a second (it is computed twice) and the inverse
    deviation; `weight * x_normed` keeps the fp32 normalized input when the weight trains."""
    if needs_grad:
        ledger.keep(f"{name}_centered", FP32 * width)
        ledger.keep(f"{name}_centered_again", FP32 * width)
        ledger.keep(f"{name}_rstd", FP32)
    if spec.weights_train:
        ledger.keep(f"{name}_normed", FP32 * width)


def qk_norms(ledger: Ledger, arch: Architecture, spec: BlockSpec, *, q_grad: bool,
             k_grad: bool) -> None:
    """RMSNorms on the queries and keys after their projections (Qwen3, Gemma 3, GLM-4.5: over
    each head's head_dim, one scale shared by all heads; OLMo 2: over the whole projection). Each
    keeps its fp32 input copy and inverse RMS (per head, or per token over the whole width) when
    its input needs a gradient, and its normalized input for the scale's gradient. A fused norm
    (Megatron-LM's Transformer Engine `q_layernorm`/`k_layernorm`, Unsloth's, Liger's
    module-wide RMSNorm) keeps its 16-bit input and the inverse RMS."""
    if arch.qk_norm is QkNormKind.NONE:
        return
    per_head = arch.qk_norm in (QkNormKind.PER_HEAD_SHARED, QkNormKind.L2_PER_HEAD)
    scaled = arch.qk_norm is not QkNormKind.L2_PER_HEAD
    c = spec.compute_bytes
    fused = _norms_fused(spec)
    for tag, width, heads, needs_grad in (("q", arch.q_dim, arch.n_heads, q_grad),
                                           ("k", arch.kv_dim, arch.n_kv_heads, k_grad)):
        if fused and scaled:
            # a fused norm (as `norm_layer`): its 16-bit input and the inverse RMS per row
            if needs_grad or spec.weights_train:
                ledger.keep(f"{tag}_norm_input", c * width)
                ledger.keep(f"{tag}_norm_rstd", FP32 * (heads if per_head else 1))
            continue
        if needs_grad:
            ledger.keep(f"{tag}_norm_input_fp32", FP32 * width)
            ledger.keep(f"{tag}_norm_rstd", FP32 * (heads if per_head else 1))
        if spec.weights_train and scaled:
            ledger.keep(f"{tag}_norm_normed", (FP32 if arch.norm_scale_fp32 else c) * width)


def linear(ledger: Ledger, spec: BlockSpec, source: Activation, width: int, *, lora: int,
           prefix: str, needs_grad: bool = True, readers: int = 1, copies: int = 1,
           out_width: int = 0) -> None:
    """What linear layers reading `source` (`width` elements per token) keep; `lora` is how
    many of them carry an adapter (each with its own dropout); `readers` how many separate
    matmuls read it (under autocast each casts its own 16-bit copy of the input); `copies` how
    many rows a token makes (a routed expert's: each adapter's lora_A output is per row). With
    `out_width` (one linear's output width), the moment lora_A runs on a copy it does not keep
    (`Ledger.moment`)."""
    if spec.weights_train:
        if spec.autocast and source.itemsize != spec.compute_bytes:
            for reader in range(readers):
                ledger.keep(f"{prefix}{reader}_input_16bit", spec.compute_bytes * width)
        else:
            ledger.keep(source.name, source.itemsize * width)
    elif (spec.base_keeps_input or spec.linears_keep_input) and needs_grad:
        # the input as it came: DeepSpeed's `autocast_custom_fwd` passes no `cast_inputs`, so
        # the function saves it before its matmul casts it
        ledger.keep(source.name, source.itemsize * width)
    autocast = autocasts(spec)
    # peft's fp32 copy of the input for fp32 adapters (`BlockSpec.adapter_input_fp32`)
    adapter_input = FP32 if spec.adapter_input_fp32 else source.itemsize
    adapter_out = adapter_compute_bytes(spec)
    for i in range(lora):
        tag = f"{prefix}{i}"
        if spec.lora_dropout:
            # dropout saves its mask; lora_A its output, or under autocast its 16-bit cast
            if needs_grad:
                ledger.keep(f"{tag}_lora_dropout_mask", DROPOUT_MASK_BYTES * width)
            ledger.keep(f"{tag}_lora_dropout_out", adapter_out * width)
        elif autocast and adapter_input != spec.compute_bytes:
            # each adapter's lora_A casts its own 16-bit copy of the input
            ledger.keep(f"{tag}_lora_input_16bit", spec.compute_bytes * width)
            if out_width and adapter_input != source.itemsize:
                # peft's fp32 copy of a 16-bit input is lora_A's input, not kept: as lora_A
                # runs, it, the input and the base layer's output are alive
                alive = FP32 * width + spec.compute_bytes * out_width \
                    + (0 if ledger.has(source.name) else source.itemsize * width)
                ledger.moment(alive + adapter_out * spec.lora_rank * copies)
        elif adapter_input != source.itemsize:
            # each adapter's lora_A keeps peft's own fp32 copy of the input
            ledger.keep(f"{tag}_lora_input_fp32", FP32 * width)
        else:
            ledger.keep(source.name, source.itemsize * width)
        ledger.keep(f"{tag}_lora_a_out", adapter_out * spec.lora_rank * copies)


def adapter_tail(spec: BlockSpec, base_itemsize: int, width: int) -> int:
    """Per token, what an adapted linear's forward holds as its adapter ends, beyond its input
    and what it saved: the base layer's output and two adapter-wide tensors of `width`, lora_B's
    output and its scaled copy, then the scaled copy and their sum (peft `Linear.forward`:
    `result = result + lora_B(lora_A(dropout(x))) * scaling`, then `result.to(
    torch_result_dtype)`; litgpt's and torchtune's LoRA linears add the same way). fp32
    adapters without autocast compute in fp32 (`BlockSpec.adapter_input_fp32`), so the sum is
    fp32 beside the 16-bit base output. Traced (vramplan.tracer, a Llama block recomputed under
    full checkpointing, LoRA on up with fp32 adapters): the block's peak is at that sum."""
    return (base_itemsize + 2 * adapter_compute_bytes(spec)) * width
