"""The entry points: a whole training step as a program (`step_program`), and the memory the
caching allocator reserves for it (`reserved_memory`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from vramplan.allocator import (
    EMPTY_CACHE,
    PYTORCH_DEFAULTS,
    RESET_PEAKS,
    AllocatorConfig,
    Event,
    ReplayResult,
    mark,
    replay,
)
from vramplan.model.architecture import Architecture
from vramplan.training.allocations.forward_backward import micro_batch
from vramplan.training.allocations.load import (
    by_lifetime,
    end_of_load,
    load_parameters,
    megatron_buffers,
    megatron_build,
    module_buffers,
    wrap_flat_units,
)
from vramplan.training.allocations.optimizer import optimizer_step, wrapped_model
from vramplan.training.allocations.program import (
    LOSS_PHASE,
    WHOLE,
    PersistentState,
    Sharding,
    StepProgram,
    StepShape,
    Zero3Gradients,
)
from vramplan.training.allocations.tensors import ParamTensor, parameter_tensors
from vramplan.training.dummy_wgrads import dummy_wgrad_tensors
from vramplan.training.setup import TrainingSetup, first_pass_keeps_inputs


def step_program(arch: Architecture, setup: TrainingSetup, shape: StepShape,
                 sharding: Sharding = WHOLE, steps: int | None = None) -> list[Event]:
    """The model's load, then `steps` training steps (peaks reset before the last), as a
    program of allocations and frees, on one GPU of a run sharded as `sharding` says; `steps`
    None: two, a steady step after a first, or one for a figure of the first step
    (`TrainingSetup.first_step_report`)."""
    steps = steps if steps is not None else 1 if setup.first_step_report else 2
    # a run whose first micro-batch holds more than later ones is read from its start
    reset_at = 0 if first_pass_keeps_inputs(setup) else steps - 1
    program = StepProgram(sharding.backward_bucket_bytes)
    params = by_lifetime(arch, setup)
    built: list[tuple[ParamTensor, int]] = []
    # routed experts go to buffers of their own, over the expert-data-parallel ranks
    # (megatron/core/distributed/distributed_data_parallel.py `expert_parallel_buffers`): not
    # written here, a MoE model's program keeps the plain one
    megatron = bool(sharding.param_buffer_ranks) and not arch.is_moe
    if megatron:
        built = megatron_build(program, arch, setup, sharding)
    elif sharding.flat_units:
        wrap_flat_units(program, parameter_tensors(arch, setup), sharding)
    else:
        load_parameters(program, params, sharding, setup, arch)
    module_buffers(program, arch, setup)
    end_of_load(program, setup)
    dummy_wgrads = dummy_wgrad_tensors(arch, setup, sharding.tensor_parallel)
    if megatron:
        model = megatron_buffers(program, setup, sharding, built)
    else:
        model = wrapped_model(program, setup, sharding, params)
        if sharding.zero3_bucket_elements:
            model.zero3 = Zero3Gradients.of(arch, setup, sharding.gradients)
    model.dummy_wgrads = dummy_wgrads
    for n_bytes in sharding.persistent_bytes:
        program.alloc(n_bytes)
    for step in range(steps):
        if step == steps - 1 and setup.empty_cache_between_steps:
            program.events.append(mark(EMPTY_CACHE))
        if step == reset_at:
            program.events.append(mark(RESET_PEAKS))
        _step(program, arch, setup, shape, model)
    return program.events


def _step(program: StepProgram, arch: Architecture, setup: TrainingSetup, shape: StepShape,
          model: PersistentState) -> None:
    """One optimizer step: its micro-batches (two under gradient accumulation), then the
    optimizer's update."""
    micro_batches = 2 if setup.gradient_accumulation else 1
    for index in range(micro_batches):
        micro_batch(program, arch, setup, shape, model)
        if index == micro_batches - 1:
            optimizer_step(program, setup, model)
        if setup.loop_frees_outputs and model.kept_logits is not None:
            # the loop drops its outputs at the end of each iteration (`output = None`)
            program.free(model.kept_logits)
            model.kept_logits = None


@dataclass(frozen=True, slots=True)
class ReservedMemory:
    """The caching allocator's view of a step's program."""

    replay: ReplayResult

    @property
    def cache_bytes(self) -> int:
        """What the allocator reserves beyond the allocated peak: block and segment rounding,
        and cached blocks the peak's requests could not use."""
        return max(self.replay.peak_reserved_bytes - self.replay.peak_allocated_bytes, 0)


@lru_cache(maxsize=64)
def reserved_at_first_loss(arch: Architecture, setup: TrainingSetup, shape: StepShape,
                           config: AllocatorConfig = PYTORCH_DEFAULTS) -> int:
    """What the caching allocator holds when the run's first loss begins: the load and the first
    micro-batch's forward replayed, its segments as the driver counts them
    (`torch.cuda.mem_get_info` sees the allocator's `cudaMalloc`s, not its allocations). What
    comes before that mark does not depend on the loss's shape."""
    events = step_program(arch, setup, shape, steps=1)
    first_loss = events.index(mark(LOSS_PHASE))
    return replay(events[:first_loss], config).reserved_bytes


@lru_cache(maxsize=256)
def reserved_memory(arch: Architecture, setup: TrainingSetup, shape: StepShape, *,
                    sharding: Sharding = WHOLE,
                    config: AllocatorConfig = PYTORCH_DEFAULTS) -> ReservedMemory:
    """Replay `setup`'s step program (on one GPU of `sharding`) through the simulated caching
    allocator."""
    return ReservedMemory(replay(step_program(arch, setup, shape, sharding), config))
