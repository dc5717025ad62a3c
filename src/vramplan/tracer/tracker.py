"""Counting live tensor storage, op by op, the way the CUDA caching allocator would.

A `TorchDispatchMode` sees every ATen op below autograd, fake or real. After each op it registers
the storages of the op's outputs (a storage, not a view: views share their base's storage) and
updates the live total; a weak reference on each storage takes its bytes off when it is freed.
Each storage counts its size rounded up to 512 bytes, the caching allocator's block granularity
(`kMinBlockSize` and `round_size` in c10/cuda/CUDACachingAllocator.cpp), which is what
`torch.cuda.max_memory_allocated` adds up.

Every storage carries a category, kept up to date as its role becomes known (saved for backward,
accumulated as a gradient, ...), so the breakdown at the peak costs one copy of a small dict.

A dispatch mode changes one thing it watches: autograd's input buffer sums two gradients of the
same tensor in place only when neither is "subclass-like", which ATen says of every tensor while
a dispatch mode is active. The tracker gives such a sum back its place (`_input_buffer_sum`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch._prims_common import is_non_overlapping_and_dense_or_false
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
    born: int
    """The number of the op that made it (`StorageTracker._ops`; 0 before the first)."""


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
        self._ops = 0
        self._node: tuple[str, int] | None = None
        """The autograd node whose backward runs (its name and sequence number), if any."""
        self._node_start = 0
        """The number of the first op `_node` ran."""
        self._sum: tuple[_Entry, _Entry] | None = None
        """An input buffer's sum, out of place, whose peak waits for the next event: (the
        buffer's old gradient, the sum)."""
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
        self._settle()
        self._ops += 1
        node = torch._C._current_autograd_node()
        node_key = None if node is None else (node.name(), node._sequence_nr())
        if node_key != self._node:
            self._node, self._node_start = node_key, self._ops
        out = func(*args, **(kwargs or {}))
        if active_fake_mode() is not self._fake_mode:
            # DTensor's sharding propagation runs on fake tensors of its own: not memory
            return out
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self.track(leaf)
        buffered = self._input_buffer_sum(func, args, kwargs, out)
        total = None if buffered is None else self._live.get(id(out.untyped_storage()))
        if buffered is None or total is None:
            self._note_peak()
        else:
            self._sum = (buffered, total)
        return out

    def _input_buffer_sum(self, func: Any, args: Any, kwargs: Any, out: Any) -> _Entry | None:
        """The entry of the gradient in autograd's input buffer, if `out` may be the sum that
        `InputBuffer::accumulate` (torch/csrc/autograd/input_buffer.cpp) makes of it and a new
        gradient of the same tensor. In backward (grad mode off) it calls `old_var.add_(var)`
        when `can_accumulate_inplace(old_var)` and `var` is no subclass: `old_var` is a plain
        tensor, non-overlapping and dense, and holds the only reference to itself and to its
        storage; else `old_var + var`. Under any dispatch mode `at::isTensorSubclassLike` is true
        (aten/src/ATen/TensorSubclassLikeUtils.h), so the trace sees `aten.add.Tensor` where a
        GPU adds in place. The buffer's gradient is told from a temporary of the running node's
        own formula by its age: a node that ran before made it. Not a view (a view's base holds
        the storage too, as the transposed weight gradient of a linear does). Whether the
        buffer held the only reference shows next: its storage is freed by the very next event
        (`_freed_callback`), since the engine assigns the sum in its place."""
        if (func is not torch.ops.aten.add.Tensor or kwargs or len(args) != 2
                or self._node is None or torch.is_grad_enabled()):
            return None
        old = args[0]
        if not (isinstance(old, torch.Tensor) and isinstance(out, torch.Tensor)
                and isinstance(args[1], torch.Tensor)) or old._is_view():
            return None
        if (old.shape != out.shape or old.dtype != out.dtype
                or not is_non_overlapping_and_dense_or_false(old)
                or not 0 < old.untyped_storage().nbytes() == out.untyped_storage().nbytes()):
            return None
        entry = self._live.get(id(old.untyped_storage()))
        if entry is None or entry.born >= self._node_start:
            return None
        return entry

    def _summed_in_place(self, key: int, old: _Entry) -> None:
        """The input buffer's gradient freed right after the sum: a GPU wrote the sum in its
        storage. The sum takes the old gradient's block (and role); no allocation, no free."""
        assert self._sum is not None
        _, total = self._sum
        self._sum = None
        allocated = self.events.pop()
        assert allocated.tensor == total.handle, "the sum's allocation is the last event"
        del self._live[key]
        self._add(old.category, -old.n_bytes)
        if total.category is not old.category:
            self._move(total, old.category)
        total.handle = old.handle

    def _settle(self) -> None:
        """Any event but the buffer's free: the sum was out of place, its peak counts."""
        if self._sum is not None:
            self._sum = None
            self._note_peak()

    # --- registering and classifying storages ------------------------------------------------

    def track(self, tensor: torch.Tensor, category: PartKind = PartKind.TEMPORARIES) -> None:
        """Count `tensor`'s storage from now until it is freed (once, however many views);
        a tensor subclass (a DTensor) counts the storages of the tensors it wraps."""
        self._settle()
        if category is PartKind.REFERENCE_WEIGHTS and category not in self._shown:
            self._shown = tuple(p for p in TRACED_PARTS if p in self._shown or p is category)
        for storage in _storages(tensor):
            self._track_storage(storage, category)

    def _resized(self, storage: torch.UntypedStorage) -> None:
        self._settle()
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
            self._live[key] = _Entry(ref, n_bytes, category, handle, self._ops)
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
        self._settle()
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
            if self._sum is not None and entry is self._sum[0]:
                self._summed_in_place(key, entry)
                return
            self._settle()
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
        self._settle()
        self.phase = phase
        self.events.append(mark(phase.value))
        if self.recording and self.current > self._phase_peaks.get(phase, (-1, {}))[0]:
            # a phase entered again (DPO's loss after the reference pass) keeps its peak
            self._phase_peaks[phase] = (self.current, dict(self.totals))

    def start_recording(self) -> None:
        """Forget earlier peaks: from now on, peaks are those of the reported step."""
        self._settle()
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
        self._settle()
        return tuple(PhasePeak(phase, peak, breakdown(totals, self._shown))
                     for phase, (peak, totals) in self._phase_peaks.items())

    def peak_breakdown(self) -> Breakdown:
        self._settle()
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
