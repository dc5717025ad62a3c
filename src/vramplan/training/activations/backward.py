"""What a block's backward holds beyond its saved tensors: the transient peak of its backward
(`block_backward_transient`), what is released before that peak, and the moments of a block's
recomputed forward under full checkpointing (`recomputed_forward_peak`)."""

from __future__ import annotations

from vramplan.model.architecture import Architecture, MlpKind, NormKind
from vramplan.training.activations.block import block_ledger
from vramplan.training.activations.mlp import (
    down_projection,
    mlp_backward_itemsize,
    mlp_backward_tensors,
    mlp_hidden_itemsize,
    tiled_mlp_backward,
)
from vramplan.training.activations.moe import (
    SHARED_EXPERTS_PREFIX,
    grouped_experts_combine,
    routed_weights_itemsize,
)
from vramplan.training.activations.spec import (
    FP32,
    Activation,
    BlockSpec,
    Ledger,
    Saved,
    adapter_compute_bytes,
    unsloth_lora_kernels,
)
from vramplan.vocab import LoraTarget


def released_before_block_peak(arch: Architecture, spec: BlockSpec) -> tuple[Saved, ...]:
    """The block's saved tensors (`block_saved`'s names) already freed when its backward peaks:
    those that only the adapters of a gated MLP's frozen down projection keep (the product
    act(gate) * up, read by lora_A, and lora_A's output, read by lora_B's gradient). The down
    projection runs its backward first in a pre-norm block, and autograd frees a node's saved
    tensors once the node has run (a non-reentrant checkpoint drops each recomputed one once
    unpacked), so the block's peak, the product's backward (d(product), d(act), d(up)) or a
    later one, comes without them. Traced (vramplan.tracer, Llama, Qwen2 and Mistral, LoRA on
    the MLP or on every linear, full checkpointing, 2 x 128 tokens): the peak is at the
    product's backward with the product freed, and the model counted it by 3.9 to 7.7 % too
    much before this (tests/test_trace_agreement.py `MLP_LORA_MATRIX`). Not where the down
    projection's own backward holds more: its base keeping its input too (full fine-tuning, whose
    weight gradient is made there; FSDP1's flat views, `BlockSpec.linears_keep_input`), peft's
    fp32 copies of the adapters' inputs (`BlockSpec.adapter_input_fp32`) or `amp`'s fp32
    weights under autocast, where the same traces peak there and counting the release put the
    model 7 to 13 % under them; nor in blocks whose backward runs in another order (parallel,
    post-norm or sandwich-norm blocks), a MoE layer, a tiled MLP, Unsloth's kernels or a
    compiled block."""
    if (LoraTarget.DOWN not in spec.lora_targets or arch.mlp is not MlpKind.GATED
            or arch.is_moe or arch.parallel_block or arch.sandwich_norms
            or arch.norms_after_sublayers or spec.weights_train or spec.base_keeps_input
            or spec.linears_keep_input or spec.adapter_input_fp32 or spec.autocast
            or spec.mlp_tile_share is not None or spec.compiled
            or unsloth_lora_kernels(arch, spec)):
        return ()
    ledger = Ledger()
    product = Activation("mlp_hidden", mlp_hidden_itemsize(spec, spec.residual_bytes))
    down_projection(ledger, spec, product, arch.token_mlp_width)
    return ledger.items()


def recomputed_forward_peak(arch: Architecture, spec: BlockSpec, seq_len: int, *,
                            reentrant: bool) -> int:
    """Per token, the most a block recomputed under full checkpointing holds while its forward
    runs again, where an adapter's end outgrows what the block saves (`adapter_tail`): what
    was saved up to that moment, the moment's own tensors, the mid-block residual and the
    second norm's output (the decoder layer's locals, unless saved), and the gradient coming
    into the block (in a parallel block, attention's output instead of the mid-block residual,
    and the norm's output). 0 where no such moment is modelled.

    A non-reentrant checkpoint recomputes when the block's backward first unpacks a saved
    tensor and stops once the last one is made again (torch/utils/checkpoint.py
    `_checkpoint_hook`, `_StopRecomputationError`; on by default wherever the module has
    `set_checkpoint_early_stop`; a release without it runs the whole forward again, not
    modelled):
    a moment after the last saved tensor never comes, and an adapted output projection of the
    MLP has run its adapter's backward down to lora_B, whose saved lora_A output starts the
    recomputation, so the gradients of its base output and of lora_B's output wait beside it
    (`_adapter_gradients_pending`). A reentrant one runs the whole forward again from the
    block's backward, before any of its gradients.

    Traced (vramplan.tracer, Llama, Qwen2 and Mistral, LoRA on the MLP or every linear with
    fp32 adapters over bf16 weights, full checkpointing, 2 x 128 tokens): the peak is at up's
    adapter, bytes as counted here; the block's backward holds less (tests/
    test_trace_agreement.py `FP32_ADAPTER_MATRIX`; Cohere's parallel blocks -5.7 % before,
    -1.1 % with their locals). Only the MLP's moments are written (attention's adapters end with
    less saved), in pre-norm blocks of dense MLPs run by their own code, and the MoE layers of
    transformers 5's grouped experts and of Llama 4 (`vramplan.training.activations.moe`
    `_activated_copies`, `_reordered_copies`: the routed copies' locals beside the sum's
    gradient); not post-norm or sandwich-norm blocks, other MoE paths, tiled MLPs, Unsloth's
    kernels or a compiled block."""
    if (arch.sandwich_norms or arch.norms_after_sublayers
            or (arch.is_moe and not (grouped_experts_combine(arch, spec)
                                     or arch.experts_see_every_token))
            or spec.compiled or spec.mlp_tile_share is not None
            or unsloth_lora_kernels(arch, spec)):
        return 0
    ledger = block_ledger(arch, spec, seq_len, True)
    saved = ledger.total()
    moments = [so_far + alive for so_far, alive in ledger.moments if reentrant or so_far < saved]
    if not moments:
        return 0
    h, r = arch.hidden_size, spec.residual_bytes
    if arch.parallel_block:
        # the MLP runs after attention on the norms' output; attention's output waits for the
        # sum
        norms = ("norm_1_out",) if arch.shared_block_norm else ("norm_1_out", "norm_2_out")
        layer_locals = spec.compute_bytes * h \
            + sum(r * h for name in norms if not ledger.has(name))
    else:
        layer_locals = sum(r * h for name in ("x_mid", "norm_2_out") if not ledger.has(name))
    pending = 0 if reentrant else _adapter_gradients_pending(spec, h)
    if arch.parallel_block and arch.mlp is MlpKind.GATED and r != spec.compute_bytes \
            and not reentrant:
        # attention's 16-bit cast of the incoming gradient, made first (`block_backward_transient`)
        pending += spec.compute_bytes * h
    return r * h + pending + layer_locals + max(moments)


def _adapter_gradients_pending(spec: BlockSpec, hidden: int) -> int:
    """Per token, the gradients an adapted MLP output projection has made when its lora_B's
    backward unpacks the first recomputed tensor: of lora_B's output (the scaled sum's
    gradient times the scale, in the adapter's dtype) and of the base layer's output, a new
    16-bit tensor where a cast made it (fp32 adapters without autocast: the sum was fp32; under
    autocast the residual stream is fp32), else the incoming gradient itself."""
    if LoraTarget.DOWN not in spec.lora_targets:
        return 0
    c = spec.compute_bytes
    adapter = adapter_compute_bytes(spec)
    cast = c if adapter != c or spec.residual_bytes != c else 0
    return (adapter + cast) * hidden


RMSNORM_BACKWARD_FP32_TENSORS = 5
"""Residual-wide fp32 tensors alive at the peak of an fp32 Python RMSNorm's backward (the
gradients of `x * rsqrt(...)`, of `x.pow(2)` and their sum, the casts): traced, a Llama block's
backward at its peak holds five (vramplan.tracer on 4 x 128 tokens, bf16, vocabulary 32 so that
no logit hides it); transformers' LlamaRMSNorm alone, 18 bytes per element beyond its saved
tensors and output."""


def block_backward_transient(arch: Architecture, spec: BlockSpec,
                             saved: tuple[Saved, ...] = (), *,
                             recomputed_released: bool = False) -> int:
    """Bytes per token created while one block runs backward, beyond what it saved: the MLP's
    gradients (three intermediate-wide tensors at once: d(act*up), d(act), d(up)), attention's
    (dq, dk, dv and FlashAttention's fp32 dq accumulator, flash_bwd_kernel.h), eager
    attention's softmax backward (`scores_backward_extra`, from the block's `saved` tensors), or
    an RMSNorm's, computed in fp32 (litgpt's, transformers' and torchtune's RMSNorms upcast their
    input), or a MoE layer's weighting of its routed copies (`moe_backward_transient`: a block
    recomputed under non-reentrant checkpointing drops each recomputed tensor once unpacked,
    `recomputed_released`), whichever is larger."""
    c = spec.compute_bytes
    mlp = mlp_backward_tensors(arch, spec) * mlp_backward_itemsize(arch, spec) \
        * _mlp_backward_width(arch, spec) if spec.mlp_tile_share is None \
        else tiled_mlp_backward(arch, spec, spec.mlp_tile_share)
    attention = 3 * c * arch.q_dim + FP32 * arch.q_dim
    norm = RMSNORM_BACKWARD_FP32_TENSORS * FP32 * arch.hidden_size \
        if arch.norm is NormKind.RMSNORM else 0
    if norm and (arch.sandwich_norms or arch.norms_after_sublayers):
        # a norm on the MLP's output runs the block's backward first, beside the incoming
        # gradient, which the residual add hands on whole and which lives through the block's
        # backward; after a pre-norm, the norm's backward runs last, and the gradients it
        # joins are the ones the five fp32 tensors were traced with. Traced (Gemma 3, LoRA, full
        # checkpointing, 2 x 128 tokens): the peak holds the block's saved tensors, the five
        # fp32 tensors of `post_feedforward_layernorm`'s backward and the incoming gradient
        norm += spec.residual_bytes * arch.hidden_size
    if arch.parallel_block and arch.mlp is MlpKind.GATED and spec.residual_bytes != c:
        # a parallel block's MLP runs its backward beside the fp32 incoming gradient and its
        # two 16-bit casts, for the MLP's output and attention's: Cohere's `residual +
        # attention + mlp` adds attention's output last, so its add's backward, which casts,
        # runs before the MLP's. Traced (Cohere and Cohere2, full fine-tuning and LoRA under
        # `amp`, full checkpointing, 2 x 128 tokens): -4.0 to -5.9 % before, -1.4 to +0.3 %
        # with them. Phi's plain MLP under autocast runs its fp32 GELU chain, whose traced peak
        # `mlp_backward_itemsize` holds already (its configurations move away from their
        # traces with them)
        mlp += (spec.residual_bytes + 2 * c) * arch.hidden_size
    return max(mlp, attention, scores_backward_extra(saved), norm,
               moe_backward_transient(arch, spec, saved,
                                      recomputed_released=recomputed_released))


def _mlp_backward_width(arch: Architecture, spec: BlockSpec) -> int:
    """Per token, the intermediate width whose backward runs at once: a dense MLP's; in a MoE
    layer, its shared experts' or its experts': all of them for Llama 4's, whose batched
    matmuls see every token; one expert's for the per-expert loop, which runs a few rows at a
    time. transformers 5's grouped experts are `moe_backward_transient`'s."""
    if not arch.is_moe:
        return arch.expert_intermediate_size
    if grouped_experts_combine(arch, spec):
        return arch.shared_experts_width
    copies = arch.n_experts if arch.experts_see_every_token else 1
    return max(arch.expert_intermediate_size * copies, arch.shared_experts_width)


def moe_backward_transient(arch: Architecture, spec: BlockSpec, saved: tuple[Saved, ...] = (),
                           *, recomputed_released: bool = False) -> int:
    """Per token, the most a MoE layer's backward holds beyond its saved tensors, over its k
    routed copies (`grouped_experts_combine`; 0 for other paths): the backward of the
    weighting. The reordering's backward writes the weighted outputs' gradient into zeros
    (`new_zeros`, `index_put`) beside the contiguous gradient the sum handed back: three
    copy-wide tensors in the weights' dtype, with the incoming gradient's cast to that dtype
    (the final `.to()`'s backward) where it is fp32. Then the product's backward holds that
    gradient, its product with the routing weights and its product with the down projection's
    output (for the weights' gradient, summed after), and, where the weights are fp32, the
    16-bit cast of the first; a block recomputed under non-reentrant checkpointing has dropped
    the recomputed down projection's output once unpacked (`recomputed_released`), by the time
    of that cast.
    Traced (vramplan.tracer, DeepSeek-V3, 8 routed copies of 16 experts, hidden 128, fp32
    weights, LoRA, 2 x 128 tokens): without checkpointing the step peaks at that cast, three
    fp32 and one bf16 copy-wide tensors beside the saved ones; under full checkpointing at the
    `index_put`, three fp32 ones. Then the experts' own backward over every copy (d(act * up),
    d(act), d(up): three tensors k times the experts' width), which decides where the experts
    are wider than the hidden size (traced, Qwen3-MoE with experts of 3 x hidden).

    Shared experts added after the routed ones (DeepSeek's, GLM's: not
    `Architecture.shared_experts_first`) have run their backward by then, and autograd has freed
    what they saved (`saved`, the block's saved tensors, named by `SHARED_EXPERTS_PREFIX`).
    Traced (DeepSeek-V2's two shared experts, LoRA, full checkpointing, 2 x 128 tokens): the
    step peaks at the `index_put` without them."""
    if not grouped_experts_combine(arch, spec):
        return 0
    c, k = spec.compute_bytes, arch.experts_per_token
    w = routed_weights_itemsize(arch, spec)
    reorder = 3 * w
    product = 3 * w + (c if w != c else 0) - (c if recomputed_released else 0)
    # the incoming gradient cast to the weights' dtype by the final `.to()`'s backward, which
    # the sum's backward expands
    cast_in = w * arch.hidden_size if w != c else 0
    weighting = max(reorder, product) * k * arch.hidden_size + cast_in
    # then the experts' own backward over every copy: d(act * up), d(act), d(up) at once
    experts = mlp_backward_tensors(arch, spec) * c * k * arch.expert_intermediate_size
    shared_first = arch.shared_experts_first or not arch.n_shared_experts
    released = 0 if shared_first else sum(item.bytes_per_token for item in saved
                                         if item.name.startswith(SHARED_EXPERTS_PREFIX))
    return max(max(weighting, experts) - released, 0)


def scores_backward_extra(saved: tuple[Saved, ...]) -> int:
    """Per token: what the softmax backward of a materialized score matrix (eager attention,
    litgpt's math path) holds beyond the block's saved tensors (`saved`, in forward order).

    The softmax saves its output; autograd's `_softmax_backward_data(grad, output, dim,
    input_dtype)` (aten/src/ATen/native/SoftMax.cpp) needs the gradient of that output, in its
    dtype (an fp32 softmax of 16-bit scores gets it through the backward of the `.to(q.dtype)`
    cast, `ToCopyBackward`), and writes the gradient of its input in the input's dtype: fp32
    where `softmax(x, dtype=torch.float32)` converted a bf16 `x` first (`input_.toType(dtype)`;
    only float16 on CUDA takes the `half_to_float` kernel, whose input gradient is 16-bit, not
    counted). So three score-sized tensors of the output's dtype at once, one of them saved,
    while what the ops after the softmax saved (the 16-bit cast or dropout's output and mask
    that `probs @ v` kept, the output projection's input, the MLP's tensors) was freed by their
    backward, which ran first. Traced: `vramplan trace` holds the fp32 output, its gradient and
    the input's gradient at the peak of a Llama block's eager backward."""
    names = [item.name for item in saved]
    softmax = "attn_probs_fp32" if "attn_probs_fp32" in names else "attn_probs"
    if softmax not in names:
        return 0
    index = names.index(softmax)
    after = sum(item.bytes_per_token for item in saved[index + 1:])
    return max(2 * saved[index].bytes_per_token - after, 0)
