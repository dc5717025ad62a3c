"""DeepSpeed ZeRO-3 as its implementation runs (deepspeed/runtime/zero/stage3.py,
partitioned_param_coordinator.py, runtime/comm/coalesced_collectives.py @38327e07): expectations
computed by hand from the source's rules."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from vramplan.allocator import Event, EventKind, replay
from vramplan.distributed.defaults import MS_SWIFT_ZERO3, default_parallelism, program_sharding
from vramplan.distributed.parallelism import CommBuffers, Parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.distributed.sharding import shard_model_states
from vramplan.distributed.zero3_coordinator import (
    TracedModule,
    Zero3Coordinator,
    zero3_gathered_peaks,
)
from vramplan.distributed.zero3_run import _TracedStep, _zero3_trace
from vramplan.model.hf_config import parse_config
from vramplan.parts import PartKind
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.allocations.load import by_lifetime
from vramplan.training.allocations.optimizer import _sub_groups
from vramplan.training.allocations.program import (
    GATHER_STREAM,
    REDUCE_STREAM,
    Sharding,
    StepTensors,
)
from vramplan.training.allocations.step import step_program
from vramplan.training.allocations.tensors import ParamTensor, parameter_tensors
from vramplan.training.result import Phase, step_shape
from vramplan.training.setup import TrainingSetup
from vramplan.training.states import ModelStates
from vramplan.vocab import (
    Checkpointing,
    Framework,
    LoraTarget,
    Method,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)


def _mixed_adam(params: int, largest_trainable: int = 0) -> ModelStates:
    """Adam in mixed precision: 2 + 2 + 4 + 8 bytes per trainable parameter."""
    return ModelStates(
        trainable_params=params, frozen_params=0, trainable_weight_bytes=2 * params,
        frozen_weight_bytes=0, gradient_bytes=2 * params, master_weight_bytes=4 * params,
        optimizer_state_bytes=8 * params, weight_itemsize=2, gradient_itemsize=2,
        largest_layer_params=0, block_params=0, root_params=0,
        largest_trainable_params=largest_trainable)


# --- The coordinator's release rule --------------------------------------------------------------

_E, _A, _B, _C, _H = (TracedModule(key, n) for key, n in
                      (("E", 10), ("A", 100), ("B", 100), ("C", 100), ("H", 50)))
# forward E A B C H; backward H, the block recomputed (A B C), then its backward (C B A)
_TRACE = (_E, _A, _B, _C, _H, _H, _A, _B, _C, _C, _B, _A)


def _no_prefetch(reuse: int) -> CommBuffers:
    return CommBuffers(zero3_prefetch_bucket_elements=0, zero3_max_reuse_distance=reuse)


def test_a_module_reused_within_the_distance_stays_gathered() -> None:
    """max_reuse_distance 300, no prefetch. A at its recomputation (step 6) sees B, C, C = 300
    elements before its backward use: released. B sees C, C, then itself (200): kept; C sees
    itself at once: kept. So B and C are both gathered when C runs backward (200); the head is
    used again right after its forward (kept over the loss, 50); in forward one module at a
    time (100)."""
    peaks = zero3_gathered_peaks(_TRACE, 5, 6, _no_prefetch(300))
    assert (peaks.forward, peaks.loss, peaks.first_block) == (100, 50, 200)


def test_no_reuse_distance_releases_every_module_after_its_use() -> None:
    peaks = zero3_gathered_peaks(_TRACE, 5, 6, _no_prefetch(0))
    assert (peaks.forward, peaks.loss, peaks.first_block) == (100, 50, 100)


def test_a_long_reuse_distance_keeps_the_forward_for_the_recomputation() -> None:
    """max_reuse_distance 1000: every forward module is used again before 1000 elements go by
    (A, the farthest, after B C H H = 300), except E, never used again: all of A B C H stay
    gathered from the forward through the loss (350); H goes after its backward, never used
    again, and the block keeps A B C (300) until their own backward."""
    peaks = zero3_gathered_peaks(_TRACE, 5, 6, _no_prefetch(1000))
    assert (peaks.forward, peaks.loss, peaks.first_block) == (350, 350, 300)


def test_the_prefetch_keeps_what_it_walks_past() -> None:
    """Forward E A B C H, backward H C B A; prefetch bucket 100, no reuse distance. Each use
    prefetches the next module, one parameter gathered into its own buffer (nothing more in
    flight); at C the prefetch walks past H (50, issued), H's backward use and C's (both
    gathered: free, marked) to B (100, issued): two modules, a flat buffer of 150 beside their
    copies. C is then kept for its backward use although no reuse distance would keep it, and
    so is B: C, H, B gathered (250, 400 with the buffer); at the head A comes in too (350).
    Without the mark (DeepSpeed before v0.6.6) C goes after its forward use."""
    trace = (_E, _A, _B, _C, _H, _H, _C, _B, _A)
    buffers = CommBuffers(zero3_prefetch_bucket_elements=100, zero3_max_reuse_distance=0)
    coordinator = Zero3Coordinator(trace, buffers)
    assert [coordinator.use(step) for step in range(len(trace))] == [
        (110, 0), (200, 0), (200, 0), (250, 150), (350, 0), (350, 0), (300, 0), (200, 0),
        (100, 0)]
    peaks = zero3_gathered_peaks(trace, 5, 6, buffers)
    assert (peaks.forward, peaks.loss, peaks.first_block, peaks.prefetch) == (400, 350, 300, 150)
    before = Zero3Coordinator(trace, buffers, retains_prefetched=False)
    assert [before.use(step)[0] for step in range(len(trace))][3:5] == [250, 250]


def test_the_coordinator_fills_to_max_live_as_deepspeed_does() -> None:
    """Measured with DeepSpeed 0.19.8 on the CPU (benchmarks/zero3_step_cpu.py, 2026-12-05:
    two ranks, a Llama of 16 blocks of hidden size 1,024, 2.8e7 live, 2.8e7 reuse distance,
    1.4e6 prefetch; the elements the coordinator held gathered at each block's q_proj): 33.88 M
    at the 15th block (the head prefetched), 29.69 M over the loss, 29.62 M at each block's
    q_proj in backward, then 34.93, 22.09 and 9.24 M at the last three blocks. In forward's
    steady state DeepSpeed holds 28.84 M, the replay 27.79 M (one attention linear fewer: the
    containers DeepSpeed enters issue prefetches too, one more overshoot; the trace has the
    linears only): the test pins the replay's."""
    config = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
              "num_hidden_layers": 16, "num_attention_heads": 8, "num_key_value_heads": 8,
              "vocab_size": 8000, "max_position_embeddings": 512, "tie_word_embeddings": False}
    arch = parse_config(config)
    step = _TracedStep(Method.FULL, Quant.NONE, Precision.MIXED, Checkpointing.NONE, 16, True)
    trace, forward_uses, _ = _zero3_trace(arch, step, 1)
    coordinator = Zero3Coordinator(trace, CommBuffers(
        zero3_max_live_parameters=28_000_000, zero3_max_reuse_distance=28_000_000,
        zero3_prefetch_bucket_elements=1_400_000))
    at_q: dict[tuple[int, bool], int] = {}
    at_head = []
    for index, use in enumerate(trace):
        gathered, _ = coordinator.use(index)
        if use.key == "head":
            at_head.append(gathered)
        elif isinstance(use.key, tuple) and use.key[1] == 0:
            at_q[use.key[0], index < forward_uses] = gathered
    millions = {key: round(n / 1e6, 2) for key, n in at_q.items()}
    assert [millions[layer, True] for layer in (8, 13, 14, 15)] == [27.79, 27.79, 33.88, 29.69]
    assert [round(n / 1e6, 2) for n in at_head] == [29.69, 29.69]
    assert [millions[layer, False] for layer in range(3, 15)] == [29.62] * 12
    assert [millions[layer, False] for layer in (2, 1, 0)] == [34.93, 22.09, 9.24]


# --- The optimizer step, sub-group by sub-group -------------------------------------------------


def test_the_step_upcasts_one_sub_group_at_a_time() -> None:
    """16e9 trainable parameters on 8 GPUs: a 2e9 partition, stepped in sub-groups of at most
    sub_group_size (1e9) plus one parameter's partition (400e6 / 8): the fp32 gradient of the
    largest sub-group (4 x 1.05e9 bytes) with its flattened 16-bit copy (2 x 1.05e9)."""
    sharded = shard_model_states(_mixed_adam(16_000_000_000, 400_000_000),
                                 Parallelism(scheme=Scheme.ZERO3, gpus=8))
    assert sharded.step_group_params == 1_050_000_000
    assert sharded.step_buffers_bytes == 4 * 1_050_000_000
    assert sharded.step_prepare_bytes == 2 * 1_050_000_000
    small = shard_model_states(_mixed_adam(7_000_000_000), Parallelism(scheme=Scheme.ZERO3,
                                                                       gpus=8))
    assert small.step_buffers_bytes == 4 * 875_000_000  # the whole partition is one sub-group


def test_sub_groups_fill_to_the_sub_group_size() -> None:
    params = (ParamTensor(600, 1200, True, 0), ParamTensor(50, 100, False, 0),
              ParamTensor(600, 1200, True, 1), ParamTensor(300, 600, True, None))
    assert _sub_groups(params, Sharding(states=1, step_group_elements=1000)) == [1200, 300]
    assert _sub_groups(params, Sharding(states=2, step_group_elements=1000)) == [750]


# --- The gradient path ----------------------------------------------------------------------------


def test_a_full_bucket_is_copied_when_reduced() -> None:
    """7e9 trainable parameters outnumber the 5e8-element bucket: it fills and is reduced in
    backward through a `torch.cat` copy (2 x 5e8 bytes) beside the kept bucket. 1e8 trainable
    parameters never fill it: their one reduction comes after backward."""
    plan = Parallelism(scheme=Scheme.ZERO3, gpus=8)
    full = shard_model_states(_mixed_adam(7_000_000_000), plan)
    assert full.persistent_buffers_bytes == 2 * 500_000_000
    assert full.backward_buffers_bytes - full.forward_buffers_bytes == 2 * 500_000_000
    few = shard_model_states(_mixed_adam(100_000_000), plan)
    assert few.backward_buffers_bytes == few.forward_buffers_bytes


def test_the_gradient_partition_is_held_from_the_start() -> None:
    """stage3.py allocates the flat gradient partition with the optimizer: it is there in the
    forward of the first micro-batch, 2 bytes per trainable parameter / N."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024,
                          gradient_accumulation=False, framework=Framework.HF)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.ZERO3, 8))
    loss = next(p for p in estimate.phases if p.phase is Phase.LOSS_FORWARD)
    gradients = sum(p.memory_bytes for p in loss.parts if p.kind is PartKind.GRADIENTS)
    assert gradients == estimate.sharded.gradients_bytes == 2 * -(-arch.params_total // 8)


# --- ZeRO-3 per GPU, with a real model ----------------------------------------------------------


def test_checkpointed_blocks_stay_gathered_from_recomputation_to_backward() -> None:
    """Llama-2-70B under full checkpointing on 8 GPUs: while the blocks run backward the
    coordinator holds what its prefetches retained, about stage3_max_live_parameters (1e9),
    and at most a prefetch in flight beyond it (the 5e7 bucket, overshot by one linear of
    234.9M: gate, up, down are 8192 x 28672), in bf16, beside the largest adapter's
    gradient."""
    arch = architecture_of(find_model("llama-2-70b"))
    setup = TrainingSetup(method=Method.LORA, precision=Precision.MIXED, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=1,
                          seq_len=512, checkpointing=Checkpointing.FULL, framework=Framework.HF,
                          gradient_accumulation=False)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.ZERO3, 8))
    trace, forward_uses, first_block = _zero3_trace(arch, _TracedStep.of(arch, setup), 1)
    peaks = zero3_gathered_peaks(trace, forward_uses, first_block, CommBuffers())
    lora_grad = 2 * 8 * 8192  # the largest adapter's gradient, before its hook moves it
    assert estimate.sharded.backward_buffers_bytes == 2 * peaks.backward + lora_grad
    linear = 8192 * 28672
    assert 1_000_000_000 <= peaks.backward <= 1_000_000_000 + 2 * (linear + 50_000_000)


def test_quantization_statistics_stay_whole_on_every_gpu() -> None:
    """Llama-2-70B in NF4 with double quantization on 2 GPUs: per layer, q and o (8192 x 8192)
    hold 1048576 uint8 absmax, 4096 fp32 constants and an offset (1064964 bytes), k and v
    (8192 x 1024) 133124 bytes, gate, up and down (8192 x 28672) 3727364 bytes: 13578268 bytes
    a layer, 1086261440 for 80. ZeRO-3 splits the packed weights, not these."""
    arch = architecture_of(find_model("llama-2-70b"))
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=1,
                          seq_len=512, checkpointing=Checkpointing.FULL, framework=Framework.HF,
                          gradient_accumulation=False)
    plan = default_parallelism(setup, Scheme.ZERO3, 2)
    estimate = estimate_per_gpu(arch, setup, plan)
    split_evenly = shard_model_states(estimate.single.states, plan).weights_bytes
    stats = 1_086_261_440
    assert estimate.sharded.weights_bytes - split_evenly == stats - stats // 2


@pytest.mark.parametrize("scheme", [Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3])
def test_a_zero_optimizer_keeps_fp32_masters_of_a_bf16_model(scheme: Scheme) -> None:
    """A bf16 model under a ZeRO optimizer: DeepSpeed steps on fp32 copies of each rank's
    partition (stage_1_and_2.py `single_partition_of_fp32_groups`, stage3.py
    `_create_fp32_partitions`), so each of 8 GPUs holds 4 bytes of master and 8 of Adam states
    per parameter over 8, as under `mixed`; FSDP keeps bf16 states, as the run says."""
    arch = architecture_of(find_model("llama-3.2-1b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=512, framework=Framework.HF, gradient_accumulation=False)
    params = estimate_per_gpu(arch, setup, default_parallelism(setup, scheme, 8)).single.states
    assert params.master_weight_bytes == 4 * params.trainable_params
    assert params.optimizer_state_bytes == 8 * params.trainable_params
    fsdp = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.FSDP, 8)).single.states
    assert fsdp.master_weight_bytes == 0
    assert fsdp.optimizer_state_bytes == 4 * fsdp.trainable_params


def test_an_optimizer_in_backward_gets_no_zero_masters() -> None:
    """LOMO's hooks step each gradient in backward and give DeepSpeed no optimizer: no fp32
    partition exists, the weights stay bf16 as the run says."""
    arch = architecture_of(find_model("llama-3.2-1b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE,
                          optimizer=Optimizer.SGD, optimizer_impl=OptimizerImpl.IN_BACKWARD,
                          batch=1, seq_len=512, framework=Framework.DEEPSPEED,
                          gradient_accumulation=False)
    states = estimate_per_gpu(arch, setup,
                              default_parallelism(setup, Scheme.ZERO3, 2)).single.states
    assert states.master_weight_bytes == 0


# --- The step as the caching allocator sees it --------------------------------------------------

_MID = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
        "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
        "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False}


def test_the_program_keeps_one_flat_gradient_partition() -> None:
    """Under ZeRO-3 no gradient is allocated in backward nor freed by zero_grad: the flat
    partition is allocated once, before the first forward, and kept."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False)
    sharding = Sharding(weights=2, gradients=2, states=2, step_group_elements=1_000_000_000)
    program = step_program(arch, setup, step_shape(arch, setup), sharding)
    partition = -(-2 * arch.params_total // 2)
    first_forward = next(i for i, e in enumerate(program)
                         if e.kind is EventKind.MARK and e.name == "forward")
    flat = [e for e in program[:first_forward] if e.kind is EventKind.ALLOC
            and abs(e.n_bytes - partition) <= 8]
    assert len(flat) == 1
    assert not any(e.kind is EventKind.FREE and e.tensor == flat[0].tensor for e in program)


def _zero3_program(bucket_elements: int) -> tuple[list[Event], int, list[int]]:
    """The `_MID` model's ZeRO-3 program on one of 2 GPUs, every parameter trained in mixed
    precision, with a gradient bucket of `bucket_elements` (0: not modelled); its trainable
    parameters' elements, and the partition of each."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False)
    sharding = Sharding(weights=2, gradients=2, states=2, step_group_elements=1_000_000_000,
                        zero3_bucket_elements=bucket_elements)
    tensors = [t.elements for t in parameter_tensors(arch, setup) if t.trainable]
    return (step_program(arch, setup, step_shape(arch, setup), sharding, steps=1),
            sum(tensors), [-(-n // 2) for n in tensors])


def _between(program: list[Event], first: str, last: str) -> list[Event]:
    start = next(i for i, e in enumerate(program) if e.kind is EventKind.MARK and e.name == first)
    end = next(i for i, e in enumerate(program) if e.kind is EventKind.MARK and e.name == last)
    return program[start:end]


@pytest.mark.parametrize("bucket", [500_000_000, 30_000_000, 8_000_000])
def test_every_gradient_is_reduced_once_through_a_copy_on_the_reduce_stream(bucket: int) -> None:
    """stage3.py `__add_grad_to_ipg_bucket`, `__reduce_and_partition_ipg_grads`: each gradient
    goes into the bucket, a full bucket is reduced first (and the rest at the end of backward),
    each reduction a `torch.cat` copy of what the bucket holds, on the reduce stream. The
    embedding (32.8e6 elements) overflows the smaller buckets alone: it is reduced on its own."""
    program, elements, _ = _zero3_program(bucket)
    backward = _between(program, "backward", "optimizer_step")
    copies = [e.n_bytes for e in backward
              if e.kind is EventKind.ALLOC and e.stream == REDUCE_STREAM]
    assert sum(copies) == 2 * elements  # every 16-bit gradient, once
    assert max(copies) <= 2 * max(bucket, 32_000 * 1024)
    assert (len(copies) == 1) is (bucket >= elements)  # a bucket holding the model: one
    assert not [e for e in _between(program, "forward", "backward")
                if e.kind is EventKind.ALLOC and e.stream == REDUCE_STREAM]


def test_a_gradient_larger_than_the_bucket_waits_whole_for_its_reduction() -> None:
    """`__add_grad_to_ipg_bucket` copies a gradient only if it fits; the embedding's (2 x
    32,000 x 1,024 bytes, more than an 8e6-element bucket) stays as autograd made it until
    the epilogue's reduction frees it, after that reduction's copy."""
    program, _, _ = _zero3_program(8_000_000)
    backward = _between(program, "backward", "optimizer_step")
    embedding = [e for e in backward if e.kind is EventKind.ALLOC and e.stream == 0
                 and e.n_bytes == 2 * 32_000 * 1024][-1]
    freed = next(i for i, e in enumerate(backward)
                 if e.kind is EventKind.FREE and e.tensor == embedding.tensor)
    last_copy = max(i for i, e in enumerate(backward)
                    if e.kind is EventKind.ALLOC and e.stream == REDUCE_STREAM)
    assert freed > last_copy


def test_autograd_makes_each_parameters_whole_gradient_on_the_default_stream() -> None:
    """A ZeRO-3 gradient is the whole parameter's (`param.grad.numel() == param.ds_numel`), made
    by autograd before the hook copies it into the bucket: the largest request of backward's
    default stream beyond activations is the largest parameter's whole gradient (the `_MID`
    model's embedding, 32,000 x 1,024 in 16 bits), not a block's merged tensor."""
    program, _, _ = _zero3_program(500_000_000)
    backward = [e.n_bytes for e in _between(program, "backward", "optimizer_step")
                if e.kind is EventKind.ALLOC and e.stream == 0]
    assert 2 * 32_000 * 1024 in backward
    without, _, _ = _zero3_program(0)
    assert 2 * 32_000 * 1024 not in [e.n_bytes for e in _between(without, "backward",
                                                                  "optimizer_step")]


def test_the_gradient_norm_reads_each_partition_in_fp64() -> None:
    """stage3.py `get_grad_norm_direct` (v0.9.0 to edaa7221): `g.double().norm(2)` for each
    parameter's gradient partition, one at a time, before the fp32 gradients are made."""
    program, _, partitions = _zero3_program(500_000_000)
    step = _between(program, "optimizer_step", "zero_grad")
    doubles = [e.n_bytes for e in step if e.kind is EventKind.ALLOC][:len(partitions)]
    assert doubles == [8 * n for n in partitions]
    without, _, _ = _zero3_program(0)
    assert len([e for e in _between(without, "optimizer_step", "zero_grad")
                if e.kind is EventKind.ALLOC]) < len(partitions)


@pytest.mark.parametrize(("offload", "modelled"), [(Offload.NONE, True),
                                                    (Offload.OPTIMIZER, False),
                                                    (Offload.PARAMS_OPTIMIZER, False)])
def test_the_gradient_bucket_is_modelled_where_the_partition_is_on_the_gpu(
        offload: Offload, modelled: bool) -> None:
    """With the optimizer offloaded the partitions go to the host through another path
    (`partition_grads`' offload branch), not written here."""
    plan = Parallelism(scheme=Scheme.ZERO3, gpus=8, offload=offload)
    sharding = program_sharding(_mixed_adam(7_000_000_000), shard_model_states(
        _mixed_adam(7_000_000_000), plan))
    assert bool(sharding.zero3_bucket_elements) is modelled


def test_zero12_bucket_is_made_between_the_losss_forward_and_its_backward() -> None:
    """stage_1_and_2.py `backward`: the bucket is made once the loss is computed, before its
    backward (after the logits, before the gradient of the last hidden state), and freed by
    the epilogue, before the step; a micro-batch makes it again."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False)
    bucket = 1_000_000_003
    sharding = Sharding(weights=1, gradients=2, states=2, backward_bucket_bytes=bucket)
    program = step_program(arch, setup, step_shape(arch, setup), sharding)
    made = [i for i, e in enumerate(program) if e.kind is EventKind.ALLOC and e.n_bytes == bucket]
    assert len(made) == 2  # one per micro-batch, two steps
    for index in made:
        loss = max(i for i, e in enumerate(program[:index])
                   if e.kind is EventKind.MARK and e.name == "loss")
        logits = [e for e in program[loss:index] if e.kind is EventKind.ALLOC
                  and e.n_bytes >= 2 * arch.vocab_size * 128]
        assert logits  # the loss's forward ran first
        tensor = program[index].tensor
        freed = next(i for i, e in enumerate(program) if e.kind is EventKind.FREE
                     and e.tensor == tensor and i > index)
        step = next(i for i, e in enumerate(program) if i > index
                    and e.kind is EventKind.MARK and e.name == "optimizer_step")
        assert freed < step
    without = step_program(arch, setup, step_shape(arch, setup),
                           Sharding(weights=1, gradients=2, states=2))
    assert not [e for e in without if e.kind is EventKind.ALLOC and e.n_bytes == bucket]


def _init_buffers(sharding: Sharding) -> list[int]:
    """The sizes of the tensors allocated and freed before the first forward."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False)
    program = step_program(arch, setup, step_shape(arch, setup), sharding)
    first_forward = next(i for i, e in enumerate(program)
                         if e.kind is EventKind.MARK and e.name == "forward")
    freed = {e.tensor for e in program[:first_forward] if e.kind is EventKind.FREE}
    return [e.n_bytes for e in program[:first_forward]
            if e.kind is EventKind.ALLOC and e.tensor in freed]


@pytest.mark.parametrize(("step_group_elements", "groups"), [
    (1_000_000_000, 1),  # the whole partition is one sub-group
    (None, 1),  # ZeRO-1/2: one fp32 gradient partition per parameter group
])
def test_deepspeed_makes_and_frees_an_fp32_gradient_buffer_at_construction(
        step_group_elements: int | None, groups: int) -> None:
    """stage3.py / stage_1_and_2.py `initialize_optimizer_states` @edaa7221: an fp32 buffer
    of the (largest sub-group's) partition, freed before the first forward; the states are
    not made there (DeepSpeed 0.13.2, #5104)."""
    arch = parse_config(_MID)
    partition = -(-arch.params_total // 2)  # every parameter trains, 2 GPUs
    zero = Sharding(weights=2, gradients=2, states=2, step_group_elements=step_group_elements,
                    zero_init_buffer=True)
    assert abs(sum(_init_buffers(zero)) - 4 * partition) <= 4 * 16  # rounding per tensor
    assert len(_init_buffers(zero)) == groups
    assert _init_buffers(Sharding(weights=2, gradients=2, states=2,
                                  step_group_elements=step_group_elements)) == []
    offloaded = Sharding(weights=2, gradients=2, states=0,
                         step_group_elements=step_group_elements, zero_init_buffer=True)
    assert _init_buffers(offloaded) == []  # the buffer is made on the host


def test_zero_schemes_build_the_init_buffer() -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=256)
    for scheme, expected in ((Scheme.ZERO3, True), (Scheme.ZERO2, True), (Scheme.ZERO1, True),
                             (Scheme.DDP, False), (Scheme.FSDP, False)):
        plan = default_parallelism(setup, scheme, 2)
        result = estimate_per_gpu(arch, setup, plan)
        sharding = program_sharding(result.single.states, result.sharded)
        assert sharding.zero_init_buffer is expected


@pytest.mark.parametrize("gpus", [2, 8])
def test_zero3_never_holds_more_than_zero2_model_states(gpus: int) -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=256)
    def states(scheme: Scheme) -> int:
        return estimate_per_gpu(arch, setup,
                                default_parallelism(setup, scheme, gpus)).sharded.model_states_bytes
    assert states(Scheme.ZERO3) <= states(Scheme.ZERO2)


@pytest.mark.parametrize("whole_at_init", [True, False])
def test_a_model_built_outside_zero_init_passes_whole_through_the_gpu(
        whole_at_init: bool) -> None:
    """engine.py `_configure_distributed_model` (v0.6.5, edaa7221): a model not made under
    `zero.Init` goes to the GPU in 16-bit, one tensor at a time, before ZeRO-3 partitions it
    to the host; every tensor is freed before the first forward."""
    arch = parse_config(_MID)
    sharding = Sharding(weights=0, gradients=0, states=0, step_group_elements=1_000_000_000,
                        zero_init_buffer=True, whole_at_init=whole_at_init)
    freed = _init_buffers(sharding)
    if not whole_at_init:
        assert freed == []
        return
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False)
    assert len(freed) == len(parameter_tensors(arch, setup))
    assert sum(freed) == 2 * arch.params_total


def test_the_whole_model_stays_reserved_after_offload() -> None:
    """Nothing empties the cache on the parameter-offload path (stage3.py
    `_create_fp16_partitions_with_defragmentation` calls `defragment`, and its
    `empty_cache()`, only when the partitions stay on the GPU): the freed segments stay
    reserved under the step."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False)
    offloaded = Sharding(weights=0, gradients=0, states=0, step_group_elements=1_000_000_000,
                         zero_init_buffer=True)
    shape = step_shape(arch, setup)
    plain = replay(step_program(arch, setup, shape, offloaded))
    whole = replay(step_program(arch, setup, shape, replace(offloaded, whole_at_init=True)))
    assert whole.reserved_bytes >= 2 * arch.params_total
    assert whole.peak_reserved_bytes > plain.peak_reserved_bytes


@pytest.mark.parametrize(("offload", "expected"), [
    (Offload.PARAMS_OPTIMIZER, True),
    (Offload.OPTIMIZER, False),  # `defragment` empties the cache
    (Offload.NONE, False),
])
def test_only_parameter_offload_keeps_the_whole_model_cached(offload: Offload,
                                                             expected: bool) -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=256)
    plan = replace(default_parallelism(setup, Scheme.ZERO3, 2, offload),
                   zero3_built_outside_init=True)
    result = estimate_per_gpu(arch, setup, plan)
    assert program_sharding(result.single.states, result.sharded).whole_at_init is expected


# --- The config files frameworks ship -------------------------------------------------------------


def test_llamafactory_buckets_follow_the_hidden_size() -> None:
    """LLaMA-Factory's ds_z3_config.json leaves the buckets "auto": the transformers Trainer
    fills reduce_bucket_size with 4096² for Llama-3.1-8B (in bf16) and the prefetch bucket
    with 0.9 x 4096² (prefetched into a flat buffer, then copied: twice); other frameworks keep
    DeepSpeed's 5e8 elements."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    def sharded(framework: Framework) -> tuple[int, int]:
        setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=512,
                              framework=framework, gradient_accumulation=False,
                              checkpointing=Checkpointing.FULL)
        result = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.ZERO3, 8))
        return result.sharded.persistent_buffers_bytes, result.sharded.forward_buffers_bytes
    bucket, forward = sharded(Framework.LLAMAFACTORY)
    assert bucket == 2 * 4096 * 4096
    assert forward == 2 * _forward_peak(arch, 9 * 4096 * 4096 // 10)
    assert sharded(Framework.HF) == (2 * 500_000_000, 2 * _forward_peak(arch, 50_000_000))


def _forward_peak(arch: Any, prefetch_bucket: int) -> int:
    """The coordinator's forward peak for a full fine-tuning of `arch` under full checkpointing
    with a prefetch bucket of `prefetch_bucket` elements (DeepSpeed's other defaults)."""
    setup = TrainingSetup(precision=Precision.MIXED, checkpointing=Checkpointing.FULL)
    trace, forward_uses, first_block = _zero3_trace(arch, _TracedStep.of(arch, setup), 1)
    buffers = CommBuffers(zero3_prefetch_bucket_elements=prefetch_bucket)
    return zero3_gathered_peaks(trace, forward_uses, first_block, buffers).forward


def test_ms_swift_zero3_file_fills_the_buckets_from_the_hidden_size() -> None:
    """ms-swift's `--deepspeed zero3` (swift/llm/ds_config/zero3.json @7b709960f) leaves the
    buckets "auto", as LLaMA-Factory's file does: for Llama-3.1-8B in bf16 the reduce bucket is
    2 x 4096² bytes, where a bare hf run keeps DeepSpeed's 5e8 elements."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=512,
                          framework=Framework.HF, gradient_accumulation=False,
                          checkpointing=Checkpointing.FULL)
    plan = default_parallelism(setup, Scheme.ZERO3, 8)
    swift = estimate_per_gpu(arch, setup, plan, zero3_config=MS_SWIFT_ZERO3)
    assert swift.sharded.persistent_buffers_bytes == 2 * 4096 * 4096
    assert swift.sharded.forward_buffers_bytes == 2 * _forward_peak(arch,
                                                                    9 * 4096 * 4096 // 10)
    assert estimate_per_gpu(arch, setup, plan).sharded.persistent_buffers_bytes \
        == 2 * 500_000_000


def test_axolotl_keeps_nothing_gathered_beyond_the_running_module() -> None:
    """axolotl's zero3_bf16.json: max_live_parameters and max_reuse_distance 0, so no
    prefetch and no reuse: a block's backward holds its largest linear (14336 x 4096) alone;
    sub_group_size 0 makes every parameter a sub-group: the step upcasts the largest
    parameter's partition (the 128256 x 4096 embedding over 8 GPUs)."""
    arch = architecture_of(find_model("llama-3.1-8b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=512,
                          framework=Framework.AXOLOTL, gradient_accumulation=False,
                          checkpointing=Checkpointing.FULL)
    result = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.ZERO3, 8))
    bucket = 4096 * 4096
    gradient_path = 2 * bucket + 2 * 14336 * 4096  # a full bucket's copy, one linear's grad
    assert result.sharded.backward_buffers_bytes == 2 * 14336 * 4096 + gradient_path
    assert result.sharded.step_group_params == 128256 * 4096 // 8


# --- DeepSpeed's memory-efficient linear ---------------------------------------------------------

def test_zero3_linears_keep_the_inputs_of_frozen_weights() -> None:
    """Under ZeRO-3, `zero3_linear_wrap` saves every linear's input (deepspeed/runtime/zero/
    linear.py `LinearFunctionForZeroStage3.forward`: `ctx.save_for_backward(input, weight,
    bias)`). A LoRA block with adapter dropout keeps the dropped inputs for its adapters; the
    frozen q/k/v, gate/up and down then also keep what they read: the two normed hidden states
    (2 x 2 bytes x hidden) and the MLP product (2 bytes x intermediate), per token. The head,
    frozen, keeps the final norm's output (2 bytes x hidden per token). In `mixed`, which both
    schemes keep (a ZeRO optimizer makes `bf16-true` `mixed`), so that only autograd differs."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(method=Method.LORA, precision=Precision.MIXED, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.ALL}), lora_dropout=0.1,
                          batch=1, seq_len=512, checkpointing=Checkpointing.NONE,
                          framework=Framework.HF)

    def per_gpu(scheme: Scheme) -> tuple[int, int]:
        estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, scheme, 2))
        saved = sum(item.bytes_per_token for item in estimate.single.block_saved)
        loss = next(p for p in estimate.single.phases if p.phase is Phase.LOSS_FORWARD)
        return saved, loss.total_bytes

    ddp_saved, ddp_loss = per_gpu(Scheme.DDP)
    zero3_saved, zero3_loss = per_gpu(Scheme.ZERO3)
    h, f = arch.hidden_size, arch.intermediate_size
    assert zero3_saved - ddp_saved == 2 * 2 * h + 2 * f
    tokens = setup.batch * setup.seq_len
    # the one-GPU step under each scheme's autograd: everything else is equal. The first block's
    # input needs no gradient under LoRA, so its q/k/v build no graph; its MLP reads the
    # attention's output, which its adapters made require one (2 h + 2 f)
    first_block = 2 * h + 2 * f
    assert zero3_loss - ddp_loss == \
        ((arch.n_layers - 1) * (2 * 2 * h + 2 * f) + first_block + 2 * h) * tokens


# --- An optimizer stepping in backward: ZeRO-3 without a DeepSpeed optimizer ----------------------


def test_an_optimizer_stepping_in_backward_leaves_zero3_partitioning_parameters_only() -> None:
    """LOMO's hooks step each gradient inside backward, so `deepspeed.initialize` gets no
    optimizer and ZeRO-3 is `DeepSpeedZeRoOffload` (deepspeed/runtime/engine.py
    `_configure_zero_optimizer`): the 16-bit parameters are partitioned, and no gradient
    partition, reduce bucket or fp32 step buffer exists."""
    arch = architecture_of(find_model("llama-2-7b"))
    base = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE,
                         optimizer=Optimizer.SGD, batch=1, seq_len=1024,
                         checkpointing=Checkpointing.FULL, framework=Framework.DEEPSPEED)
    lomo = replace(base, optimizer_impl=OptimizerImpl.IN_BACKWARD)
    plan = default_parallelism(lomo, Scheme.ZERO3, 8)
    hooked, engine = (estimate_per_gpu(arch, setup, plan) for setup in (lomo, base))
    assert hooked.sharded.gradients_bytes == 0 and hooked.sharded.persistent_buffers_bytes == 0
    assert not hooked.sharded.gradients_from_start
    # the engine's own optimizer keeps this rank's 2-byte gradient partition and its bucket
    trainable = engine.single.states.trainable_params
    assert engine.sharded.gradients_bytes == -(-2 * trainable // 8)
    assert engine.sharded.persistent_buffers_bytes == 500_000_000 * 2  # reduce_bucket_size
    assert hooked.sharded.weights_bytes == engine.sharded.weights_bytes


@pytest.mark.parametrize(("model", "method", "tied_gradient"), [
    # OPT-13B ties its head to the embedding: 50,272 x 5,120 16-bit values
    ("opt-13b", Method.FULL, 50272 * 5120 * 2),
    ("llama-2-7b", Method.FULL, 0),  # an untied head's gradient is reduced by its own hook
    ("opt-13b", Method.LORA, 0),  # the head does not train
])
def test_a_tied_heads_gradient_waits_whole_for_the_embeddings_backward(
        model: str, method: Method, tied_gradient: int) -> None:
    """autograd runs a tied weight's AccumulateGrad, where ZeRO's reduce hook sits, once the
    embedding's backward has added its share, last: the head's gradient lives whole through
    the blocks' backward."""
    arch = architecture_of(find_model(model))
    setup = TrainingSetup(method=method, precision=Precision.MIXED, batch=1, seq_len=1024,
                          gradient_accumulation=False, framework=Framework.DEEPSPEED,
                          lora_rank=8 if method is Method.LORA else None)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.ZERO3, 8))
    blocks = next(p for p in estimate.phases if p.phase is Phase.BACKWARD_BLOCKS)
    gradients = sum(p.memory_bytes for p in blocks.parts if p.kind is PartKind.GRADIENTS)
    # beside the flat gradient partition, held from the start
    assert gradients - estimate.sharded.gradients_bytes == tied_gradient


# --- One rank, and parameters offloaded ---------------------------------------------------------


def _one_rank_zero3(offload: Offload, on: date | None) -> int:
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(method=Method.LORA, precision=Precision.MIXED, lora_rank=8,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=1,
                          seq_len=256, framework=Framework.DEEPSPEED,
                          gradient_accumulation=False, code_date=on)
    plan = default_parallelism(setup, Scheme.ZERO3, 1, offload)
    return estimate_per_gpu(arch, setup, plan).sharded.backward_buffers_bytes


def test_one_rank_gathers_nothing_since_deepspeed_0_9() -> None:
    """partition_parameters.py since 4d27225f3 (v0.9.0): one rank fetches a parameter as
    `param.data = param.ds_tensor.data.to(device)`, no all-gather: the partition on the GPU is
    the parameter (nothing held beyond the gradient path), an offloaded one is copied once, a
    prefetch with no all-gather buffer. Before, the all-gather ran on one rank too (a flat
    buffer beside the parameters' copies for what is in flight), an offloaded partition copied
    beside it whole."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(method=Method.LORA, lora_rank=8, precision=Precision.MIXED,
                          lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}))
    trace, forward_uses, first_block = _zero3_trace(arch, _TracedStep.of(arch, setup), 1)
    buffered = zero3_gathered_peaks(trace, forward_uses, first_block, CommBuffers())
    copies = zero3_gathered_peaks(trace, forward_uses, first_block, CommBuffers(),
                                  buffered=False)
    gradient_path = _one_rank_zero3(Offload.NONE, None)
    gathered = _one_rank_zero3(Offload.NONE, date(2023, 1, 1)) - gradient_path
    copied = _one_rank_zero3(Offload.PARAMS_OPTIMIZER, None) - gradient_path
    copied_before = _one_rank_zero3(Offload.PARAMS_OPTIMIZER, date(2023, 1, 1)) - gradient_path
    assert gathered == 2 * buffered.backward
    assert copied == 2 * copies.backward < gathered
    assert copied_before == 2 * 2 * buffered.backward  # beside the partitions' copies
    assert copied > 2 * 3 * 4096 * 11008  # at least a block's MLP, in bf16


def test_a_step_whose_checkpoints_cut_the_graph_fetches_no_block_in_backward() -> None:
    """Reentrant checkpoints whose input needs no gradient build no graph
    (`vramplan.training.specs.checkpoints_cut_the_graph`): backward fetches the head alone,
    not each block's seven linears twice (recomputation, then backward)."""
    from vramplan.distributed.zero3_run import _TracedStep, _zero3_trace

    llama = architecture_of(find_model("llama-2-7b"))
    cut = TrainingSetup(method=Method.LORA, lora_rank=8,
                        lora_targets=frozenset({LoraTarget.ALL, LoraTarget.HEAD}), batch=1,
                        seq_len=512, checkpointing=Checkpointing.FULL, framework=Framework.GENERIC,
                        code_date=date(2024, 7, 10), input_require_grads=False)
    forward = 1 + 32 * 7 + 1
    trace, uses, _ = _zero3_trace(llama, _TracedStep.of(llama, cut), 1)
    assert (uses, len(trace)) == (forward, forward + 1)
    hooked_step = _TracedStep.of(llama, replace(cut, input_require_grads=None))
    hooked, _, _ = _zero3_trace(llama, hooked_step, 1)
    assert len(hooked) == forward + 1 + 32 * 7 * 2


# --- A model built outside zero.Init -------------------------------------------------------------


def _outside_init(setup: TrainingSetup, gpus: int, outside: bool) -> tuple[int, int, int]:
    arch = architecture_of(find_model("llama-3-8b"))
    plan = replace(default_parallelism(setup, Scheme.ZERO3, gpus),
                   zero3_built_outside_init=outside)
    sharded = estimate_per_gpu(arch, setup, plan).sharded
    return (sharded.forward_buffers_bytes, sharded.loss_buffers_bytes or 0,
            sharded.last_unit_backward_buffers_bytes or 0)


def test_outside_zero_init_autograd_keeps_every_gathered_linear_weight_until_backward() -> None:
    """DeepSpeed replaces `torch.nn.functional.linear` (saving only the parameter, gathered
    again in backward) when a model is built inside `zero.Init`; `Init(module=...)` does not,
    so each matmul keeps a view of its gathered 16-bit weight from the forward to the block's
    backward: Llama-3-8B's 32 blocks hold 6,979,321,856 linear values, 13.96 GB in fp16, on
    every GPU at the end of the forward (gpjt/fine-tune-2024-04: 36,590 MiB active at one
    token on 8 GPUs, where the partitioned states are about 18 GB)."""
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024)
    linears = 32 * (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336)
    assert linears == 6_979_321_856
    inside, outside = _outside_init(setup, 8, False), _outside_init(setup, 8, True)
    assert outside[0] >= 2 * linears > 3 * inside[0]
    assert outside[1] >= 2 * (linears + 128256 * 4096)  # and the head, until its backward
    # the first block's backward keeps its own weights only
    assert outside[2] - inside[2] <= 2 * linears // 32 + 2 * 128256 * 4096


def test_the_coordinator_gathers_and_prefetches_beside_the_weights_autograd_keeps() -> None:
    """`free_param` takes a released parameter off the coordinator's count of live parameters
    (`__n_available_params`) while autograd keeps its storage: beside the pinned weights the
    coordinator still gathers for backward and prefetches, whose all-gather buffer and copies
    exist together (`held`). What it retains for a use its prefetch walked past is the pinned
    storage itself: with pinned weights the coordinator is replayed without that retention."""
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024)
    arch = architecture_of(find_model("llama-3-8b"))
    plan = replace(default_parallelism(setup, Scheme.ZERO3, 8), zero3_built_outside_init=True)
    pinned = estimate_per_gpu(arch, setup, plan).sharded
    trace, forward_uses, first_block = _zero3_trace(arch, _TracedStep.of(arch, setup), 1)
    peaks = zero3_gathered_peaks(trace, forward_uses, first_block, CommBuffers(),
                                 retains_prefetched=False)
    linears = 6_979_321_856
    assert pinned.forward_buffers_bytes == 2 * (linears + 2 * peaks.prefetch)
    gradient_path = pinned.backward_buffers_bytes - 2 * (linears + peaks.backward)
    assert 0 < gradient_path <= 2 * (500_000_000 + 14336 * 4096)  # the bucket's copy, a gradient


@pytest.mark.parametrize(("checkpointing", "gpus"), [(Checkpointing.FULL, 8),
                                                      (Checkpointing.NONE, 1)])
def test_nothing_more_is_kept_under_checkpointing_or_on_one_gpu(checkpointing: Checkpointing,
                                                                gpus: int) -> None:
    """Checkpointed blocks run their forward without a graph (the recomputed block is gathered
    anyway); one rank gathers nothing, its weight being the partition that stays."""
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024,
                          checkpointing=checkpointing)
    assert _outside_init(setup, gpus, True) == _outside_init(setup, gpus, False)


# --- ZeRO-1/2 with the optimizer on the host -----------------------------------------------------


def _zero2_offload(code_date: date | None, **plan: object) -> tuple[int, int]:
    arch = architecture_of(find_model("llama-3-8b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024,
                          checkpointing=Checkpointing.FULL, code_date=code_date)
    parallelism = replace(default_parallelism(setup, Scheme.ZERO2, 8, Offload.OPTIMIZER), **plan)
    sharded = estimate_per_gpu(arch, setup, parallelism).sharded
    return sharded.persistent_buffers_bytes, sharded.step_buffers_bytes


def test_zero_offload_passes_gradients_through_a_buffer_of_the_largest_parameter() -> None:
    """DeepSpeed's ZeRO-Offload (stage_1_and_2.py `temp_grad_buffer_for_gpu_offload`, since
    its release in 2020) keeps a 16-bit GPU buffer of the largest parameter: Llama-3-8B's
    embedding, 128,256 x 4,096 values; and from v0.14.1 (#5301) until v0.17.0 (#7309) its step
    brings this rank's fp32 partition to the GPU ("about 3x that of params_FP16")."""
    largest = 128256 * 4096
    partition = 8_030_261_248 // 8
    buffer, step = _zero2_offload(date(2024, 8, 5))
    assert buffer == 2 * largest
    assert step == 4 * partition
    assert _zero2_offload(None) == (2 * largest, 0)  # today's casts through a host buffer
    assert _zero2_offload(date(2024, 1, 1))[1] == 0  # before #5301 the cast was on the host
    # ColossalAI's LowLevelZeroOptimizer keeps its gradients on the GPU instead
    assert _zero2_offload(date(2024, 8, 5), offload_keeps_gradients=True) == (0, 0)


@pytest.mark.parametrize(("checkpointing", "pinned_blocks"),
                         [(Checkpointing.NONE, 4), (Checkpointing.FULL, 0)])
def test_weights_autograd_saved_stay_gathered_until_their_block_s_backward(
        checkpointing: Checkpointing, pinned_blocks: int) -> None:
    """A model built outside `zero.Init` (`per_gpu._PinnedByAutograd`): each block's linears
    save their gathered weight, so every block's gathered parameters, allocated on the gather
    stream, are alive when the loss begins; under full checkpointing the forward saves nothing
    and at most two blocks (one prefetched) are gathered at once."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False,
                          checkpointing=checkpointing)
    unit = 2 * arch.params_per_block  # a block gathered whole, in 16 bits
    sharding = Sharding(weights=2, gradients=2, states=2, gather_bytes=unit,
                        step_group_elements=1_000_000_000, pinned_by_autograd=True)
    program = step_program(arch, setup, step_shape(arch, setup), sharding, steps=1)
    alive: dict[int, int] = {}
    for event in _between(program, "forward", "loss"):
        if event.kind is EventKind.ALLOC and event.stream == GATHER_STREAM:
            alive[event.tensor] = event.n_bytes
        elif event.kind is EventKind.FREE:
            alive.pop(event.tensor, None)
    assert sum(alive.values()) == pinned_blocks * unit
    assert arch.n_layers == 4


# --- The client optimizer on DeepSpeed's flat partitions -----------------------------------------


def _step_temporaries_on(scheme: Scheme, optimizer: Optimizer,
                         impl: OptimizerImpl | None) -> tuple[int, int, int]:
    """Llama-3-8B trained fully on 8 GPUs: this GPU's optimizer states and step temporaries, and
    its partition (ZeRO-1/2) or sub-group (ZeRO-3)."""
    arch = architecture_of(find_model("llama-3-8b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024,
                          checkpointing=Checkpointing.FULL, optimizer=optimizer,
                          optimizer_impl=impl)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, scheme, 8))
    step = next(p for p in estimate.phases if p.phase is Phase.OPTIMIZER_STEP)
    temporaries = sum(p.memory_bytes for p in step.parts if p.kind is PartKind.STEP_TEMPORARIES)
    group = estimate.sharded.step_group_params or -(-arch.params_total // 8)
    return estimate.sharded.optimizer_states_bytes, temporaries, group


@pytest.mark.parametrize("scheme", [Scheme.ZERO2, Scheme.ZERO3])
def test_adafactor_keeps_a_whole_second_moment_of_a_flat_partition(scheme: Scheme) -> None:
    """DeepSpeed hands the client optimizer this rank's fp32 partition as one 1-D tensor
    (stage_1_and_2.py `single_partition_of_fp32_groups`, stage3.py
    `fp32_partitioned_groups_flat`), and transformers' Adafactor factors only a tensor of two
    dimensions or more (`_get_options`): a whole fp32 second moment, 4 bytes a value, where
    the model's matrices would keep a row and a column each; its temporaries are the
    partition's two fp32 updates (fp32 masters: no copies)."""
    states, temporaries, group = _step_temporaries_on(scheme, Optimizer.ADAFACTOR, None)
    assert states == 4 * -(-8_030_261_248 // 8)
    assert temporaries >= 2 * 4 * group


@pytest.mark.parametrize("scheme", [Scheme.ZERO2, Scheme.ZERO3])
def test_a_for_loop_adamw_steps_the_partition_as_one_tensor(scheme: Scheme) -> None:
    """torch's `_single_tensor_adam` on the one flat partition (ZeRO-3: one sub-group per
    `step()`): its square root and quotient are the partition's, not a share of the model's
    largest tensor."""
    _, temporaries, group = _step_temporaries_on(scheme, Optimizer.ADAMW, OptimizerImpl.FOR_LOOP)
    _, foreach, _ = _step_temporaries_on(scheme, Optimizer.ADAMW, OptimizerImpl.FOREACH)
    assert foreach == 4 * group
    assert temporaries == 2 * 4 * group


@pytest.mark.parametrize("step_tensors", [StepTensors.PARTITION, StepTensors.SHARDS])
def test_zero12_program_makes_the_states_of_1d_tensors(step_tensors: StepTensors) -> None:
    """The step's program makes Adafactor's whole fp32 second moment of what the ZeRO optimizer
    hands it (bf16-true here, so no fp32 gradients are made beside it): one for DeepSpeed's
    flat partition; for ColossalAI's 1-D shards, one per tensor of the program (a block's are
    merged, `by_lifetime`), the embedding and the head unfactored too."""
    arch = parse_config(_MID)
    setup = TrainingSetup(precision=Precision.BF16_TRUE, batch=1, seq_len=128,
                          framework=Framework.HF, gradient_accumulation=False,
                          optimizer=Optimizer.ADAFACTOR)
    sharding = Sharding(weights=1, gradients=2, states=2, zero_init_buffer=True,
                        step_tensors=step_tensors)
    program = step_program(arch, setup, step_shape(arch, setup), sharding, steps=1)
    step = _between(program, "optimizer_step", "zero_grad")
    freed = {e.tensor for e in step if e.kind is EventKind.FREE}
    states = [e.n_bytes for e in step if e.kind is EventKind.ALLOC and e.tensor not in freed]
    if step_tensors is StepTensors.PARTITION:
        assert states == [-(-4 * arch.params_total // 2)]
    else:
        assert sorted(states) == sorted(-(-4 * t.elements // 2)
                                        for t in by_lifetime(arch, setup) if t.trainable)


def test_colossalai_steps_a_1d_shard_of_each_parameter() -> None:
    """ColossalAI's `LowLevelZeroOptimizer` gives its optimizer a 1-D fp32 shard of each
    parameter (colossalai/zero/low_level/low_level_optim.py `_create_master_param_current_rank`:
    `param.data.view(-1)` split over the ranks): Adafactor's second moment is whole there too,
    and the step's temporaries are this GPU's share of the single-GPU loop's."""
    arch = architecture_of(find_model("llama-3-8b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024,
                          checkpointing=Checkpointing.FULL, optimizer=Optimizer.ADAFACTOR)
    plan = replace(default_parallelism(setup, Scheme.ZERO2, 8), deepspeed_zero=False)
    estimate = estimate_per_gpu(arch, setup, plan)
    trainable = estimate.single.states.trainable_params
    assert estimate.sharded.optimizer_states_bytes == 4 * -(-trainable // 8)

    def temporaries(phases: tuple[Any, ...]) -> int:
        step = next(p for p in phases if p.phase is Phase.OPTIMIZER_STEP)
        return sum(p.memory_bytes for p in step.parts if p.kind is PartKind.STEP_TEMPORARIES)

    single = temporaries(estimate.single.phases)
    assert temporaries(estimate.phases) == single * estimate.sharded.optimizer_states_bytes \
        // (4 * trainable)
