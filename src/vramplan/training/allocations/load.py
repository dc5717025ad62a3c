"""What a step's program holds before its first step: the model loaded (or built by Megatron-LM),
upcast and back for QLoRA prepared for k-bit training, wrapped into FSDP1's flat units, and the
module buffers."""

from __future__ import annotations

import math
from dataclasses import replace

from vramplan.allocator import EMPTY_CACHE, mark
from vramplan.model.architecture import Architecture
from vramplan.presets.frameworks.dates import has_change
from vramplan.presets.frameworks.defaults import (
    AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE,
    runs_transformers_code,
)
from vramplan.presets.frameworks.peft_bnb import PEFT_EMPTY_CACHE_AFTER_UPCAST_SINCE
from vramplan.presets.frameworks.torchtune import torchtune_rope_cache_bytes, torchtune_rope_modules
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.training.activations.spec import FP32
from vramplan.training.allocations.program import (
    PersistentState,
    Sharding,
    StepProgram,
    packed_requests,
)
from vramplan.training.allocations.tensors import (
    ParamTensor,
    block_kinds,
    outer_tensors,
    parameter_tensors,
    trained_blocks,
)
from vramplan.training.allocations.torchao_nf4 import torchtune_nf4_build
from vramplan.training.setup import (
    TrainingSetup,
    compute_itemsize,
    gradient_itemsize,
    upcasts_at_load,
    weight_itemsize,
)
from vramplan.training.states import causal_mask_buffers, torchao_v01_nf4
from vramplan.units import ceil_div
from vramplan.vocab import Framework, Method, Precision


def megatron_build(program: StepProgram, arch: Architecture, setup: TrainingSetup,
                   sharding: Sharding) -> list[tuple[ParamTensor, int]]:
    """Megatron-LM builds its model on the GPU in the parameters' 16-bit dtype, one tensor per
    parameter (Transformer Engine's modules and Megatron's own take `params_dtype` and the
    current device), this GPU's tensor- and pipeline-parallel share of each. Returns each
    tensor with its allocation."""
    tensors = [replace(t, elements=ceil_div(t.elements, sharding.weights),
                       n_bytes=ceil_div(t.n_bytes, sharding.weights))
               for t in parameter_tensors(arch, setup)]
    return [(t, program.alloc(t.n_bytes)) for t in tensors]


def megatron_buffers(program: StepProgram, setup: TrainingSetup, sharding: Sharding,
                     built: list[tuple[ParamTensor, int]]) -> PersistentState:
    """Megatron-LM's DistributedDataParallel under its distributed optimizer, then the
    optimizer (NVIDIA/Megatron-LM @f4fa7d6b, the same at core_r0.11.0): `_ParamAndGradBuffer`
    allocates `param_data` (the 16-bit parameters, padded) and then `grad_data`, and copies
    each trained parameter into `param_data` in reverse order, freeing its own tensor
    (megatron/core/distributed/param_and_grad_buffer.py: `param.data = new_param_data`,
    `del old_param_data`); those blocks stay cached. The optimizer clones this rank's range of
    each bucket, parameter by parameter, as fp32 masters (megatron/core/optimizer/
    distrib_optimizer.py `_build_model_and_main_param_groups`: `shard_model_param.clone()
    .float()`), and Adam's states are made like them at the first step: pieces of whole
    parameters, which the freed 16-bit blocks hold only where one is large enough."""
    trained = [(t, allocation) for t, allocation in built if t.trainable]
    numel, pieces = megatron_rank_pieces([t.elements for t, _ in reversed(trained)],
                                          sharding.param_buffer_ranks, sharding.bucket_elements)
    program.alloc(weight_itemsize(setup.precision) * numel)
    flat_grads = program.alloc(gradient_itemsize(setup) * numel)
    for _, allocation in reversed(trained):
        program.free(allocation)
    tensors = tuple(ParamTensor(n, weight_itemsize(setup.precision) * n, True, None)
                    for n in pieces)
    masters = [program.alloc(FP32 * n) for n in pieces] \
        if setup.precision is Precision.MIXED else []
    return PersistentState(tensors, replace(sharding, states=1), grads={}, states=[],
                           masters=masters, flat_grads=flat_grads)


MEGATRON_PARAM_ALIGNMENT = 64
"""A parameter starts at a multiple of 64 elements in the buffer under the distributed optimizer
(param_and_grad_buffer.py `_pad_start_of_param_if_needed`)."""
MEGATRON_BUCKET_ALIGNMENT = 128
"""A bucket ends at a multiple of lcm(data-parallel ranks, 128) elements
(`_pad_end_of_bucket_if_needed`, without `pad_buckets_for_high_nccl_busbw`)."""


def megatron_rank_pieces(elements: list[int], ranks: int,
                          bucket_elements: int | None) -> tuple[int, list[int]]:
    """The buffer's padded length and the pieces of parameters that the first data-parallel
    rank's range of each bucket holds, for parameters of `elements` in the buffer's order
    (param_and_grad_buffer.py `_ParamAndGradBuffer.__init__`: a bucket closes once it holds
    `bucket_elements`; distrib_optimizer.py `_build_model_gbuf_range`: each bucket cut in
    `ranks` equal ranges)."""
    multiple = math.lcm(ranks, MEGATRON_BUCKET_ALIGNMENT)
    buckets: list[list[tuple[int, int]]] = [[]]
    bounds: list[tuple[int, int]] = []
    bucket_start = start = 0
    for n in elements:
        start = _round_up(start, MEGATRON_PARAM_ALIGNMENT)
        buckets[-1].append((start, start + n))
        start += n
        if bucket_elements is not None and start - bucket_start >= bucket_elements:
            bounds.append((bucket_start, _round_up(start, multiple)))
            bucket_start = start = bounds[-1][1]
            buckets.append([])
    if buckets[-1]:
        bounds.append((bucket_start, _round_up(start, multiple)))
    pieces = []
    for params, (first, end) in zip(buckets, bounds, strict=False):
        last = first + (end - first) // ranks
        pieces += [min(e, last) - max(s, first) for s, e in params if s < last]
    return bounds[-1][1] if bounds else 0, pieces


def _round_up(n: int, multiple: int) -> int:
    return ceil_div(n, multiple) * multiple


def end_of_load(program: StepProgram, setup: TrainingSetup) -> None:
    """The framework empties the allocator's cache once the model is loaded: axolotl since
    `AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE` (a run without a date runs today's code)."""
    if setup.framework is Framework.AXOLOTL and has_change(
            setup.code_date, AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE):
        program.events.append(mark(EMPTY_CACHE))


def _moved_whole_then_offloaded(program: StepProgram, arch: Architecture,
                                setup: TrainingSetup) -> None:
    """ZeRO-3 with parameter offload on a model built outside `zero.Init`
    (deepspeedai/DeepSpeed v0.6.5 and edaa7221): `deepspeed.initialize` casts the model to its
    16-bit dtype on the host and moves it to the GPU (runtime/engine.py
    `_configure_distributed_model`: `self.module.half()`, `self.module.to(self.device)`; since
    `is_zero_init_model` only a model not made under `zero.Init`), one segment per tensor; the
    ZeRO-3 optimizer then partitions each parameter in turn (stage3.py
    `_convert_to_zero_parameters` -> partition_parameters.py `Init(module=...)`,
    `param.partition()`), its partition going to the host and the whole tensor freed. Only the
    path that keeps partitions on the GPU empties the cache after (`defragment`:
    `empty_cache()`); with parameter offload the freed segments stay reserved, on the default
    stream, usable only by requests that fit in them."""
    tensors = [program.alloc(t.n_bytes) for t in parameter_tensors(arch, setup)]
    program.free_all(tensors)


def module_buffers(program: StepProgram, arch: Architecture, setup: TrainingSetup) -> None:
    """The model's own buffers, one per layer (`Architecture.buffer_bytes`: GPT-Neo's causal
    masks), transformers' causal masks (`causal_mask_buffers`) and torchtune's
    rotary caches (`torchtune_rope_bytes`), made with the model and never freed; whole on every
    rank."""
    if arch.buffer_bytes:
        for _ in range(arch.n_layers):
            program.alloc(arch.buffer_bytes // arch.n_layers)
    for mask in causal_mask_buffers(arch, setup):
        program.alloc(mask)
    if setup.framework is Framework.TORCHTUNE:
        for _ in range(torchtune_rope_modules(arch.n_layers, setup.code_date)):
            program.alloc(torchtune_rope_cache_bytes(arch))


def by_lifetime(arch: Architecture, setup: TrainingSetup) -> tuple[ParamTensor, ...]:
    """One tensor per block for its trainable parameters and one for its frozen ones (their
    gradients, masters and states are made and freed together); the embeddings, final norm
    and head stay apart, each group of them (trainable or frozen) where its first tensor comes
    in module order. Fewer, larger requests: the program stays short enough for the planner's
    searches, and the blocks' tensors share their lifetimes anyway."""
    before, after = outer_tensors(arch, setup)
    merged_kinds = {kind: _merged(tensors) for kind, tensors in block_kinds(arch, setup).items()}
    groups: dict[tuple[int | None, bool], list[ParamTensor]] = {}
    for tensor in before:
        groups.setdefault((None, tensor.trainable), []).append(tensor)
    for block, trains in enumerate(trained_blocks(arch, setup)):
        for tensor in merged_kinds[trains, arch.layer_is_moe(block)]:
            groups[(block, tensor.trainable)] = [tensor.in_block(block)]
    for tensor in after:
        groups.setdefault((None, tensor.trainable), []).append(tensor)
    return tuple(tensor for tensors in groups.values() for tensor in tensors)


def _merged(tensors: list[ParamTensor]) -> list[ParamTensor]:
    """A block's tensors as one trainable and one frozen tensor, in the order each kind first
    appears."""
    by_kind: dict[bool, list[ParamTensor]] = {}
    for tensor in tensors:
        by_kind.setdefault(tensor.trainable, []).append(tensor)
    return [ParamTensor(sum(t.elements for t in group), sum(t.n_bytes for t in group),
                        trainable, tensors[0].block) for trainable, group in by_kind.items()]


def load_parameters(program: StepProgram, params: tuple[ParamTensor, ...], sharding: Sharding,
                    setup: TrainingSetup, arch: Architecture) -> None:
    """The parameters this GPU holds: each tensor, or its shard (FSDP1's flat units:
    `wrap_flat_units`). A QLoRA run prepared for k-bit training (`upcasts_at_load`) loads
    the base, then `_upcast_and_back`; torchtune's QLoRA of before June 2024 builds its model
    as `torchtune_nf4_build` says. Parameters offloaded to the host may pass through the GPU
    first (`_moved_whole_then_offloaded`)."""
    if not sharding.weights:
        if sharding.whole_at_init:
            _moved_whole_then_offloaded(program, arch, setup)
        return
    if sharding.weights == 1:
        warmup = allocator_warmup_bytes(arch, setup)
        if warmup:
            program.free(program.alloc(warmup))
    if sharding.weights == 1 and torchao_v01_nf4(setup):
        torchtune_nf4_build(program, params, arch, setup)
        return
    if sharding.weights > 1 or not upcasts_at_load(setup):
        for tensor in params:
            program.alloc(ceil_div(tensor.n_bytes, sharding.weights))
        return
    frozen = {index: program.alloc(t.n_bytes) for index, t in enumerate(params)
              if not t.trainable}
    empty_cache = has_change(setup.code_date, PEFT_EMPTY_CACHE_AFTER_UPCAST_SINCE)
    _upcast_and_back(program, params, frozen, empty_cache=empty_cache)


def allocator_warmup_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The segment transformers' `from_pretrained` reserves before it loads a QLoRA base with its
    `device_map` (`TransformersCode.warms_up_allocator`): half the bytes of the meta model's
    parameters, every one at its full shape in the 16-bit load dtype (a tied head twice while
    `warmup_counts_tied`), capped by what the card has free (`TrainingSetup.card_free_bytes`,
    when known). 0 for other runs: an unquantized model
    loaded with a `device_map` fills its warm-up segment exactly, and the training stacks load
    it without one."""
    if setup.method is not Method.QLORA or not runs_transformers_code(setup.framework):
        return 0
    tied = arch.params_token_embedding if arch.tied_embeddings else 0
    return transformers_code(setup.code_date).quantized_warmup_bytes(
        arch.params_total, tied, compute_itemsize(setup.precision),
        free_bytes=setup.card_free_bytes)


def _upcast_and_back(program: StepProgram, params: tuple[ParamTensor, ...],
                     frozen: dict[int, int], *, empty_cache: bool) -> None:
    """peft `prepare_model_for_kbit_training` (huggingface/peft src/peft/utils/other.py
    @5d602fdb) replaces each 16-bit parameter that is not `Params4bit` by its fp32 copy
    (`param.data = param.data.to(torch.float32)`: the copy is made, then the 16-bit tensor is
    freed into the cache) and, since v0.20.0 (`empty_cache`), calls `torch.cuda.empty_cache()`;
    `get_peft_model` then makes the adapters; TRL's `peft_module_casting_to_bf16`
    (trl/models/utils.py @e2ab4354) casts the embeddings and the head back to 16-bit, each
    16-bit copy made before its fp32 tensor is freed. Only the tensors outside the blocks are
    written: the blocks' norms and biases are small-pool tensors of a few KB; the final norm,
    which TRL keeps in fp32, is cast back here too (its hidden-sized bytes are not counted)."""
    outer = [index for index in frozen
             if params[index].block is None and params[index].n_bytes == 2 * params[index].elements]
    fp32 = {}
    for index in outer:
        fp32[index] = program.alloc(2 * params[index].n_bytes)
        program.free(frozen[index])
    if empty_cache:
        program.events.append(mark(EMPTY_CACHE))
    for tensor in params:
        if tensor.trainable:
            program.alloc(tensor.n_bytes)
    for index in outer:
        program.alloc(params[index].n_bytes)
        program.free(fp32[index])


FSDP1_SYNC_BUCKET_BYTES = 250 * 1024 * 1024
"""pytorch/pytorch torch/distributed/fsdp/_init_utils.py @01caf79e `PARAM_BROADCAST_BUCKET_SIZE`:
`_sync_module_params_and_buffers` broadcasts a unit's parameters with `_broadcast_coalesced`
in buckets of 250 MiB."""
SYNC_BUCKETS_IN_FLIGHT = 2
"""torch/csrc/distributed/c10d/comm.cpp `broadcast_coalesced`: "We maintain a maximum of 2 in
flight broadcast operations to avoid allocating too much memory"; each `BroadcastWork` holds its
bucket flattened into one new tensor (`flatten_dense_tensors`) until it finishes."""


def wrap_flat_units(program: StepProgram, tensors: tuple[ParamTensor, ...],
                    sharding: Sharding) -> None:
    """FSDP1 wraps the model unit by unit, the nested units first and the root last
    (torch/distributed/fsdp/fully_sharded_data_parallel.py @01caf79e: `_auto_wrap` runs before
    the root's own `_init_param_handle_from_module`). Each unit's parameters come to the GPU one
    by one (`_move_module_to_device` from the CPU, `_materialize_meta_module` from the meta
    device), are broadcast from rank 0 under
    `sync_module_states` (`sync_bucket_bytes`), flattened into one tensor
    (_flat_param.py `flatten_tensors`: `torch.cat`), and the rank's chunk is cloned as its shard
    (`_get_shard`; with CPU offload the shard then goes to the host, `flat_param_to(cpu)`); the
    parameters and the flat copy are then freed, and stay cached."""
    for unit in _flat_units(tensors, sharding.adapter_units).values():
        sizes = [t.n_bytes for t in unit]
        whole = [program.alloc(n) for n in packed_requests(sizes)]
        _broadcast_buckets(program, sizes, sharding.sync_bucket_bytes)
        flat = program.alloc(sum(sizes))
        shard = program.alloc(ceil_div(sum(sizes), max(sharding.gradients, 1)))
        if not sharding.weights:  # offloaded: the shard goes to the host
            program.free(shard)
        program.free_all(whole)
        program.free(flat)


def _flat_units(tensors: tuple[ParamTensor, ...],
                adapter_units: bool) -> dict[tuple[int, bool], list[ParamTensor]]:
    """The units in the order FSDP1 wraps them: by block, its adapters first when they are units
    of their own (written as one: each is a few MB, a small-pool block either way), then the
    block; the root (embeddings, final norm, head) last."""
    units: dict[tuple[int, bool], list[ParamTensor]] = {}
    root = len(tensors)  # after every block
    for tensor in tensors:
        block = root if tensor.block is None else tensor.block
        apart = adapter_units and tensor.trainable and block != root
        units.setdefault((block, not apart), []).append(tensor)
    return dict(sorted(units.items()))


def _broadcast_buckets(program: StepProgram, sizes: list[int], bucket_bytes: int) -> None:
    """`broadcast_coalesced` on the unit's tensors: a bucket closes once it reaches
    `bucket_bytes` (c10d `compute_bucket_assignment_by_size`), each is flattened into a tensor of
    its own, two at most alive at once."""
    if not bucket_bytes:
        return
    buckets, filled = [], 0
    for n_bytes in sizes:
        filled += n_bytes
        if filled >= bucket_bytes:
            buckets.append(filled)
            filled = 0
    if filled:
        buckets.append(filled)
    in_flight: list[int] = []
    for n_bytes in buckets:
        if len(in_flight) == SYNC_BUCKETS_IN_FLIGHT:
            program.free(in_flight.pop(0))
        in_flight.append(program.alloc(n_bytes))
    program.free_all(in_flight)
