"""Will it fit: the margin, the monotone searches, and the ranking of changes."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vramplan.bisection import largest_fitting, smallest_fitting
from vramplan.distributed.defaults import default_parallelism
from vramplan.distributed.per_gpu import estimate_per_gpu
from vramplan.errors import OutOfRange
from vramplan.planner.changes import CHANGE_COSTS, Change, ChangeKind, rank_changes
from vramplan.planner.report import fit_report
from vramplan.planner.search import fewest_gpus, max_micro_batch, max_sequence
from vramplan.planner.setup import FitSetup, fits, floor_bytes, peak_bytes
from vramplan.planner.verdict import DEFAULT_USABLE_SHARE, usable_share_from_percent
from vramplan.presets.gpus import find_gpu
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.setup import TrainingSetup
from vramplan.units import BYTES_PER_GIB
from vramplan.verdict import GpuVerdict
from vramplan.vocab import Method, Metric, Offload, Precision, Quant, Scheme


def test_verdict_applies_the_margin() -> None:
    gpu = find_gpu("a100-80gb")  # 80 GiB
    at_75 = GpuVerdict(gpu, 60 * BYTES_PER_GIB, DEFAULT_USABLE_SHARE)
    at_90 = GpuVerdict(gpu, 72 * BYTES_PER_GIB, DEFAULT_USABLE_SHARE)
    assert at_75.fits and at_75.fits_at_capacity
    assert not at_90.fits and at_90.fits_at_capacity
    assert at_90.headroom_bytes == 64 * BYTES_PER_GIB - 72 * BYTES_PER_GIB
    assert GpuVerdict(gpu, 72 * BYTES_PER_GIB, usable_share=1.0).fits


def test_margin_percent_is_checked() -> None:
    assert usable_share_from_percent(90) == 0.9
    with pytest.raises(OutOfRange):
        usable_share_from_percent(120)


_LINEAR = st.tuples(st.integers(0, 10**12), st.integers(1, 10**10))


@given(_LINEAR, st.integers(0, 10**13), st.integers(1, 5000))
def test_largest_fitting_fits_and_the_next_step_does_not(
        line: tuple[int, int], usable: int, high: int) -> None:
    base, slope = line

    def peak(value: int) -> int:
        return base + slope * value

    answer = largest_fitting(lambda v: peak(v) <= usable, 1, high)
    if answer is None:
        assert peak(1) > usable
    else:
        assert peak(answer) <= usable
        assert answer == high or peak(answer + 1) > usable


@given(_LINEAR, st.integers(0, 10**13), st.integers(1, 5000))
def test_smallest_fitting_fits_and_one_fewer_does_not(
        line: tuple[int, int], usable: int, high: int) -> None:
    fixed, sharded = line

    def peak(gpus: int) -> int:
        return fixed + sharded * 1000 // gpus

    answer = smallest_fitting(lambda v: peak(v) <= usable, 1, high)
    if answer is None:
        assert peak(high) > usable
    else:
        assert peak(answer) <= usable
        assert answer == 1 or peak(answer - 1) > usable


@given(st.integers(1, 5000), st.integers(0, 5001), st.integers(-10, 6000))
def test_a_guess_never_changes_the_answer(high: int, edge: int, guess: int) -> None:
    """Whatever the guess (right, wrong, out of range), the edge found is the bisection's."""
    assert largest_fitting(lambda v: v <= edge, 1, high, guess) == \
        largest_fitting(lambda v: v <= edge, 1, high)
    assert smallest_fitting(lambda v: v >= edge, 1, high, guess) == \
        smallest_fitting(lambda v: v >= edge, 1, high)


def _change(kind: ChangeKind, saved: int, fits: bool) -> Change:
    return Change(kind=kind, setup=None, settings=(), peak_bytes=100 - saved, saved_bytes=saved,
                  fits=fits)


def test_ranking_prefers_fitting_then_cheap_then_large_savings() -> None:
    ranked = rank_changes([
        _change(ChangeKind.LORA, 80, True),
        _change(ChangeKind.CHECKPOINTING, 50, True),
        _change(ChangeKind.CHUNKED_LOSS, 10, False),
        _change(ChangeKind.OPTIMIZER_8BIT, 0, False),
        _change(ChangeKind.ATTENTION_KERNEL, 60, True),
    ])
    assert [c.kind for c in ranked] == [ChangeKind.ATTENTION_KERNEL, ChangeKind.CHECKPOINTING,
                                        ChangeKind.LORA, ChangeKind.CHUNKED_LOSS]


def test_every_change_has_a_cost_with_a_source() -> None:
    assert set(CHANGE_COSTS) == set(ChangeKind)
    assert all(cost.source for cost in CHANGE_COSTS.values())


# --- The report behind `vramplan fit`: each answer fits, one step further does not ---



def _fit_setup(model: str, scheme: Scheme = Scheme.NONE, gpus: int = 1, **fields: object
               ) -> FitSetup:
    training = TrainingSetup(metric=Metric.DEVICE, gradient_accumulation=False,
                             **fields)  # type: ignore[arg-type]
    return FitSetup(architecture_of(find_model(model)), training,
                    default_parallelism(training, scheme, gpus), model)


def _with(setup: FitSetup, **fields: object) -> FitSetup:
    training = dataclasses.replace(setup.training, **fields)  # type: ignore[arg-type]
    return dataclasses.replace(setup, training=training)


@pytest.mark.parametrize(("model", "gpu"), [("tinyllama-1.1b", "l4"), ("phi-2", "a100-40gb"),
                                             ("llama-2-7b", "h100-80gb")])
def test_largest_micro_batch_fits_and_one_more_does_not(model: str, gpu: str) -> None:
    setup = _fit_setup(model, scheme=Scheme.FSDP, gpus=8, seq_len=1024)
    usable = GpuVerdict(find_gpu(gpu), 0, DEFAULT_USABLE_SHARE).usable_bytes
    batch = max_micro_batch(setup, usable)
    assert batch is not None
    assert peak_bytes(_with(setup, batch=batch)) <= usable
    assert peak_bytes(_with(setup, batch=batch + 1)) > usable


def test_longest_sequence_fits_and_one_more_token_does_not() -> None:
    setup = _fit_setup("tinyllama-1.1b", batch=8)
    usable = GpuVerdict(find_gpu("rtx-4090"), 0, DEFAULT_USABLE_SHARE).usable_bytes
    seq = max_sequence(setup, usable)
    assert seq is not None and seq < setup.arch.max_position_embeddings
    assert peak_bytes(_with(setup, seq_len=seq)) <= usable
    assert peak_bytes(_with(setup, seq_len=seq + 1)) > usable


@pytest.mark.parametrize("scheme", [Scheme.ZERO3, Scheme.FSDP, Scheme.ZERO2])
def test_fewest_gpus_fit_and_one_fewer_does_not(scheme: Scheme) -> None:
    setup = _fit_setup("llama-2-13b", precision=Precision.MIXED, batch=1, seq_len=2048)
    usable = GpuVerdict(find_gpu("a100-80gb"), 0, DEFAULT_USABLE_SHARE).usable_bytes
    answer = fewest_gpus(setup, scheme, Offload.NONE, usable)
    assert answer.gpus is not None and answer.gpus > 1
    assert answer.peak_bytes is not None and answer.peak_bytes <= usable
    one_fewer = dataclasses.replace(
        setup, parallelism=default_parallelism(setup.training, scheme, answer.gpus - 1))
    assert peak_bytes(one_fewer) > usable


def test_a_scheme_that_fits_on_one_gpu_only_is_answered_one() -> None:
    """ZeRO-1 and ZeRO-2 keep every weight on every GPU, and from two GPUs on NCCL's
    communicators join: Unsloth's QLoRA of Qwen3-14B (r8 on q and v) at 2 x 2,048 tokens fits
    one T4 under either and no more of them, which the search over two GPUs and more once
    answered "more than 4,096"."""
    import vramplan

    report = vramplan.fit(model="qwen3-14b", gpu="t4-16gb", method="qlora", framework="unsloth",
                          lora_r=8, lora_targets="q,v", checkpointing="full", batch=2,
                          seq_len=2048).value
    usable = report.verdict.usable_bytes
    for scheme in (Scheme.ZERO1, Scheme.ZERO2):
        (answer,) = (a for a in report.fewest_gpus
                     if a.scheme is scheme and a.offload is Offload.NONE)
        two = dataclasses.replace(report.setup, parallelism=default_parallelism(
            report.setup.training, scheme, 2))
        assert peak_bytes(two) > usable
        assert answer.gpus == 1
        assert answer.peak_bytes is not None and answer.peak_bytes <= usable


def test_changes_are_computed_by_the_same_core() -> None:
    setup = _fit_setup("llama-2-7b", precision=Precision.MIXED, batch=4, seq_len=2048)
    report = fit_report(setup, find_gpu("a100-80gb"))
    before = report.estimate.total_bytes
    assert not report.verdict.fits
    assert report.changes
    for change in report.changes:
        assert change.peak_bytes == peak_bytes(change.setup)
        assert change.saved_bytes == before - change.peak_bytes > 0
        assert change.fits == (change.peak_bytes <= report.verdict.usable_bytes)
    assert report.combined and report.combined[-1].fits
    kinds = {c.kind for c in report.changes}
    assert {ChangeKind.LORA, ChangeKind.QLORA, ChangeKind.CHECKPOINTING,
            ChangeKind.OPTIMIZER_8BIT, ChangeKind.MICRO_BATCH} <= kinds


def test_a_fit_caps_transformers_warm_up_by_the_card() -> None:
    """The planner knows the card: a QLoRA base's allocator warm-up is capped by what the card
    has free when the model loads (transformers v4.52 on), not half the bf16 meta model: Unsloth's
    Llama-3.3-70B notebook on an A100 80GB reserved 39.2 GiB once loaded and peaked at 42.8 GiB
    (unslothai/notebooks nb/Llama3.3_(70B)_A100-Conversational.ipynb, 2025-09-06)."""
    import vramplan
    from vramplan.presets.cuda import free_at_load_bytes

    result = vramplan.fit(model="llama-3.3-70b", gpu="a100-80gb", method="qlora",
                          framework="unsloth", batch=2, seq_len=2048)
    report = result.value
    gpu = find_gpu("a100-80gb")
    assert report.setup.training.card_free_bytes == free_at_load_bytes(gpu)
    assert report.estimate.total_bytes < 50 * BYTES_PER_GIB


@pytest.mark.parametrize(("model", "method", "scheme", "gpus"), [
    ("llama-3.1-8b", Method.FULL, Scheme.NONE, 1), ("qwen2.5-7b", Method.LORA, Scheme.NONE, 1),
    ("llama-2-70b", Method.QLORA, Scheme.FSDP, 2), ("mixtral-8x7b", Method.LORA, Scheme.ZERO3, 4),
    ("qwen3-30b-a3b", Method.FULL, Scheme.ZERO2, 8)])
def test_the_searches_floor_never_exceeds_the_peak(model: str, method: Method, scheme: Scheme,
                                                   gpus: int) -> None:
    """The planner rules a candidate out on its peak without the allocator's cache, which no
    replay can lower: the floor is at most the peak in every metric, and `fits` says what the
    peak says."""
    arch = architecture_of(find_model(model))
    for metric in Metric:
        training = TrainingSetup(method=method, metric=metric, seq_len=4096,
                                 quant=Quant.NF4_DQ if method is Method.QLORA else Quant.NONE)
        estimate = estimate_per_gpu(arch, training, default_parallelism(training, scheme, gpus))
        assert estimate.floor_bytes(metric) <= estimate.metric_bytes(metric)
        if metric is Metric.ALLOCATED:
            assert estimate.floor_bytes(metric) == estimate.allocated_bytes
        setup = FitSetup(arch, training, default_parallelism(training, scheme, gpus))
        assert floor_bytes(setup) == estimate.floor_bytes(metric)
        for usable in (floor_bytes(setup) - 1, peak_bytes(setup) - 1, peak_bytes(setup)):
            assert fits(setup, usable) == (peak_bytes(setup) <= usable)
