"""The caching allocator simulation (vramplan.allocator) against the rules of
c10/cuda/CUDACachingAllocator.cpp, hand-computed cases, invariants, and a published trajectory."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vramplan.allocator import (
    RESET_PEAKS,
    AllocatorConfig,
    AllocatorOutOfMemory,
    AllocConfError,
    CachingAllocator,
    alloc,
    allocation_size,
    free,
    mark,
    parse_alloc_conf,
    replay,
    round_size,
)

MiB = 2**20


def test_sizes_round_as_the_allocator_does() -> None:
    assert round_size(1) == 512 and round_size(512) == 512 and round_size(513) == 1024
    assert round_size(1200 * MiB, divisions=4) == 1280 * MiB  # 4 divisions of [1024, 2048) MiB
    assert round_size(1024 * MiB, divisions=4) == 1024 * MiB  # powers of two stay
    assert allocation_size(512) == 2 * MiB  # small pool: 2 MiB segments
    assert allocation_size(MiB + 512) == 20 * MiB  # 1 to 10 MiB: 20 MiB segments
    assert allocation_size(10 * MiB) == 10 * MiB  # from 10 MiB: rounded up to 2 MiB
    assert allocation_size(11 * MiB) == 12 * MiB


def test_small_requests_share_a_2_mib_segment_and_mid_ones_a_20_mib_one() -> None:
    sim = CachingAllocator()
    sim.malloc(1)
    sim.malloc(100_000)
    assert (sim.allocated.current, sim.reserved.current) == (512 + 100_352, 2 * MiB)
    sim.malloc(3 * MiB)  # carved from a new 20 MiB segment, the rest stays free in it
    sim.malloc(5 * MiB)
    assert sim.reserved.current == 22 * MiB


def test_a_remainder_of_1_mib_or_less_stays_inside_the_block() -> None:
    sim = CachingAllocator()
    block = sim.malloc(11 * MiB)  # a 12 MiB segment; 1 MiB left is not > kSmallSize
    assert sim.allocated.current == 12 * MiB
    sim.free(block)
    sim.malloc(10 * MiB + 1)  # from the cached 12 MiB block: 2 MiB - 512 left, > 1 MiB: split
    assert (sim.allocated.current, sim.reserved.current) == (10 * MiB + 512, 12 * MiB)


def test_freed_memory_stays_reserved_until_empty_cache() -> None:
    sim = CachingAllocator()
    first = sim.malloc(100 * MiB)
    sim.free(first)
    assert (sim.allocated.current, sim.reserved.current) == (0, 100 * MiB)
    second = sim.malloc(60 * MiB)  # best fit: the cached 100 MiB block, split
    assert sim.reserved.current == 100 * MiB
    sim.malloc(60 * MiB)  # 40 MiB left in the cache is too small: a new segment
    assert sim.reserved.current == 160 * MiB
    sim.free(second)
    sim.empty_cache()  # the split 100 MiB segment holds nothing now: released
    assert sim.reserved.current == 60 * MiB


def test_a_stream_reuses_only_its_own_blocks() -> None:
    sim = CachingAllocator()
    sim.free(sim.malloc(50 * MiB, stream=1))
    sim.malloc(50 * MiB, stream=0)
    assert sim.reserved.current == 100 * MiB
    sim.malloc(50 * MiB, stream=1)
    assert sim.reserved.current == 100 * MiB


def test_max_split_size_keeps_oversize_blocks_for_oversize_requests() -> None:
    sim = CachingAllocator(AllocatorConfig(max_split_size=128 * MiB))
    sim.free(sim.malloc(200 * MiB))
    sim.malloc(50 * MiB)  # may not take the cached oversize block
    assert sim.reserved.current == 250 * MiB
    sim.malloc(190 * MiB)  # may: 200 < 190 + 20 MiB
    assert sim.reserved.current == 250 * MiB
    assert sim.allocated.current == 250 * MiB  # the oversize block is not split


def test_a_full_device_frees_the_cache_and_retries() -> None:
    sim = CachingAllocator(AllocatorConfig(capacity_bytes=100 * MiB))
    sim.free(sim.malloc(60 * MiB))
    sim.malloc(70 * MiB)  # 60 cached + 70 > 100: release the cache, then allocate
    assert (sim.reserved.current, sim.num_alloc_retries) == (70 * MiB, 1)
    with pytest.raises(AllocatorOutOfMemory):
        sim.malloc(40 * MiB)
    assert sim.num_ooms == 1


def test_expandable_segments_grow_by_pages() -> None:
    sim = CachingAllocator(AllocatorConfig(expandable_segments=True))
    a = sim.malloc(30 * MiB)
    assert sim.reserved.current == 40 * MiB  # two 20 MiB pages
    sim.malloc(5 * MiB)  # fits in the mapped slack: nothing new
    assert sim.reserved.current == 40 * MiB
    sim.free(a)
    # the freed 30 MiB is fenced off by the 5 MiB block: the 5 MiB of slack after it and the
    # unmapped tail take the request, which maps two more pages
    sim.malloc(33 * MiB)
    assert sim.reserved.current == 80 * MiB


def test_parse_alloc_conf() -> None:
    config = parse_alloc_conf("expandable_segments:True, max_split_size_mb:128")
    assert config == AllocatorConfig(max_split_size=128 * MiB, expandable_segments=True)
    assert parse_alloc_conf("") == AllocatorConfig()
    assert parse_alloc_conf("roundup_power2_divisions:4").roundup_power2_divisions == 4


@pytest.mark.parametrize("text", [
    "max_split_size_mb:abc", "max_split_size_mb:20", "expandable_segments:yes",
    "roundup_power2_divisions:3", "backend:cudaMallocAsync", "garbage_collection_threshold:0.6",
    "expandable_segments",
])
def test_alloc_conf_refuses_what_it_does_not_model_or_pytorch_refuses(text: str) -> None:
    with pytest.raises(AllocConfError) as raised:
        parse_alloc_conf(f"expandable_segments:True,{text}")
    assert raised.value.value == text and raised.value.field == "alloc_conf"


def _pr_193400_cycles(config: AllocatorConfig) -> list[int]:
    """pytorch/pytorch PR #193400 (fixing issue #123548), on a 16 GiB card: each cycle allocates
    A = 91 MiB and B = 45.5 MiB, then a 2 MiB block that stays alive, then frees A and B."""
    sim = CachingAllocator(config)
    reserved = []
    for cycle in range(101):
        a, b = sim.malloc(91 * MiB), sim.malloc(int(45.5 * MiB))
        sim.malloc(2 * MiB)
        sim.free(a)
        sim.free(b)
        if cycle % 20 == 0:
            reserved.append(sim.reserved.current // MiB)
    return reserved


def test_the_published_reserved_growth_with_max_split_size_and_expandable_segments() -> None:
    # published reserved (MiB) at cycles 0, 20, ..., 100: 220, 2,980, 5,760, 8,520, 11,300,
    # 14,060; the first figure includes the reproducer's own start-up memory (allocated 66 MiB
    # at cycle 0 where the loop alone holds 2), so compare the growth
    published = [220, 2980, 5760, 8520, 11300, 14060]
    ours = _pr_193400_cycles(AllocatorConfig(max_split_size=128 * MiB, expandable_segments=True))
    assert ours[-1] - ours[0] == pytest.approx(published[-1] - published[0], rel=0.01)
    growth = [b - a for a, b in itertools.pairwise(ours)]
    published_growth = [b - a for a, b in itertools.pairwise(published)]
    assert growth == pytest.approx(published_growth, abs=20)
    # "Either option on its own ... keeps reserved under 500 MiB"
    for alone in (AllocatorConfig(max_split_size=128 * MiB),
                  AllocatorConfig(expandable_segments=True), AllocatorConfig()):
        assert _pr_193400_cycles(alone)[-1] < 500


def test_replay_reads_the_counters_since_the_last_reset() -> None:
    events = [alloc(1, 100 * MiB), free(1), mark(RESET_PEAKS), alloc(2, 40 * MiB),
              mark("backward"), alloc(3, 30 * MiB), free(2), free(3)]
    result = replay(events)
    assert result.peak_reserved_bytes == 100 * MiB  # the cache kept from before the reset
    assert result.peak_allocated_bytes == 70 * MiB
    assert result.allocated_at_reserved_peak_bytes == 0
    assert dict(result.phase_peak_reserved) == {"backward": 100 * MiB}


_OPS = st.lists(st.tuples(st.booleans(), st.integers(1, 64 * MiB), st.integers(0, 1)),
                min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(_OPS, st.booleans())
def test_invariants_over_random_programs(ops: list[tuple[bool, int, int]],
                                         expandable: bool) -> None:
    sim = CachingAllocator(AllocatorConfig(expandable_segments=expandable))
    live: list[int] = []
    reserved_before = 0
    for is_free, n_bytes, stream in ops:
        if is_free and live:
            sim.free(live.pop(n_bytes % len(live)))
        else:
            live.append(sim.malloc(n_bytes, stream))
        assert sim.requested.current <= sim.allocated.current <= sim.reserved.current
        assert sim.reserved.current >= reserved_before  # nothing goes back without empty_cache
        reserved_before = sim.reserved.current
    assert sim.allocated.peak <= sim.reserved.peak
    for handle in live:
        sim.free(handle)
    assert sim.allocated.current == 0 and sim.requested.current == 0
    sim.empty_cache()
    assert sim.reserved.current == 0
