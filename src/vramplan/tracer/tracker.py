"""Counting live tensor storage, op by op, the way the CUDA caching allocator would.

A `TorchDispatchMode` sees every ATen op below autograd, fake or real. After each op it registers
the storages of the op's outputs (a storage, not a view: views share their base's storage) and
updates the live total; a weak reference on each storage takes its bytes off when it is freed.
Each storage counts its size rounded up to 512 bytes, the caching allocator's block granularity
(`kMinBlockSize` and `round_size` in c10/cuda/CUDACachingAllocator.cpp), which is what
`torch.cuda.max_memory_allocated` adds up.

Every storage carries a category, kept up to date as its role becomes known (saved for backward,
accumulated as a gradient, ...), so the breakdown at the peak costs one copy of a small dict.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from vramplan.allocator import RESET_PEAKS, Event, alloc, free, mark
from vramplan.parts import PartKind
from vramplan.tracer.result import TRACED_PARTS, Breakdown, Phase, PhasePeak
from vramplan.units import ceil_div

ALLOCATOR_BLOCK_BYTES = 512
"""c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize = 512; round_size rounds up to a multiple."""

_RANK = {part: rank for rank, part in enumerate(TRACED_PARTS)}
"""Earlier categories win: a weight saved for backward stays a weight."""


def allocation_bytes(n_bytes: int) -> int:
    """Bytes the CUDA caching allocator hands out for a request of `n_bytes` (0 stays 0)."""
    if n_bytes <= 0:
        return 0
    return ceil_div(n_bytes, ALLOCATOR_BLOCK_BYTES) * ALLOCATOR_BLOCK_BYTES


@dataclass(slots=True)
class _Entry:
    ref: weakref.ref[torch.UntypedStorage]
    n_bytes: int
    category: PartKind
    handle: int
    """This allocation's id in `StorageTracker.events`."""


class StorageTracker(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Live bytes per category, the running peak, and the peak of each phase while recording."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._live: dict[int, _Entry] = {}
        self._excluded: set[int] = set()
        self.excluded_bytes = 0
        self.totals = dict.fromkeys(TRACED_PARTS, 0)
        self._shown: tuple[PartKind, ...] = tuple(
            p for p in TRACED_PARTS if p is not PartKind.REFERENCE_WEIGHTS)
        """The parts a breakdown lists: a reference model's once one is tracked."""
        self.current = 0
        self.phase: Phase | None = None
        self.recording = False
        self.peak = 0
        self.peak_phase: Phase | None = None
        self.peak_totals = dict(self.totals)
        self._phase_peaks: dict[Phase, tuple[int, dict[PartKind, int]]] = {}
        self.events: list[Event] = []
        """Every allocation (its storage's size, unrounded) and free, in program order, with
        the phases marked: what `vramplan.allocator.replay` runs through the caching
        allocator."""
        self._handles = 0
        self._fake_mode: object = None
        self._original_resize: Callable[..., Any] | None = None

    # --- entering and leaving ----------------------------------------------------------------

    def __enter__(self) -> StorageTracker:
        from torch._guards import active_fake_mode

        self._fake_mode = active_fake_mode()
        self._track_resizes()
        super().__enter__()  # type: ignore[no-untyped-call]
        return self

    def __exit__(self, *args: Any) -> None:
        super().__exit__(*args)  # type: ignore[no-untyped-call]
        if self._original_resize is not None:
            torch.UntypedStorage.resize_ = self._original_resize  # type: ignore[method-assign]
            self._original_resize = None

    def _track_resizes(self) -> None:
        """FSDP frees and re-allocates a gathered parameter's storage with
        `UntypedStorage.resize_` (FSDP1 `_free_storage`/`_alloc_storage`, FSDP2
        `free_storage`/`alloc_storage`), which no dispatch mode sees (as torch's own MemTracker
        notes, torch/distributed/_tools/mem_tracker.py `_track_resize`): follow it here."""
        original = torch.UntypedStorage.resize_
        self._original_resize = original
        tracker = self

        def resize_(storage: torch.UntypedStorage, size: int) -> Any:
            result = original(storage, size)
            tracker._resized(storage)
            return result

        torch.UntypedStorage.resize_ = resize_  # type: ignore[method-assign,assignment]

    # --- the dispatch hook -------------------------------------------------------------------

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        from torch._guards import active_fake_mode
        from torch.distributed.tensor import DTensor

        if any(t is DTensor for t in types):
            # let DTensor (FSDP2's sharded parameters) run its local ops, which come back here
            return NotImplemented
        if func is torch.ops._c10d_functional.wait_tensor.default and active_fake_mode():
            # the fake kernel returns a new tensor where the real op waits in place (as torch's
            # MemTracker does, mem_tracker.py `__torch_dispatch__`)
            return args[0]
        out = func(*args, **(kwargs or {}))
        if active_fake_mode() is not self._fake_mode:
            # DTensor's sharding propagation runs on fake tensors of its own: not memory
            return out
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self.track(leaf)
        self._note_peak()
        return out

    # --- registering and classifying storages ------------------------------------------------

    def track(self, tensor: torch.Tensor, category: PartKind = PartKind.TEMPORARIES) -> None:
        """Count `tensor`'s storage from now until it is freed (once, however many views);
        a tensor subclass (a DTensor) counts the storages of the tensors it wraps."""
        if category is PartKind.REFERENCE_WEIGHTS and category not in self._shown:
            self._shown = tuple(p for p in TRACED_PARTS if p in self._shown or p is category)
        for storage in _storages(tensor):
            self._track_storage(storage, category)

    def _resized(self, storage: torch.UntypedStorage) -> None:
        if id(storage) in self._live:
            self._track_storage(storage, self._live[id(storage)].category)
            self._note_peak()

    def _track_storage(self, storage: torch.UntypedStorage, category: PartKind) -> None:
        key = id(storage)
        if key in self._excluded:
            return
        entry = self._live.get(key)
        n_bytes = allocation_bytes(storage.nbytes())
        if entry is None or entry.ref() is not storage:
            ref = weakref.ref(storage, self._freed_callback(key))
            handle = self._new_allocation(storage.nbytes())
            self._live[key] = _Entry(ref, n_bytes, category, handle)
            self._add(category, n_bytes)
        elif entry.n_bytes != n_bytes:  # resized in place (resize_, set_): a new block
            self._add(entry.category, n_bytes - entry.n_bytes)
            entry.n_bytes = n_bytes
            self.events.append(free(entry.handle))
            entry.handle = self._new_allocation(storage.nbytes())

    def classify(self, tensor: torch.Tensor, category: PartKind) -> None:
        """Give `tensor`'s storage the role `category`, unless it already has an earlier one."""
        self.track(tensor, category)
        for storage in _storages(tensor):
            entry = self._live.get(id(storage))
            if entry is not None and _RANK[category] < _RANK[entry.category]:
                self._move(entry, category)

    def reclassify(self, tensors: Iterable[torch.Tensor], category: PartKind) -> None:
        """Set the role of each storage to `category`, whatever it was."""
        for tensor in tensors:
            self.track(tensor, category)
            for storage in _storages(tensor):
                entry = self._live.get(id(storage))
                if entry is not None and entry.category is not category:
                    self._move(entry, category)

    def exclude(self, tensor: torch.Tensor) -> None:
        """Stop counting `tensor`'s storage: it lives outside the allocator (managed memory)."""
        for storage in _storages(tensor):
            self._exclude_storage(storage)

    def _exclude_storage(self, storage: torch.UntypedStorage) -> None:
        key = id(storage)
        entry = self._live.pop(key, None)
        if entry is not None:
            self._add(entry.category, -entry.n_bytes)
            self.events.append(free(entry.handle))
        n_bytes = allocation_bytes(storage.nbytes())
        if key not in self._excluded:
            self._excluded.add(key)
            self.excluded_bytes += n_bytes
            weakref.finalize(storage, self._unexclude, key, n_bytes)

    def _unexclude(self, key: int, n_bytes: int) -> None:
        self._excluded.discard(key)
        self.excluded_bytes -= n_bytes

    def _freed_callback(self, key: int) -> Callable[[weakref.ref[torch.UntypedStorage]], None]:
        def freed(ref: weakref.ref[torch.UntypedStorage]) -> None:
            entry = self._live.get(key)
            if entry is not None and entry.ref is ref:
                del self._live[key]
                self._add(entry.category, -entry.n_bytes)
                self.events.append(free(entry.handle))
        return freed

    def _new_allocation(self, n_bytes: int) -> int:
        self._handles += 1
        if n_bytes > 0:  # the allocator hands out no block for 0 bytes
            self.events.append(alloc(self._handles, n_bytes))
        return self._handles

    def _add(self, category: PartKind, n_bytes: int) -> None:
        self.totals[category] += n_bytes
        self.current += n_bytes

    def _move(self, entry: _Entry, category: PartKind) -> None:
        self.totals[entry.category] -= entry.n_bytes
        self.totals[category] += entry.n_bytes
        entry.category = category

    # --- peaks ---------------------------------------------------------------------------------

    def start_phase(self, phase: Phase) -> None:
        self.phase = phase
        self.events.append(mark(phase.value))
        if self.recording and self.current > self._phase_peaks.get(phase, (-1, {}))[0]:
            # a phase entered again (DPO's loss after the reference pass) keeps its peak
            self._phase_peaks[phase] = (self.current, dict(self.totals))

    def start_recording(self) -> None:
        """Forget earlier peaks: from now on, peaks are those of the reported step."""
        self.recording = True
        self.events.append(mark(RESET_PEAKS))  # torch.cuda.reset_peak_memory_stats()
        self.peak = -1  # the first op recorded sets it
        self.peak_phase = None
        self._phase_peaks.clear()

    def _note_peak(self) -> None:
        if not self.recording:
            return
        if self.current > self.peak:
            self.peak = self.current
            self.peak_phase = self.phase
            self.peak_totals = dict(self.totals)
        if self.phase is not None:
            phase_peak, _ = self._phase_peaks.get(self.phase, (-1, {}))
            if self.current > phase_peak:
                self._phase_peaks[self.phase] = (self.current, dict(self.totals))

    def phase_peaks(self) -> tuple[PhasePeak, ...]:
        return tuple(PhasePeak(phase, peak, breakdown(totals, self._shown))
                     for phase, (peak, totals) in self._phase_peaks.items())

    def peak_breakdown(self) -> Breakdown:
        return breakdown(self.peak_totals, self._shown)

    def recorded_peak_phase(self) -> Phase:
        if self.peak_phase is None:
            raise RuntimeError("no op ran while the tracker recorded")
        return self.peak_phase


def _storages(tensor: torch.Tensor) -> list[torch.UntypedStorage]:
    """The storages behind `tensor`: its own, or those of the tensors a wrapper subclass (a
    DTensor) holds (`__tensor_flatten__`, as torch/distributed/_tools/common_utils.py
    `get_untyped_storages` walks them)."""
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    pending, storages = [tensor], []
    while pending:
        current = pending.pop()
        if is_traceable_wrapper_subclass(current):
            names, _ = current.__tensor_flatten__()
            pending += [inner for name in names
                        if isinstance(inner := getattr(current, name), torch.Tensor)]
        else:
            storages.append(current.untyped_storage())
    return storages


def breakdown(totals: dict[PartKind, int], parts: tuple[PartKind, ...] = TRACED_PARTS) -> Breakdown:
    return Breakdown(tuple((category, totals[category]) for category in parts))
