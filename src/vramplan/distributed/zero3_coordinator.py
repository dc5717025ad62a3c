"""DeepSpeed ZeRO-3's parameter gathering: the sub-groups and reduce transients of its step,
the modules a traced step fetches in order, and the coordinator that prefetches and retains
gathered parameters (`Zero3Coordinator`, `zero3_gathered_peaks`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache

from vramplan.distributed.parallelism import CommBuffers
from vramplan.training.states import ModelStates
from vramplan.units import ceil_div


def zero3_sub_group_params(states: ModelStates, buffers: CommBuffers, n: int) -> int:
    """The largest ZeRO-3 sub-group of this rank's partition, in parameters. DeepSpeed adds
    parameter partitions to a sub-group until it holds `sub_group_size` elements or more
    (deepspeed/runtime/zero/stage3.py @38327e07 `_create_fp16_sub_groups`): at most the
    sub-group size plus one parameter's partition, at most the whole partition."""
    partition = ceil_div(states.trainable_params, n)
    largest = ceil_div(states.largest_trainable_params, n)
    return min(partition, buffers.zero_sub_group_elements + largest)


def zero3_reduce_transient_bytes(states: ModelStates, buffers: CommBuffers) -> int:
    """ZeRO-3 reduce-scatters a full bucket through `torch.cat` of its padded partitions, a
    copy of the bucket beside the kept one (deepspeed/runtime/comm/coalesced_collectives.py
    @38327e07 `reduce_scatter_coalesced`, called by stage3.py `__avg_scatter_grads` under the
    default `reduce_scatter=True`). The bucket fills, and is reduced while the blocks run
    backward, only when the trainable parameters outnumber it; otherwise its one reduction
    comes after backward (`independent_gradient_partition_epilogue`), once the activations
    are freed. Without gradients to partition (an optimizer stepping in backward), none."""
    if not states.gradient_bytes or states.trainable_params <= buffers.zero_reduce_bucket_elements:
        return 0
    return buffers.zero_reduce_bucket_elements * states.gradient_itemsize


@dataclass(frozen=True, slots=True)
class TracedModule:
    """One use of a module in a ZeRO-3 step's module trace: its parameters, by their storage
    elements (DeepSpeed's `ds_numel`)."""

    key: Hashable
    """The module (the same key at each of its uses)."""
    elements: int


@dataclass(frozen=True, slots=True)
class GatheredPeaks:
    """The most parameter elements ZeRO-3 holds gathered in each part of a step."""

    forward: int
    loss: int
    """From the head's forward to its backward, with what the coordinator kept for reuse."""
    backward: int
    """While the blocks run backward (the uses after the head's and before `first_block`)."""
    first_block: int
    """While the first block runs backward, and after it."""
    prefetch: int = 0
    """The most elements one prefetch has in flight."""


@lru_cache(maxsize=64)
def zero3_gathered_peaks(trace: tuple[TracedModule, ...], forward_uses: int, first_block: int,
                         buffers: CommBuffers, *, retains_prefetched: bool = True,
                         buffered: bool = True) -> GatheredPeaks:
    """Replays DeepSpeed's parameter coordinator over a step's module trace (`forward_uses`
    uses of forward, the last the head's; then backward, the head's first, whose uses from
    `first_block` on are the first block's and the embedding's): `Zero3Coordinator`. Each use
    counts what is gathered once its fetch and prefetch are issued, plus (`buffered`: the
    all-gather's, not one rank's copies) the buffer of the prefetch in flight;
    `retains_prefetched`: DeepSpeed's code since
    `vramplan.presets.frameworks.deepspeed.DEEPSPEED_RETAINS_PREFETCHED_SINCE`. Parameters under the
    persistence threshold are kept whole and are not traced."""
    coordinator = Zero3Coordinator(trace, buffers, retains_prefetched)
    uses = [coordinator.use(step) for step in range(len(trace))]
    at_use = [gathered + (in_flight if buffered else 0) for gathered, in_flight in uses]
    # the loss runs between the head's forward (the last forward use) and its backward
    head = forward_uses
    return GatheredPeaks(forward=max(at_use[:forward_uses], default=0),
                         loss=max(at_use[head - 1:head + 1], default=0),
                         backward=max(at_use[head + 1:first_block], default=0),
                         first_block=max(at_use[first_block:], default=0),
                         prefetch=max((in_flight for _, in_flight in uses), default=0))


class Zero3Coordinator:
    """DeepSpeed's `PartitionedParameterCoordinator` once its trace is complete
    (deepspeed/runtime/zero/partitioned_param_coordinator.py, the same rules at v0.14.2 and
    v0.19.8), by module uses:
    - `fetch_sub_module` gathers the module's parameters, pops its use off the parameter queue
      unless a prefetch already scanned it, then prefetches: it walks the queue until it has
      issued `stage3_prefetch_bucket_size` elements (a parameter may overshoot), at most
      `stage3_max_live_parameters` less what is gathered; parameters already gathered cost
      nothing, and every use it walks past marks its parameter as fetched for that use;
    - `release_sub_module` releases the module's parameters after the use unless a prefetch
      marked them for a later use (since `DEEPSPEED_RETAINS_PREFETCHED_SINCE`), or the trace
      uses them again before `stage3_max_reuse_distance` elements of later uses have gone by
      (`__params_to_release`).
    So a coordinator whose prefetches walk past gathered parameters keeps them: it holds about
    `stage3_max_live_parameters` elements once the trace has filled it. Checked against
    DeepSpeed 0.19.8 on the CPU (benchmarks/zero3_step_cpu.py, a 16-block model): the same
    gathered elements over the loss and at every block of backward but the last, and in
    forward's steady state one attention linear fewer (27.79 against 28.84 M); DeepSpeed
    reaches that state in the first block, the replay in the fifth. Both because every module
    DeepSpeed enters, containers and norms included, issues a prefetch, one more overshoot:
    the same replay over DeepSpeed's module list matches it at every block but the first
    (not written: the trace has the linears only)."""

    def __init__(self, trace: tuple[TracedModule, ...], buffers: CommBuffers,
                 retains_prefetched: bool = True) -> None:
        self.trace = trace
        self.buffers = buffers
        self.retains_prefetched = retains_prefetched
        self.queue = deque(range(len(trace)))
        self.marked: dict[Hashable, int] = {}
        self.gathered: dict[Hashable, int] = {}

    def use(self, step: int) -> tuple[int, int]:
        """The module used at `step` fetched and its prefetch issued, then released if due.
        Returns the elements gathered at that moment (DeepSpeed's `__n_available_params`, the
        prefetched ones included) and the prefetch's all-gather buffer then in flight (a flat
        buffer beside the per-parameter copies its `wait()` makes: partition_parameters.py
        `AllGatherCoalescedHandle`; none for a prefetch of one module)."""
        use = self.trace[step]
        self.gathered[use.key] = use.elements
        if self.marked.get(use.key, -1) < step:
            self.marked[use.key] = self.queue.popleft()  # this use's own entry
        in_flight = self._prefetch()
        gathered = sum(self.gathered.values())
        if self._released(step):
            del self.gathered[use.key]
        return gathered, in_flight

    def _prefetch(self) -> int:
        budget = min(self.buffers.zero3_max_live_parameters - sum(self.gathered.values()),
                     self.buffers.zero3_prefetch_bucket_elements)
        issued, modules = 0, 0
        while self.queue and issued < budget:
            later = self.queue.popleft()
            key = self.trace[later].key
            self.marked[key] = max(self.marked.get(key, -1), later)
            if key not in self.gathered:
                self.gathered[key] = self.trace[later].elements
                issued += self.trace[later].elements
                modules += 1
        # one parameter is gathered straight into its own buffer (partition_parameters.py
        # v0.14.2 `all_gather_coalesced`, `len(params) == 1`); several into a flat buffer
        # that their copies sit beside until each is waited on
        return issued if modules > 1 else 0

    def _released(self, step: int) -> bool:
        key = self.trace[step].key
        if self.retains_prefetched and self.marked.get(key, -1) > step + 1:
            return False
        traversed = 0
        for later in self.trace[step + 1:]:
            if traversed >= self.buffers.zero3_max_reuse_distance:
                return True
            if later.key == key:
                return False
            traversed += later.elements
        return True
