"""Sharding across GPUs: the ZeRO paper's figure, DeepSpeed's own estimators, and invariants."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.deepspeed_reference import deepspeed_reference_zero2, deepspeed_reference_zero3
from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.fsdp import runs_as_no_shard
from vramplan.distributed.parallelism import Parallelism, PipelineSchedule, ShardedStates, UnitBytes
from vramplan.distributed.per_gpu import PerGpuEstimate, estimate_per_gpu
from vramplan.distributed.sharding import shard_model_states
from vramplan.distributed.stages import pipeline_stages
from vramplan.errors import ConflictingOptions, OutOfRange
from vramplan.parts import Component, PartKind
from vramplan.presets.gpus import find_gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Phase
from vramplan.training.setup import TrainingSetup
from vramplan.training.states import ModelStates, model_states
from vramplan.units import BYTES_PER_GB, BYTES_PER_GIB
from vramplan.vocab import (
    Checkpointing,
    Framework,
    FsdpVersion,
    Method,
    Offload,
    Precision,
    Scheme,
)


def mixed_adam(params: int, largest_layer: int = 0, block: int = 0, root: int = 0,
               frozen: int = 0) -> ModelStates:
    """Adam in mixed precision, 16 bytes per trainable parameter (ZeRO paper, section 3.1):
    2 (16-bit weight) + 2 (16-bit gradient) + 4 (fp32 master) + 8 (fp32 m and v)."""
    return ModelStates(
        trainable_params=params, frozen_params=frozen,
        trainable_weight_bytes=2 * params, frozen_weight_bytes=2 * frozen,
        gradient_bytes=2 * params, master_weight_bytes=4 * params,
        optimizer_state_bytes=8 * params, weight_itemsize=2, gradient_itemsize=2,
        largest_layer_params=largest_layer, block_params=block, root_params=root,
    )


def shard(states: ModelStates, scheme: Scheme, gpus: int, **kwargs: object) -> ShardedStates:
    return shard_model_states(states, Parallelism(scheme=scheme, gpus=gpus, **kwargs))  # type: ignore[arg-type]


# --- Rajbhandari et al. 2020 (arXiv:1910.02054), Figure 1 ----------------------------------------
# "7.5B parameters, 64 GPUs (N_d = 64), K = 12": baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB,
# P_os+g+p 1.9 GB of model states per device.
@pytest.mark.parametrize(("scheme", "published_gb"), [
    (Scheme.DDP, 120.0), (Scheme.ZERO1, 31.4), (Scheme.ZERO2, 16.6), (Scheme.ZERO3, 1.9),
], ids=["baseline", "P_os", "P_os+g", "P_os+g+p"])
def test_zero_paper_figure_1(scheme: Scheme, published_gb: float) -> None:
    states = mixed_adam(7_500_000_000)
    result = shard(states, scheme, 64)
    assert round(result.model_states_bytes / BYTES_PER_GB, 1) == published_gb


# --- DeepSpeed's estimators: the outputs printed in DeepSpeed's documentation -------------------
# deepspeed docs/code-docs/source/memory.rst, "Memory Requirements": t5-3b, 1 node x 8 GPUs,
# the cold estimators called with total_params=2851e6 (and largest_layer_params=32e6). DeepSpeed
# prints bytes / 2**30 with the label "GB".
T5_3B_PARAMS = 2_851_000_000
T5_3B_LARGEST_LAYER = 32_000_000


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / BYTES_PER_GIB:.2f}"


@pytest.mark.parametrize(("cpu_offload", "cpu_gib", "gpu_gib"), [
    (True, "127.45", "5.31"), (False, "127.45", "15.93"),
])
def test_deepspeed_reference_zero2_matches_docs(cpu_offload: bool, cpu_gib: str,
                                                gpu_gib: str) -> None:
    ref = deepspeed_reference_zero2(T5_3B_PARAMS, gpus_per_node=8, nodes=1,
                                    cpu_offload=cpu_offload)
    assert (_gib(ref.cpu_bytes), _gib(ref.gpu_bytes)) == (cpu_gib, gpu_gib)


@pytest.mark.parametrize(("offload", "offload_params", "zero_init", "cpu_gib", "gpu_gib"), [
    (True, True, True, "71.69", "0.12"),
    (True, True, False, "127.45", "0.12"),
    (True, False, True, "63.72", "0.78"),
    (True, False, False, "127.45", "0.78"),
    (False, False, True, "1.43", "6.09"),
    (False, False, False, "127.45", "6.09"),
])
def test_deepspeed_reference_zero3_matches_docs(offload: bool, offload_params: bool,
                                                zero_init: bool, cpu_gib: str,
                                                gpu_gib: str) -> None:
    ref = deepspeed_reference_zero3(T5_3B_PARAMS, T5_3B_LARGEST_LAYER, gpus_per_node=8,
                                    cpu_offload=offload, cpu_offload_params=offload_params,
                                    zero_init=zero_init)
    assert (_gib(ref.cpu_bytes), _gib(ref.gpu_bytes)) == (cpu_gib, gpu_gib)


def test_ours_vs_deepspeed_zero2_differ_by_the_gradient_partition() -> None:
    """DeepSpeed's ZeRO-2 estimator counts the full 16-bit gradients on every GPU (4P + 16P/N);
    ZeRO-2 partitions them (paper, section 5.2). Ours with the step's fp32 gradient copy is
    2P + 2P/N + 12P/N + 4P/N: the two differ by exactly 2P(1 - 1/N)."""
    p, n = T5_3B_PARAMS, 8
    ours = shard(mixed_adam(p), Scheme.ZERO2, n)
    theirs = deepspeed_reference_zero2(p, gpus_per_node=n, cpu_offload=False)
    ours_bytes = ours.model_states_bytes + ours.step_buffers_bytes
    assert theirs.gpu_bytes - ours_bytes == 2 * p - 2 * p // n


def test_ours_vs_deepspeed_zero3_offload_host_memory() -> None:
    """Parameters and optimizer offloaded: our host memory per node is DeepSpeed's 18 bytes/param
    without its 1.5 safety factor (memory.rst: 16 fp32 bytes + 2 for the fp16 params)."""
    p, n = T5_3B_PARAMS, 8
    ours = shard(mixed_adam(p, largest_layer=T5_3B_LARGEST_LAYER), Scheme.ZERO3, n,
                 offload=Offload.PARAMS_OPTIMIZER)
    theirs = deepspeed_reference_zero3(p, T5_3B_LARGEST_LAYER, gpus_per_node=n)
    assert ours.host_bytes_per_node == pytest.approx(theirs.cpu_bytes / 1.5, rel=1e-6)
    assert ours.model_states_bytes == 0
    assert ours.pinned_host_bytes_per_node == 6 * p  # memory.rst "Pinned Memory": 6 bytes/param


# --- Hand-computed cases --------------------------------------------------------------------


def test_ddp_reducer_keeps_a_copy_of_the_gradients() -> None:
    states = mixed_adam(1_000_000)
    assert shard(states, Scheme.DDP, 4).persistent_buffers_bytes == states.gradient_bytes
    as_view = shard(states, Scheme.DDP, 4, buffers=dataclasses.replace(
        Parallelism().buffers, ddp_gradient_as_bucket_view=True))
    assert as_view.persistent_buffers_bytes == 0


# --- Megatron-LM: its gradient buffer and distributed optimizer --------------------------------
# NVIDIA/Megatron-LM docs/user-guide/features/dist_optimizer.md (@d98e8a64): "`bf16` parameters,
# `fp32` gradients: Non-distributed optim 18, Distributed optim 6 + 12/d" bytes per parameter.
def _megatron_states(framework: Framework = Framework.MEGATRON
                     ) -> tuple[ModelStates, TrainingSetup]:
    setup = TrainingSetup(precision=Precision.MIXED, framework=framework, batch=1, seq_len=512)
    return model_states(architecture_of(find_model("tinyllama-1.1b")), setup), setup


@pytest.mark.parametrize(("scheme", "gpus", "bytes_per_param"), [
    (Scheme.DDP, 8, 18), (Scheme.ZERO1, 8, 6 + 12 / 8), (Scheme.ZERO1, 64, 6 + 12 / 64),
])
def test_megatron_bytes_per_parameter_match_its_docs(scheme: Scheme, gpus: int,
                                                     bytes_per_param: float) -> None:
    states, setup = _megatron_states()
    sharded = shard_model_states(states, default_parallelism(setup, scheme, gpus))
    assert sharded.model_states_bytes + sharded.persistent_buffers_bytes \
        == pytest.approx(bytes_per_param * states.params, rel=1e-6)
    assert sharded.gradients_from_start  # the buffer is made when the model is wrapped


def test_megatron_reduces_in_its_gradient_buffer_where_torch_ddp_copies() -> None:
    """torch DDP's reducer keeps a 16-bit copy of every gradient; Megatron's buckets are views
    of its fp32 buffer, and its distributed optimizer makes no fp32 copy of a partition in the
    step (DeepSpeed's ZeRO-1 does)."""
    states, setup = _megatron_states()
    hf_states, hf_setup = _megatron_states(Framework.HF)
    assert states.gradient_bytes == 2 * hf_states.gradient_bytes  # fp32 against bf16
    ddp = shard_model_states(hf_states, default_parallelism(hf_setup, Scheme.DDP, 8))
    assert ddp.persistent_buffers_bytes == hf_states.gradient_bytes
    zero1 = shard_model_states(hf_states, default_parallelism(hf_setup, Scheme.ZERO1, 8))
    megatron = shard_model_states(states, default_parallelism(setup, Scheme.ZERO1, 8))
    assert zero1.step_buffers_bytes > 0
    assert (megatron.persistent_buffers_bytes, megatron.backward_buffers_bytes,
            megatron.step_buffers_bytes) == (0, 0, 0)


def test_megatron_holds_its_gradient_buffer_in_every_phase() -> None:
    """Even the run's first micro-batch, before any gradient is made, holds the fp32 buffer."""
    arch = architecture_of(find_model("tinyllama-1.1b"))
    _, setup = _megatron_states()
    for first in (True, False):
        run = dataclasses.replace(setup, steady_state=not first, gradient_accumulation=False)
        for gpus, scheme in ((1, Scheme.NONE), (8, Scheme.DDP), (8, Scheme.ZERO1)):
            estimate = estimate_per_gpu(arch, run, default_parallelism(run, scheme, gpus))
            grads = {phase.phase: sum(p.memory_bytes for p in phase.parts
                                      if p.kind is PartKind.GRADIENTS)
                     for phase in estimate.phases}
            assert set(grads.values()) == {4 * estimate.single.states.trainable_params}, (
                first, scheme)


def test_zero3_gathers_largest_layer_and_prefetch_bucket() -> None:
    states = mixed_adam(7_000_000_000, largest_layer=131_000_000)
    result = shard(states, Scheme.ZERO3, 8)
    assert result.forward_buffers_bytes == 2 * (131_000_000 + 50_000_000)
    assert result.persistent_buffers_bytes == 2 * 500_000_000  # allocated at start-up
    assert result.step_buffers_bytes == 4 * 7_000_000_000 // 8


@pytest.mark.parametrize("scheme", [Scheme.ZERO1, Scheme.ZERO2])
def test_zero12_makes_its_bucket_when_backward_starts(scheme: Scheme) -> None:
    """stage_1_and_2.py `backward` (deepspeedai/DeepSpeed v0.14.2): the bucket (5e8 16-bit
    elements) is made before the loss's backward runs and freed by the epilogue; ZeRO-3 keeps
    its own from start-up; ColossalAI's optimizer flattens its gradients only to reduce them."""
    states = mixed_adam(7_000_000_000, largest_layer=131_000_000)
    assert shard(states, scheme, 8).backward_bucket_bytes == 2 * 500_000_000
    assert shard(states, Scheme.ZERO3, 8).backward_bucket_bytes == 0
    colossal = shard_model_states(states, Parallelism(scheme=scheme, gpus=8,
                                                      deepspeed_zero=False))
    assert colossal.backward_bucket_bytes == 0


def test_the_zero2_bucket_is_held_at_the_loss_backward_not_its_forward() -> None:
    """The setup of Giles Thomas' Qwen1.5-0.5B under ZeRO-2 with the optimizer offloaded, one
    GPU, 2,048 tokens, batch 1 (gpjt/fine-tune-2024-04 batch-size-memory-modeling-0.5B/
    results-with-optimizer-offload.csv, scored in the project's case file): the peak is the
    loss's backward with the bucket beside the logits, 1e9 bytes above the loss's forward."""
    arch = architecture_of(find_model("qwen1.5-0.5b"))
    run = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=2048,
                        checkpointing=Checkpointing.FULL, gradient_accumulation=False,
                        framework=Framework.HF)
    estimate = estimate_per_gpu(arch, run, default_parallelism(run, Scheme.ZERO2, 1,
                                                               Offload.OPTIMIZER))
    buffers = {phase.phase: sum(p.memory_bytes for p in phase.parts
                                if p.kind is PartKind.SHARDING_BUFFERS)
               for phase in estimate.phases}
    assert buffers[Phase.BACKWARD_START] - buffers[Phase.LOSS_FORWARD] == 2 * 500_000_000
    assert estimate.peak.phase is Phase.BACKWARD_START


def _untied(params: int, embedding: int) -> ModelStates:
    return dataclasses.replace(mixed_adam(params, largest_layer=embedding),
                               head_params=embedding, embedding_params=embedding)


def test_offloaded_zero2_checks_the_head_and_the_embeddings_gradients_whole() -> None:
    """stage_1_and_2.py `copy_grads_in_partition` (v0.14.2, edaa7221): each gradient of this
    rank's partition is checked for overflow whole, on the device (`_has_inf_or_nan`: 11 bytes
    per value at once); Llama-3-8B's embeddings and head (525,336,576 values each) are larger
    than the 5e8 bucket, so their 16-bit gradients are alive beside the check."""
    values = 525_336_576
    result = shard(_untied(8_030_261_248, values), Scheme.ZERO2, 8, offload=Offload.OPTIMIZER)
    assert result.head_check_bytes == result.embedding_check_bytes == 13 * values
    small = shard(_untied(1_000_000_000, 100_000_000), Scheme.ZERO2, 8,
                  offload=Offload.OPTIMIZER)
    assert small.embedding_check_bytes == 11 * 100_000_000  # copied into the bucket


def test_only_an_offloaded_deepspeed_zero2_full_run_checks_on_the_device() -> None:
    """A tied head is the embeddings (checked once, last); without offload the partition's
    gradients take another path; a LoRA run's adapters are small; ColossalAI does not check
    this way; before DeepSpeed v0.13.3 (#5115) the check was `x.float().sum()`, the fp32 copy
    alone."""
    tied = dataclasses.replace(mixed_adam(1_000_000_000, largest_layer=100_000_000),
                               head_params=100_000_000)
    checked = shard(tied, Scheme.ZERO2, 8, offload=Offload.OPTIMIZER)
    assert (checked.head_check_bytes, checked.embedding_check_bytes) == (0, 11 * 100_000_000)
    assert shard(tied, Scheme.ZERO2, 8).embedding_check_bytes == 0
    assert shard(tied, Scheme.ZERO3, 8, offload=Offload.OPTIMIZER).embedding_check_bytes == 0
    lora = dataclasses.replace(tied, frozen_params=6_000_000_000)
    assert shard(lora, Scheme.ZERO2, 8, offload=Offload.OPTIMIZER).embedding_check_bytes == 0
    assert shard(tied, Scheme.ZERO2, 8, offload=Offload.OPTIMIZER,
                 deepspeed_zero=False).embedding_check_bytes == 0
    assert shard(tied, Scheme.ZERO2, 8, offload=Offload.OPTIMIZER,
                 overflow_check_on_device=False).embedding_check_bytes == 4 * 100_000_000


def test_the_overflow_check_follows_the_deepspeed_of_the_runs_date() -> None:
    run = TrainingSetup(precision=Precision.MIXED, framework=Framework.HF)
    before = default_parallelism(run, Scheme.ZERO2, 8, Offload.OPTIMIZER, on=date(2024, 2, 1))
    after = default_parallelism(run, Scheme.ZERO2, 8, Offload.OPTIMIZER, on=date(2024, 2, 15))
    assert (before.overflow_check_on_device, after.overflow_check_on_device) == (False, True)
    assert default_parallelism(run, Scheme.ZERO2, 8).overflow_check_on_device


def test_fsdp1_lora_allocates_gradients_for_frozen_parameters_too() -> None:
    """FSDP1 flat parameters mixing frozen and trainable get a gradient for every element;
    FSDP2 does not (PyTorch FSDP docs and FSDP2 tutorial)."""
    lora = ModelStates(
        trainable_params=4_000_000, frozen_params=6_700_000_000,
        trainable_weight_bytes=8_000_000, frozen_weight_bytes=13_400_000_000,
        gradient_bytes=8_000_000, master_weight_bytes=0, optimizer_state_bytes=32_000_000,
        weight_itemsize=2, gradient_itemsize=2, largest_layer_params=131_000_000,
        block_params=202_000_000, root_params=262_000_000,
    )
    fsdp1 = shard(lora, Scheme.FSDP, 2, fsdp_version=FsdpVersion.FSDP1)
    fsdp2 = shard(lora, Scheme.FSDP, 2, fsdp_version=FsdpVersion.FSDP2)
    assert fsdp1.gradients_bytes == 2 * lora.params // 2
    assert fsdp2.gradients_bytes == lora.gradient_bytes // 2
    no_sync = shard(lora, Scheme.FSDP, 2, fsdp_version=FsdpVersion.FSDP1,
                    accumulate_without_sync=True)
    assert no_sync.gradients_bytes == 2 * lora.params  # full, unsharded: FSDP no_sync docs


@pytest.mark.parametrize("scheme", [Scheme.FSDP, Scheme.FSDP_GRAD_OP])
def test_fsdp1_on_one_gpu_gathers_nothing_as_no_shard(scheme: Scheme) -> None:
    """PyTorch switches FSDP1 to NO_SHARD when the world size is 1 (torch/distributed/fsdp/
    _init_utils.py `_init_core_state`): nothing is gathered, FULL_SHARD and SHARD_GRAD_OP alike,
    and full fine-tuning's per-GPU peak is the unsharded run's (LoRA's is not: a flat parameter
    mixing frozen and trainable weights still gets a gradient for every element); FSDP2, which
    has no such switch, still gathers its units into new tensors."""
    states = mixed_adam(7_000_000_000, 131_000_000, 202_000_000, 262_000_000)
    one = shard(states, scheme, 1, fsdp_version=FsdpVersion.FSDP1)
    assert one.forward_buffers_bytes == one.backward_buffers_bytes == 0
    assert one.gathered_unit_bytes == one.gathered_root_bytes == 0
    assert shard(states, scheme, 2, fsdp_version=FsdpVersion.FSDP1).forward_buffers_bytes > 0
    assert shard(states, scheme, 1, fsdp_version=FsdpVersion.FSDP2).forward_buffers_bytes > 0
    setup = TrainingSetup(method=Method.FULL, framework=Framework.HF, batch=2, seq_len=2048,
                          checkpointing=Checkpointing.FULL)
    llama = architecture_of(find_model("llama-2-7b"))
    unsharded = estimate_per_gpu(llama, setup, Parallelism(scheme=Scheme.NONE, gpus=1))
    fsdp1 = estimate_per_gpu(llama, setup, Parallelism(scheme=scheme, gpus=1,
                                                        fsdp_version=FsdpVersion.FSDP1))
    assert fsdp1.allocated_bytes == unsharded.allocated_bytes


@pytest.mark.parametrize(("version", "kept_itemsize"), [
    # FSDP1's post-backward hook returns before any cast when not syncing: the unsharded
    # gradient stays in the gathered copies' dtype (_runtime_utils.py `_post_backward_hook`)
    (FsdpVersion.FSDP1, 2),
    # FSDP2 moves them to its reduce dtype (_fsdp_param.py `to_accumulated_grad_if_needed`),
    # fp32 as torchtitan reduces: the dtype counted
    (FsdpVersion.FSDP2, 4),
])
def test_fsdp_no_sync_gradients_of_fp32_parameters_gathered_in_16_bits(
        version: FsdpVersion, kept_itemsize: int) -> None:
    params = 1_000_000
    amp = ModelStates(
        trainable_params=params, frozen_params=0, trainable_weight_bytes=4 * params,
        frozen_weight_bytes=0, gradient_bytes=4 * params, master_weight_bytes=0,
        optimizer_state_bytes=8 * params, weight_itemsize=4, gradient_itemsize=4,
        largest_layer_params=100_000, block_params=100_000, root_params=200_000,
    )
    no_sync = shard(amp, Scheme.FSDP, 4, fsdp_version=version, accumulate_without_sync=True,
                    params_cast_for_compute=True)
    assert no_sync.gradients_bytes == kept_itemsize * params
    synced = shard(amp, Scheme.FSDP, 4, fsdp_version=version, params_cast_for_compute=True)
    assert synced.gradients_bytes == 4 * params // 4  # reduced shards cast back to fp32


def test_fsdp1_unit_without_trainable_parameter_gets_no_gradient() -> None:
    """A flat parameter requires a gradient when any of its parameters does
    (torch/distributed/fsdp/_flat_param.py `_validate_tensors_to_flatten`): LoRA on the blocks
    leaves the root unit (embeddings, head) without one."""
    blocks, root = 6_476_000_000, 262_000_000
    lora = ModelStates(
        trainable_params=4_000_000, frozen_params=blocks + root,
        trainable_weight_bytes=8_000_000, frozen_weight_bytes=2 * (blocks + root),
        gradient_bytes=8_000_000, master_weight_bytes=0, optimizer_state_bytes=32_000_000,
        weight_itemsize=2, gradient_itemsize=2, largest_layer_params=131_000_000,
        block_params=202_000_000, root_params=root,
        flat_gradient_params=blocks + 4_000_000,
    )
    no_sync = shard(lora, Scheme.FSDP, 2, fsdp_version=FsdpVersion.FSDP1,
                    accumulate_without_sync=True)
    assert no_sync.gradients_bytes == 2 * (blocks + 4_000_000)
    assert no_sync.unit_gradient_bytes == 2 * 202_000_000


def test_fsdp_root_unit_stays_gathered() -> None:
    """A gathered unit is a new full-size tensor beside the kept shard (FSDP1
    `_alloc_padded_unsharded_flat_param`)."""
    states = mixed_adam(1_000_000, block=100_000, root=200_000)
    result = shard(states, Scheme.FSDP, 4)
    assert result.weights_bytes == 2 * 1_000_000 // 4
    assert result.forward_buffers_bytes == 2 * 200_000 + 2 * (2 * 100_000)
    # the first block runs backward with no unit left to prefetch; the second with the first
    # prefetched but its own gradient shard not made yet, both beside the reduce-scatter input
    # FSDP2 keeps from the block before (2 x 100,000 bytes)
    frozen_root = shard(dataclasses.replace(states, root_trains=False), Scheme.FSDP, 4)
    held, shard_bytes = 2 * 100_000, 2 * 100_000 // 4
    first = frozen_root.backward_buffers_bytes - 2 * 100_000 + held
    second = frozen_root.backward_buffers_bytes + held - shard_bytes
    assert frozen_root.last_unit_backward_buffers_bytes == max(first, second) == second
    fsdp1 = shard(dataclasses.replace(states, root_trains=False), Scheme.FSDP, 4,
                  fsdp_version=FsdpVersion.FSDP1)
    assert fsdp1.last_unit_backward_buffers_bytes \
        == fsdp1.backward_buffers_bytes - shard_bytes


def test_fsdp_root_gradient_forms_last() -> None:
    """The head's gradient comes first and waits for the embedding's, computed last; the root's
    per-parameter gradients and their flat copy then exist together."""
    states = dataclasses.replace(mixed_adam(1_000_000, block=100_000, root=400_000),
                                 head_params=200_000)
    result = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP1)
    assert result.root_gradient_bytes == 2 * 400_000
    # the head's gradient waits beside the gathered units from the start of backward
    assert result.backward_buffers_bytes == result.forward_buffers_bytes + 2 * 200_000
    # the root still gathered beside its two root-sized gradients (FSDP1's flat `cat`)
    assert result.root_end_buffers_bytes == 2 * 400_000 + 2 * (2 * 400_000)
    # the first block's moment, counted apart: its backward's temporaries are alive there, not
    # at the root's end (vramplan.distributed.per_gpu `_root_end`)
    assert result.last_unit_backward_buffers_bytes < result.root_end_buffers_bytes
    # FSDP2 reshards the root before it copies the gradients into its reduce-scatter input (two
    # root-sized gradients); before, as the embedding's backward ends, the root is gathered beside
    # its gradients and the first block's reduce-scatter input (rank 0's trace of
    # Llama-3.1-8B on 8 GPUs: 11,832.9 MiB there, 11,831.8 counted)
    fsdp2 = shard(states, Scheme.FSDP, 4)
    assert fsdp2.root_end_buffers_bytes == 2 * 400_000 + 2 * 400_000 + 2 * 100_000
    assert fsdp2.root_end_buffers_bytes > 2 * (2 * 400_000)


def test_fsdp_tied_embedding_sums_its_gradients_beside_the_gathered_root() -> None:
    """A trained tied embedding: the head's gradient (a transposed view), the embedding's and
    their sum live beside the gathered root before FSDP forms the root's gradient (rank 0's
    trace of Llama-3.2-1B on 2 and 8 GPUs, tests/test_trace_agreement_real.py)."""
    states = dataclasses.replace(mixed_adam(1_000_000, block=100_000, root=400_000),
                                 head_params=400_000, tied_gradient_copies=3)
    fsdp1 = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP1)
    assert fsdp1.root_end_buffers_bytes == 2 * 400_000 + 3 * (2 * 400_000)
    fsdp2 = shard(states, Scheme.FSDP, 4)
    assert fsdp2.root_end_buffers_bytes == 2 * 400_000 + 3 * (2 * 400_000) + 2 * 100_000


def test_fsdp_unit_reduce_holds_two_unsharded_gradients() -> None:
    """When a block's backward has run: its per-parameter gradients and their flat
    concatenation (autograd's `split_with_sizes_backward`) before the reduce-scatter, the block
    still gathered under FSDP1 (its post-backward hook reshards after the gradient exists), the
    previous block prefetched; FSDP2 reshards first and copies the gradients into its
    reduce-scatter input (`post_backward`: `reshard()` then `foreach_reduce`)."""
    states = mixed_adam(1_000_000, block=100_000, root=200_000)
    unit = 2 * 100_000
    fsdp1 = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP1)
    assert fsdp1.unit_gradient_bytes == unit
    root, early_head = 2 * 200_000, fsdp1.backward_buffers_bytes - fsdp1.forward_buffers_bytes
    assert fsdp1.reduce_buffers_bytes == root + 2 * unit + 2 * unit + early_head
    fsdp2 = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP2)
    assert fsdp2.reduce_buffers_bytes == root + unit + 2 * unit + early_head
    # at the loss every block has been resharded after its forward: the root stays gathered
    assert fsdp1.loss_buffers_bytes == fsdp2.loss_buffers_bytes == root


def test_fsdp1_with_adapter_units_prefetches_the_block_before_only_at_the_reduce() -> None:
    """FSDP1 prefetches the unit whose forward ended just before the current one; a block's own
    adapters, units of their own under peft's policy, end their forward inside it, so the block
    before is gathered only from the hook of the block's first adapter, when its backward has
    run (`prefetches_late`): one block gathered during a block's backward, two at its reduce."""
    states = dataclasses.replace(mixed_adam(100_000, block=100_000, root=200_000,
                                            frozen=900_000), root_trains=False)
    unit, root = 2 * 100_000, 2 * 200_000
    late = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP1,
                 adapters_wrapped_apart=True)
    assert late.backward_buffers_bytes == root + unit
    assert late.last_unit_backward_buffers_bytes == root + unit
    assert late.reduce_buffers_bytes == root + unit + unit + 2 * late.unit_gradient_bytes
    early = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP1)
    assert early.backward_buffers_bytes == root + 2 * unit


def test_fsdp_mixed_precision_gathers_fp32_parameters_as_16_bit_copies() -> None:
    """accelerate's FSDP `MixedPrecision(param_dtype=bf16)` all-gathers a 16-bit copy of each
    fp32 shard: the shards stay 4 bytes per parameter, what is gathered is 2."""
    fp32 = dataclasses.replace(mixed_adam(1_000_000, block=100_000, root=200_000),
                               trainable_weight_bytes=4_000_000, weight_itemsize=4)
    stored = shard(fp32, Scheme.FSDP, 4)
    cast = shard(fp32, Scheme.FSDP, 4, params_cast_for_compute=True)
    assert cast.weights_bytes == stored.weights_bytes == 4 * 1_000_000 // 4
    assert stored.forward_buffers_bytes == 4 * 200_000 + 2 * (4 * 100_000)
    assert cast.forward_buffers_bytes == 2 * 200_000 + 2 * (2 * 100_000)
    assert (cast.gathered_unit_bytes, cast.gathered_root_bytes) == (2 * 100_000, 2 * 200_000)


@pytest.mark.parametrize(("framework", "casts"), [(Framework.HF, True),
                                                  (Framework.LITGPT, False)])
def test_amp_under_fsdp_computes_as_its_framework_casts(framework: Framework,
                                                        casts: bool) -> None:
    """An `amp` LoRA run (fp32 weights) under FSDP: accelerate's mixed-precision policy makes
    the blocks compute on 16-bit weights, so the residual stream and what checkpointing keeps
    are 16-bit and autocast casts no weight; Lightning Fabric's `bf16-mixed` keeps fp32
    parameters for autocast. The checkpointed blocks' inputs: 2 or 4 bytes per value."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(method=Method.LORA, precision=Precision.AMP, batch=2, seq_len=1024,
                          checkpointing=Checkpointing.FULL, framework=framework)
    plan = default_parallelism(setup, Scheme.FSDP, 4)
    assert plan.params_cast_for_compute is casts
    estimate = estimate_per_gpu(arch, setup, plan)
    single = estimate_training(arch, setup)
    itemsize = 2 if casts else 4
    kept = itemsize * arch.hidden_size * setup.batch * setup.seq_len * arch.n_layers
    assert estimate.single.activations_bytes - kept == single.activations_bytes - 4 * (
        arch.hidden_size * setup.batch * setup.seq_len * arch.n_layers)
    at_loss = next(phase for phase in estimate.phases if phase.phase is Phase.LOSS_FORWARD)
    copies = sum(part.memory_bytes for part in at_loss.parts
                 if part.kind is PartKind.AUTOCAST_COPIES)
    assert (copies == 0) is casts  # the head's cast, kept for its backward


@pytest.mark.parametrize("offload", [Offload.NONE, Offload.PARAMS_OPTIMIZER])
def test_sharded_qlora_keeps_bitsandbytes_statistics_whole_on_every_gpu(offload: Offload) -> None:
    """bitsandbytes' absmax and nested constants are attributes of a 4-bit weight, not
    parameters: FSDP flattens and shards (and offloads) the packed weights only. Llama-2-70B in
    NF4 with double quantization: one uint8 absmax per 64 values and an fp32 constant per 256 of
    them, about 1.08 GB, on each of 2 GPUs whatever the offload."""
    from vramplan.vocab import Quant

    arch = architecture_of(find_model("llama-2-70b"))
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4_DQ, lora_rank=8, batch=1,
                          seq_len=512, checkpointing=Checkpointing.FULL, framework=Framework.HF)
    plan = default_parallelism(setup, Scheme.FSDP, 2, offload)
    estimate = estimate_per_gpu(arch, setup, plan)
    linears = sum(lin.in_features * lin.out_features * lin.count * layers
                  for lin, layers in arch.model_linears())
    stats = linears // 64 + 4 * (linears // 64 // 256)
    weights = next(p.memory_bytes for p in estimate.peak.parts
                   if p.kind is PartKind.WEIGHTS_PER_GPU)
    if offload is Offload.PARAMS_OPTIMIZER:
        assert weights == pytest.approx(stats, rel=0.01)
    else:  # half of what is stored, and the other half of the statistics
        stored = estimate.single.states.weight_bytes
        assert weights == pytest.approx(stored / 2 + stats / 2, rel=0.005)


def test_torchtunes_nf4_base_is_sharded_whole_by_fsdp2() -> None:
    """torchao's NF4Tensor (torchtune's QLoRA base) holds its scalers as inner tensors that
    FSDP2 splits and gathers with the 4-bit codes (torchao/dtypes/nf4tensor.py @e1aee635
    `_INNER_TENSOR_NAMES_FOR_SHARDING`): each of 8 GPUs holds an eighth of everything stored."""
    from vramplan.vocab import Quant

    arch = architecture_of(find_model("llama-2-70b"))
    setup = TrainingSetup(method=Method.QLORA, quant=Quant.NF4, lora_rank=8, batch=1,
                          seq_len=512, checkpointing=Checkpointing.FULL,
                          framework=Framework.TORCHTUNE)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.FSDP, 8))
    weights = next(p.memory_bytes for p in estimate.peak.parts
                   if p.kind is PartKind.WEIGHTS_PER_GPU)
    assert weights == pytest.approx(estimate.single.states.weight_bytes / 8, rel=0.001)


def test_fsdp_units_in_bytes_as_stored() -> None:
    """A quantized base keeps its embeddings (and transformers its head) in 16 bits: the root
    gathered is its own bytes, not the model's average bytes per parameter."""
    states = mixed_adam(1_000_000, block=100_000, root=200_000)
    exact = shard_model_states(states, Parallelism(scheme=Scheme.FSDP, gpus=4),
                               UnitBytes(block=50_000, root=400_000))
    assert exact.loss_buffers_bytes == 400_000
    assert exact.forward_buffers_bytes == 400_000 + 2 * 50_000
    assert (exact.gathered_unit_bytes, exact.gathered_root_bytes) == (50_000, 400_000)


def test_fsdp1_offload_keeps_gradient_shards_on_the_gpu_until_backward_ends() -> None:
    """FSDP1 copies each reduced gradient shard to the host and keeps the GPU one as
    `_saved_grad_shard` until the end of backward; FSDP2 drops it once copied."""
    states = mixed_adam(1_000_000, block=100_000, root=200_000)
    fsdp1 = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP1,
                  offload=Offload.PARAMS_OPTIMIZER)
    assert fsdp1.gradients_bytes == 2 * 1_000_000 // 4
    assert fsdp1.gradients_at_step_bytes == 0 and fsdp1.weights_bytes == 0
    fsdp2 = shard(states, Scheme.FSDP, 4, fsdp_version=FsdpVersion.FSDP2,
                  offload=Offload.PARAMS_OPTIMIZER)
    assert fsdp2.gradients_bytes == 0


def test_shard_grad_op_holds_all_weights_through_backward() -> None:
    states = mixed_adam(1_000_000, block=100_000, root=200_000)
    result = shard(states, Scheme.FSDP_GRAD_OP, 4)
    assert result.forward_buffers_bytes == states.weight_bytes


def test_hsdp_shards_within_the_node_only() -> None:
    states = mixed_adam(8_000_000)
    hsdp = shard(states, Scheme.HSDP, 32, gpus_per_node=8)
    fsdp8 = shard(states, Scheme.FSDP, 8)
    assert hsdp.shard_degree == 8
    assert hsdp.model_states_bytes == fsdp8.model_states_bytes


def test_zero_offload_moves_fp32_states_to_the_host() -> None:
    p = 1_000_000_000
    result = shard(mixed_adam(p), Scheme.ZERO2, 8, offload=Offload.OPTIMIZER)
    assert result.model_states_bytes == 2 * p  # DeepSpeed memory.rst: "2 * params"
    assert result.host_bytes_per_rank == 16 * p // 8
    assert result.host_bytes_per_node == 16 * p


@pytest.mark.parametrize(("plan", "field"), [
    (Parallelism(scheme=Scheme.NONE, gpus=2), "sharding"),
    (Parallelism(scheme=Scheme.DDP, gpus=2, offload=Offload.PARAMS_OPTIMIZER), "offload"),
    (Parallelism(scheme=Scheme.FSDP, gpus=2, offload=Offload.OPTIMIZER), "offload"),
    (Parallelism(scheme=Scheme.HSDP, gpus=12, gpus_per_node=8), "gpus"),
])
def test_conflicting_plans_are_refused(plan: Parallelism, field: str) -> None:
    with pytest.raises(ConflictingOptions) as error:
        shard_model_states(mixed_adam(1000), plan)
    assert error.value.field == field


def test_zero_gpus_is_out_of_range() -> None:
    with pytest.raises(OutOfRange):
        shard_model_states(mixed_adam(1000), Parallelism(scheme=Scheme.DDP, gpus=0))


# --- Invariants -------------------------------------------------------------------------------

_STATES = st.builds(
    mixed_adam,
    params=st.integers(1_000, 10**11),
    largest_layer=st.integers(0, 10**9),
    block=st.integers(0, 10**9),
    root=st.integers(0, 10**9),
    frozen=st.integers(0, 10**11),
)
_SHARDING = st.sampled_from([Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3, Scheme.FSDP,
                             Scheme.FSDP_GRAD_OP])


@given(_STATES, _SHARDING, st.lists(st.integers(1, 4096), min_size=2, max_size=2),
       st.sampled_from(list(FsdpVersion)), st.booleans())
def test_more_gpus_never_need_more_per_gpu(states: ModelStates, scheme: Scheme, gpus: list[int],
                                           version: FsdpVersion, no_sync: bool) -> None:
    few, many = sorted(gpus)
    kwargs = {"fsdp_version": version, "accumulate_without_sync": no_sync}
    small = shard(states, scheme, many, **kwargs)
    large = shard(states, scheme, few, **kwargs)
    assert small.model_states_bytes <= large.model_states_bytes
    if runs_as_no_shard(Parallelism(scheme=scheme, gpus=few, fsdp_version=version), few):
        # FSDP1 runs one GPU as NO_SHARD, gathering nothing (`runs_as_no_shard`): two GPUs
        # hold half the states and a gathered unit, more where one unit is most of the model
        # (hypothesis found 16,002 bytes against 16,000)
        return
    assert small.peak_bytes <= large.peak_bytes


@given(_STATES, st.integers(1, 4096))
def test_higher_zero_stage_never_holds_more_model_states(states: ModelStates, gpus: int) -> None:
    ordered = [shard(states, scheme, gpus).model_states_bytes
               for scheme in (Scheme.ZERO3, Scheme.ZERO2, Scheme.ZERO1, Scheme.DDP)]
    assert ordered == sorted(ordered)


@given(_STATES, st.sampled_from([Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3]),
       st.integers(1, 512))
def test_offload_never_adds_gpu_model_states(states: ModelStates, scheme: Scheme,
                                             gpus: int) -> None:
    kept = shard(states, scheme, gpus)
    offloaded = shard(states, scheme, gpus, offload=Offload.OPTIMIZER)
    assert offloaded.model_states_bytes <= kept.model_states_bytes
    assert offloaded.host_bytes_per_rank > 0


# --- A training setup on N GPUs (vramplan.distributed.per_gpu) ------------------------------



def _litgpt_lora(batch: int = 1, seq_len: int = 1304) -> TrainingSetup:
    """litgpt finetune/lora.py defaults as in tutorials/resource-tables.md: bf16-true, AdamW,
    r=8 on q and v, Block activation checkpointing under FSDP, gradient accumulation."""
    from vramplan.vocab import LoraTarget

    return TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, lora_rank=8,
                         lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}), batch=batch,
                         seq_len=seq_len, checkpointing=Checkpointing.FULL,
                         framework=Framework.LITGPT)


def test_one_gpu_without_sharding_is_the_single_gpu_estimate() -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    setup = TrainingSetup(batch=2, seq_len=512)
    single = estimate_training(arch, setup)
    per_gpu = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.NONE, 1))
    assert [p.total_bytes for p in per_gpu.phases] == [p.total_bytes for p in single.phases]
    assert per_gpu.total_bytes == single.total_bytes


# Lightning-AI/litgpt tutorials/resource-tables.md (commit 0cc02afa), LoRA on Alpaca with FSDP
# (FULL_SHARD, Block auto-wrap and checkpointing), micro-batch 1, longest sample 1304 tokens:
# llama-2-7b on 2 x A100 40GB 22.18 GB, llama-2-13b on 4 x A100 40GB 35.57 GB,
# llama-2-13b on 2 x A100 40GB out of memory (torch.cuda.max_memory_allocated, GB = 10^9).
@pytest.mark.parametrize(("model", "gpus", "measured_gb"), [
    ("llama-2-7b", 2, 22.18), ("llama-2-13b", 4, 35.57),
])
def test_litgpt_fsdp_lora_matches_published_peaks(model: str, gpus: int,
                                                  measured_gb: float) -> None:
    setup = _litgpt_lora()
    estimate = estimate_per_gpu(architecture_of(find_model(model)), setup,
                                default_parallelism(setup, Scheme.FSDP, gpus))
    assert estimate.allocated_bytes / BYTES_PER_GB == pytest.approx(measured_gb, rel=0.05)


def test_litgpt_fsdp_lora_13b_on_two_40gb_cards_runs_out_of_memory() -> None:
    setup = _litgpt_lora()
    estimate = estimate_per_gpu(architecture_of(find_model("llama-2-13b")), setup,
                                default_parallelism(setup, Scheme.FSDP, 2))
    assert estimate.device_bytes > find_gpu("a100-40gb").capacity_bytes


def test_activations_stay_per_gpu_whatever_the_scheme() -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    setup = TrainingSetup(batch=4, seq_len=1024)
    def activations(scheme: Scheme) -> int:
        estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, scheme, 8))
        return estimate.peak.by_component()[Component.ACTIVATIONS]
    assert activations(Scheme.DDP) == activations(Scheme.ZERO3) == activations(Scheme.FSDP)


def test_activation_offload_moves_activations_to_the_host() -> None:
    arch = architecture_of(find_model("tinyllama-1.1b"))
    setup = TrainingSetup(batch=4, seq_len=1024)
    kept = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.DDP, 2))
    moved = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.DDP, 2,
                                                              Offload.ACTIVATIONS))
    assert moved.allocated_bytes < kept.allocated_bytes
    assert moved.host_activation_bytes_per_rank > 0
    assert moved.host_bytes_per_node == 2 * moved.host_activation_bytes_per_rank


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["tinyllama-1.1b", "phi-2", "llama-2-7b"]),
       st.sampled_from([Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3, Scheme.FSDP,
                        Scheme.FSDP_GRAD_OP]),
       st.sampled_from(list(Framework)), st.lists(st.integers(1, 512), min_size=2, max_size=2))
def test_per_gpu_peak_never_grows_with_more_gpus(model: str, scheme: Scheme,
                                                 framework: Framework, gpus: list[int]) -> None:
    arch = architecture_of(find_model(model))
    setup = TrainingSetup(framework=framework, batch=1, seq_len=256)
    few, many = sorted(gpus)
    def peak(n: int) -> int:
        return estimate_per_gpu(arch, setup, default_parallelism(setup, scheme, n)).total_bytes
    assert peak(many) <= peak(few)


# --- Tensor and pipeline parallelism (Megatron-LM) ------------------------------------------------


def _llama7b_plan(**kwargs: int) -> tuple[TrainingSetup, Parallelism]:
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=2048)
    gpus = kwargs.get("tensor_parallel", 1) * kwargs.get("pipeline_parallel", 1)
    return setup, default_parallelism(setup, Scheme.NONE, gpus, **kwargs)


def test_tensor_parallel_splits_states_and_activations() -> None:
    arch = architecture_of(find_model("llama-2-7b"))
    setup, alone = _llama7b_plan()
    _, split = _llama7b_plan(tensor_parallel=2)
    one, two = estimate_per_gpu(arch, setup, alone), estimate_per_gpu(arch, setup, split)
    assert two.sharded.weights_bytes == pytest.approx(one.sharded.weights_bytes / 2, abs=2)
    def acts(estimate: PerGpuEstimate) -> int:
        return estimate.peak.by_component()[Component.ACTIVATIONS]
    assert acts(two) == pytest.approx(acts(one) / 2, rel=0.01)


def test_pipeline_first_stage_holds_embedding_and_its_blocks() -> None:
    """Llama-2-7B, 32 blocks over 4 stages: the first stage holds the embedding (32000 x 4096)
    and 8 blocks; under 1F1B its activations are those of all 32 blocks of one micro-batch."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup, plan = _llama7b_plan(pipeline_parallel=4)
    first, last = pipeline_stages(arch, setup, plan)
    assert first.params == 32000 * 4096 + 8 * arch.params_per_block
    assert last.params == 8 * arch.params_per_block + 4096 + 32000 * 4096
    assert (first.activation_layers, last.activation_layers) == (32, 8)
    assert not first.has_loss and last.has_loss
    estimate = estimate_per_gpu(arch, setup, plan)
    assert estimate.stage.name in ("first", "last")


def test_a_model_split_by_layers_runs_one_micro_batch_at_a_time() -> None:
    """Llama-2-7B over 4 GPUs with no data parallelism (transformers' device_map="auto"): the
    stages hold what 1F1B's do, but the first stage keeps the activations of its own 8 blocks
    only, since no other micro-batch is in flight."""
    arch = architecture_of(find_model("llama-2-7b"))
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=2048)
    plan = default_parallelism(setup, Scheme.NONE, 4, pipeline_parallel=4,
                               pipeline_schedule=PipelineSchedule.SEQUENTIAL)
    first, last = pipeline_stages(arch, setup, plan)
    assert first.params == 32000 * 4096 + 8 * arch.params_per_block
    assert (first.activation_layers, last.activation_layers) == (8, 8)
    split = estimate_per_gpu(arch, setup, plan)
    whole = estimate_training(arch, setup)
    # mixed-precision Adam: 16 bytes for each parameter of the heavier (last) stage, plus its
    # activations; well under half of the whole model on one GPU
    assert 16 * last.params < split.total_bytes < whole.total_bytes / 2


def test_model_parallel_gpus_must_divide() -> None:
    with pytest.raises(ConflictingOptions):
        shard_model_states(mixed_adam(1000), Parallelism(scheme=Scheme.ZERO1, gpus=6,
                                                         tensor_parallel=4))
    with pytest.raises(ConflictingOptions):
        shard_model_states(mixed_adam(1000), Parallelism(scheme=Scheme.HSDP, gpus=8,
                                                         tensor_parallel=2))
    plan = Parallelism(scheme=Scheme.ZERO1, gpus=16, tensor_parallel=2, pipeline_parallel=2)
    assert shard_model_states(mixed_adam(1000), plan).shard_degree == 4


# Lightning-AI/litgpt tutorials/resource-tables.md (commit 0cc02afa), LoRA on phi-1.5 with FSDP on
# 2 x A100 40GB, longest sample (1044 tokens) forced into the first batch: 4.86 GB at micro-batch
# 1, 5.88 GB at micro-batch 4 (+0.34 GB per sample; torch.cuda.max_memory_allocated, GB = 10^9).
def test_largest_batch_first_peaks_in_the_first_backward_with_fsdp_no_sync() -> None:
    """The first micro-batch builds its unsharded gradients during its own backward, after the
    loss's vocabulary-sized tensors are gone: a gentle slope in the micro-batch. (The FSDP1
    buffers follow the traced step, tests/test_trace_agreement.py; litgpt's first micro-batch
    holds up to 4 % more than they give.)"""
    arch = architecture_of(find_model("phi-1.5"))
    def peak_gb(batch: int) -> float:
        setup = dataclasses.replace(_litgpt_lora(batch, 1044), steady_state=False)
        estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.FSDP, 2))
        return estimate.allocated_bytes / BYTES_PER_GB
    assert peak_gb(1) == pytest.approx(4.86, rel=0.05)
    assert peak_gb(4) == pytest.approx(5.88, rel=0.05)
    steady = _litgpt_lora(4, 1044)
    steady_gb = estimate_per_gpu(arch, steady, default_parallelism(
        steady, Scheme.FSDP, 2)).allocated_bytes / BYTES_PER_GB
    assert steady_gb > peak_gb(4)


def test_later_micro_batch_keeps_gradients_without_activations() -> None:
    arch = architecture_of(find_model("llama-2-7b"))
    setup = dataclasses.replace(_litgpt_lora(), steady_state=False)
    estimate = estimate_per_gpu(arch, setup, default_parallelism(setup, Scheme.FSDP, 2))
    later = next(p for p in estimate.phases if p.phase is Phase.LATER_MICRO_BATCH)
    assert later.by_component().get(Component.ACTIVATIONS, 0) == 0
    assert later.by_component()[Component.GRADIENTS] == estimate.sharded.gradients_bytes


# --- expert parallelism -----------------------------------------------------------------------


def _moe_estimate(scheme: Scheme, expert_parallel: int, gpus: int = 8) -> PerGpuEstimate:
    import dataclasses

    from vramplan.distributed.defaults import default_parallelism
    from vramplan.distributed.per_gpu import estimate_per_gpu
    from vramplan.training.setup import TrainingSetup
    from vramplan.vocab import Method, Precision

    arch = architecture_of(find_model("qwen3-30b-a3b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=1024)
    plan = dataclasses.replace(default_parallelism(setup, scheme, gpus),
                               expert_parallel=expert_parallel)
    return estimate_per_gpu(arch, setup, plan)


def test_expert_parallelism_keeps_a_share_of_the_experts_on_each_gpu() -> None:
    from vramplan.distributed.stages import routed_expert_share

    arch = architecture_of(find_model("qwen3-30b-a3b"))
    share = routed_expert_share(arch)
    # 48 layers x 128 experts x 3 x 2048 x 768 of the 30.5 billion parameters
    assert share.numerator / share.denominator == pytest.approx(
        48 * 128 * 3 * 2048 * 768 / arch.params_total)
    one, eight = _moe_estimate(Scheme.DDP, 1), _moe_estimate(Scheme.DDP, 8)
    kept = 1 - share * 7 / 8
    assert eight.sharded.weights_bytes == -(-one.sharded.weights_bytes * kept.numerator
                                           // kept.denominator)
    assert eight.total_bytes < one.total_bytes / 2


def test_expert_parallelism_changes_nothing_a_full_shard_already_splits() -> None:
    # ZeRO-3 splits every state over the 8 data-parallel ranks, experts included
    assert (_moe_estimate(Scheme.ZERO3, 8).sharded.model_states_bytes
            == _moe_estimate(Scheme.ZERO3, 1).sharded.model_states_bytes)
    # ZeRO-1 shards optimizer states and masters: EP still splits the replicated weights
    one, eight = _moe_estimate(Scheme.ZERO1, 1), _moe_estimate(Scheme.ZERO1, 8)
    assert eight.sharded.optimizer_states_bytes == one.sharded.optimizer_states_bytes
    assert eight.sharded.weights_bytes < one.sharded.weights_bytes


def test_expert_parallelism_needs_experts_and_a_divisor_of_the_data_parallel_ranks() -> None:
    import dataclasses

    from vramplan.distributed.defaults import default_parallelism
    from vramplan.distributed.per_gpu import estimate_per_gpu
    from vramplan.distributed.sharding import check_parallelism
    from vramplan.errors import ConflictingOptions
    from vramplan.training.setup import TrainingSetup

    setup = TrainingSetup(batch=1, seq_len=128)
    with pytest.raises(ConflictingOptions):
        check_parallelism(dataclasses.replace(default_parallelism(setup, Scheme.DDP, 8),
                                              expert_parallel=3))
    dense = architecture_of(find_model("llama-3.2-1b"))
    with pytest.raises(ConflictingOptions):
        estimate_per_gpu(dense, setup, dataclasses.replace(
            default_parallelism(setup, Scheme.DDP, 8), expert_parallel=2))


# --- FSDP1 and reentrant checkpointing around units of frozen weights --------------------------

_FMS_MISTRAL = TrainingSetup(
    method=Method.LORA, precision=Precision.BF16_TRUE, lora_rank=16, batch=2, seq_len=4096,
    checkpointing=Checkpointing.FULL, framework=Framework.HF, gradient_accumulation=False,
    code_date=__import__("datetime").date(2025, 2, 7))
"""fms-acceleration's Mistral-7B LoRA run on 2 GPUs under accelerate's FSDP1 (2025-02)."""
_HELD = (2 * 32 - 1) * 2 * 4096 * 4096 * 2
"""Every block's checkpointed input but the first's and every block's input gradient: 63
tensors of 2 x 4096 tokens x 4096 bf16 values."""


@pytest.mark.parametrize(("change", "version", "held"), [
    ({}, FsdpVersion.FSDP1, _HELD),  # transformers' default of 2025: reentrant
    ({"code_date": None}, FsdpVersion.FSDP1, 0),  # transformers 5: non-reentrant
    ({"reentrant_checkpointing": False}, FsdpVersion.FSDP1, 0),
    ({"checkpoint_in_units": True}, FsdpVersion.FSDP1, 0),  # apply_activation_checkpointing
    ({"checkpointing": Checkpointing.NONE}, FsdpVersion.FSDP1, 0),
    ({}, FsdpVersion.FSDP2, 0),  # fully_shard hooks no leaf copies
    # transformers v4.52.0: GradientCheckpointingLayer checkpoints inside the wrapped layer
    ({"code_date": __import__("datetime").date(2025, 5, 20)}, FsdpVersion.FSDP1, 0),
    ({"method": Method.FULL, "lora_rank": None}, FsdpVersion.FSDP1, 0),  # units that train
])
def test_fsdp1_holds_reentrant_checkpoints_of_frozen_units_to_the_end_of_backward(
        change: dict[str, object], version: FsdpVersion, held: int) -> None:
    """FSDP1's reshard-only hook on a unit without trainable parameters registers a multi-grad
    hook on the leaf copies reentrant checkpointing reruns the unit on: a reference cycle that
    keeps each copy (its input's storage) and its gradient until `_finalize_params`."""
    arch = architecture_of(find_model("mistral-7b"))
    setup = dataclasses.replace(_FMS_MISTRAL, **change)  # type: ignore[arg-type]
    plan = default_parallelism(setup, Scheme.FSDP, 2, fsdp_version=version)

    def end_of_backward(run: TrainingSetup) -> int:
        estimate = estimate_per_gpu(arch, run, plan)
        return next(p.total_bytes for p in estimate.phases if p.phase is Phase.BACKWARD_END)

    baseline = dataclasses.replace(setup, reentrant_checkpointing=False)
    assert end_of_backward(setup) - end_of_backward(baseline) == held


@pytest.mark.parametrize(("keeps", "gradients"), [(False, 0), (True, 2 * 1_000_000 // 4)])
def test_colossalais_offload_keeps_the_gradient_partition_on_the_gpu(keeps: bool,
                                                                     gradients: int) -> None:
    """ZeRO-2 with the optimizer offloaded: DeepSpeed's ZeRO-Offload sends the gradients to
    pinned host memory; ColossalAI's LowLevelZeroOptimizer keeps each reduced bf16 slice on the
    GPU until its step copies it to the host (low_level_optim.py @d888c378)."""
    plan = Parallelism(scheme=Scheme.ZERO2, gpus=4, offload=Offload.OPTIMIZER,
                       offload_keeps_gradients=keeps)
    sharded = shard_model_states(mixed_adam(1_000_000), plan)
    assert sharded.gradients_bytes == gradients
    assert sharded.master_weights_bytes == sharded.optimizer_states_bytes == 0
