"""Activation checkpointing: what each checkpointing choice keeps of a block's saved tensors
(full, per-submodule, and torchtitan's per-op selective checkpointing)."""

from __future__ import annotations

from vramplan.model.architecture import Architecture
from vramplan.training.activations.spec import FP32, BlockSpec, Saved
from vramplan.vocab import Checkpointing, Framework


def block_input_bytes(arch: Architecture, spec: BlockSpec) -> int:
    """Bytes per token of a block's input: what full checkpointing keeps per block."""
    return spec.residual_bytes * arch.hidden_size


def submodule_checkpoint_inputs(arch: Architecture, spec: BlockSpec) -> int:
    """Per token, what one block keeps when each of its sub-modules is checkpointed on its own
    (`TrainingSetup.checkpoint_submodules`): the inputs of its two norms, its attention and its
    MLP, which are the block's input, the first norm's output, the mid-block residual and the
    second norm's output (the residual adds, not wrapped, save nothing)."""
    return 2 * (spec.residual_bytes + spec.compute_bytes) * arch.hidden_size


_CHECKPOINT_INPUTS = frozenset({"x_in", "x_mid", "norm_1_out", "norm_2_out"})


def largest_submodule_saved(saved: tuple[Saved, ...]) -> int:
    """Per token, the most one sub-module saves when its checkpoint recomputes it in backward
    (`TrainingSetup.checkpoint_submodules`): the block's `saved` tensors, in forward order,
    split into the first norm's, attention's, the second norm's and the MLP's; the sub-modules'
    inputs are kept by their checkpoints (`submodule_checkpoint_inputs`)."""
    groups = {"norm_1": 0, "attention": 0, "norm_2": 0, "mlp": 0}
    past_second_norm = False
    for item in saved:
        if item.name in _CHECKPOINT_INPUTS:
            continue
        if item.name.startswith("norm_1"):
            group = "norm_1"
        elif item.name.startswith("norm_2"):
            group, past_second_norm = "norm_2", True
        else:
            group = "mlp" if past_second_norm else "attention"
        groups[group] += item.bytes_per_token
    return max(groups.values())


def checkpointed(blocks: tuple[Saved, ...], checkpointing: Checkpointing) -> tuple[Saved, ...]:
    """Selective checkpointing (Korthikanti et al. 2022, section 4.2) recomputes the attention
    core: the score matrix is not kept."""
    if checkpointing is not Checkpointing.SELECTIVE:
        return blocks
    return tuple(s for s in blocks if not s.name.startswith(("attn_probs", "attn_tanh",
                                                             "q_scaled")))


def per_op_selective_saved(arch: Architecture, spec: BlockSpec) -> tuple[Saved, ...]:
    """What torchtitan's per-op selective checkpointing keeps of a Llama block, per token.

    pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py @9dec370
    `_apply_ac_to_transformer_block` (selective_ac_option "op", the llama3 train configs'
    setting): the policy saves the outputs of the ops in `_save_list` (aten.mm, the flash and
    memory-efficient SDPA kernels) "except every second mm", counted in forward order within
    the block, and recomputes the rest in backward. A Llama block calls wq, wk, wv, wo, then w1,
    w3, w2 (torchtitan/models/llama/model.py: `self.w2(F.silu(self.w1(x)) * self.w3(x))`):
    mms 1, 3, 5, 7 are kept (q, v, w1's and w2's outputs), plus SDPA's output and log-sum-exp
    when the kernel that runs is in the list (`BlockSpec.sdpa_output_saved`: cuDNN's was not
    until 2025-12-01), and the block's input, which the checkpoint wrapper keeps.

    Compiled (`training.compile`, each block under `torch.compile`), the policy only tags the
    ops: the partitioner does not recompute a tagged op, but it stores only what the backward
    graph reads, and w2's output feeds nothing but the residual add, whose gradient needs no
    input. Eager SAC stores every tagged output for the replay of the block's forward. Measured
    by compiling torchtitan's policy on a Llama block on the CPU (torch 2.13, inductor): 63,616
    bytes per token and layer eager, 55,424 compiled, w2's output less.

    Under tensor parallelism (`BlockSpec.tensor_parallel`, torchtitan/models/llama3/infra/
    parallelize.py `apply_tp` at 028a455c1: the norms `SequenceParallel()`, attention's and the
    MLP's input all-gathered to `Replicate()` by `PrepareModuleInput`, wq/wk/wv/w1/w3
    `ColwiseParallel`, wo and w2 `RowwiseParallel(output_layouts=Shard(1))`), the block's
    input, q, v, SDPA's tensors and w1's output are split over the GPUs (the sequence or the
    heads and the MLP's width), as `vramplan.distributed.per_gpu` divides every activation by
    the degree. Not w2's: the row-parallel mm of the whole sequence's `[b·s, f/tp]` by
    `[f/tp, h]` makes a partial sum `[b·s, h]` on every GPU, whole; the DTensor redistribution
    to `Shard(1)` reduce-scatters it (`funcol.reduce_scatter_tensor`, the op
    `_c10d_functional.reduce_scatter_tensor`), and that op is in the save list
    (`_op_sac_save_list` at 028a455c1; `BlockSpec.reduce_scatter_saved`), so its output
    `[b, s/tp, h]` is kept too, after wo (mm 4, recomputed) and after w2. The bytes per token
    returned are those before that division: w2's output counts `tensor_parallel` times its
    width, each reduce-scatter's output once. Compiled, the partitioner stores wo's
    reduce-scatter output (the mid-block residual `h = x + wo_out` is needed to recompute the
    second norm, and a tagged op's output is not recomputed) but neither w2's output nor its
    reduce-scatter's, which feed the block's last add alone. Traced on the CPU (torch 2.13, a
    fake process group of 2 ranks, torchtitan's plan and policy on a small Llama block,
    benchmarks/torchtitan_tp_sac.py): eager, the policy tags q's `[b·s, q/tp]`, v's, SDPA's,
    both reduce-scatters' `[b, s/tp, h]`, w1's `[b·s, f/tp]` and w2's `[b·s, h]`; compiled
    (AOTAutograd's min-cut partitioner), the forward graph hands backward the block input, q,
    v, SDPA's output and log-sum-exp, wo's reduce-scatter output and w1's output."""
    c, f = spec.compute_bytes, arch.expert_intermediate_size
    attention = (Saved("attn_out", c * arch.q_dim), Saved("attn_logsumexp", FP32 * arch.n_heads))
    kept = (Saved("x_in", spec.residual_bytes * arch.hidden_size),
            Saved("q_mm_out", c * arch.q_dim),
            Saved("v_mm_out", c * arch.kv_dim),
            *(attention if spec.sdpa_output_saved else ()),
            Saved("w1_mm_out", c * f))
    tp, h = spec.tensor_parallel, arch.hidden_size
    reduce_scatter = tp > 1 and spec.reduce_scatter_saved
    wo_out = (Saved("wo_reduce_scatter_out", c * h),) if reduce_scatter else ()
    if spec.compiled:
        return (*kept[:-1], *wo_out, kept[-1])
    w2_out = (Saved("w2_reduce_scatter_out", c * h),) if reduce_scatter else ()
    return (*kept[:-1], *wo_out, kept[-1], Saved("w2_mm_out", c * h * tp), *w2_out)


def kept_for_backward(arch: Architecture, spec: BlockSpec, items: tuple[Saved, ...],
                      checkpointing: Checkpointing) -> tuple[Saved, ...]:
    """What a block keeps until its backward under `checkpointing`: everything it saves, or the
    selective policy's share. `selective` is torchtitan's per-op policy under torchtitan
    (`per_op_selective_saved`), the attention core's recomputation elsewhere (`checkpointed`);
    `full` keeps the block's input (counted by the caller)."""
    if checkpointing is Checkpointing.SELECTIVE and spec.framework is Framework.TORCHTITAN:
        return per_op_selective_saved(arch, spec)
    return checkpointed(items, checkpointing)
