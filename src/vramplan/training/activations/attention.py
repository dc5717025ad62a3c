"""Attention's saved tensors: q, k, v and the output of SDPA and FlashAttention kernels, the
probabilities of eager attention (with softcapping and dropout), latent attention (MLA), and the
masks of sliding-window layers."""

from __future__ import annotations

from vramplan.model.architecture import Architecture, PositionKind
from vramplan.training.activations.ops import linear, qk_norms
from vramplan.training.activations.spec import (
    DROPOUT_MASK_BYTES,
    FP32,
    Activation,
    BlockSpec,
    Ledger,
    dropout_active,
    dropout_mask,
    softcapped,
)
from vramplan.vocab import Attention, Framework, LoraTarget


def attention_layer(ledger: Ledger, arch: Architecture, spec: BlockSpec, n1: Activation, *,
                    seq_len: int, input_needs_grad: bool) -> None:
    if arch.latent_attention is not None and spec.framework is not Framework.LITGPT:
        _latent_attention(ledger, arch, spec, n1, seq_len=seq_len,
                          input_needs_grad=input_needs_grad)
        return
    c, q, kv = spec.compute_bytes, arch.q_dim, arch.kv_dim
    qkv_lora = spec.lora_targets & {LoraTarget.Q, LoraTarget.K, LoraTarget.V}
    fused = spec.framework is Framework.LITGPT
    # one adapter on litgpt's fused `LoRAQKVLinear`, or peft's on a fused q/k/v nn.Linear
    one_adapter = fused or (arch.fused_qkv and spec.lora_on_modules)
    adapters = (1 if qkv_lora else 0) if one_adapter else len(qkv_lora)
    linear(ledger, spec, n1, arch.hidden_size, lora=adapters, prefix="qkv",
           needs_grad=input_needs_grad, readers=1 if fused or arch.fused_qkv else 3)
    if not (input_needs_grad or spec.weights_train or qkv_lora):
        # nothing inside attention needs a gradient; an adapter on o keeps its input
        if LoraTarget.O in spec.lora_targets:
            _output_projection(ledger, arch, spec, Activation("attn_out", c), q, fused=fused)
        return
    if fused and qkv_lora and len(qkv_lora) < 3:
        # zero_pad: `index_copy` keeps its source, the reshaped B output (litgpt/lora.py)
        widths = {LoraTarget.Q: q, LoraTarget.K: kv, LoraTarget.V: kv}
        ledger.keep("qkv_lora_zero_pad_source", c * sum(widths[t] for t in qkv_lora))
    grouped = arch.n_kv_heads != arch.n_heads
    # q and k are new tensors after RoPE; under GQA/MQA k and v are expanded copies in litgpt
    # (`k.expand(...).reshape(...)`), in transformers' parallel fused-qkv blocks (Falcon's
    # `broadcast_to(...).flatten(2, 3)`) and eager attention (`repeat_kv`), while transformers'
    # SDPA path passes `enable_gqa=True` (torch >= 2.5, no mask: `use_gqa_in_sdpa`)
    falcon_style = arch.fused_qkv and arch.parallel_block
    # torchtune's MultiHeadAttention expands k and v to the query heads before SDPA
    # (torchtune/modules/attention.py: `k.unsqueeze(2).expand(expand_shape).flatten(1, 2)`)
    expands = fused or falcon_style or spec.attention is Attention.EAGER \
        or spec.framework is Framework.TORCHTUNE
    expanded_kv = q if grouped and expands else kv
    eager = spec.attention is Attention.EAGER or softcapped(arch)
    # litgpt always calls SDPA (but for soft-capping): eager there is SDPA's math kernel
    # (aten/src/ATen/native/transformers/attention.cpp `_scaled_dot_product_attention_math`),
    # whose first matmul reads `query * scale`, a new tensor saved in place of q, and whose
    # matmuls expand and copy a single key-value head
    math = fused and eager and not softcapped(arch)
    # which of q, k, v need a gradient: all of them once the block's input does
    everything = input_needs_grad or spec.weights_train
    q_grad, k_grad, v_grad = (everything or t in qkv_lora
                              for t in (LoraTarget.Q, LoraTarget.K, LoraTarget.V))
    # SDPA's kernels save q, k, v and the output whatever needs a gradient; eager matmuls save
    # only the factor the other one's gradient needs (q @ k.T keeps k for dq, q for dk)
    keep_q, keep_k, keep_v = (k_grad, q_grad, q_grad or k_grad) if eager else (True,) * 3
    qk_norms(ledger, arch, spec, q_grad=q_grad, k_grad=k_grad)
    # GPT-Neo's `_attn` casts q and k to fp32 before `matmul`, which keeps fp32 copies (the
    # (B, nh, T, hs) views of the projections' outputs are not contiguous: `reshape` copies);
    # under autocast the matmul casts them back to 16 bits first
    qk = FP32 if eager and arch.eager_qk_fp32 and not spec.autocast else c
    if keep_q:
        ledger.keep("q_scaled" if math else "q", qk * q)
    if keep_k:
        ledger.keep("k", qk * expanded_kv)
    # v = qkv.split(...)[2].reshape(...) is a view: it keeps the whole fused output alive
    # (the math kernel's matmul reshapes it into a contiguous copy, which it keeps instead). So
    # in transformers' fused q/k/v linears whose q and k RoPE makes new (Phi-3's `qkv_proj`:
    # `value_states = qkv[..., query_pos + kv_dim:]`, a view) where SDPA reads v as it is,
    # without GQA's expansion; eager attention's matmul reshapes the transposed view into a
    # copy. Traced (vramplan.tracer, a 2-layer Phi-3, 2 x 128 tokens, SDPA): the fused output,
    # q+2kv wide, is kept whole (LoRA on qkv_proj -5.3 % -> -0.5 %, full fine-tuning -5.0 % ->
    # -2.0 %). Not where q and k are views too (GPT-2's `c_attn`, ALiBi's BLOOM and MPT): there
    # q, k and v together are that output
    # Under `amp` a quantized base hands the fused output back in fp32 (the residual stream's
    # dtype: `BlockSpec.base_output_in_input_dtype`), and SDPA's autocast casts v to a 16-bit
    # copy of its own: the copy is kept, not the output (traced: Phi-3.5-mini QLoRA under
    # `amp` on q, k, v and o, 2 x 2,048 tokens, +3.1 % → −0.0 %)
    v_cast = spec.base_output_in_input_dtype and n1.itemsize != c
    v_view = (fused and not math) or (arch.fused_qkv and arch.position is PositionKind.ROPE
                                      and not eager and not v_cast)
    if v_view and not (grouped and (expands or arch.family in _REMOTE_CODE_EXPANDS_KV)):
        ledger.keep("qkv", c * (q + 2 * kv))
    elif keep_v:
        ledger.keep("v", c * expanded_kv)
    attn_out = Activation("attn_out", c)
    if not eager:
        # the SDPA kernels save their output for backward; eager attention's `probs @ v` saves
        # its factors only, and o_proj keeps its input (the transposed, contiguous copy) only
        # when its weight trains or it carries an adapter (`linear` below). Traced: LoRA on
        # q and v with eager attention kept no attention output (qwen3-0.6b, 2 x 512)
        ledger.keep(attn_out.name, c * q)
    if eager:
        _eager_scores(ledger, arch, spec, seq_len, probs_needed=v_grad,
                      probs_grad=q_grad or k_grad)
    else:
        # with dropout_p > 0 the CUDA flash and memory-efficient kernels save only the Philox
        # seed and offset and regenerate the mask in backward (derivatives.yaml:
        # `_scaled_dot_product_flash_attention` / `_efficient_attention` backward take
        # `philox_seed, philox_offset`): no mask
        ledger.keep("attn_logsumexp", FP32 * arch.n_heads)
    # litgpt: `y.transpose(1, 2)` then `y.reshape(B, T, C)` (litgpt/model.py
    # CausalSelfAttention). Its q is the contiguous (B, nh, T, hs) output of `torch.cat` after
    # RoPE, and the flash kernel's output takes q's layout (flash_api.cpp `mha_fwd`:
    # `out = at::empty_like(q_padded)` on the (B, T, nh, hs) transpose), as does the math
    # kernel's `attn @ v`: the reshape copies, and o_proj keeps the copy beside the output that
    # SDPA saves. (The memory-efficient kernel allocates (B, T, nh, hs): a view there. Which
    # kernel runs depends on the GPU, not known here: flash is counted.) transformers' families
    # whose RoPE ends in that `torch.cat` do the same
    # (`presets.frameworks.transformers.QUERY_JOINED_AFTER_TRANSPOSE`)
    if not eager and _query_joined_after_transpose(arch, spec, seq_len):
        attn_out = Activation("attn_out_contiguous", c)
    _output_projection(ledger, arch, spec, attn_out, q, fused=fused)


def _output_projection(ledger: Ledger, arch: Architecture, spec: BlockSpec,
                       attn_out: Activation, width: int, *, fused: bool) -> None:
    """o_proj on attention's output (litgpt's merged copy of it, above), with its adapter, and
    the dropout on its result: its mask; the output goes to the residual add, which saves
    nothing."""
    proj_in = Activation("attn_out_merged", attn_out.itemsize) if fused else attn_out
    linear(ledger, spec, proj_in, width, lora=int(LoraTarget.O in spec.lora_targets),
           prefix="o")
    dropout_mask(ledger, spec, "attn_out_dropout_mask", arch.attention_output_dropout,
                 arch.hidden_size)


def _query_joined_after_transpose(arch: Architecture, spec: BlockSpec, seq_len: int) -> bool:
    """Whether o_proj reads a copy of the attention kernel's output
    (`BlockSpec.query_joined_after_transpose`), unless an explicit mask is passed: a sliding
    window the sequence reaches sends SDPA to the memory-efficient kernel, whose output is laid
    out (B, T, heads, head) whatever q's layout (`masked_local_layer_bytes`)."""
    if not spec.query_joined_after_transpose:
        return False
    return spec.attention is not Attention.SDPA or masked_local_layer_bytes(arch, spec,
                                                                            seq_len) == 0


_REMOTE_CODE_EXPANDS_KV = frozenset({"chatglm", "internlm2"})
"""Remote-code families whose attention copies grouped keys and values to the query heads
whatever the kernel: ChatGLM2/3's `value_layer.expand(...).contiguous()` under
`multi_query_attention` (THUDM/chatglm3-6b modeling_chatglm.py `SelfAttention.forward`),
InternLM2's `repeat_kv` before every kernel (internlm/internlm2-7b modeling_internlm2.py)."""


def _latent_attention(ledger: Ledger, arch: Architecture, spec: BlockSpec, n1: Activation, *,
                      seq_len: int, input_needs_grad: bool) -> None:
    """Multi-head latent attention as transformers runs it (modeling_deepseek_v3.py
    `DeepseekV3Attention.forward`): q_a_proj and kv_a_proj_with_mqa read the normed input; the
    query latent and the key-value latent each go through an RMSNorm (fp32 copy, inverse RMS,
    and the normalized input when the weights train) into q_b_proj and kv_b_proj; the query is a
    new tensor (`torch.cat` of its parts), the key a new tensor (`new_empty` + `copy_`), the value a
    view of kv_b_proj's output, which it keeps alive whole; SDPA keeps q, k, v, its output and the
    log-sum-exp, o_proj its input."""
    mla = arch.latent_attention
    if mla is None:
        return
    c, h = spec.compute_bytes, arch.hidden_size
    targets = spec.lora_targets
    q_lora = int(LoraTarget.Q in targets)
    kv_lora = int(bool(targets & {LoraTarget.K, LoraTarget.V}))
    linear(ledger, spec, n1, h, lora=q_lora + kv_lora, prefix="latent_a",
           needs_grad=input_needs_grad, readers=2)
    if not (input_needs_grad or spec.weights_train or q_lora or kv_lora):
        # nothing inside attention needs a gradient; an adapter on o keeps its input
        if LoraTarget.O in targets:
            _output_projection(ledger, arch, spec, Activation("attn_out", c), arch.attn_out_dim,
                               fused=False)
        return
    for tag, rank, lora in (("q_latent", mla.q_lora_rank, q_lora),
                            ("kv_latent", mla.kv_lora_rank, kv_lora)):
        if rank is None:
            continue
        ledger.keep(f"{tag}_norm_input_fp32", FP32 * rank)
        ledger.keep(f"{tag}_norm_rstd", FP32)
        if spec.weights_train:
            ledger.keep(f"{tag}_norm_normed", c * rank)
        linear(ledger, spec, Activation(f"{tag}_normed_out", c), rank, lora=lora,
               prefix=f"{tag}_b")
    heads = arch.n_heads
    ledger.keep("q", c * arch.q_dim)
    ledger.keep("k", c * arch.kv_dim)
    ledger.keep("kv_b_out", c * heads * (mla.qk_nope_head_dim + mla.v_head_dim))
    attn_out = Activation("attn_out", c)
    ledger.keep(attn_out.name, c * arch.attn_out_dim)
    if spec.attention is Attention.EAGER:
        _eager_scores(ledger, arch, spec, seq_len)
    else:
        ledger.keep("attn_logsumexp", FP32 * heads)
    _output_projection(ledger, arch, spec, attn_out, arch.attn_out_dim, fused=False)


def _eager_scores(ledger: Ledger, arch: Architecture, spec: BlockSpec, seq_len: int, *,
                  probs_needed: bool = True, probs_grad: bool = True) -> None:
    """Scores materialized, n_heads x seq_len per token; `probs_needed`: v needs a gradient, so
    probs @ v keeps the probabilities; `probs_grad`: q or k needs one, so the probabilities do."""
    per_row = arch.n_heads * seq_len
    c = spec.compute_bytes
    if arch.attention_sinks and spec.framework is not Framework.LITGPT:
        # gpt-oss's eager_attention_forward: the sink logit joins each row (`torch.cat`), the
        # row's max is subtracted (`max` keeps its int64 indices), softmax runs in the scores'
        # dtype over seq_len + 1 columns and `probs[..., :-1]`, a view, is what probs @ v keeps
        ledger.keep("attn_max_indices", 8 * arch.n_heads)
        ledger.keep("attn_probs", c * arch.n_heads * (seq_len + 1))
        return
    if spec.framework is Framework.LITGPT and not softcapped(arch):
        # SDPA's math kernel: its 16-bit probabilities, saved by softmax and by `attn @ v`
        # (the scaled q is counted with q, k and v)
        if probs_needed or probs_grad:
            ledger.keep("attn_probs", c * per_row)
        return
    # transformers' eager attention and litgpt's soft-capped path: softmax(dtype=float32) saves
    # its fp32 output, `.to(q.dtype)` is saved by probs @ v (the same tensor when both dtypes
    # agree: GPT-2's softmax in the scores' dtype, fp32 training); tanh saves its output
    # (Megatron-LM's FusedScaleMaskSoftmax computes in fp32 inside its kernel and returns the
    # scores' dtype: megatron/core/fusions/fused_softmax.py)
    if spec.scores_clamped and probs_grad:
        ledger.keep("attn_scores_clamped", c * per_row)
    fp32_scores = arch.eager_qk_fp32 and not spec.autocast  # GPT-Neo: fp32 q @ k.T
    fp32_softmax = (arch.eager_softmax_fp32 or spec.autocast or fp32_scores) \
        and spec.framework is not Framework.MEGATRON  # autocast runs softmax in fp32
    softmax_out = FP32 if fp32_softmax else c
    ledger.keep("attn_probs_fp32" if softmax_out != c else "attn_probs", softmax_out * per_row)
    if dropout_active(spec, arch.attention_dropout):
        # `nn.functional.dropout(attn_weights, ...)` (eager_attention_forward): its bool mask
        # when the probabilities need a gradient, and its output, a new tensor, is what
        # probs @ v saves
        if probs_grad:
            ledger.keep("attn_probs_dropout_mask", DROPOUT_MASK_BYTES * per_row)
        if probs_needed:
            ledger.keep("attn_probs_dropped", c * per_row)
    elif probs_needed:
        ledger.keep("attn_probs", c * per_row)
    if softcapped(arch):
        ledger.keep("attn_tanh", c * per_row)


def masked_local_layers_bytes(arch: Architecture, spec: BlockSpec, seq_len: int,
                              layers_with_graph: int) -> int:
    """Per token, all layers: `masked_local_layer_bytes` for each local layer of the
    `layers_with_graph` layers (the trained ones under `freeze`), taken in the model's
    proportion."""
    local = arch.sliding_window_layers * layers_with_graph // arch.n_layers
    return local * masked_local_layer_bytes(arch, spec, seq_len)


def masked_local_layer_bytes(arch: Architecture, spec: BlockSpec, seq_len: int) -> int:
    """Per token, one layer: what a sliding-window or chunked layer adds under SDPA once the
    sequence reaches its window. transformers then passes an explicit bool mask (masking_utils
    `_ignore_causal_mask_sdpa`: no `is_causal` shortcut when `kv_length >= local_attention_size`),
    which `scaled_dot_product_attention` converts to a float mask in the query's dtype
    (aten/src/ATen/native/transformers/attention.cpp `convert_boolean_attn_mask`) that the kernel
    keeps for backward: batch x T x T; and a mask rules out SDPA's own grouped-query path
    (sdpa_attention.py `use_gqa_in_sdpa`: `attention_mask is None`), so `repeat_kv` expands k
    and v to every query head on those layers, copies unless there is a single key-value head.
    Counted with copies for Gemma 3 1B's single head until 2026-12-07: LoRA in fp32 at 2 x 512
    was 1.3 % over the trace, the 129 MiB of 21 local layers' copies."""
    window = arch.sliding_window
    if (not window or not arch.sliding_window_layers or seq_len < window
            or spec.attention is not Attention.SDPA or spec.framework is Framework.LITGPT
            or arch.latent_attention is not None):
        return 0
    c = spec.compute_bytes
    # one key-value head: `reshape` merges its size-1 head dimension with the expanded one, a
    # view (torch's `_compute_stride`), so `repeat_kv` copies nothing (Gemma 3 1B, traced)
    expanded = 2 * c * (arch.q_dim - arch.kv_dim) if arch.n_kv_heads > 1 else 0
    return c * seq_len + expanded
