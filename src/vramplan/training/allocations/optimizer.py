"""The optimizer's step as allocations: its states made at the first step, its temporaries
(foreach, for-loop, fused, Adafactor), ZeRO's sub-groups and masters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from vramplan.allocator import mark
from vramplan.model.architecture import Architecture
from vramplan.training.activations.spec import FP32
from vramplan.training.allocations.program import (
    PersistentState,
    Sharding,
    StepProgram,
    StepTensors,
)
from vramplan.training.allocations.tensors import (
    ParamTensor,
    parameter_tensors,
    state_tensors,
)
from vramplan.training.setup import (
    TrainingSetup,
    for_loop_tensors_at_once,
    gradient_itemsize,
    main_grad_buffer,
    optimizer_impl,
    trainable_state_itemsize,
    weight_itemsize,
)
from vramplan.training.states import ADAFACTOR_ITEMSIZE
from vramplan.units import ceil_div
from vramplan.vocab import Optimizer, OptimizerImpl, Precision


def wrapped_model(program: StepProgram, setup: TrainingSetup, sharding: Sharding,
                  params: tuple[ParamTensor, ...]) -> PersistentState:
    """The masters, the optimizer's construction and the gradient buffers made before the
    first step."""
    model = PersistentState(params, sharding, grads={}, states=[], masters=[])
    if setup.precision is Precision.MIXED and sharding.states:
        masters = [ceil_div(FP32 * t.elements, sharding.states) for t in params if t.trainable]
        if sharding.step_group_elements is not None:
            masters = [FP32 * n for n in _sub_groups(params, sharding)]
        model.masters = [program.alloc(n_bytes) for n_bytes in masters]
    if sharding.zero_init_buffer and sharding.states:
        _zero_init_buffer(program, params, sharding)
    if sharding.step_group_elements is not None and sharding.gradients:
        model.flat_grads = program.alloc(sum(
            ceil_div(t.n_bytes, sharding.gradients) for t in params if t.trainable))
    elif main_grad_buffer(setup) and sharding.gradients:
        # Megatron-LM's gradient buffer, made when the model is wrapped: gradients land in it
        # (`vramplan.presets.frameworks.defaults.FrameworkDefaults.main_grad_buffer`)
        model.flat_grads = program.alloc(sum(
            ceil_div(gradient_itemsize(setup) * t.elements, sharding.gradients)
            for t in params if t.trainable))
    return model


def optimizer_step(program: StepProgram, setup: TrainingSetup, model: PersistentState) -> None:
    program.events.append(mark("optimizer_step"))
    if model.sharding.step_group_elements is not None and model.flat_grads is not None \
            and model.sharding.states:
        _sub_group_step(program, setup, model)
        return
    trainable = [t for t in model.params if t.trainable]
    if model.sharding.step_tensors is StepTensors.PARTITION and trainable:
        # one state of each kind for the partition
        trainable = [ParamTensor(sum(t.elements for t in trainable),
                                 sum(t.n_bytes for t in trainable), True, None)]
    elif model.sharding.step_tensors is StepTensors.SHARDS:
        trainable = [replace(t, rows=0) for t in trainable]  # no matrix to factor
    divisor = model.sharding.states
    if setup.precision is Precision.MIXED and divisor:
        # each 16-bit gradient becomes an fp32 gradient of its master and is freed
        fp32_grads: dict[int, tuple[int, int]] = {}
        for key, (grad, n_bytes) in model.grads.items():
            fp32_grads[key] = (program.alloc(2 * n_bytes), 2 * n_bytes)
            program.free(grad)
        model.grads = fp32_grads
    if not model.states and divisor:
        for tensor in trainable:
            model.states += [program.alloc(ceil_div(n, divisor))
                             for n in state_tensors(tensor, setup)]
    if divisor:
        _step_temporaries(program, setup, trainable, divisor)
    program.events.append(mark("zero_grad"))
    for grad, _ in model.grads.values():
        program.free(grad)
    model.grads = {}


def _zero_init_buffer(program: StepProgram, params: tuple[ParamTensor, ...],
                      sharding: Sharding) -> None:
    """DeepSpeed's `initialize_optimizer_states`, run when the ZeRO optimizer is built, before
    the first forward (deepspeedai/DeepSpeed @edaa7221): ZeRO-3 (runtime/zero/stage3.py) makes
    one fp32 `gradient_buffer` of its largest sub-group's partition, ZeRO-1/2
    (runtime/zero/stage_1_and_2.py) one fp32 gradient partition per parameter group, set as the
    fp32 partitions' `.grad`, then `group.grad = None` frees them (on the GPU unless the
    optimizer is offloaded). The states are no longer made there: "Remove optimizer step on
    initialization" (18179807, #5104, DeepSpeed 0.13.2) leaves them to the first step."""
    if sharding.step_group_elements is not None:
        sizes = [FP32 * max(_sub_groups(params, sharding), default=0)]
    else:
        sizes = [FP32 * sum(ceil_div(t.elements, sharding.states) for t in params
                            if t.trainable)]
    program.free_all([program.alloc(n_bytes) for n_bytes in sizes])


def _sub_groups(params: tuple[ParamTensor, ...], sharding: Sharding) -> list[int]:
    """The elements of each ZeRO-3 sub-group of this rank's partition: partitions are added
    until a group holds `step_group_elements` or more (stage3.py `_create_fp16_sub_groups`)."""
    groups, current = [], 0
    size = sharding.step_group_elements or 0
    for tensor in params:
        if tensor.trainable:
            current += ceil_div(tensor.elements, sharding.states)
            if current >= size:
                groups.append(current)
                current = 0
    return [*groups, current] if current else groups


def _sub_group_step(program: StepProgram, setup: TrainingSetup, model: PersistentState) -> None:
    """ZeRO-3's step, sub-group by sub-group (stage3.py `step`): the group's gradients are
    flattened and cast to an fp32 gradient (`_prepare_fp32_grad_for_sub_group`), the
    optimizer updates the group's flat master (its states made at the first step), the fp32
    gradient is freed (`_release_sub_group`); the flat 16-bit gradient buffer is kept."""
    first = not model.states
    if model.zero3 is not None:
        # the gradient norm (`get_grad_norm_direct`, v0.9.0 to edaa7221) reads each partition
        # as `g.double().norm(2)`: an fp64 copy of it at a time
        for elements in model.zero3.partitions():
            program.free(program.alloc(8 * elements))
    for elements in _sub_groups(model.params, model.sharding):
        group = ParamTensor(elements, FP32 * elements, True, None)
        flat = program.alloc(weight_itemsize(setup.precision) * elements)
        fp32 = program.alloc(FP32 * elements)
        program.free(flat)
        if first:
            model.states += [program.alloc(n) for n in state_tensors(group, setup)]
        _step_temporaries(program, setup, [group], 1)
        program.free(fp32)
    program.events.append(mark("zero_grad"))


def _step_temporaries(program: StepProgram, setup: TrainingSetup,
                      trainable: list[ParamTensor], divisor: int) -> None:
    """torch AdamW `foreach`: `_foreach_sqrt(exp_avg_sqs)` makes one state-sized tensor per
    parameter at once; `for-loop`: a parameter's square root and its quotient, the quotient
    (`denom`) kept until the next parameter's is made; an optimizer per parameter in backward:
    one; `fused` and bitsandbytes: none; Adafactor: `_adafactor_steps`
    (`optimizer_step_temporaries`)."""
    if setup.optimizer not in (Optimizer.ADAMW, Optimizer.ADAFACTOR):
        return
    impl = optimizer_impl(setup)
    s = trainable_state_itemsize(setup)
    sizes = [ceil_div(s * t.elements, divisor) for t in trainable]
    if setup.optimizer is Optimizer.ADAFACTOR:
        _adafactor_steps(program, [ceil_div(t.elements, divisor) for t in trainable], s,
                         one_call_each=impl is OptimizerImpl.IN_BACKWARD)
    elif impl is OptimizerImpl.FOREACH:
        temporaries = [program.alloc(n) for n in sizes]
        program.free_all(temporaries)
    elif impl is OptimizerImpl.FOR_LOOP:
        at_once = for_loop_tensors_at_once(setup)
        denom = None
        for n in sizes:
            made = [program.alloc(n) for _ in range(at_once)]  # the square root, its quotient
            program.free_all(made[:-1])
            if denom is not None:
                program.free(denom)
            denom = made[-1]
        if denom is not None:
            program.free(denom)
    elif impl is not OptimizerImpl.FUSED:
        for n in sizes:
            program.free(program.alloc(n))


def optimizer_step_temporaries(arch: Architecture, setup: TrainingSetup) -> int:
    """Memory the optimizer step allocates and frees, at its largest moment, on one GPU: the
    model's trainable tensors in its order (`parameter_tensors`), stepped as
    `step_temporaries_over` says (`_step_temporaries` makes the same tensors in the step's
    program)."""
    if not step_makes_temporaries(setup):
        return 0  # the model's tensors are not listed for nothing (a MoE model has many)
    sizes = [t.elements for t in parameter_tensors(arch, setup) if t.trainable]
    return step_temporaries_over(sizes, setup, trainable_state_itemsize(setup))


def step_makes_temporaries(setup: TrainingSetup) -> bool:
    """Whether the optimizer step allocates temporaries at all (`step_temporaries_over`): torch's
    AdamW stepped `for-loop`, `foreach` or in backward, and Adafactor; not `fused` AdamW, nor
    bitsandbytes' 8-bit and paged AdamW or SGD, which update in place."""
    return setup.optimizer is Optimizer.ADAFACTOR or (
        setup.optimizer is Optimizer.ADAMW and optimizer_impl(setup) is not OptimizerImpl.FUSED)


def step_temporaries_over(sizes: Sequence[int], setup: TrainingSetup, itemsize: int, *,
                          one_call_each: bool = False) -> int:
    """The step's temporaries, at their largest, when the optimizer steps tensors of `sizes`
    values in that order, each holding `itemsize` bytes a value; `one_call_each`: a `step()`
    for each tensor (an optimizer in backward; DeepSpeed ZeRO-3's sub-groups, stage3.py
    `optimizer_step`), whose locals go when it returns.

    torch AdamW `foreach` (the default on CUDA) computes `exp_avg_sq_sqrt =
    torch._foreach_sqrt(exp_avg_sqs)` for every tensor of a call at once and divides it in
    place: one state-sized temporary (torch/optim/adam.py `_multi_tensor_adam`, which AdamW runs
    in torch 2.13; adamw.py `_multi_tensor_adamw` before); `for-loop` computes
    `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)` one tensor at a time
    (`_single_tensor_adam`): the square root and the quotient alive together, beside the
    previous tensor's `denom` until the new one is bound (transformers' own AdamW: one tensor,
    `for_loop_tensors_at_once`); an optimizer in backward runs the default `foreach` over its
    one tensor; `fused` and bitsandbytes' kernels update in place. Adafactor:
    `adafactor_step_bytes` of a tensor, beside the previous tensor's update
    (`_adafactor_steps`)."""
    if not sizes or not step_makes_temporaries(setup):
        return 0
    impl = optimizer_impl(setup)
    separate = one_call_each or impl is OptimizerImpl.IN_BACKWARD
    before = [0] * len(sizes) if separate else [0, *sizes[:-1]]
    if setup.optimizer is Optimizer.ADAFACTOR:
        return max(ADAFACTOR_ITEMSIZE * previous + adafactor_step_bytes(n, itemsize)
                   for previous, n in zip(before, sizes, strict=True))
    if impl is OptimizerImpl.FOR_LOOP:
        at_once = for_loop_tensors_at_once(setup)
        return itemsize * max(previous + at_once * n
                              for previous, n in zip(before, sizes, strict=True))
    return itemsize * (max(sizes) if separate else sum(sizes))  # foreach, in backward


def adafactor_fp32_copies(itemsize: int) -> int:
    """The fp32 copies transformers' Adafactor makes of one parameter and its gradient when they
    are 16-bit (`grad.float()`, `p.float()`), alive through the parameter's update."""
    return 2 if itemsize < ADAFACTOR_ITEMSIZE else 0


def adafactor_step_bytes(elements: int, itemsize: int) -> int:
    """transformers' Adafactor's temporaries for one parameter of `elements` values whose
    tensors hold `itemsize` bytes a value (`_adafactor_steps`): the fp32 copies
    (`adafactor_fp32_copies`) and two parameter-sized fp32 updates at once (`(grad**2) + eps`
    beside `grad**2`, then `_approx_sq_grad`'s product beside it, then `-update` beside
    `update` in `p_data_fp32.add_(-update)`)."""
    return (adafactor_fp32_copies(itemsize) + 2) * ADAFACTOR_ITEMSIZE * elements


def _adafactor_steps(program: StepProgram, elements: list[int], itemsize: int, *,
                     one_call_each: bool = False) -> None:
    """transformers' `Adafactor.step` over parameters of `elements` values, in order: for each,
    the fp32 copies of a 16-bit gradient and parameter (`grad.float()`, `p.float()`),
    `grad**2` and `+ eps`, `_approx_sq_grad`'s product replacing the sum, and `-update` beside
    it. The loop's variables (`grad`, `p_data_fp32`, `update`) hold the previous parameter's
    tensors until they are bound again (`adafactor_step_bytes`); `one_call_each`: a `step()`
    per parameter (an optimizer in backward), whose locals go when it returns."""
    copies = adafactor_fp32_copies(itemsize)
    # what `grad`, `p_data_fp32` (16-bit parameters only) and `update` are bound to
    held: dict[str, int] = {}

    def bind(name: str, tensor: int | None = None) -> None:
        if name in held:
            program.free(held.pop(name))
        if tensor is not None:
            held[name] = tensor

    for n in elements:
        value = ADAFACTOR_ITEMSIZE * n
        for name in ("grad", "p_data_fp32")[:copies]:
            bind(name)  # bound to `p.grad` or `p` first, then to its fp32 copy
            bind(name, program.alloc(value))
        square = program.alloc(value)
        total = program.alloc(value)
        program.free(square)
        bind("update", total)
        bind("update", program.alloc(value))  # `_approx_sq_grad`'s product
        program.free(program.alloc(value))  # `-update`
        if one_call_each:
            for name in list(held):
                bind(name)
    for name in list(held):
        bind(name)
