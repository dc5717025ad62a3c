"""DeepSpeed's ZeRO-3 and ZeRO-Offload as they run: parameters gathered module by module in the
order a traced step fetches them, those autograd keeps pinned, quantization states kept whole,
the states offloaded to the host."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from vramplan.distributed.defaults import zero3_skips_gather
from vramplan.distributed.parallelism import FSDP_SCHEMES, CommBuffers, Parallelism, ShardedStates
from vramplan.distributed.stages import Stage
from vramplan.distributed.zero3_coordinator import (
    GatheredPeaks,
    TracedModule,
    zero3_gathered_peaks,
    zero3_reduce_transient_bytes,
)
from vramplan.model.architecture import Architecture, LinearSpec
from vramplan.model.weight_storage import bnb_4bit_bytes, bnb_int8_bytes
from vramplan.presets.frameworks.dates import during, has_change
from vramplan.presets.frameworks.deepspeed import (
    DEEPSPEED_OFFLOAD_STEP_ON_GPU,
    DEEPSPEED_RETAINS_PREFETCHED_SINCE,
)
from vramplan.training.setup import TrainingSetup, weight_itemsize
from vramplan.training.specs import checkpoints_cut_the_graph
from vramplan.training.states import ModelStates, head_is_separate, stores_torchao_nf4
from vramplan.units import ceil_div
from vramplan.vocab import Checkpointing, ComputeDtype, Method, Offload, Precision, Quant, Scheme


def zero3_as_run(arch: Architecture, setup: TrainingSetup, states: ModelStates,
                 sharded: ShardedStates) -> ShardedStates:
    """ZeRO-3 as DeepSpeed runs `setup`: the parameters its coordinator holds gathered in each
    phase (`vramplan.distributed.zero3_coordinator.zero3_gathered_peaks` over the step's module
    trace, its prefetches in flight included), the gradient path of backward, and the
    quantization statistics that stay whole."""
    plan = sharded.parallelism
    bufs = plan.buffers
    step = _TracedStep.of(arch, setup)
    ranks = plan.data_parallel
    params_offloaded = plan.offload is Offload.PARAMS_OPTIMIZER
    skips_gather = zero3_skips_gather(plan, setup.code_date)
    pinned = _PinnedByAutograd.of(arch, step, plan.tensor_parallel) \
        if plan.zero3_built_outside_init and not skips_gather else _PinnedByAutograd()
    # what the coordinator retains for a use its prefetch walked past is storage autograd
    # already keeps when it pins the blocks' weights: counted once, as pinned
    retains = has_change(setup.code_date, DEEPSPEED_RETAINS_PREFETCHED_SINCE) \
        and not pinned.blocks
    # one rank's fetch copies each partition to the GPU: no all-gather buffer
    peaks = _zero3_peaks(arch, step, plan.tensor_parallel, bufs, retains_prefetched=retains,
                         buffered=not skips_gather)
    itemsize = states.weight_itemsize

    def held(elements: int, pinned: int = 0, fetching: bool = True) -> int:
        # `elements`: what the coordinator holds gathered, its prefetch's all-gather buffer in
        # flight included (`zero3_gathered_peaks`); `pinned`: gathered storage autograd keeps
        # after the coordinator released it (`free_param`), which it no longer counts
        if skips_gather:
            # one rank gathers nothing (partition_parameters.py `_no_gather_coalesced`,
            # `NoGatherHandle`: `param.data = param.ds_tensor.data.to(device)`): the partition
            # is the parameter, and only an offloaded one is copied to the GPU
            return elements * itemsize if params_offloaded else pinned * itemsize
        # an offloaded partition is copied to the GPU as the all-gather's input until the
        # `wait()` (`all_gather_coalesced`: `param.ds_tensor.to(device)`; on one rank before
        # `DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE`, the whole parameter). The head's fetch is
        # over when its logits are made: the loss phase holds no copy
        copies = ceil_div(elements, ranks) if params_offloaded and fetching else 0
        return (elements + pinned + copies) * itemsize

    gradient_path = (zero3_reduce_transient_bytes(states, bufs)
                     + _largest_block_gradient(arch, setup, states) // plan.tensor_parallel)
    # the blocks' weights a forward has pinned are the ones its coordinator gathered there:
    # at the end of forward they are all pinned, and the coordinator prefetches beside them
    # (the prefetched parameters and their all-gather buffer); the head stays gathered from
    # its forward to its backward (its reuse is immediate)
    return replace(sharded,
                   forward_buffers_bytes=max(held(peaks.forward),
                                             held(2 * peaks.prefetch, pinned.blocks)),
                   loss_buffers_bytes=held(max(peaks.loss, pinned.head), pinned.blocks,
                                           fetching=False),
                   backward_buffers_bytes=held(peaks.backward, pinned.blocks) + gradient_path,
                   last_unit_backward_buffers_bytes=held(peaks.first_block, pinned.block)
                   + gradient_path)


@dataclass(frozen=True, slots=True)
class _PinnedByAutograd:
    """The gathered linear weights autograd keeps from a ZeRO-3 model's forward to its
    backward, in elements: all of them, with `torch.nn.functional.linear` as torch has it.

    DeepSpeed saves only the parameter for backward, whose data it gathers again there
    (deepspeed/runtime/zero/linear.py `LinearFunctionForZeroStage3`), by replacing
    `torch.nn.functional.linear` when a model is built inside `zero.Init` (partition_parameters.py
    v0.14.2 `patch_init_and_builtins`: "This will persist unless manually reset"). A model built
    outside it (`Parallelism.zero3_built_outside_init`) is partitioned by `Init(module=...)`,
    which does not patch: each linear's matmul saves a view of its gathered weight
    (`weight.t()`), and when the coordinator releases the parameter (`free_param`:
    `param.data = torch.empty(0)`) the view keeps the gathered storage until the block's
    backward has used it. Blocks whose forward runs without a graph (full checkpointing) save
    nothing there, and their recomputation holds only the block being run, which the
    coordinator holds anyway. With one rank gathering nothing (`zero3_skips_gather`) the
    weight is the partition itself, kept anyway."""

    block: int = 0
    """One block's linears, when the blocks' forward keeps a graph: while the first block runs
    backward."""
    blocks_with_graph: int = 0
    head: int = 0
    """The head's weight (the embedding's when tied), from its forward to its backward."""

    @property
    def blocks(self) -> int:
        """Every block's linears that keep a graph: after the forward, until the blocks'
        backward."""
        return self.block * self.blocks_with_graph

    @staticmethod
    def of(arch: Architecture, step: _TracedStep, tensor_parallel: int) -> _PinnedByAutograd:
        if step.checkpointing is Checkpointing.FULL or not step.blocks_with_graph:
            block = blocks = 0
        else:
            block = sum(linear.in_features * linear.out_features * linear.count
                        for linear in arch.block_linears()) // tensor_parallel
            blocks = step.blocks_with_graph
        head = arch.head_linear()
        return _PinnedByAutograd(block=block, blocks_with_graph=blocks,
                                 head=head.in_features * head.out_features // tensor_parallel)


def deepspeed_zero_offload(plan: Parallelism) -> bool:
    """DeepSpeed's ZeRO-1/2 with the optimizer on the host (ZeRO-Offload); not ColossalAI's
    (`Parallelism.offload_keeps_gradients`) nor Megatron-LM's distributed optimizer
    (`Parallelism.main_grad_buffer`)."""
    return plan.scheme in (Scheme.ZERO1, Scheme.ZERO2) \
        and plan.offload in (Offload.OPTIMIZER, Offload.PARAMS_OPTIMIZER) \
        and not plan.offload_keeps_gradients and not plan.main_grad_buffer


def zero_offload_as_run(setup: TrainingSetup, states: ModelStates,
                        sharded: ShardedStates) -> ShardedStates:
    """ZeRO-1/2 with the optimizer on the host as DeepSpeed runs it (stage_1_and_2.py, read at
    v0.14.2 and at the mirror's head): every gradient goes to the host through
    `temp_grad_buffer_for_gpu_offload`, a 16-bit GPU buffer of the largest parameter made with
    the optimizer (ZeRO-Offload's release, #391, 2020-09-09), held for the run; and while
    `DEEPSPEED_OFFLOAD_STEP_ON_GPU` the step brings this rank's updated fp32 partition to the
    GPU to cast it into the 16-bit one."""
    if not states.gradient_bytes:
        return sharded
    buffer = states.largest_trainable_params * states.gradient_itemsize
    step = ceil_div(states.trainable_params, sharded.shard_degree) * ComputeDtype.FP32.bytes \
        if during(setup.code_date, DEEPSPEED_OFFLOAD_STEP_ON_GPU) else 0
    return replace(sharded, persistent_buffers_bytes=sharded.persistent_buffers_bytes + buffer,
                   step_buffers_bytes=sharded.step_buffers_bytes + step)


@dataclass(frozen=True, slots=True)
class _TracedStep:
    """What decides a ZeRO-3 step's module trace (not its batch nor its length)."""

    method: Method
    quant: Quant
    precision: Precision
    checkpointing: Checkpointing
    blocks_with_graph: int
    head_separate: bool

    @staticmethod
    def of(arch: Architecture, setup: TrainingSetup) -> _TracedStep:
        # under `freeze`, no gradient reaches the blocks before the trained ones; none reaches
        # any block when reentrant checkpoints cut the graph
        with_graph = min(setup.train_layers, arch.n_layers) if setup.method is Method.FREEZE \
            else arch.n_layers
        if checkpoints_cut_the_graph(setup):
            with_graph = 0
        return _TracedStep(setup.method, setup.quant, setup.precision, setup.checkpointing,
                           with_graph, head_is_separate(arch, setup))


@lru_cache(maxsize=64)
def _zero3_peaks(arch: Architecture, step: _TracedStep, tensor_parallel: int,
                 buffers: CommBuffers, *, retains_prefetched: bool,
                 buffered: bool) -> GatheredPeaks:
    trace, forward_uses, first_block = _zero3_trace(arch, step, tensor_parallel)
    return zero3_gathered_peaks(trace, forward_uses, first_block, buffers,
                                retains_prefetched=retains_prefetched, buffered=buffered)


def _zero3_trace(arch: Architecture, step: _TracedStep,
                 tensor_parallel: int) -> tuple[tuple[TracedModule, ...], int, int]:
    """The modules of a step in the order DeepSpeed's hooks fetch them (parameter_offload.py
    @38327e07: a forward pre-hook on every module, a backward pre-hook on its outputs): the
    embedding, every block's linears, the head; then backward from the head, each block's
    linears in reverse, after their recomputation under full activation checkpointing (its
    forward hooks fire again), and the embedding when its output needs a gradient. Norms and
    biases fall under `stage3_param_persistence_threshold` and stay whole. Returns the trace,
    the number of forward uses and where the first block's backward starts."""
    embedding = TracedModule("embedding", ceil_div(arch.params_embedding, tensor_parallel))
    head = TracedModule("head", ceil_div(arch.head_linear().params, tensor_parallel)) \
        if step.head_separate else embedding
    kinds = {moe: tuple(_traced_linear(lin, step, tensor_parallel)
                        for lin in arch.kind_view(moe).block_linears())
             for moe in {arch.layer_is_moe(layer) for layer in range(arch.n_layers)}}
    blocks = [tuple(TracedModule((layer, index), elements) for index, elements
                    in enumerate(kinds[arch.layer_is_moe(layer)]))
              for layer in range(arch.n_layers)]
    forward = (embedding, *(use for block in blocks for use in block), head)
    backward: list[TracedModule] = [head]
    first_block = 0
    for layer in reversed(range(arch.n_layers - step.blocks_with_graph, arch.n_layers)):
        first_block = len(forward) + len(backward)
        if step.checkpointing is Checkpointing.FULL:
            backward += blocks[layer]
        backward += reversed(blocks[layer])
    if step.method is Method.FULL:
        backward.append(embedding)
    return (*forward, *backward), len(forward), first_block


def _traced_linear(linear: LinearSpec, step: _TracedStep, tensor_parallel: int) -> int:
    """A linear's parameter elements as DeepSpeed counts them (`ds_numel`): a bitsandbytes
    weight is its packed storage in the 16-bit `bnb_4bit_quant_storage` that ZeRO-3 needs
    (PEFT docs, accelerate/deepspeed.md), every expert of a MoE layer together (one leaf
    module, transformers `set_z3_leaf_modules`)."""
    weights = linear.in_features * linear.out_features * linear.count
    biases = linear.params - weights
    if step.method is Method.QLORA:
        packed = weights if step.quant is Quant.INT8 else (weights + 1) // 2
        weights = ceil_div(packed, weight_itemsize(step.precision))
    return ceil_div(weights + biases, tensor_parallel)


def _largest_block_gradient(arch: Architecture, setup: TrainingSetup,
                            states: ModelStates) -> int:
    """The whole 16-bit gradient autograd writes for one parameter before ZeRO-3's hook moves it
    into the bucket or reduces it (stage3.py `reduce_independent_p_g_buckets_and_remove_grads`,
    run from the parameter's AccumulateGrad hook): in the blocks, their largest linear when
    their weights train, else the largest adapter."""
    if not states.gradient_bytes:
        return 0
    if setup.method in (Method.FULL, Method.FREEZE):
        largest = arch.largest_block_linear()
    else:
        largest = states.largest_trainable_params
    return largest * states.gradient_itemsize


def quant_states_whole(arch: Architecture, setup: TrainingSetup, sharded: ShardedStates,
                       stage: Stage) -> ShardedStates:
    """A sharded QLoRA base with its bitsandbytes statistics whole on every GPU
    (`_unpartitioned_quant_state_bytes`): the shards hold the packed weights, and the statistics,
    counted among the stored bytes, are added back less their shard; parameters offloaded to the
    host (FSDP's `CPUOffload`, ZeRO-3's `offload_param`) leave them on the GPU."""
    scheme = sharded.parallelism.scheme
    if scheme not in (Scheme.ZERO3, *FSDP_SCHEMES) or stage.name != "all":
        return sharded
    kept_whole = _unpartitioned_quant_state_bytes(arch, setup) // stage.tensor_parallel
    if not kept_whole:
        return sharded
    on_gpu = ceil_div(kept_whole, sharded.shard_degree) if sharded.weights_bytes else 0
    return replace(sharded, weights_bytes=sharded.weights_bytes + kept_whole - on_gpu)


def _unpartitioned_quant_state_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """What bitsandbytes keeps beside a quantized weight's storage (absmax, the nested
    quantization's constants; LLM.int8's row scales): attributes of the parameter
    (bitsandbytes nn/modules.py `Params4bit.quant_state`, `Int8Params.SCB`), not parameters,
    so ZeRO-3, which partitions `param.data` (partition_parameters.py @38327e07
    `_partition_param`), and FSDP, which flattens the modules' parameters
    (torch/distributed/fsdp/_flat_param.py; bitsandbytes keeps a copy on the module,
    `Linear4bit.quant_state`, `fix_4bit_weight_quant_state_from_module`), leave them whole on
    every GPU, and parameter offload leaves them there. torchtune's base is torchao's
    `NF4Tensor`, whose scalers and their factors are inner tensors that FSDP2 splits and gathers
    with the codes (pytorch/ao torchao/dtypes/nf4tensor.py @e1aee635,
    `_INNER_TENSOR_NAMES_FOR_SHARDING`, `nf4_split`, `fsdp_pre_all_gather`): none is kept whole."""
    if setup.method is not Method.QLORA or stores_torchao_nf4(setup):
        return 0
    total = 0
    for linear, layers in arch.model_linears():
        elements = linear.in_features * linear.out_features
        if setup.quant is Quant.INT8:
            stats = bnb_int8_bytes(linear.in_features, linear.out_features) - elements
        else:
            double = setup.quant in (Quant.NF4_DQ, Quant.FP4_DQ)
            stats = bnb_4bit_bytes(elements, double) - (elements + 1) // 2
        total += stats * linear.count * layers
    return total


def embedding_backward_as_on_one_gpu(stage: Stage, parallelism: Parallelism) -> bool:
    """The embedding's backward as one GPU runs it (vramplan.training.estimate
    `_embedding_backward`): under DDP, whose gradients are whole tensors on every GPU, on a
    stage holding the whole model. FSDP counts the root unit's gradient completing at the
    embedding in its own buffers (vramplan.distributed.sharding, `root_end`); DeepSpeed's ZeRO
    moves each gradient into its buckets from a hook."""
    return parallelism.scheme in (Scheme.NONE, Scheme.DDP) and stage.name == "all" \
        and stage.tensor_parallel == 1
