"""PyTorch's CUDA caching allocator, simulated: what `torch.cuda.max_memory_reserved` reports for a
sequence of allocations and frees.

Pure Python, no torch. A faithful model of `DeviceCachingAllocator` in pytorch/pytorch
`c10/cuda/CUDACachingAllocator.cpp` (read at 001074d25084fdb87a799823e395a50f5ec044d3), one
device, with streams:

- sizes: `round_size` (512-byte multiples; optional power-of-2 divisions), `get_allocation_size`
  (requests up to 1 MiB take 2 MiB segments, up to 10 MiB take 20 MiB segments, larger ones a
  segment of their own rounded up to 2 MiB);
- two pools, small (blocks up to 1 MiB) and large; `get_free_block`: best fit by (stream, size,
  address), only that first candidate is tried, and the `max_split_size` rules refuse an oversize
  block to a normal request and an oversize block more than 20 MiB (`kLargeBuffer`) too big;
- `should_split`: a small block splits when 512 bytes or more remain, a large one when the request
  is under `max_split_size` and more than 1 MiB remains, otherwise the remainder stays inside the
  allocated block (and counts in `allocated`);
- `free` returns the block to its pool and merges it with free neighbours of its segment; nothing
  goes back to the driver, so reserved memory persists across phases and steps; segments are
  released only by `release_available_cached_blocks` (with `max_split_size`), by
  `release_cached_blocks` when a `cudaMalloc` fails (an allocation retry) and by `empty_cache`;
- `expandable_segments:True`: one segment per (stream, pool) that grows by pages of 2 MiB (small
  pool) or 20 MiB (large pool), mapped on demand (`try_allocate_expandable_block`, `map_block`).

Not modelled: CUDA graphs' private pools, `garbage_collection_threshold` and cross-stream frees
deferred by `record_stream` events (a block freed on a stream is reusable at once by that
stream).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import NamedTuple

from vramplan.errors import VramplanError
from vramplan.units import BYTES_PER_MIB

K_MIN_BLOCK_SIZE = 512
"""`kMinBlockSize`: "all sizes are rounded to at least 512 bytes"."""
K_SMALL_SIZE = 1 * BYTES_PER_MIB
"""`kSmallSize`: "largest 'small' allocation is 1 MiB"."""
K_SMALL_BUFFER = 2 * BYTES_PER_MIB
"""`kSmallBuffer`: "'small' allocations are packed in 2 MiB blocks"."""
K_LARGE_BUFFER = 20 * BYTES_PER_MIB
"""`kLargeBuffer`: "'large' allocations may be packed in 20 MiB blocks"."""
K_MIN_LARGE_ALLOC = 10 * BYTES_PER_MIB
"""`kMinLargeAlloc`: "allocations between 1 and 10 MiB may use kLargeBuffer"."""
K_ROUND_LARGE = 2 * BYTES_PER_MIB
"""`kRoundLarge`: "round up large allocations to 2 MiB"."""


class AllocatorOutOfMemory(Exception):
    """A request that neither the cache nor the device could satisfy (`num_ooms`)."""


@dataclass(frozen=True, slots=True)
class AllocatorConfig:
    """`PYTORCH_CUDA_ALLOC_CONF` settings (c10/cuda/CUDAAllocatorConfig.h; defaults there) and
    what the device can still hand out."""

    max_split_size: int | None = None
    """`max_split_size_mb` in bytes; None is the default, unlimited (`SIZE_MAX`)."""
    expandable_segments: bool = False
    roundup_power2_divisions: int = 0
    """`roundup_power2_divisions:N` for every size (0 or 1: plain 512-byte rounding)."""
    capacity_bytes: int | None = None
    """What `cudaMalloc` can obtain in all (the card less the CUDA context and other memory);
    None: unlimited. With a capacity, a failing segment allocation frees the cache and retries,
    as the allocator does before it raises an out-of-memory error."""


PYTORCH_DEFAULTS = AllocatorConfig()
"""The allocator as PyTorch configures it when `PYTORCH_CUDA_ALLOC_CONF` is unset."""


class AllocConfError(VramplanError):
    """A `PYTORCH_CUDA_ALLOC_CONF` item the simulated allocator does not take: an unknown or
    unmodelled key (PyTorch refuses unknown keys too: "Unrecognized CachingAllocator option"), or
    a value PyTorch would refuse."""

    key = "error.alloc_conf"

    def __init__(self, item: str) -> None:
        super().__init__("alloc_conf", item)


MAX_SPLIT_SIZE_MB = range(21, 2**20 + 1)
"""PyTorch: `max_split_size_mb` must exceed kLargeBuffer's 20 MiB (CUDAAllocatorConfig.cpp
`parseMaxSplitSize`); the upper end only bounds the input (1 TiB)."""
ROUNDUP_DIVISIONS = (1, 2, 4, 8, 16, 32, 64)
"""PyTorch: "For roundups, the divisions has to be power of 2" (`parseRoundUpPower2Divisions`);
more than 64 divisions would round below the 512-byte block size on most sizes."""


def parse_alloc_conf(text: str) -> AllocatorConfig:
    """An `AllocatorConfig` from a `PYTORCH_CUDA_ALLOC_CONF` string such as
    `expandable_segments:True,max_split_size_mb:128`: the keys this simulation models, each
    checked as PyTorch checks it; any other key is refused (`AllocConfError`), not ignored."""
    config = AllocatorConfig()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, _, value = (part.strip() for part in item.partition(":"))
        if key == "expandable_segments" and value in ("True", "False"):
            config = replace(config, expandable_segments=value == "True")
        elif key == "max_split_size_mb" and value.isdigit() and int(value) in MAX_SPLIT_SIZE_MB:
            config = replace(config, max_split_size=int(value) * BYTES_PER_MIB)
        elif key == "roundup_power2_divisions" and value.isdigit() \
                and int(value) in ROUNDUP_DIVISIONS:
            config = replace(config, roundup_power2_divisions=int(value))
        else:
            raise AllocConfError(item)
    return config


def round_size(size: int, divisions: int = 0) -> int:
    """`round_size`: at least 512 bytes, a multiple of 512, or the next power-of-2 division when
    `roundup_power2_divisions` is set (`roundup_power2_next_division`)."""
    if size < K_MIN_BLOCK_SIZE:
        return K_MIN_BLOCK_SIZE
    if divisions > 1 and size > K_MIN_BLOCK_SIZE * divisions:
        return _roundup_power2_next_division(size, divisions)
    return K_MIN_BLOCK_SIZE * (-(-size // K_MIN_BLOCK_SIZE))


def _roundup_power2_next_division(size: int, divisions: int) -> int:
    if size & (size - 1) == 0:
        return size
    floor = 1 << (size.bit_length() - 1)
    step = floor >> (divisions.bit_length() - 1)
    if step == 0:
        return floor << 1
    rounded = size & ~(step - 1)
    return size if rounded == size else rounded + step


def allocation_size(size: int) -> int:
    """`get_allocation_size`: the segment a new request of `size` (rounded) bytes gets."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * (-(-size // K_ROUND_LARGE))


@dataclass(eq=False, slots=True)
class _Segment:
    """An expandable segment: a range of pages, mapped on demand."""

    base: int
    page: int


@dataclass(eq=False, slots=True)
class _Block:
    ptr: int
    size: int
    pool: _Pool
    stream: int
    allocated: bool = False
    requested: int = 0
    prev: _Block | None = None
    next: _Block | None = None
    mapped: bool = True
    segment: _Segment | None = None

    @property
    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None

    @property
    def key(self) -> tuple[int, int, int]:
        """`BlockComparatorSize`: stream, then size, then address."""
        return (self.stream, self.size, self.ptr)


@dataclass(eq=False, slots=True)
class _Pool:
    """A `BlockPool`: its free mapped blocks in (stream, size, address) order, and (expandable
    segments) its unmapped ranges."""

    is_small: bool
    keys: list[tuple[int, int, int]] = field(default_factory=list)
    blocks: dict[tuple[int, int, int], _Block] = field(default_factory=dict)
    unmapped: list[_Block] = field(default_factory=list)

    def insert(self, block: _Block) -> None:
        key = block.key
        bisect.insort(self.keys, key)
        self.blocks[key] = block

    def remove(self, block: _Block) -> None:
        key = block.key
        index = bisect.bisect_left(self.keys, key)
        del self.keys[index]
        del self.blocks[key]

    def lower_bound(self, stream: int, size: int) -> _Block | None:
        index = bisect.bisect_left(self.keys, (stream, size, 0))
        if index == len(self.keys) or self.keys[index][0] != stream:
            return None
        return self.blocks[self.keys[index]]

    def following(self, block: _Block) -> _Block | None:
        index = bisect.bisect_right(self.keys, block.key)
        return self.blocks[self.keys[index]] if index < len(self.keys) else None


@dataclass(slots=True)
class Stat:
    """One of `memory_stats()`'s counters: its current value and its peak since the last reset."""

    current: int = 0
    peak: int = 0

    def add(self, n_bytes: int) -> None:
        self.current += n_bytes
        self.peak = max(self.peak, self.current)

    def sub(self, n_bytes: int) -> None:
        self.current -= n_bytes

    def reset_peak(self) -> None:
        self.peak = self.current


_ADDRESS_GAP = 1 << 40
"""Segments get addresses far apart, so no two are ever adjacent (cudaMalloc gives no such
promise, and the allocator never merges across segments)."""


class CachingAllocator:
    """One device's caching allocator. `malloc` returns a handle for `free`."""

    def __init__(self, config: AllocatorConfig | None = None) -> None:
        self.config = config or AllocatorConfig()
        self._small = _Pool(is_small=True)
        self._large = _Pool(is_small=False)
        self.allocated = Stat()
        """`allocated_bytes.all`: sizes of the blocks handed out (rounded, unsplit remainders
        included); `max_memory_allocated` is its peak."""
        self.requested = Stat()
        """`requested_bytes.all`: the sizes asked for, unrounded."""
        self.reserved = Stat()
        """`reserved_bytes.all`: segments obtained from the driver; `max_memory_reserved`."""
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self._next_address = _ADDRESS_GAP
        self._handles: dict[int, _Block] = {}
        self._next_handle = 0
        self._expandable: dict[tuple[int, bool], _Segment] = {}

    # --- the public interface -----------------------------------------------------------------

    def malloc(self, n_bytes: int, stream: int = 0) -> int:
        """Allocate `n_bytes` on `stream` (`DeviceCachingAllocator::malloc`); a handle."""
        size = round_size(n_bytes, self.config.roundup_power2_divisions)
        pool = self._small if size <= K_SMALL_SIZE else self._large
        block = self._get_free_block(pool, size, stream)
        if block is None:
            alloc = allocation_size(size)
            block = (self._alloc_block(pool, size, alloc, stream, retry=False)
                     or (self._release_available_cached_blocks(pool, size, stream)
                         and self._alloc_block(pool, size, alloc, stream, retry=False))
                     or (self._release_cached_blocks()
                         and self._alloc_block(pool, size, alloc, stream, retry=True))
                     or None)
        if block is None:
            self.num_ooms += 1
            raise AllocatorOutOfMemory(n_bytes)
        found = self._alloc_found_block(block, size, n_bytes)
        handle = self._next_handle
        self._next_handle += 1
        self._handles[handle] = found
        return handle

    def free(self, handle: int) -> None:
        """Free the block of `handle` (`free` then `free_block`): back to its pool, merged with
        free neighbours; its segment stays reserved."""
        block = self._handles.pop(handle)
        block.allocated = False
        self.allocated.current -= block.size
        self.requested.current -= block.requested
        if block.prev is not None and not block.prev.allocated:
            self._try_merge(block, block.prev)
        if block.next is not None and not block.next.allocated:
            self._try_merge(block, block.next)
        block.pool.insert(block)

    def empty_cache(self) -> None:
        """`torch.cuda.empty_cache()`: release every whole free segment (and free pages)."""
        self._release_cached_blocks()

    def reset_peak_stats(self) -> None:
        """`torch.cuda.reset_peak_memory_stats()`: each peak becomes the current value."""
        for stat in (self.allocated, self.requested, self.reserved):
            stat.reset_peak()

    # --- finding and carving blocks -------------------------------------------------------------

    def _get_free_block(self, pool: _Pool, size: int, stream: int) -> _Block | None:
        block = pool.lower_bound(stream, size)
        if block is None:
            return None
        if block.segment is not None and self.config.expandable_segments:
            # best fit by the size a block could grow to (free block + unmapped tail)
            following = pool.following(block)
            while (block.segment is not None and following is not None
                   and following.stream == stream
                   and _expandable_size(following) < _expandable_size(block)):
                block, following = following, pool.following(following)
        split_limit = self.config.max_split_size
        if split_limit is not None:
            if size < split_limit <= block.size:
                return None  # "Do not return an oversized block for a large request"
            if size >= split_limit and block.size >= size + K_LARGE_BUFFER:
                return None  # "Allow oversized block size to be rounded up but within a limit"
        pool.remove(block)
        return block

    def _should_split(self, block: _Block, size: int) -> bool:
        remaining = block.size - size
        if block.pool.is_small or self.config.expandable_segments:
            return remaining >= K_MIN_BLOCK_SIZE
        limit = self.config.max_split_size
        return (limit is None or size < limit) and remaining > K_SMALL_SIZE

    def _alloc_found_block(self, block: _Block, size: int, requested: int) -> _Block:
        if self._should_split(block, size):
            remaining = block
            block = _Block(remaining.ptr, size, remaining.pool, remaining.stream,
                           segment=remaining.segment, prev=remaining.prev, next=remaining)
            if block.prev is not None:
                block.prev.next = block
            remaining.prev = block
            remaining.ptr += size
            remaining.size -= size
            remaining.pool.insert(remaining)
        block.allocated = True
        block.requested = requested
        allocated, asked = self.allocated, self.requested
        allocated.current += block.size
        allocated.peak = max(allocated.peak, allocated.current)
        asked.current += requested
        asked.peak = max(asked.peak, asked.current)
        return block

    def _try_merge(self, dst: _Block, src: _Block | None) -> None:
        if src is None or src.allocated or dst.mapped != src.mapped:
            return
        if src.mapped:
            src.pool.remove(src)
        else:
            src.pool.unmapped.remove(src)
        if dst.prev is src:
            dst.ptr = src.ptr
            dst.prev = src.prev
            if dst.prev is not None:
                dst.prev.next = dst
        else:
            dst.next = src.next
            if dst.next is not None:
                dst.next.prev = dst
        dst.size += src.size

    # --- segments ---------------------------------------------------------------------------

    def _fits_device(self, n_bytes: int) -> bool:
        capacity = self.config.capacity_bytes
        return capacity is None or self.reserved.current + n_bytes <= capacity

    def _alloc_block(self, pool: _Pool, size: int, alloc: int, stream: int, *,
                     retry: bool) -> _Block | None:
        if retry:
            self.num_alloc_retries += 1
        if self.config.expandable_segments:
            return self._try_allocate_expandable_block(pool, size, stream)
        if not self._fits_device(alloc):
            return None
        block = _Block(self._new_address(alloc), alloc, pool, stream)
        self.reserved.add(alloc)
        return block

    def _new_address(self, n_bytes: int) -> int:
        address = self._next_address
        self._next_address += n_bytes + _ADDRESS_GAP
        return address

    def _release_block(self, block: _Block) -> None:
        block.pool.remove(block)
        self.reserved.sub(block.size)

    def _release_available_cached_blocks(self, pool: _Pool, size: int, stream: int) -> bool:
        """With `max_split_size`: free one cached oversize block that fits, else oversize
        blocks from the largest down until enough is freed."""
        limit = self.config.max_split_size
        if limit is None:
            return False
        key = max(size, limit)
        block = pool.lower_bound(stream, key)
        if block is not None and not block.is_split:
            self._release_block(block)
            return True
        released = 0
        for candidate in sorted((b for b in pool.blocks.values() if b.stream == stream),
                                key=lambda b: b.key, reverse=True):
            if released >= key or candidate.size < limit:
                break
            if not candidate.is_split and candidate.segment is None:
                released += candidate.size
                self._release_block(candidate)
        return released >= key

    def _release_cached_blocks(self) -> bool:
        """`release_cached_blocks`: every whole (unsplit) free segment goes back to the driver;
        in expandable segments, every free page."""
        for pool in (self._large, self._small):
            for block in list(pool.blocks.values()):
                if block.segment is not None:
                    self._unmap_block(block)
                elif not block.is_split:
                    self._release_block(block)
        return True

    # --- expandable segments --------------------------------------------------------------------

    def _try_allocate_expandable_block(self, pool: _Pool, size: int,
                                       stream: int) -> _Block | None:
        candidate = self._find_expandable_block(pool, size, stream)
        if not candidate.mapped and not self._map_block(candidate, min(candidate.size, size)):
            return None
        while candidate.size < size:
            following = candidate.next  # the segment's unmapped tail always follows
            if following is None or not self._map_block(
                    following, min(size - candidate.size, following.size)):
                return None
            candidate = following  # map_block merged the free block before it
        pool.remove(candidate)
        return candidate

    def _find_expandable_block(self, pool: _Pool, size: int, stream: int) -> _Block:
        for unmapped in sorted((b for b in pool.unmapped if b.stream == stream),
                               key=lambda b: b.ptr):
            start = unmapped
            if unmapped.prev is not None and not unmapped.prev.allocated:
                start = unmapped.prev
            total = 0
            run: _Block | None = start
            while total < size and run is not None and not run.allocated:
                total += run.size
                run = run.next
            if total >= size:
                return start
        page = K_SMALL_BUFFER if pool.is_small else K_LARGE_BUFFER
        # the segment reserves address space for 1 1/8 of the device; unlimited here
        span = 1 << 50
        segment = _Segment(self._new_address(span), page)
        self._expandable[(stream, pool.is_small)] = segment
        tail = _Block(segment.base, span, pool, stream, mapped=False, segment=segment)
        pool.unmapped.append(tail)
        return tail

    def _map_block(self, block: _Block, size: int) -> bool:
        segment = block.segment
        if segment is None:
            return False
        first = (block.ptr - segment.base) // segment.page
        last = -(-(block.ptr + size - segment.base) // segment.page)
        mapped = (last - first) * segment.page
        if not self._fits_device(mapped):
            return False
        block.pool.unmapped.remove(block)
        block.mapped = True
        if mapped < block.size:
            rest = _Block(block.ptr + mapped, block.size - mapped, block.pool, block.stream,
                          mapped=False, segment=segment, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.pool.unmapped.append(rest)
            block.size = mapped
        self._try_merge(block, block.prev)
        self._try_merge(block, block.next)
        block.pool.insert(block)
        self.reserved.add(mapped)
        return True

    def _unmap_block(self, block: _Block) -> None:
        segment = block.segment
        if segment is None:
            return
        first = -(-(block.ptr - segment.base) // segment.page)
        last = (block.ptr + block.size - segment.base) // segment.page
        if first >= last:
            return
        block.pool.remove(block)
        start, end = segment.base + first * segment.page, segment.base + last * segment.page
        if start > block.ptr:
            before = _Block(block.ptr, start - block.ptr, block.pool, block.stream,
                            segment=segment, prev=block.prev, next=block)
            if block.prev is not None:
                block.prev.next = before
            block.prev = before
            block.pool.insert(before)
        if end < block.ptr + block.size:
            after = _Block(end, block.ptr + block.size - end, block.pool, block.stream,
                           segment=segment, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = after
            block.next = after
            block.pool.insert(after)
        block.ptr, block.size, block.mapped = start, end - start, False
        self._try_merge(block, block.prev)
        self._try_merge(block, block.next)
        block.pool.unmapped.append(block)
        self.reserved.sub(end - start)


def _expandable_size(block: _Block) -> int:
    following = block.next
    return block.size + (following.size if following is not None and not following.mapped
                         else 0)


# --- replaying a sequence of events ---------------------------------------------------------------

class EventKind(StrEnum):
    """One step of a program's memory history."""

    ALLOC = "alloc"
    FREE = "free"
    MARK = "mark"
    """A point in the program (`torch.cuda.reset_peak_memory_stats()` when `name` is
    `RESET_PEAKS`, `torch.cuda.empty_cache()` when it is `EMPTY_CACHE`; otherwise the start of
    a named phase)."""


RESET_PEAKS = "reset_peaks"
EMPTY_CACHE = "empty_cache"
"""A `MARK` named so runs `torch.cuda.empty_cache()`."""


class Event(NamedTuple):
    """`ALLOC` of `n_bytes` under `tensor` (any id, unique while alive) on `stream`; `FREE` of
    `tensor`; `MARK` named `name`. A tuple: programs hold thousands of them."""

    kind: EventKind
    tensor: int = 0
    n_bytes: int = 0
    stream: int = 0
    name: str = ""


def alloc(tensor: int, n_bytes: int, stream: int = 0) -> Event:
    return Event(EventKind.ALLOC, tensor, n_bytes, stream)


def free(tensor: int) -> Event:
    return Event(EventKind.FREE, tensor)


def mark(name: str) -> Event:
    return Event(EventKind.MARK, name=name)


class Program:
    """A program of allocations and frees being written, each tensor under a new id. An empty
    tensor (0 bytes: a setting that has no such tensor) takes an id but is neither allocated
    nor freed."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._next = 0
        self._empty: set[int] = set()

    def alloc(self, n_bytes: int, stream: int = 0) -> int:
        self._next += 1
        if n_bytes > 0:
            self.events.append(Event(EventKind.ALLOC, self._next, n_bytes, stream))
        else:
            self._empty.add(self._next)
        return self._next

    def free(self, tensor: int) -> None:
        if tensor not in self._empty:
            self.events.append(Event(EventKind.FREE, tensor))

    def free_all(self, tensors: list[int]) -> None:
        for tensor in tensors:
            self.free(tensor)
        tensors.clear()


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The allocator's counters after a replay, peaks since the last `RESET_PEAKS` mark."""

    peak_allocated_bytes: int
    """`max_memory_allocated`: block sizes (rounded, unsplit remainders included)."""
    peak_requested_bytes: int
    peak_reserved_bytes: int
    """`max_memory_reserved`."""
    reserved_bytes: int
    """Reserved at the end."""
    allocated_at_reserved_peak_bytes: int
    """Allocated when reserved first reached its peak: the rest is the allocator's cache and
    fragmentation at that moment."""
    num_alloc_retries: int
    num_ooms: int
    phase_peak_reserved: tuple[tuple[str, int], ...] = ()
    """(phase, the largest reserved within it) for each `MARK` other than `RESET_PEAKS`."""

    @property
    def cached_at_peak_bytes(self) -> int:
        """Reserved but not allocated when reserved peaked (free blocks kept by the cache)."""
        return self.peak_reserved_bytes - self.allocated_at_reserved_peak_bytes


def replay(events: Iterable[Event], config: AllocatorConfig | None = None,
           allocator: CachingAllocator | None = None) -> ReplayResult:
    """Run `events` through a caching allocator (a fresh one unless given) and read its
    counters. A request the device cannot satisfy (with `capacity_bytes`) counts in
    `num_ooms` and is skipped, as a program that caught the error would go on."""
    sim = allocator or CachingAllocator(config)
    handles: dict[int, int] = {}
    record = sim.reserved.current
    at_record = sim.allocated.current
    phases: dict[str, int] = {}
    phase = ""
    phase_peak = 0
    malloc, release = sim.malloc, sim.free
    for kind, tensor, n_bytes, stream, name in events:
        if kind is EventKind.ALLOC:
            try:
                handles[tensor] = malloc(n_bytes, stream)
            except AllocatorOutOfMemory:
                continue
            reserved = sim.reserved.current
            if reserved > record:
                record, at_record = reserved, sim.allocated.current
            phase_peak = max(phase_peak, reserved)
        elif kind is EventKind.FREE:
            handle = handles.pop(tensor, None)
            if handle is not None:
                release(handle)
        else:
            if phase:
                phases[phase] = max(phases.get(phase, 0), phase_peak)
            if name == EMPTY_CACHE:
                sim.empty_cache()
            elif name == RESET_PEAKS:
                sim.reset_peak_stats()
                record, at_record = sim.reserved.current, sim.allocated.current
                phases.clear()
                phase = ""
            else:
                phase = name
            phase_peak = sim.reserved.current
    if phase:
        phases[phase] = max(phases.get(phase, 0), phase_peak)
    return ReplayResult(
        peak_allocated_bytes=sim.allocated.peak, peak_requested_bytes=sim.requested.peak,
        peak_reserved_bytes=sim.reserved.peak, reserved_bytes=sim.reserved.current,
        allocated_at_reserved_peak_bytes=at_record,
        num_alloc_retries=sim.num_alloc_retries, num_ooms=sim.num_ooms,
        phase_peak_reserved=tuple(phases.items()))
