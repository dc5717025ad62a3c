"""Megatron-LM's and Transformer Engine's dated changes that move memory: the core releases, the
cross-entropy's max subtracted in place, the cached dummy weight gradients, MoE probabilities."""

from __future__ import annotations

from datetime import date

MEGATRON_CORE_RELEASE_DATES: dict[tuple[int, int], date] = {
    # NVIDIA/Megatron-LM release tags and their commits' dates (git log -1 core_r0.N.0)
    (0, 5): date(2024, 2, 26),  # core_r0.5.0, 0acc240e
    (0, 7): date(2024, 5, 30),  # core_r0.7.0, a645f896
    (0, 8): date(2024, 8, 12),  # core_r0.8.0, baf94af3
}
MEGATRON_MAX_SUBTRACTED_IN_PLACE_SINCE = date(2024, 6, 13)
"""NVIDIA/Megatron-LM 9634c0e4 (first in core_r0.8.0): the vocabulary-parallel cross-entropy
subtracts the logits' maximum in place (`vramplan.training.activations.head.HeadSpec.
megatron_max_subtracted_apart` before it)."""


TE_DUMMY_WGRAD_CACHE_SINCE = date(2025, 4, 8)
"""NVIDIA/TransformerEngine ba5dc5dde (#1651, 2025-04-08, first in v2.3): with fused weight-
gradient accumulation `_Linear` and `_LayerNormLinear` return `get_dummy_wgrad(shape, dtype)`,
one tensor per (shape, dtype) cached in the module-level `_dummy_wgrads` and never freed
(transformer_engine/pytorch/module/base.py); before it, a fresh `torch.empty` each backward
(`vramplan.training.dummy_wgrads`)."""
TE_GROUPED_DUMMY_WGRAD_CACHE_SINCE = date(2025, 10, 27)
"""NVIDIA/TransformerEngine d2945c6a5 (#2305, 2025-10-27, first in v2.10): `GroupedLinear`, the
routed experts' linear, takes its dummy weight gradients from the same cache."""
MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE = date(2025, 5, 20)
"""NVIDIA/Megatron-LM 2659630721 (!2668 "perf(MoE): Memory efficient token permutation", 2025-04-09
on main), dated by its first release, core_v0.12.1 of 2025-05-20 (core_r0.11.0 and core_v0.12.0
of 2025-05-06 still have the old code, checked by ancestry): Megatron-Core runs from release
branches (ms-swift's Megatron-SWIFT cloned `core_r0.11.0` until it moved to core_r0.13.0,
swift/megatron/init.py), not main. With it, the routed experts multiply their activation by the
routing probabilities (megatron/core/transformer/moe/experts.py `TEGroupedMLP.forward`:
`weighted_bias_swiglu_impl(intermediate_parallel, bias_parallel, permuted_probs)`, or
`activation_func_with_probs`), and the token dispatchers restore the token order without them
(token_dispatcher.py `MoEAlltoAllTokenDispatcher.combine_postprocess`: `unpermute(...)` without
`probs`; the flex dispatcher's `HybridEPCombine`/`FusedCombine` keep only their handle), so
nothing keeps the experts' fc2 output. Before it `unpermute(..., probs=self.probs)` weighted
that output (moe_utils.py `unpermute`: `permuted_tokens * permuted_probs.unsqueeze(-1)`, or
Transformer Engine's `moe_unpermute` with `probs`), which keeps it for the probabilities'
gradient (`vramplan.training.activations.spec.BlockSpec.moe_output_weighted`)."""
MEGATRON_HEAD_DUMMY_WGRAD_CACHE_SINCE = date(2025, 8, 1)
"""NVIDIA/Megatron-LM e7c55de99e (2025-08-01, first in core_v0.14.0): Megatron's own linear
(`LinearWithGradAccumulationAndAsyncCommunication`, megatron/core/tensor_parallel/layers.py),
the output layer's, takes its dummy weight gradient from Transformer Engine's cache when TE is
installed; before it, a fresh `torch.empty` each backward."""
