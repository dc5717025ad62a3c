"""The final norm, the head, the logits and the loss, as each framework computes them
(transformers' `ForCausalLMLoss`, litgpt's chunked cross-entropy, torchtune's chunked output,
fused and compiled losses, Megatron's vocabulary-parallel loss, preference losses)."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.model.architecture import Architecture
from vramplan.training.activations.ops import norm_layer
from vramplan.training.activations.spec import (
    DROPOUT_MASK_BYTES,
    FP32,
    LITGPT_LM_HEAD_CHUNK,
    Activation,
    BlockSpec,
    Ledger,
    adapter_compute_bytes,
    autocasts,
    total_per_token,
)
from vramplan.units import ceil_div
from vramplan.vocab import Framework


@dataclass(frozen=True, slots=True)
class HeadSpec:
    """What decides the memory of the final norm, the head, the logits and the loss."""

    framework: Framework
    chunked: bool
    """litgpt's `lm_head_chunk_size=128` (LoRA scripts): logits come as a list of chunks, so no
    copy is made when the last position is dropped."""
    head_trains: bool
    head_lora: bool
    head_keeps_input: bool
    """The head keeps its input though its weight is frozen: a quantized head (bitsandbytes
    MatMul4Bit), or DeepSpeed ZeRO-3's linear (`BlockSpec.linears_keep_input`)."""
    head_dequant_bytes: int
    """Bytes of a copy of the head weight made for each matmul and kept for backward: the
    weight dequantized to 16 bits (a quantized head), or normalized (Baichuan 2's `NormHead`,
    `vramplan.presets.frameworks.transformers.RemoteCode.norm_head`); 0 for a plain head."""
    quantized_head_output_bytes: int = 0
    """Bytes per logit of a quantized head's output as its layer returns it, and so of the
    gradient its backward receives (litgpt's QLoRA: `vramplan.presets.frameworks.litgpt.LitgptCode.
    fabric_quantization`); 0 for a head that is not quantized."""
    previous_logits: bool = False
    """The previous micro-batch's logits are still referenced during this forward (litgpt's
    loop variable `logits` is rebound only when the new forward returns; a loop that keeps the
    model's outputs, `outputs_kept`, likewise)."""
    outputs_kept: bool = False
    """The loop keeps the model's outputs, so the logits it returns stay alive through backward
    and the optimizer step
    (`vramplan.presets.frameworks.defaults.FrameworkDefaults.loop_keeps_outputs`)."""
    compiled: bool = False
    """The cross-entropy runs under torch.compile (torchtune's `compile_loss`)."""
    log_probs: bool = False
    """The loss takes per-token log-probabilities (TRL's `selective_log_softmax`), not a
    cross-entropy."""
    coati_orpo: bool = False
    """The loss is ColossalChat's ORPO loss on chosen and rejected rows (`_coati_orpo_loss`)."""
    autocast: bool = False
    """The model runs under autocast (`amp`): its 16-bit logits are turned into an fp32 copy."""
    loss_in_function: bool = False
    """litgpt: logits and loss computed in a function that returns the loss alone
    (`vramplan.training.setup.TrainingSetup.loss_in_function`)."""
    logits_fp32_in_model: bool = False
    """transformers up to v4.45: the model returns fp32 logits, its 16-bit head output is freed
    once cast (`vramplan.presets.frameworks.transformers.TransformersCode.logits_fp32_in_model`)."""
    shifts_logits: bool = False
    """transformers up to v4.48: the loss takes an fp32 copy of the logits without their last
    position (`vramplan.presets.frameworks.transformers.TransformersCode.shifts_logits`)."""
    loss_16bit: bool = False
    """That copy and its cross-entropy stay in the 16-bit compute dtype: the model's own loss
    never upcast (`vramplan.presets.frameworks.transformers.TransformersCode.loss_16bit`: OPT,
    GPT-2, BLOOM, GPT-NeoX... before v4.49)."""
    shift_cast_by_autocast: bool = False
    """The model's own loss shifts its 16-bit logits by a 16-bit copy, and autocast's
    `cross_entropy` casts that copy to fp32 (a 16-bit loss's code run under autocast:
    `vramplan.training.setup.autocast_casts_shifted_logits`)."""
    outputs_copied_fp32: bool = False
    """accelerate returns the model's outputs in fp32 (`convert_outputs_to_fp32` around
    `forward` under its mixed precision: `vramplan.training.setup.accelerate_copies_outputs`)."""
    loss_parallel: bool = False
    """The cross-entropy runs under DTensor's `loss_parallel()` on vocabulary-sharded logits
    (`vramplan.training.setup.TrainingSetup.loss_parallel`): `_loss_parallel`."""
    te_cross_entropy: bool = False
    """Megatron-LM's fused cross-entropy runs Transformer Engine's kernel
    (`vramplan.training.setup.TrainingSetup.te_cross_entropy`): `_vocab_parallel_loss`."""
    native_fused_cross_entropy: bool = False
    """Megatron-LM's native fused cross-entropy (megatron/core/fusions/fused_cross_entropy.py,
    the same compiled steps from 7b4a6d76, 2024-06-14, where it was added, to d98e8a64,
    2026-08-22) runs the unfused one's steps as functions compiled by `jit_fuser`,
    `torch.compile` on torch 2.2 and later (megatron/core/jit.py). Inductor does not keep an
    in-place update of a graph input in place when the same graph reduces over it or scatters
    into it: it computes the new value in a fresh buffer and copies it back.
    `calculate_predicted_logits` subtracts the maximum and exponentiates the fp32 logits in
    place, then sums them; `calculate_gradients` scatters into the saved softmax, then scales
    it: one fp32 logits-sized transient in the loss's forward and one in its backward (seen in
    inductor's output for the backward on torch 2.13, CPU; a later version of the file, which
    compiles the pointwise steps alone, says so of both)."""
    megatron_max_subtracted_apart: bool = False
    """Megatron-LM's cross-entropy subtracted the logits' maximum out of place
    (`vocab_parallel_logits = vocab_parallel_logits - logits_max.unsqueeze(dim=-1)`), an fp32
    copy beside the `logits.float()` its caller passed, until 9634c0e4 (2024-06-13, "Reduce logit
    memory pressure by using in-place operation", first in core_r0.8.0)."""
    head_grad_bytes: int = 0
    """A fused linear cross-entropy that trains the head makes the head weight's whole gradient
    in forward (Liger-Kernel `fused_linear_cross_entropy_forward`: `grad_weight =
    torch.zeros_like(weight)`, accumulated chunk by chunk): its bytes, else 0."""
    norm_input_needs_grad: bool = True
    """The final norm's input, the last block's output, needs a gradient; not when no block
    builds a graph (`vramplan.training.specs.checkpoints_cut_the_graph`): a frozen norm then
    saves nothing."""
    fused_rows: int | None = None
    """Rows of a fused linear cross-entropy's chunk when its framework picks them otherwise than
    Liger-Kernel (Unsloth's `unsloth_fused_ce_loss`,
    `vramplan.training.specs.unsloth_loss_chunks`); None: `fused_loss_rows`."""

    @property
    def fused_linear(self) -> bool:
        """A chunked loss outside litgpt and torchtune, whose chunking is their own: a fused
        linear cross-entropy (Liger-Kernel's)."""
        return self.chunked and self.framework not in (Framework.LITGPT, Framework.TORCHTUNE)


@dataclass(frozen=True, slots=True)
class LossMemory:
    """The final norm, head and loss, in bytes for the whole micro-batch."""

    saved_bytes: int
    """Final norm and head inputs kept for backward."""
    logits_alive_bytes: int
    """Logits still referenced when backward runs through the blocks (and, in litgpt's loop,
    through the optimizer step: `logits` is a loop variable)."""
    forward_peak_bytes: int
    """Vocabulary-sized tensors alive when the loss has just been computed."""
    backward_peak_bytes: int
    """Vocabulary-sized tensors alive while the loss's backward runs (first chunk)."""


def fused_loss_rows(tokens: int, vocab: int, hidden: int) -> int:
    """Rows of logits a fused linear cross-entropy computes at once: enough chunks that a chunk's
    logits take about as much as the hidden states, a power of two (Liger-Kernel
    `chunk_size = triton.next_power_of_2(triton.cdiv(BT, triton.cdiv(V, H)))`)."""
    rows = ceil_div(tokens, ceil_div(vocab, hidden))
    return min(tokens, 1 << (rows - 1).bit_length())


def head_and_loss(arch: Architecture, block: BlockSpec, head: HeadSpec, batch: int,
                  seq_len: int, *, logit_len: int | None = None) -> LossMemory:
    """Logits and loss memory, with the fp32 upcast that every framework does before the
    softmax: Fabric's `convert_output` (to float32) for litgpt, `logits.float()` in transformers'
    `ForCausalLMLoss`; the fp32 log-softmax is saved by the loss.

    `logit_len`: the positions per sequence the head computes (GRPO's `logits_to_keep`; None:
    all). The final norm runs over every position and the head takes a slice of its output
    (`self.lm_head(hidden_states[:, slice_indices, :])`, modeling_llama.py
    `LlamaForCausalLM.forward`), a view that keeps the whole normalized tensor alive: what they
    save covers every position."""
    every_position = batch * seq_len
    h, vocab, c = arch.hidden_size, arch.vocab_size, block.compute_bytes
    saved = _final_norm_bytes(arch, block, head) * every_position
    if head.head_trains or head.head_keeps_input:
        saved += block.residual_bytes * h * every_position
    tokens = batch * (seq_len if logit_len is None else logit_len)
    saved += _head_adapter_saved(block, head, hidden=h, tokens=tokens,
                                 every_position=every_position)
    fp32_logits = FP32 * vocab * tokens
    log_softmax = fp32_logits  # saved by the cross-entropy for its backward
    softcap = _final_softcap_bytes(arch, c) * tokens
    if head.framework is Framework.LITGPT:
        # Fabric's convert_output: the list of logit chunks, in fp32, is the training loop's
        # `logits` variable, alive through backward and the optimizer step; computed inside a
        # function, they die with its frame once the loss is returned (extensions/thunder/
        # pretrain.py `forward_and_loss`: `chunked_cross_entropy(logits, targets,
        # chunk_size=0)` on the whole logits, their targets already shifted)
        alive = 0 if head.loss_in_function else fp32_logits
        # finetune/*.py: `logits[..., :-1, :]` reshaped by the loss is a copy when batch > 1
        sliced = not (head.chunked or batch == 1 or head.loss_in_function)
        copy = fp32_logits if sliced else 0
        chunk = min(LITGPT_LM_HEAD_CHUNK, seq_len) * batch if head.chunked else tokens
        # Inside `model(...)`, the previous step's fp32 logits are still bound (the loop rebinds
        # `logits` when the call returns) beside the head's 16-bit chunks: the last chunk
        # dequantizes a quantized head, then convert_output makes the fp32 copies while the
        # 16-bit chunks are still referenced (lightning_utilities `apply_to_collection` builds
        # a new list). After the call, the loss adds its log-softmax to the fp32 logits.
        previous = alive if head.previous_logits else 0
        out_bytes = head.quantized_head_output_bytes or c
        model_out = out_bytes * vocab * tokens
        converted = fp32_logits if out_bytes != FP32 else 0
        in_call = previous + softcap + model_out + max(converted, head.head_dequant_bytes)
        forward = max(in_call, fp32_logits + softcap + log_softmax + copy)
        backward = alive + softcap + log_softmax + 2 * FP32 * vocab * chunk
        if head.quantized_head_output_bytes:
            # autograd runs the latest node first: the head's chunks, made inside `model(...)`
            # before Fabric's fp32 cast and the loss, run their backward after every loss
            # chunk's, when the log-softmax outputs are freed and all the logits' gradients
            # exist in the head's output dtype; each chunk's matmul then dequantizes the head
            # again (bitsandbytes MatMul4Bit.backward), as a trace of lit-gpt 982abcbc's step
            # on fake tensors shows
            backward = max(backward, alive + out_bytes * vocab * tokens
                           + head.head_dequant_bytes)
        return LossMemory(saved_bytes=saved, logits_alive_bytes=alive,
                          forward_peak_bytes=forward, backward_peak_bytes=backward)
    if head.framework is Framework.TORCHTUNE:
        return _torchtune_loss(head, saved=saved, tokens=tokens, vocab=vocab, hidden=h,
                               compute=c)
    if head.coati_orpo or head.log_probs:
        return _preference_loss(head, saved=saved, elements=vocab * tokens, compute=c)
    if (head.framework in (Framework.MEGATRON, Framework.UNSLOTH) and not head.chunked) \
            or (head.framework is Framework.TORCHTITAN and head.compiled):
        return _kernel_loss(head, saved=saved, elements=vocab * tokens, compute=c,
                            softcap=softcap)
    if head.chunked:
        # fused linear + cross-entropy (linkedin/Liger-Kernel ops/fused_linear_cross_entropy.py
        # `fused_linear_cross_entropy_forward`, @c7dd3294 and @ead96b61): the gradients of the
        # hidden states (`zeros_like(_input)`) and of a trained head (`zeros_like(weight)`) are
        # made in forward and kept for backward, which only scales them in place; the logits
        # exist one chunk at a time, in the compute dtype, their gradient written over them by
        # the kernel, and `grad_logits_chunk @ weight` makes the chunk's hidden gradient before
        # it is copied into place
        chunk = head.fused_rows or fused_loss_rows(tokens, vocab, h)
        grad_input = c * h * tokens
        forward = (grad_input + head.head_grad_bytes + c * (vocab + h) * chunk
                   + head.head_dequant_bytes)
        return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                          backward_peak_bytes=grad_input + head.head_dequant_bytes)
    return _transformers_loss(head, saved=saved, tokens=tokens, rows=batch, vocab=vocab,
                              compute=c, softcap=softcap)


def _head_adapter_saved(block: BlockSpec, head: HeadSpec, *, hidden: int, tokens: int,
                        every_position: int) -> int:
    """What a LoRA adapter on the head keeps for its backward, as `linear` counts a block's:
    `lora_A` needs its input for its weight gradient (peft `Linear.forward`, litgpt and
    torchtune's `LoRALinear`: `lora_A(dropout(x))`, the dropout an identity at p = 0), while the
    frozen head's own matmul keeps nothing (autograd saves a matmul's input only for a weight
    that needs a gradient, tools/autograd/derivatives.yaml `mm`). Without dropout that input is
    the final norm's output, kept whole when the head reads a slice of it (`logit_len`), and
    already counted when the head trains or keeps its input. Then `lora_A`'s rank-wide output,
    which `lora_B` keeps."""
    if not head.head_lora:
        return 0
    c, norm_output = block.compute_bytes, block.residual_bytes
    autocast = autocasts(block)
    adapter_input = FP32 if block.adapter_input_fp32 else norm_output
    adapter_out = adapter_compute_bytes(block)
    if block.lora_dropout:
        kept = (DROPOUT_MASK_BYTES + adapter_out) * hidden * tokens
    elif autocast and adapter_input != c:
        kept = c * hidden * tokens  # lora_A's own 16-bit cast
    elif adapter_input != norm_output:
        kept = FP32 * hidden * tokens  # peft's fp32 copy for fp32 adapters
    elif head.head_trains or head.head_keeps_input:
        kept = 0
    else:
        kept = norm_output * hidden * every_position
    return kept + adapter_out * block.lora_rank * tokens


def _compiled_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """torchtitan's `torch.compile`d `cross_entropy(pred.flatten(0, 1).float(), labels)`
    (torchtitan/components/loss.py, `TorchtitanCode.compiles_loss`): inductor fuses the fp32
    upcast into the cross-entropy's reductions, so the graph saves its 16-bit input and a
    log-sum-exp per row, and its backward writes one 16-bit gradient (the model's `pred` itself
    is deleted before backward, torchtitan/train.py `del pred`)."""
    logits = compute * elements  # the log-sum-exp, 4 bytes a row, is not counted
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=logits,
                      backward_peak_bytes=2 * logits + head.head_dequant_bytes)


def _transformers_loss(head: HeadSpec, *, saved: int, tokens: int, rows: int, vocab: int,
                       compute: int, softcap: int) -> LossMemory:
    """transformers: the model's 16-bit logits, `logits.float()` in ForCausalLMLoss (no copy
    when already fp32), the fp32 log-softmax. The Trainer keeps only the loss (`training_step`
    drops the outputs), so backward starts with the log-softmax and adds the fp32 gradients of
    the log-softmax and of the logits. Before v4.49: `_shifted_hf_loss`; on vocabulary-sharded
    logits under DTensor's `loss_parallel()`: `_loss_parallel`."""
    if head.loss_parallel:
        return _loss_parallel(saved=saved, elements=vocab * tokens, compute=compute)
    if head.shifts_logits:
        return _shifted_hf_loss(head, saved=saved, tokens=tokens, rows=rows, vocab=vocab,
                                compute=compute, softcap=softcap)
    # a loss on the 16-bit logits as they are (`HeadSpec.loss_16bit`) takes no fp32 copy: its
    # log-softmax and gradients are in the 16-bit dtype; a model that returns fp32 logits
    # (torchtitan's before October 2024, `TorchtitanCode.logits_fp32_in_model`) leaves the
    # loss's `.float()` nothing to copy
    loss_bytes = compute if head.loss_16bit else FP32
    returns_fp32 = head.logits_fp32_in_model and loss_bytes == FP32
    logits = (FP32 if returns_fp32 else compute) * vocab * tokens
    copy = 0 if loss_bytes == compute or returns_fp32 else loss_bytes * vocab * tokens
    log_softmax = loss_bytes * vocab * tokens
    alive, previous = _kept_outputs(head, logits)
    forward = previous + logits + softcap + copy + log_softmax
    backward = alive + softcap + log_softmax + 2 * loss_bytes * vocab * tokens \
        + head.head_dequant_bytes
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _kept_outputs(head: HeadSpec, returned: int) -> tuple[int, int]:
    """The logits a loop that keeps the model's outputs holds through backward and the step
    (`returned`, the bytes of the logits the model returns), and those of the previous step it
    still holds during this forward; (0, 0) for a loop that drops them (the Trainer)."""
    if not head.outputs_kept:
        return 0, 0
    return returned, returned if head.previous_logits else 0


def _kernel_loss(head: HeadSpec, *, saved: int, elements: int, compute: int,
                 softcap: int) -> LossMemory:
    """A framework's own cross-entropy kernel on `elements` = tokens x vocabulary logits:
    Megatron-LM's (`_vocab_parallel_loss`), torchtitan's compiled one (`_compiled_loss`) or
    Unsloth's `fast_cross_entropy_loss`
    (unsloth/kernels/cross_entropy_loss.py `Fast_CrossEntropyLoss` @4474e4bc): one fp32 loss
    and log-sum-exp per row, the 16-bit logits saved, and their gradient written over them in
    backward (`return logits`)."""
    if head.framework is Framework.MEGATRON:
        return _vocab_parallel_loss(head, saved=saved, elements=elements, compute=compute,
                                    softcap=softcap)
    if head.framework is Framework.TORCHTITAN:
        return _compiled_loss(head, saved=saved, elements=elements, compute=compute)
    logits = compute * elements + softcap
    # Unsloth returns the 16-bit logits its kernel saved, and the Trainer's mixed precision
    # (its notebooks' `fp16 = not is_bfloat16_supported()`, `bf16 = is_bfloat16_supported()`)
    # wraps `forward` in accelerate's `convert_outputs_to_fp32` (accelerate/accelerator.py
    # `prepare_model`; utils/operations.py: `tensor.float()`): an fp32 copy of them lives until
    # the Trainer drops the outputs, before backward
    returned = UNSLOTH_RETURNED_LOGITS_COPY * elements
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0,
                      forward_peak_bytes=logits + returned,
                      backward_peak_bytes=logits + head.head_dequant_bytes)


def _loss_parallel(*, saved: int, elements: int, compute: int) -> LossMemory:
    """`cross_entropy(pred.float(), labels)` under DTensor's `loss_parallel()` on logits sharded
    over the vocabulary (torchtitan with tensor parallelism: the output layer's
    `ColwiseParallel(use_local_output=False)`), on `elements` local logits
    (torch/distributed/tensor/parallel/loss.py `_log_softmax`,
    `_nll_loss_and_log_softmax_backward`):
    forward, beside the 16-bit logits, the fp32 copy, `shifted = x - max` and `exp(shifted)`,
    whose place the log-probabilities then take (kept for backward; the loop deletes `pred`
    before backward); backward, beside them, `zeros_like(x)`, `exp(x)` and their sum, then the
    gradient. 2 + 12 bytes per local logit in forward, 16 in backward, where the single-GPU
    cross-entropy holds 10 and 12 (counted on one rank of a fake 8-rank group, on the CPU)."""
    forward = (compute + 3 * FP32) * elements
    backward = 4 * FP32 * elements
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


UNSLOTH_RETURNED_LOGITS_COPY = FP32
"""Bytes per logit of the copy accelerate makes of the 16-bit logits Unsloth's model returns."""


def _vocab_parallel_loss(head: HeadSpec, *, saved: int, elements: int, compute: int,
                         softcap: int) -> LossMemory:
    """Megatron-LM's cross-entropy (NVIDIA/Megatron-LM @d98e8a64 megatron/core/tensor_parallel/
    cross_entropy.py `_VocabParallelCrossEntropy`, its default: `--cross-entropy-loss-fusion`
    is opt-in), on `elements` = tokens x vocabulary logits (this GPU's share of the
    vocabulary under tensor parallelism). One autograd Function: `logits.float()`, then in
    place the max subtracted, `exp`, the division by the sum: the fp32 softmax is saved, and
    the 16-bit logits die once the model returns its loss (`GPTModel._postprocess`). Its
    backward turns the saved softmax into the gradient in place, which autograd casts to the
    logits' 16-bit dtype: the softmax and its 16-bit copy exist together. Transformer Engine's
    fused kernel keeps the 16-bit logits alone (`HeadSpec.te_cross_entropy`)."""
    logits = compute * elements
    if head.te_cross_entropy:
        # Transformer Engine's `parallel_cross_entropy` (`cross_entropy_fusion_impl="te"`:
        # transformer_engine/pytorch/cross_entropy.py `CrossEntropyFunction`): its Triton kernel
        # writes the gradient over the 16-bit logits in forward and saves them
        # (`save_for_backward(_input.detach())`); backward scales them in place
        return LossMemory(saved_bytes=saved, logits_alive_bytes=0,
                          forward_peak_bytes=logits + softcap,
                          backward_peak_bytes=logits + softcap + head.head_dequant_bytes)
    softmax = FP32 * elements
    upcast = logits if compute != FP32 else 0
    # the fp32 input the caller passed, beside the copy the max was subtracted into
    apart = FP32 * elements if head.megatron_max_subtracted_apart else 0
    # the compiled steps' fresh buffer beside the fp32 logits they update
    compiled_copy = FP32 * elements if head.native_fused_cross_entropy else 0
    forward = upcast + softmax + apart + softcap + compiled_copy
    backward = softmax + upcast + softcap + head.head_dequant_bytes + compiled_copy
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _shifted_hf_loss(head: HeadSpec, *, saved: int, tokens: int, rows: int, vocab: int,
                     compute: int, softcap: int) -> LossMemory:
    """transformers' causal-LM loss before v4.49
    (`vramplan.presets.frameworks.transformers.TransformersCode`; huggingface/transformers
    v4.45.2 models/llama/modeling_llama.py `LlamaForCausalLM.forward`, v4.46.0
    loss/loss_utils.py `ForCausalLMLoss`): `logits = logits.float()`, then
    `shift_logits = logits[..., :-1, :].contiguous()`, an fp32 copy of the `tokens - rows`
    positions that predict a next token, and `CrossEntropyLoss` on it, which saves its fp32
    log-softmax (the copy itself dies with the forward: log_softmax saves its output only).

    Forward peak: the logits the model returns (fp32 up to v4.45; 16-bit from v4.46 with the
    loss's fp32 upcast beside them), the shifted copy and its log-softmax. The Trainer drops the
    outputs, so backward starts with the log-softmax alone: the NLL's gradient and the
    log-softmax's gradient beside it (three fp32 tensors of the shifted rows), then
    `slice_backward` writes that gradient into a zero-filled fp32 tensor of every row, then
    `ToCopyBackward0` casts it to the 16-bit logits' gradient. A model whose loss never
    upcast (`HeadSpec.loss_16bit`) does all of it in the 16-bit dtype, with no cast."""
    every = vocab * tokens
    shifted = vocab * (tokens - rows)
    if head.shift_cast_by_autocast and compute != FP32:
        return _shifted_16bit_loss_under_autocast(head, saved=saved, every=every,
                                                  shifted=shifted, compute=compute,
                                                  softcap=softcap)
    loss_bytes = compute if head.loss_16bit else FP32
    if head.loss_16bit or head.logits_fp32_in_model or compute == FP32:
        logits = loss_bytes * every  # fp32: the 16-bit head output is freed by the cast
        returned = logits
    else:
        logits = compute * every + FP32 * every
        returned = compute * every
    alive, previous = _kept_outputs(head, returned)
    forward = previous + logits + softcap + 2 * loss_bytes * shifted
    cast_back = (compute + FP32) * every if loss_bytes != compute else 0
    backward = alive + softcap + max(3 * loss_bytes * shifted, loss_bytes * (shifted + every),
                                     cast_back) + head.head_dequant_bytes
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _shifted_16bit_loss_under_autocast(head: HeadSpec, *, saved: int, every: int, shifted: int,
                                       compute: int, softcap: int) -> LossMemory:
    """A 16-bit loss's code under autocast (`HeadSpec.shift_cast_by_autocast`): transformers'
    OPT, GPT-2, BLOOM... before v4.49 (`shift_logits = lm_logits[..., :-1, :].contiguous()`,
    then `CrossEntropyLoss`), Qwen (v1) and Baichuan 2's own files. The 16-bit logits, their
    shifted 16-bit copy, the fp32 cast autocast's `cross_entropy` makes of it (torch.amp: the
    op autocasts to fp32) and the fp32 log-softmax it saves; the cast dies with the op. When the
    forward returns, accelerate's `convert_outputs_to_fp32` copies the 16-bit logits to fp32
    beside the saved log-softmax (`HeadSpec.outputs_copied_fp32`), until the Trainer drops the
    outputs. Backward: the NLL's and the log-softmax's fp32 gradients of the shifted rows, their
    16-bit cast (`ToCopyBackward0`), then `slice_backward`'s zero-filled 16-bit gradient of every
    row."""
    logits = compute * every
    log_softmax = FP32 * shifted
    alive, previous = _kept_outputs(head, logits)
    in_loss = logits + compute * shifted + FP32 * shifted + log_softmax
    returned = logits + FP32 * every + log_softmax if head.outputs_copied_fp32 else 0
    forward = previous + softcap + max(in_loss, returned)
    backward = alive + softcap + max(3 * FP32 * shifted, FP32 * shifted + compute * shifted,
                                     compute * (shifted + every)) + head.head_dequant_bytes
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _log_prob_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """TRL's per-token log-probabilities (trl/trainer/utils.py `selective_log_softmax`
    @f2cd5771), on `elements` = rows x positions x vocabulary logits.

    Under autocast, accelerate returns the model's outputs in fp32 (`convert_outputs_to_fp32`
    around `forward`): the 16-bit logits and their fp32 copy exist together. fp32 logits take the
    gather and a `logsumexp` per row, which saves its input: the fp32 logits stay for backward.
    16-bit logits take a `log_softmax` per row, which saves its output: the logits themselves
    are freed, one 16-bit tensor of log-probabilities stays. In backward, fp32 logits get the
    gather's dense gradient, the per-row gradients and their stack (unbind's backward) beside
    the saved logits: four fp32 tensors of the logits' size. Counted per element by tracing the
    function's forward and backward (vramplan.tracer.tracker on CPU tensors): fp32 kept 4, peak
    forward 4 + 2 under autocast, backward 16; 16-bit kept 2, forward 4, backward 4."""
    if compute == FP32 or head.autocast:
        kept = FP32 * elements
        forward = kept + (compute * elements if head.autocast else 0)
        backward = 4 * FP32 * elements
    else:
        kept = compute * elements
        forward = 2 * kept
        backward = 2 * kept
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=backward + head.head_dequant_bytes)


def _preference_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """A preference or RL method's loss on per-token log-probabilities: coati's ORPO loss, or
    TRL's `selective_log_softmax`."""
    if head.coati_orpo:
        return _coati_orpo_loss(head, saved=saved, elements=elements, compute=compute)
    return _log_prob_loss(head, saved=saved, elements=elements, compute=compute)


def _coati_orpo_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """ColossalChat's ORPO step (hpcaitech/ColossalAI applications/ColossalChat @d888c378
    coati/trainer/orpo.py `ORPOTrainer._train`, coati/models/utils.py `calc_masked_log_probs`,
    coati/models/loss.py `OddsRatioLoss`) on `elements` = chosen and rejected rows x positions x
    vocabulary logits; U below is the fp32 logits of one half.

    One forward of both halves; `actor_out["logits"].to(torch.float32)` is the model's fp32
    logits themselves where its forward upcasts them (transformers up to v4.45), else an fp32
    copy beside the 16-bit logits `actor_out` holds. Each half's `F.log_softmax(logits[:, :-1,
    :])` saves its output (U each); `actor_chosen_logits[:, :-1, :].contiguous()` copies the
    chosen half (U) and `CrossEntropyLoss` saves its log-softmax (U): 6U at the end of forward
    (at the head's cast, the previous step's 3U beside the new 16-bit and fp32 logits are as
    many). In backward each of the three branches scatters its gradient into a new zero tensor
    of its half (`slice_backward`), then of the whole logits (2U), which autograd sums into the
    first one's buffer in place: 8U at the last branch's slice, beside the fp32 logits and the
    chosen copy (traced with the loop's code, 8.05U, tests/test_alignment.py).
    `torch.autograd.set_detect_anomaly(True)` checks each node's outputs with `isnan`, a byte
    per value, after its inputs are freed: below that peak. The loop holds
    `actor_out`, `actor_all_logits` and `chosen_logits` through backward and the optimizer step,
    until the next iteration rebinds them: 3U."""
    fp32 = FP32 * elements
    half = fp32 // 2
    model_16bit = 0 if head.logits_fp32_in_model else compute * elements
    alive = fp32 + half + model_16bit  # the fp32 logits, the chosen copy, actor_out's 16-bit
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive,
                      forward_peak_bytes=alive + 3 * half,
                      backward_peak_bytes=alive + 2 * fp32 + half + head.head_dequant_bytes)


TORCHTUNE_OUTPUT_CHUNKS = 8
"""torchtune `CEWithChunkedOutputLoss(num_output_chunks=8)` (torchtune/modules/loss/
ce_chunked_output_loss.py): the model returns its output as 8 chunks along the sequence
(`TransformerDecoder.chunked_output`)."""


def _torchtune_loss(head: HeadSpec, *, saved: int, tokens: int, vocab: int, hidden: int,
                    compute: int) -> LossMemory:
    """torchtune's head and cross-entropy (pytorch/torchtune @1814feb1 and @bd2a0fc7).

    Unchunked: the model returns `self.output(h).float()` (torchtune/modules/transformer.py), so
    its 16-bit logits live only during the cast; `F.cross_entropy` saves its fp32 log-softmax
    and the recipe drops the logits before backward (`del logits`, recipes/
    full_finetune_single_device.py `_loss_step`), which its recipes of before July 2024 did not
    (`vramplan.presets.frameworks.torchtune.TORCHTUNE_DELETES_LOGITS_SINCE`).
    `training.compile_loss` compiles such a loss by returning `torch.compile(loss)`: the LoRA
    single-device recipe keeps what it returns (`self._loss_fn =
    training.compile_loss(self._loss_fn)`), the full fine-tuning recipes call it and drop the
    result, so their unchunked loss runs eagerly; a compiled one saves its fp32 input, not the
    log-probabilities, and its backward makes one gradient.

    Chunked (`CEWithChunkedOutputLoss`): the 16-bit chunks stay referenced until `del logits`.
    Eager, each chunk is cast to fp32 and its log-softmax saved. Compiled (`compile_loss`
    replaces `compute_cross_entropy` in place in every recipe, "the CE and upcasting have to be
    compiled together"): inductor fuses the cast into the cross-entropy's reductions, the graph
    saves its 16-bit input and the log-sum-exp, and its backward writes one 16-bit gradient.

    Backward, every chunk's loss runs before the head's (autograd's engine runs the ready node
    with the highest sequence number first, and the loss's nodes were made after the head's
    matmuls): the chunks' gradients wait, and the head then runs once per chunk. A trained head
    sums its weight's gradients in autograd's input buffer, the first sum out of place (the
    linear's weight gradient is a transposed view, see vramplan.training.estimate
    `_embedding_gradients_in_flight`): the buffer, the new gradient and their sum, beside the
    chunks' gradients still waiting (torchtune trains in bf16 or fp32: the head's weight, and its
    gradient, are in the compute dtype)."""
    logits16, logits32 = compute * vocab * tokens, 4 * vocab * tokens
    if not head.chunked:
        compiled = head.compiled and not head.head_trains
        kept = logits32  # the log-softmax (eager) or the fp32 logits themselves (compiled)
        # before the recipes' `del logits`, the shifted fp32 copy stays bound through backward
        # and the step, and the previous micro-batch's during the model's forward
        # (`HeadSpec.outputs_kept`, `previous_logits`)
        alive = logits32 if head.outputs_kept else 0
        previous = alive if head.previous_logits else 0
        forward = logits16 + logits32 if compiled else max(previous + logits16 + logits32,
                                                           logits32 + kept)
        backward = alive + kept + (1 if compiled else 2) * logits32
        return LossMemory(saved_bytes=saved, logits_alive_bytes=alive,
                          forward_peak_bytes=forward, backward_peak_bytes=backward)
    chunk32 = ceil_div(logits32, TORCHTUNE_OUTPUT_CHUNKS)
    chunk16 = ceil_div(logits16, TORCHTUNE_OUTPUT_CHUNKS)
    if head.compiled:
        forward = logits16
        losses = logits16 + chunk16
    else:
        forward = logits16 + logits32 + chunk32
        losses = logits32 + 2 * chunk32 + chunk16
    head_gradient = compute * vocab * hidden if head.head_trains else 0
    heads = (TORCHTUNE_OUTPUT_CHUNKS - 1) * chunk16 + 3 * head_gradient
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=max(losses, heads))


def _final_softcap_bytes(arch: Architecture, compute_bytes: int) -> int:
    """Per token: the final soft-cap `tanh(logits / cap) * cap` saves its tanh output in the
    logits' 16-bit dtype until the loss's backward reaches it (litgpt litgpt/model.py
    `do_softcapping` on each head chunk; transformers modeling_gemma2.py
    `Gemma2ForCausalLM.forward`); the division and the product by a constant save nothing."""
    if arch.final_logit_softcapping is None:
        return 0
    return compute_bytes * arch.vocab_size


def _final_norm_bytes(arch: Architecture, block: BlockSpec, head: HeadSpec) -> int:
    ledger = Ledger()
    spec = BlockSpec(block.framework, block.residual_bytes, block.compute_bytes, block.autocast,
                     weights_train=head.head_trains, base_keeps_input=False,
                     lora_targets=frozenset(), lora_rank=0, lora_dropout=False,
                     attention=block.attention)
    if arch.final_norm:
        norm_layer(ledger, arch, spec, Activation("x_last", block.residual_bytes),
                   name="final_norm", needs_grad=head.norm_input_needs_grad)
    return total_per_token(ledger.items())
