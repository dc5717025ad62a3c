"""Will it fit: the margin, the monotone searches, and the ranking of changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vramplan.errors import OutOfRange
from vramplan.presets.gpus import find_gpu
from vramplan.solve import (
    CHANGE_COSTS,
    DEFAULT_USABLE_SHARE,
    Change,
    ChangeKind,
    FitVerdict,
    largest_fitting,
    rank_changes,
    smallest_fitting,
    usable_share_from_percent,
)
from vramplan.units import BYTES_PER_GIB


def test_default_margin_is_fujii_et_al_80_percent() -> None:
    # Fujii et al. 2024, arXiv:2411.06465: no OOM in 454 runs when the estimate is below 80%.
    assert DEFAULT_USABLE_SHARE == 0.80


def test_verdict_applies_the_margin() -> None:
    gpu = find_gpu("a100-80gb")  # 80 GiB
    at_75 = FitVerdict(gpu, 60 * BYTES_PER_GIB)
    at_90 = FitVerdict(gpu, 72 * BYTES_PER_GIB)
    assert at_75.fits and at_75.fits_at_capacity
    assert not at_90.fits and at_90.fits_at_capacity
    assert at_90.headroom_bytes == 64 * BYTES_PER_GIB - 72 * BYTES_PER_GIB
    assert FitVerdict(gpu, 72 * BYTES_PER_GIB, usable_share=1.0).fits


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

    answer = largest_fitting(peak, usable, 1, high)
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

    answer = smallest_fitting(peak, usable, 1, high)
    if answer is None:
        assert peak(high) > usable
    else:
        assert peak(answer) <= usable
        assert answer == 1 or peak(answer - 1) > usable


def _change(kind: ChangeKind, saved: int, fits: bool) -> Change[str]:
    return Change(kind=kind, setup="", detail="", peak_bytes=100 - saved, saved_bytes=saved,
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
