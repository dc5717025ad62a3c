"""Two training steps of the real model, counted by the storage tracker; the second is reported."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any
from unittest import mock

import torch
from torch import nn

from vramplan.allocator import replay
from vramplan.i18n import Lang, translate
from vramplan.parts import PartKind
from vramplan.tracer.alignment import (
    Batch,
    dpo_loss,
    frozen_reference,
    grpo_loss,
    reference_copy_kept,
)
from vramplan.tracer.bnb_emulation import LABEL_4BIT, LABEL_8BIT, LABEL_PAGED, Linear4bitEmulated
from vramplan.tracer.cuda_autocast import cuda_cast_lists
from vramplan.tracer.model import apply_method, build_model
from vramplan.tracer.optim import OptimizerSide, make_optimizer_side
from vramplan.tracer.parallel import parallel_world
from vramplan.tracer.result import AllocatorPeaks, CudaPeaks, Phase, TraceResult
from vramplan.tracer.setup import TraceSetup
from vramplan.tracer.tracker import StorageTracker
from vramplan.training.states import BNB_PAGED_MIN_ELEMENTS
from vramplan.vocab import Attention, Device, Method, Optimizer, Precision

Progress = Callable[[str], None]
"""Called with a stage name: `build`, `step1`, `step2`, `cuda`."""

STEPS = 2
"""Step 1 creates the optimizer state; step 2, the steady state, is reported."""


def run_trace(setup: TraceSetup, *, real: bool = False,
              progress: Progress | None = None) -> TraceResult:
    """Trace `setup` on fake CPU tensors (or real CPU ones with `real`); with `Device.CUDA`, also
    run the step for real on the GPU and attach torch.cuda's peaks."""
    notify = progress or (lambda stage: None)
    with _quiet_libraries():
        result = _trace_on(setup, "cpu", fake=not real, notify=notify)
        if setup.device is Device.CUDA:
            notify("cuda")
            cuda = _trace_on(setup, "cuda", fake=False, notify=lambda stage: None)
            result = _with_cuda(result, cuda.cuda)
    return result


@contextlib.contextmanager
def _quiet_libraries() -> Iterator[None]:
    """transformers and peft warn about settings a trace makes on purpose (no KV cache in
    training, a tiny vocabulary in tests): keep stderr for vramplan's own progress."""
    import warnings

    from transformers.utils import logging

    verbosity = logging.get_verbosity()
    logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.set_verbosity(verbosity)


def _with_cuda(result: TraceResult, cuda: CudaPeaks | None) -> TraceResult:
    return replace(result, cuda=cuda)


# what a trace emulates, in English in its result and JSON (the CLI prints them in the user's
# language: vramplan.i18n.catalogue.trace `trace_label_key`)
LABEL_DROPOUT = translate("trace.label.dropout", Lang.EN)
LABEL_SDPA_DROPOUT = translate("trace.label.sdpa_dropout", Lang.EN)
LABEL_FLASH = translate("trace.label.flash", Lang.EN)
LABEL_AUTOCAST = translate("trace.label.autocast", Lang.EN)


def _trace_on(setup: TraceSetup, device: str, *, fake: bool, notify: Progress) -> TraceResult:
    torch.manual_seed(0)
    dropped: list[float] = []
    sdpa_dropped: list[float] = []
    with parallel_world(setup) as world, _tensor_world(device, fake), \
            _dropout_as_on_cuda(device, dropped), _sdpa_dropout_as_on_cuda(device, sdpa_dropped), \
            _autocast_as_on_cuda(device, setup):
        notify("build")
        model = apply_method(build_model(setup), setup)
        reference = frozen_reference(build_model(setup)) if reference_copy_kept(setup) else None
        params_total = logical_params(model)
        params_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        tracker = StorageTracker()
        with tracker:
            model = world.shard(model)
            side = make_optimizer_side(model, setup)
            _classify_persistent(tracker, model, side)
            if reference is not None:
                tracker.reclassify([*reference.parameters(), *reference.buffers()],
                                   PartKind.REFERENCE_WEIGHTS)
            _classify_gradients_as_accumulated(tracker, side)
            for step in range(1, STEPS + 1):
                notify(f"step{step}")
                if step == STEPS:
                    model = world.before_reported_step(model)
                    _reset_cuda_peaks(device)
                    tracker.start_recording()
                _one_step(model, reference, side, setup, tracker=tracker, device=device)
                if step == 1:
                    _classify_optimizer_state(tracker, side, setup)
            cuda = _cuda_peaks(device)
        return TraceResult(
            allocator=_allocator_peaks(tracker, setup),
            setup=setup,
            params_total=params_total,
            params_trainable=params_trainable,
            peak_bytes=tracker.peak,
            peak_phase=tracker.recorded_peak_phase(),
            breakdown=tracker.peak_breakdown(),
            phases=tracker.phase_peaks(),
            paged_bytes=tracker.excluded_bytes,
            emulated=_emulations(setup) + ((LABEL_DROPOUT,) if dropped else ())
            + ((LABEL_SDPA_DROPOUT,) if sdpa_dropped else ()),
            not_traced=_not_traced(setup),
            versions=_versions(),
            real=not fake,
            cuda=cuda,
        )


@contextlib.contextmanager
def _tensor_world(device: str, fake: bool) -> Iterator[None]:
    """Fake CPU tensors (no memory), or real tensors on `device`."""
    with contextlib.ExitStack() as stack:
        if fake:
            from torch._subclasses.fake_tensor import FakeTensorMode

            stack.enter_context(FakeTensorMode())
            stack.enter_context(_unpacked_batches_as_on_real_tensors())
        if device != "cpu":
            stack.enter_context(torch.device(device))
        yield


@contextlib.contextmanager
def _dropout_as_on_cuda(device: str, dropped: list[float]) -> Iterator[None]:
    """On a CPU trace, `nn.functional.dropout` as CUDA runs it: `at::dropout` takes
    `native_dropout` for CUDA inputs only (aten/src/ATen/native/Dropout.cpp,
    `is_fused_kernel_acceptable`), which autograd saves as a one-byte bool mask; on CPU it
    multiplies by a noise tensor of the input's dtype, which would be saved instead. Each rate
    used in training is appended to `dropped`. SDPA's own `dropout_p`:
    `_sdpa_dropout_as_on_cuda`."""
    if device != "cpu":
        yield
        return
    functional = torch.nn.functional

    def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
                inplace: bool = False) -> torch.Tensor:
        if not training or p == 0:
            return x
        dropped.append(p)
        return torch.native_dropout(x, p, training)[0]

    with mock.patch.object(functional, "dropout", dropout):
        yield


@contextlib.contextmanager
def _sdpa_dropout_as_on_cuda(device: str, dropped: list[float]) -> Iterator[None]:
    """On a CPU trace, SDPA's attention dropout as CUDA runs it. With `dropout_p` > 0 the CPU
    takes the math fallback (on torch 2.13, `bmm`, `_safe_softmax` and `bmm` where the same call
    without dropout runs `_scaled_dot_product_flash_attention_for_cpu`), which keeps the batch's
    probabilities, their dropout mask and the dropped probabilities for backward, three
    heads x seq_len² tensors a layer. CUDA's flash and memory-efficient kernels take dropout
    and keep only the output, its log-sum-exp and the Philox seed and offset they draw the mask
    again from in backward (`_flash_attention_forward`'s and `_efficient_attention_forward`'s
    outputs): what the same call keeps on the CPU without dropout. So the trace runs the call
    without it; each rate used in training is appended to `dropped`."""
    if device != "cpu":
        yield
        return
    functional = torch.nn.functional
    original = functional.scaled_dot_product_attention

    def scaled_dot_product_attention(*args: Any, **kwargs: Any) -> torch.Tensor:
        rate = kwargs.get("dropout_p", args[4] if len(args) > 4 else 0.0)
        if rate:
            dropped.append(rate)
            if len(args) > 4:
                args = (*args[:4], 0.0, *args[5:])
            else:
                kwargs["dropout_p"] = 0.0
        return original(*args, **kwargs)

    with mock.patch.object(functional, "scaled_dot_product_attention",
                           scaled_dot_product_attention):
        yield


def _autocast_as_on_cuda(device: str,
                         setup: TraceSetup) -> contextlib.AbstractContextManager[None]:
    """On a CPU trace of an `amp` run, CPU autocast casts as CUDA autocast does
    (`vramplan.tracer.cuda_autocast`)."""
    if device != "cpu" or setup.precision is not Precision.AMP:
        return contextlib.nullcontext()
    return cuda_cast_lists()


@contextlib.contextmanager
def _unpacked_batches_as_on_real_tensors() -> Iterator[None]:
    """transformers' masking code asks whether a batch packs several sequences by reading tensor
    values; it cannot read a fake tensor, takes it for graph tracing and builds a full attention
    mask that a real step skips. A traced batch never packs sequences (its positions are
    0..seq_len-1), which is the answer a real step reads: give it, after the same tensor ops."""
    from transformers import masking_utils

    original = masking_utils.find_packed_sequence_indices

    def find_packed_sequence_indices(position_ids: torch.Tensor) -> None:
        packed = original(position_ids)
        if packed is not None:
            (packed[:, -1] == 0).all()  # the check a real step runs (and reads)

    masking_utils.find_packed_sequence_indices = find_packed_sequence_indices
    try:
        yield
    finally:
        masking_utils.find_packed_sequence_indices = original


def _one_step(model: nn.Module, reference: nn.Module | None, side: OptimizerSide,
              setup: TraceSetup, *, tracker: StorageTracker, device: str) -> None:
    """Forward, loss, backward, optimizer step, zero_grad: as a transformers training loop does
    (the model's output is dropped once the loss is computed, before backward); DPO's and
    GRPO's loss as TRL computes it (`vramplan.tracer.alignment`)."""
    hf_model: Any = getattr(model, "module", model)  # the transformers (or peft) model in DDP
    # a vision-language checkpoint's vocabulary is its language model's (Gemma 3's text_config)
    vocab_size = int(hf_model.config.get_text_config().vocab_size)
    with _saved_for_backward(tracker):  # the batch stays referenced by the loop
        if setup.alignment is None:
            loss, batch = _supervised_loss(model, setup, tracker, device, vocab_size)
        elif setup.alignment.method is Method.DPO:
            loss, batch = dpo_loss(model, reference, setup, tracker=tracker, device=device,
                                   vocab_size=vocab_size)
        else:
            loss, batch = grpo_loss(model, reference, setup, tracker=tracker, device=device,
                                    vocab_size=vocab_size)
    tracker.start_phase(Phase.BACKWARD)
    torch.autograd.backward(loss)
    del loss, batch
    tracker.start_phase(Phase.OPTIMIZER_STEP)
    side.step(lambda grad: tracker.reclassify([grad], PartKind.GRADIENTS))
    tracker.start_phase(Phase.ZERO_GRAD)
    side.zero_grad()


def _supervised_loss(model: nn.Module, setup: TraceSetup, tracker: StorageTracker, device: str,
                     vocab_size: int) -> tuple[torch.Tensor, Batch]:
    """The model's own loss function on the logits (upcast to fp32 there), forward and loss
    under autocast in `amp`; the loss and the batch."""
    hf_model: Any = getattr(model, "module", model)
    tracker.start_phase(Phase.FORWARD)
    input_ids = torch.randint(0, vocab_size, (setup.batch, setup.seq_len))
    labels = input_ids.clone()
    with _autocast(setup, device):
        logits = model(input_ids=input_ids).logits
        tracker.start_phase(Phase.LOSS)
        loss: torch.Tensor = hf_model.loss_function(logits=logits, labels=labels,
                                                    vocab_size=vocab_size)
    return loss, (input_ids, labels)


def _autocast(setup: TraceSetup, device: str) -> contextlib.AbstractContextManager[Any]:
    if setup.precision is Precision.AMP:
        return torch.autocast(device_type=device, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _saved_for_backward(tracker: StorageTracker) -> contextlib.AbstractContextManager[Any]:
    """Every tensor autograd saves goes through `pack`: mark its storage as a saved activation.
    `detach()` shares the storage and keeps no graph (no reference cycle through grad_fn)."""

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        tracker.classify(tensor, PartKind.ACTIVATIONS)
        return tensor.detach()

    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def _classify_persistent(tracker: StorageTracker, model: nn.Module, side: OptimizerSide) -> None:
    for param in model.parameters():
        trainable = param.requires_grad
        tracker.classify(param, PartKind.TRAINABLE_WEIGHTS if trainable
                         else PartKind.FROZEN_WEIGHTS)
    for buffer in model.buffers():
        tracker.classify(buffer, PartKind.FROZEN_WEIGHTS)
    tracker.reclassify(side.masters, PartKind.MASTER_WEIGHTS)


def _classify_gradients_as_accumulated(tracker: StorageTracker, side: OptimizerSide) -> None:
    """A parameter's `.grad` is the storage autograd accumulated into it."""

    def accumulated(param: torch.Tensor) -> None:
        if param.grad is not None:
            tracker.reclassify([param.grad], PartKind.GRADIENTS)

    for param in side.params:
        param.register_post_accumulate_grad_hook(accumulated)  # type: ignore[no-untyped-call]


def _classify_optimizer_state(tracker: StorageTracker, side: OptimizerSide,
                              setup: TraceSetup) -> None:
    on_device: list[torch.Tensor] = []
    for param, state in side.optimizer.state.items():
        for key, value in state.items():
            if not isinstance(value, torch.Tensor) or value.untyped_storage().nbytes() == 0:
                continue
            if setup.paged and _is_paged(key, param):
                tracker.exclude(value)
            else:
                on_device.append(value)
    tracker.reclassify(on_device, PartKind.OPTIMIZER_STATES)


def _is_paged(key: str, param: torch.Tensor) -> bool:
    """What a bitsandbytes paged optimizer puts in managed memory: the `state1`/`state2` buffers
    of `get_state_buffer`, for parameters of 1e5 values or more; smaller parameters' states, the
    8-bit states' absmax and the shared quantization maps are ordinary device tensors
    (bitsandbytes optim/optimizer.py `get_state_buffer`, `Optimizer2State.init_state`)."""
    return key in ("state1", "state2") and param.numel() >= BNB_PAGED_MIN_ELEMENTS


def logical_params(model: nn.Module) -> int:
    """Parameters of the model as published: a 4-bit weight counts its values, not its bytes;
    a tied weight (input embedding = output head) counts once."""
    total = 0
    seen: set[int] = set()
    for module in model.modules():
        if isinstance(module, Linear4bitEmulated):
            total += module.in_features * module.out_features
            total += 0 if module.bias is None else module.bias.numel()
            continue
        for param in module.parameters(recurse=False):
            if id(param) not in seen:
                seen.add(id(param))
                total += param.numel()
    return total


def _emulations(setup: TraceSetup) -> tuple[str, ...]:
    labels = []
    if setup.quant.value != "none":
        labels.append(LABEL_4BIT)
    if setup.optimizer in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT):
        labels.append(LABEL_8BIT)
    if setup.paged:
        labels.append(LABEL_PAGED)
    if setup.attention is Attention.FLASH:
        labels.append(LABEL_FLASH)
    if setup.precision is Precision.AMP:
        labels.append(LABEL_AUTOCAST)
    return tuple(labels)


LABEL_NO_GENERATION = translate("trace.label.no_generation", Lang.EN)


def _not_traced(setup: TraceSetup) -> tuple[str, ...]:
    """What the method runs that the trace does not, in plain words."""
    if setup.alignment is not None and setup.alignment.method.generates:
        return (LABEL_NO_GENERATION,)
    return ()


def _allocator_peaks(tracker: StorageTracker, setup: TraceSetup) -> AllocatorPeaks:
    """The traced allocations and frees through the simulated caching allocator."""
    replayed = replay(tracker.events, setup.alloc_conf)
    return AllocatorPeaks(allocated_peak_bytes=replayed.peak_allocated_bytes,
                          reserved_peak_bytes=replayed.peak_reserved_bytes,
                          cached_at_peak_bytes=replayed.cached_at_peak_bytes,
                          num_alloc_retries=replayed.num_alloc_retries)


def _versions() -> tuple[tuple[str, str], ...]:
    import peft
    import transformers

    return (("torch", torch.__version__), ("transformers", transformers.__version__),
            ("peft", peft.__version__))


def _reset_cuda_peaks(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def _cuda_peaks(device: str) -> CudaPeaks | None:
    """torch.cuda's peaks over step 2 (the allocator's whole-process counters)."""
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    return CudaPeaks(device_name=torch.cuda.get_device_name(),
                     max_allocated_bytes=int(torch.cuda.max_memory_allocated()),
                     max_reserved_bytes=int(torch.cuda.max_memory_reserved()))
