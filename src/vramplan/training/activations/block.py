"""One transformer block put together from its operations (`block_saved`), the embedding's
saved tensors, and the inputs that quantized linears keep in their autograd context."""

from __future__ import annotations

from vramplan.model.architecture import Architecture, LinearRole, PositionKind
from vramplan.training.activations.attention import attention_layer
from vramplan.training.activations.mlp import mlp_or_tiled
from vramplan.training.activations.ops import norm_layer
from vramplan.training.activations.spec import (
    ATTENTION_TARGETS,
    DROPOUT_MASK_BYTES,
    FP32,
    GATE_UP_TARGETS,
    MLP_TARGETS,
    QKV_TARGETS,
    Activation,
    BlockSpec,
    Ledger,
    Saved,
    dropout_active,
    total_per_token,
    unsloth_lora_kernels,
)
from vramplan.vocab import Attention


def block_saved(arch: Architecture, spec: BlockSpec, seq_len: int,
                input_needs_grad: bool = True) -> tuple[Saved, ...]:
    """Tensors one transformer block keeps for backward, per token.

    `input_needs_grad` is False for a block whose input comes from frozen layers (the first block
    under LoRA, the first trained block under `freeze`): its first norm and the frozen matmuls
    that read it save nothing (autograd builds no graph for them).
    """
    return block_ledger(arch, spec, seq_len, input_needs_grad).items()


def block_ledger(arch: Architecture, spec: BlockSpec, seq_len: int,
                 input_needs_grad: bool) -> Ledger:
    ledger = Ledger()
    r = spec.residual_bytes
    if arch.norms_after_sublayers:
        _post_norm_block(ledger, arch, spec, seq_len, input_needs_grad)
        return ledger
    if unsloth_lora_kernels(arch, spec):
        _unsloth_lora_block(ledger, arch, spec, input_needs_grad)
        return ledger
    norm_layer(ledger, arch, spec, Activation("x_in", r), name="norm_1",
               needs_grad=input_needs_grad)
    n1 = Activation("norm_1_out", r)
    attention_layer(ledger, arch, spec, n1, seq_len=seq_len, input_needs_grad=input_needs_grad)
    if arch.parallel_block:
        if not arch.shared_block_norm:
            norm_layer(ledger, arch, spec, Activation("x_in", r), name="norm_2",
                       needs_grad=input_needs_grad)
        n2 = n1 if arch.shared_block_norm else Activation("norm_2_out", r)
    else:
        mid_needs_grad = _residual_after_attention_needs_grad(spec, input_needs_grad)
        if arch.sandwich_norms:
            norm_layer(ledger, arch, spec, Activation("attn_proj_out", spec.compute_bytes),
                       name="post_attention_norm", needs_grad=mid_needs_grad)
        norm_layer(ledger, arch, spec, Activation("x_mid", r), name="norm_2",
                   needs_grad=mid_needs_grad)
        n2 = Activation("norm_2_out", r)
    mlp_or_tiled(ledger, arch, spec, n2,
                 input_needs_grad if arch.parallel_block else mid_needs_grad)
    if arch.sandwich_norms:
        norm_layer(ledger, arch, spec, Activation("mlp_out", spec.compute_bytes),
                   name="post_mlp_norm", needs_grad=True)
    return ledger


def _residual_after_attention_needs_grad(spec: BlockSpec, input_needs_grad: bool) -> bool:
    """The residual after attention needs a gradient once anything before it trains: the
    block's input, the attention's weights or its adapters (the first block under LoRA of the
    MLP alone builds no graph until its MLP)."""
    return input_needs_grad or spec.weights_train or bool(spec.lora_targets & ATTENTION_TARGETS)


def first_block_graphless_linears(arch: Architecture, spec: BlockSpec) -> tuple[LinearRole, ...]:
    """The frozen linears of a LoRA run's first block whose input needs no gradient (the block's
    input does not), so that their matmul saves nothing for backward, their weight's 16-bit
    cast under autocast included: q, k and v always; o unless q, k or v has an adapter; gate,
    up and the router unless the residual after attention needs a gradient
    (`_residual_after_attention_needs_grad`; in a parallel block the MLP reads the block's input
    like the attention); down unless gate or up has one too. Traced (`amp`, 2-layer Llama and
    Qwen2, no checkpointing): LoRA on gate alone was +5.7 to +6.0 % and on down alone +4.4 to
    +4.6 % above the trace while the MLP's casts were counted."""
    targets = spec.lora_targets
    mlp_input = not arch.parallel_block and _residual_after_attention_needs_grad(spec, False)
    product = mlp_input or bool(targets & GATE_UP_TARGETS)
    graphless: list[LinearRole] = ["q", "k", "v"]
    if not targets & QKV_TARGETS:
        graphless.append("o")
    if not mlp_input:
        graphless += ["gate", "up", "router"]
    if not product:
        graphless.append("down")
    return tuple(graphless)


def _post_norm_block(ledger: Ledger, arch: Architecture, spec: BlockSpec, seq_len: int,
                     input_needs_grad: bool) -> None:
    """OLMo 2's block (modeling_olmo2.py `Olmo2DecoderLayer`): attention reads the block's input
    itself, its output is normed before the residual add, and the same for the MLP."""
    r, c = spec.residual_bytes, spec.compute_bytes
    attention_layer(ledger, arch, spec, Activation("x_in", r), seq_len=seq_len,
                    input_needs_grad=input_needs_grad)
    # in the first block of LoRA on the MLP alone, attention's output and the MLP's input need
    # no gradient (`_residual_after_attention_needs_grad`); the MLP's output needs one once
    # anything before it or in it trains
    mid_needs_grad = _residual_after_attention_needs_grad(spec, input_needs_grad)
    norm_layer(ledger, arch, spec, Activation("attn_proj_out", c), name="post_attention_norm",
               needs_grad=mid_needs_grad)
    mlp_or_tiled(ledger, arch, spec, Activation("x_mid", r), mid_needs_grad)
    norm_layer(ledger, arch, spec, Activation("mlp_out", c), name="post_mlp_norm",
               needs_grad=mid_needs_grad or spec.weights_train
               or bool(spec.lora_targets & MLP_TARGETS))


def _unsloth_lora_block(ledger: Ledger, arch: Architecture, spec: BlockSpec,
                        input_needs_grad: bool) -> None:
    """A LoRA block as Unsloth's kernels run it (unslothai/unsloth unsloth/kernels/fast_lora.py
    and rms_layernorm.py @4474e4bc, the same at @015bdef0): each RMSNorm keeps its input and
    inverse RMS (`Fast_RMS_Layernorm`); `LoRA_QKV` keeps only its input X, the normed hidden
    state, and `LoRA_W` (o_proj) its input, the attention's output; the attention kernel keeps
    q, k, v, its output and log-sum-exp, the key and value expanded to every query head unless
    flash-attn runs (`LlamaAttention_fast_forward`: xformers and SDPA get `K.expand(...)
    .reshape(...)` copies under GQA); `LoRA_MLP` keeps X and the gate and up outputs e and g,
    and recomputes swiglu(e, g) in backward. The adapters' low-rank products are not kept:
    `matmul_lora` adds `(X @ A) @ B` into the output."""
    r, c = spec.residual_bytes, spec.compute_bytes
    h, q, f = arch.hidden_size, arch.q_dim, arch.intermediate_size
    kv = arch.kv_dim if spec.attention is Attention.FLASH or arch.n_kv_heads == arch.n_heads \
        else q
    if input_needs_grad:
        ledger.keep("x_in", r * h)
        ledger.keep("norm_1_stats", FP32)
    ledger.keep("norm_1_out", r * h)
    ledger.keep("q", c * q)
    ledger.keep("k", c * kv)
    ledger.keep("v", c * kv)
    ledger.keep("attn_out", c * q)
    ledger.keep("attn_logsumexp", FP32 * arch.n_heads)
    ledger.keep("x_mid", r * h)
    ledger.keep("norm_2_stats", FP32)
    ledger.keep("norm_2_out", r * h)
    if spec.mlp_tile_share is None:  # tiled, `LoRA_MLP` runs inside each tile (`mlp_or_tiled`)
        ledger.keep("gate_out", c * f)
        ledger.keep("up_out", c * f)


def embedding_saved_bytes(arch: Architecture, spec: BlockSpec, needs_grad: bool, *,
                          leaf: bool = False) -> int:
    """Per token, what the embeddings' output keeps before the first block, only when it needs
    a gradient (the embedding trains, or its output was made to require one): the mask of its
    dropout, and the input and per-row statistics of a norm on it (BLOOM's
    `word_embeddings_layernorm`: `native_layer_norm` saves its input, mean and rstd). The
    dropped or normed output is the first block's input, counted there.

    A frozen embedding's output made to require a gradient (`leaf`: transformers'
    `enable_input_require_grads`, a forward hook calling `output.requires_grad_(True)`) is a
    leaf of the graph, which its `AccumulateGrad` node holds until the graph is freed: where the
    first block reads another tensor (learned positions added, a scale, a dropout), the leaf is
    kept beside it. Traced (OPT and GPT-2 with LoRA under full checkpointing, Gemma 3): the
    token embedding's output is alive at the loss's backward."""
    if not needs_grad:
        return 0
    dropped = dropout_active(spec, arch.embedding_dropout)
    saved = DROPOUT_MASK_BYTES * arch.hidden_size if dropped else 0
    first_block_reads_another = arch.position is PositionKind.LEARNED \
        or arch.embedding_scale is not None or dropped
    if leaf and first_block_reads_another and not arch.embedding_norm:
        saved += spec.residual_bytes * arch.hidden_size
    if arch.embedding_norm:
        ledger = Ledger()
        norm_layer(ledger, arch, spec, Activation("x_embedded", spec.residual_bytes),
                   name="embedding_norm", needs_grad=True)
        saved += total_per_token(ledger.items())
    return saved


def quantized_base_inputs(arch: Architecture, spec: BlockSpec) -> int:
    """Bytes per token that a block's quantized linears keep in their autograd context: the input
    of every matmul (bitsandbytes MatMul4Bit stored `ctx.tensors = (A, B)` until v0.43.2). These
    are plain attributes of the context, not saved tensors: backward does not release them, only
    the death of the graph does (PyTorch releases `save_for_backward` tensors after a node
    runs)."""
    if not spec.base_keeps_input:
        return 0
    r, c, h = spec.residual_bytes, spec.compute_bytes, arch.hidden_size
    shared = arch.parallel_block and arch.shared_block_norm
    inputs = r * h + c * arch.q_dim + (0 if shared else r * h)
    return inputs + c * arch.token_mlp_width
