"""The head, the logits and the loss as allocations, one function per way of computing them
(transformers' shifted loss, fused and compiled losses, Megatron's vocabulary-parallel loss)."""

from __future__ import annotations

from collections.abc import Iterator

from vramplan.model.architecture import Architecture
from vramplan.presets.frameworks.transformers import TransformersCode
from vramplan.training.activations.head import UNSLOTH_RETURNED_LOGITS_COPY
from vramplan.training.activations.spec import FP32
from vramplan.training.allocations.program import StepProgram


def logits_and_loss(program: StepProgram, arch: Architecture, *, rows: int, tokens: int,
                    hidden: int, compute: int, code: TransformersCode, batch: int, loss_16bit: bool,
                    keep: bool, previous: int | None, cast_after_shift: bool = False,
                    outputs_fp32: bool = False) -> tuple[int, int | None]:
    """The head, the logits and the cross-entropy, forward then the start of backward, as
    transformers' `ForCausalLMLoss` runs them (16-bit logits, their fp32 copy, the saved fp32
    log-softmax; backward: the fp32 gradients of the log-softmax and of the logits, then their
    16-bit cast); a chunked loss holds one chunk at a time. Before v4.49 an unchunked loss
    takes an fp32 copy of the logits without their last position (`_shifted_loss`). A loss in
    the 16-bit dtype (`loss_16bit`, `vramplan.training.setup.loss_in_16bit`) takes no fp32 copy.
    With `keep` (one chunk), the logits the model returns are not freed: a loop keeps them;
    `previous`, the logits the loop still holds from the micro-batch before, is freed when the
    forward returns. A 16-bit loss's code under autocast (`cast_after_shift`):
    `_shifted_loss_cast_by_autocast`. Returns the gradient of the last hidden state and the
    kept logits."""
    if code.shifts_logits and rows == tokens and cast_after_shift and compute != FP32:
        return _shifted_loss_cast_by_autocast(program, arch, tokens=tokens, hidden=hidden,
                                              compute=compute, batch=batch, keep=keep,
                                              previous=previous, outputs_fp32=outputs_fp32)
    if code.shifts_logits and rows == tokens:
        return _shifted_loss(program, arch, tokens=tokens, hidden=hidden, compute=compute,
                             code=code, batch=batch, loss_16bit=loss_16bit, keep=keep,
                             previous=previous)
    vocab = arch.vocab_size
    loss_bytes = compute if loss_16bit else FP32
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    chunk_grads: list[int] = []
    returned: int | None = None
    for chunk_rows in _chunks(tokens, rows):
        logits = program.alloc(compute * vocab * chunk_rows)
        upcast = program.alloc(FP32 * vocab * chunk_rows) if loss_bytes != compute else logits
        log_probs = program.alloc(loss_bytes * vocab * chunk_rows)
        if upcast != logits:
            program.free(upcast)
        if keep:
            returned = logits
        else:
            program.free(logits)
        chunk_grads.append(log_probs)
    if previous is not None:
        program.free(previous)
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    for log_probs in chunk_grads:
        rows_grad = program.alloc(loss_bytes * vocab * rows)
        logits_grad = program.alloc(loss_bytes * vocab * rows)
        program.free(rows_grad)
        program.free(log_probs)
        if loss_bytes == compute:
            program.free(logits_grad)
        else:
            program.free(_cast(program, logits_grad, compute * vocab * rows, compute))
    program.free(saved_hidden)
    return grad_hidden, returned


def fused_linear_loss(program: StepProgram, arch: Architecture, *, rows: int, tokens: int,
                      hidden: int, compute: int, head_grad_bytes: int) -> tuple[int, int]:
    """A fused linear cross-entropy as Liger-Kernel runs it (`vramplan.training.activations.head
    .head_and_loss`): the hidden states' gradient and a trained head's gradient made first, then
    chunk by chunk the logits and the chunk's hidden gradient (`grad_logits_chunk @ weight`),
    copied into place and freed with the chunk. The gradients are kept for backward. Returns the
    hidden states' gradient and the head's."""
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    head_grad = program.alloc(head_grad_bytes)
    losses = program.alloc(FP32 * tokens)
    # each chunk frees what it made, so the next one of its size finds the same cached blocks: a
    # full chunk and the last, shorter one replay the loop (Unsloth's can run thousands)
    for chunk_rows in _chunk_sizes(tokens, rows):
        logits = program.alloc(compute * arch.vocab_size * chunk_rows)
        program.free(program.alloc(compute * arch.hidden_size * chunk_rows))
        program.free(logits)
    program.free(losses)
    program.free(hidden)
    program.backward_begins()
    return grad_hidden, head_grad


def vocab_parallel_loss(program: StepProgram, arch: Architecture, *, tokens: int, hidden: int,
                        compute: int, compiled: bool = False, te_kernel: bool = False) -> int:
    """Megatron-LM's cross-entropy (`vramplan.training.activations.head._vocab_parallel_loss`): the
    16-bit logits and their fp32 copy, made a softmax in place and saved; in backward the
    softmax becomes the gradient in place and is cast to 16 bits. `compiled`: its native fused
    version, whose compiled steps update the fp32 logits through a fresh buffer, in forward and
    in backward (`HeadSpec.native_fused_cross_entropy`). `te_kernel`: Transformer Engine's
    kernel, which writes the gradient over the 16-bit logits and keeps nothing else
    (`HeadSpec.te_cross_entropy`)."""
    every = arch.vocab_size * tokens
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * every)
    if te_kernel:
        program.free(hidden)
        program.backward_begins()
        grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
        program.free(logits)
        program.free(saved_hidden)
        return grad_hidden
    softmax = _cast(program, logits, FP32 * every, compute)
    if compiled:
        program.free(program.alloc(FP32 * every))
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    fresh = program.alloc(FP32 * every) if compiled else None
    program.free(_cast(program, softmax, compute * every, compute))
    if fresh is not None:
        program.free(fresh)
    program.free(saved_hidden)
    return grad_hidden


def in_place_loss(program: StepProgram, arch: Architecture, *, tokens: int, hidden: int,
                  compute: int) -> int:
    """Unsloth's `fast_cross_entropy_loss` (`vramplan.training.activations.head._kernel_loss`): the
    16-bit logits, saved, their fp32 copy in the returned outputs, and their gradient written
    over them in backward."""
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * arch.vocab_size * tokens)
    rows = program.alloc(2 * FP32 * tokens)  # the loss and log-sum-exp of each row
    # the returned logits' fp32 copy (accelerate's `convert_outputs_to_fp32`), dropped with the
    # outputs
    program.free(program.alloc(UNSLOTH_RETURNED_LOGITS_COPY * arch.vocab_size * tokens))
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    program.free(logits)
    program.free(rows)
    program.free(saved_hidden)
    return grad_hidden


def loss_parallel(program: StepProgram, arch: Architecture, *, tokens: int, hidden: int,
                  compute: int) -> int:
    """The cross-entropy under DTensor's `loss_parallel()`
    (`vramplan.training.activations.head._loss_parallel`), on this GPU's share of the logits: the
    16-bit logits, their fp32 copy, `shifted`, `exp(shifted)`, then the kept log-probabilities
    (the loop deletes `pred`); backward: `zeros_like`, `exp`, their sum, the gradient, then
    its 16-bit cast for the output layer."""
    elements = arch.vocab_size * tokens
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * elements)
    program.free(hidden)
    upcast = program.alloc(FP32 * elements)
    shifted = program.alloc(FP32 * elements)
    program.free(program.alloc(FP32 * elements))  # exp(shifted), summed
    log_probs = program.alloc(FP32 * elements)
    program.free(shifted)
    program.free(upcast)
    program.free(logits)
    program.backward_begins()
    zeros = program.alloc(FP32 * elements)
    exp = program.alloc(FP32 * elements)
    total = program.alloc(FP32 * elements)
    program.free(zeros)
    program.free(exp)
    grad = program.alloc(FP32 * elements)
    program.free(total)
    program.free(log_probs)
    grad_logits = program.alloc(compute * elements)
    program.free(grad)
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    program.free(grad_logits)
    program.free(saved_hidden)
    return grad_hidden


def compiled_loss(program: StepProgram, arch: Architecture, *, tokens: int, hidden: int,
                  compute: int) -> int:
    """torchtitan's compiled cross-entropy (`vramplan.training.activations.head._compiled_loss`):
    the 16-bit logits saved (with a log-sum-exp per row, not counted), then one 16-bit
    gradient."""
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * arch.vocab_size * tokens)
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    grad_logits = program.alloc(compute * arch.vocab_size * tokens)
    program.free(logits)
    program.free(grad_logits)
    program.free(saved_hidden)
    return grad_hidden


def _shifted_loss(program: StepProgram, arch: Architecture, *, tokens: int, hidden: int,
                  compute: int, code: TransformersCode, batch: int, loss_16bit: bool,
                  keep: bool, previous: int | None) -> tuple[int, int | None]:
    """transformers' causal-LM loss before v4.49 (`vramplan.training.activations.head
    ._shifted_hf_loss`, huggingface/transformers v4.45.2 models/llama/modeling_llama.py,
    v4.46.0 loss/loss_utils.py): the fp32 logits (cast in the model up to v4.45, freeing the
    16-bit head output; in the loss from v4.46, the 16-bit logits alive beside them), the
    contiguous copy of the `tokens - batch` shifted rows and its saved log-softmax; in backward
    the NLL's and the log-softmax's gradients of the shifted rows, `slice_backward`'s
    zero-filled gradient of every row, then its 16-bit cast. A model whose loss never upcast
    (`loss_16bit`: `TransformersCode.loss_16bit`) does it all in the 16-bit dtype. `keep` and
    `previous` as in `logits_and_loss`: the logits the model returns are the fp32 ones up to v4.45
    and the 16-bit ones after."""
    every, shifted = arch.vocab_size * tokens, arch.vocab_size * (tokens - batch)
    loss_bytes = compute if loss_16bit else FP32
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * every)
    upcast = program.alloc(FP32 * every) if loss_bytes != compute else logits
    if code.logits_fp32_in_model and upcast != logits:
        program.free(logits)
    returned = upcast if code.logits_fp32_in_model else logits
    copy = program.alloc(loss_bytes * shifted)
    log_probs = program.alloc(loss_bytes * shifted)
    program.free(copy)
    # the loss's fp32 copy, then the logits the model returned, unless a loop keeps them
    for tensor in dict.fromkeys((upcast, returned)):
        if not (keep and tensor == returned):
            program.free(tensor)
    grad_hidden, rows_grad = _shifted_loss_backward_start(
        program, arch, tokens=tokens, hidden=hidden, compute=compute, previous=previous,
        rows_bytes=loss_bytes * shifted, log_probs=log_probs)
    logits_grad = program.alloc(loss_bytes * every)
    program.free(rows_grad)
    program.free(logits_grad if loss_bytes == compute
                 else _cast(program, logits_grad, compute * every, compute))
    program.free(saved_hidden)
    return grad_hidden, returned if keep else None


def _shifted_loss_cast_by_autocast(program: StepProgram, arch: Architecture, *, tokens: int,
                                   hidden: int, compute: int, batch: int, keep: bool,
                                   previous: int | None,
                                   outputs_fp32: bool) -> tuple[int, int | None]:
    """A 16-bit loss's code under autocast (`vramplan.training.activations.head
    ._shifted_16bit_loss_under_autocast`): the 16-bit logits, their shifted 16-bit copy,
    `cross_entropy`'s fp32 cast of it and the saved fp32 log-softmax, the cast and the copy
    freed; accelerate's fp32 copy of the returned logits (`outputs_fp32`), which replaces them
    in the outputs. Backward: the NLL's and the log-softmax's fp32 gradients of the shifted
    rows, their 16-bit cast, `slice_backward`'s 16-bit gradient of every row."""
    every, shifted = arch.vocab_size * tokens, arch.vocab_size * (tokens - batch)
    saved_hidden = program.alloc(compute * arch.hidden_size * tokens)
    logits = program.alloc(compute * every)
    copy = program.alloc(compute * shifted)
    cast = program.alloc(FP32 * shifted)
    log_probs = program.alloc(FP32 * shifted)
    program.free(cast)
    program.free(copy)
    returned = logits
    if outputs_fp32:
        returned = program.alloc(FP32 * every)
        program.free(logits)
    if not keep:
        program.free(returned)
    grad_hidden, rows_grad = _shifted_loss_backward_start(
        program, arch, tokens=tokens, hidden=hidden, compute=compute, previous=previous,
        rows_bytes=FP32 * shifted, log_probs=log_probs)
    rows_grad = _cast(program, rows_grad, compute * shifted, compute)
    logits_grad = program.alloc(compute * every)
    program.free(rows_grad)
    program.free(logits_grad)
    program.free(saved_hidden)
    return grad_hidden, returned if keep else None


def _shifted_loss_backward_start(program: StepProgram, arch: Architecture, *, tokens: int,
                                 hidden: int, compute: int, previous: int | None,
                                 rows_bytes: int, log_probs: int) -> tuple[int, int]:
    """The end of a shifted loss's forward and the start of its backward: the previous logits
    and the last hidden state freed, the hidden state's gradient, the NLL's gradient of the
    shifted rows and the log-softmax's (`rows_bytes` each), the NLL's and the saved
    log-softmax freed. Returns the hidden state's gradient and the shifted rows' gradient."""
    if previous is not None:
        program.free(previous)
    program.free(hidden)
    program.backward_begins()
    grad_hidden = program.alloc(compute * arch.hidden_size * tokens)
    nll_grad = program.alloc(rows_bytes)
    rows_grad = program.alloc(rows_bytes)
    program.free(nll_grad)
    program.free(log_probs)
    return grad_hidden, rows_grad


def _cast(program: StepProgram, tensor: int, n_bytes: int, compute: int) -> int:
    """`tensor` cast between the 16-bit compute dtype and fp32 (`n_bytes` after the cast), the
    source freed once the copy exists; in fp32 training there is no cast: `tensor` itself."""
    if compute == FP32:
        return tensor
    cast = program.alloc(n_bytes)
    program.free(tensor)
    return cast


def _chunk_sizes(total: int, size: int) -> list[int]:
    """The distinct sizes of `_chunks(total, size)`, in their order."""
    full, last = divmod(total, size)
    return ([size] if full else []) + ([last] if last else [])


def _chunks(total: int, size: int) -> Iterator[int]:
    done = 0
    while done < total:
        yield min(size, total - done)
        done += size
