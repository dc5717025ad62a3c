"""torchtitan's code by date (`TorchtitanCode`): its loss, the embedding's FSDP unit, the
launcher's allocator settings, cuDNN attention by GPU generation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, slots=True)
class TorchtitanCode:
    """What torchtitan's training loop and Llama model did at some date, where it changed what a
    step holds (pytorch/torchtitan train.py, torchtitan/models/llama/model.py,
    torchtitan/components/loss.py)."""

    loop_keeps_logits: bool
    """`pred = model(input_ids); loss = loss_fn(pred, labels); loss.backward()`: the logits stay
    referenced through backward and the step, until the next forward rebinds `pred`. e29b6b4d4
    (#391, 2024-06-12) added `del pred` before backward ("to save 3.9G memory")."""
    logits_fp32_in_model: bool
    """The model returned `self.output(h).float()`: fp32 logits, its 16-bit head output freed by
    the cast, and the loss's `.float()` a no-op. e10cb9494 (2024-10-22) moved the `.float()` into
    the loss function."""
    compiles_loss: bool
    """Under `training.compile` the loss function is compiled too: from e10cb9494 (2024-10-22)
    until e8977b007 ("turning off compile on loss function", 2024-12-18), then again since
    bbb1b616e (#1033, 2025-04-02: `build_cross_entropy_loss`). Eager otherwise."""
    launcher_expandable_segments: bool
    """The launcher (`run_llama_train.sh`, `run_train.sh` since) exports
    `PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"` (`PYTORCH_ALLOC_CONF` at b5bcd76c):
    a5e57e4a9 (#643, 2024-10-22). Runs launched another way set what they say."""
    embedding_apart: bool
    """`apply_fsdp` shards `tok_embeddings` as a unit of its own (resharded after forward) and
    the final norm with the head as another: 83e694105 (#1094, 2025-07-28). Before, they stayed
    in the root unit (`fully_shard(model)`), which FSDP2 never reshards after forward: the
    embedding stayed gathered from forward to backward (`FrameworkDefaults.fsdp2_embedding_apart`,
    `embedding_apart`)."""
    cudnn_attention_from: tuple[int, int] | None
    """The CUDA compute capability from which `ScaledDotProductAttention` puts cuDNN's kernel
    first (`sdpa_kernel(backends, set_priority=True)`, torchtitan/models/attention.py): from
    3b85aa31f (#1196, 2025-05-14, "Use cudnn backend on B200") on Blackwell only,
    `has_cuda_capability(10, 0)`; from 6a3a9da95 (#1776, 2025-10-09) on every CUDA device
    (`sdpa_backends = [CUDNN_ATTENTION, FLASH_ATTENTION, EFFICIENT_ATTENTION]`, read at
    028a455c1). None: flash first everywhere."""
    saves_cudnn_attention: bool
    """The per-op checkpointing policy's save list holds `aten._scaled_dot_product_cudnn_attention`
    (b39377f9f, #2095, 2025-12-01, "to avoid recomputing attention during backward"; before,
    only the flash and memory-efficient kernels: torchtitan/models/llama3/infra/parallelize.py
    `_save_list` at 6fc499f6, `_op_sac_save_list` at 028a455c1)."""
    saves_reduce_scatter: bool
    """The per-op policy's save list holds `_c10d_functional.reduce_scatter_tensor`: since the
    first commit (torchtitan/parallelisms/parallelize_llama.py `_save_list` at c22d1a8d1,
    2024-04-11), except from 247f4e3aa (#965, 2025-03-20, "Don't save reduce scatter output for
    per op SAC", for async TP's pattern matching) until 88d8ab372 (#1031, 2025-04-21, "Add back
    reduce_scatter_tensor to save list"); still there today (torchtitan/distributed/
    activation_checkpoint.py `_get_default_save_ops` at b5bcd76c6)."""

    def saves_sdpa_output(self, cuda_capability: tuple[int, int] | None) -> bool:
        """Per-op checkpointing keeps SDPA's output and log-sum-exp on a card of
        `cuda_capability` (None: not a CUDA card, or not known): unless cuDNN's kernel runs
        there and the save list lacks it, in which case backward recomputes the attention."""
        runs_cudnn = (self.cudnn_attention_from is not None and cuda_capability is not None
                      and cuda_capability >= self.cudnn_attention_from)
        return self.saves_cudnn_attention or not runs_cudnn


TORCHTITAN_FREES_LOGITS_SINCE = date(2024, 6, 12)
TORCHTITAN_LOSS_UPCASTS_SINCE = date(2024, 10, 22)
TORCHTITAN_COMPILED_LOSS = ((date(2024, 10, 22), date(2024, 12, 18)), (date(2025, 4, 2), None))
TORCHTITAN_EMBEDDING_APART_SINCE = date(2025, 7, 28)
TORCHTITAN_LAUNCHER_EXPANDABLE_SINCE = date(2024, 10, 22)
TORCHTITAN_CUDNN_ON_BLACKWELL_SINCE = date(2025, 5, 14)
TORCHTITAN_CUDNN_EVERYWHERE_SINCE = date(2025, 10, 9)
TORCHTITAN_SAVES_CUDNN_ATTENTION_SINCE = date(2025, 12, 1)
TORCHTITAN_REDUCE_SCATTER_UNSAVED = (date(2025, 3, 20), date(2025, 4, 21))
"""The dates of the commits named in `TorchtitanCode` (the compiled loss and the reduce-scatter
left out of the save list: from, until)."""
BLACKWELL_CAPABILITY = (10, 0)
"""torchtitan's `has_cuda_capability(10, 0)`: B200 and later (compute capability 10.0)."""
ANY_CUDA_CAPABILITY = (0, 0)
"""Every CUDA device (torchtitan's cuDNN-first list from 6a3a9da95 has no capability test)."""


def _torchtitan_cudnn_from(on: date) -> tuple[int, int] | None:
    if on >= TORCHTITAN_CUDNN_EVERYWHERE_SINCE:
        return ANY_CUDA_CAPABILITY
    return BLACKWELL_CAPABILITY if on >= TORCHTITAN_CUDNN_ON_BLACKWELL_SINCE else None


def torchtitan_code(on: date | None) -> TorchtitanCode:
    """torchtitan's code as of `on`; None: today's."""
    if on is None:
        return TorchtitanCode(loop_keeps_logits=False, logits_fp32_in_model=False,
                              compiles_loss=True, launcher_expandable_segments=True,
                              embedding_apart=True, cudnn_attention_from=ANY_CUDA_CAPABILITY,
                              saves_cudnn_attention=True, saves_reduce_scatter=True)
    unsaved_from, unsaved_until = TORCHTITAN_REDUCE_SCATTER_UNSAVED
    return TorchtitanCode(
        loop_keeps_logits=on < TORCHTITAN_FREES_LOGITS_SINCE,
        logits_fp32_in_model=on < TORCHTITAN_LOSS_UPCASTS_SINCE,
        compiles_loss=any(start <= on and (end is None or on < end)
                          for start, end in TORCHTITAN_COMPILED_LOSS),
        launcher_expandable_segments=on >= TORCHTITAN_LAUNCHER_EXPANDABLE_SINCE,
        embedding_apart=on >= TORCHTITAN_EMBEDDING_APART_SINCE,
        cudnn_attention_from=_torchtitan_cudnn_from(on),
        saves_cudnn_attention=on >= TORCHTITAN_SAVES_CUDNN_ATTENTION_SINCE,
        saves_reduce_scatter=not unsaved_from <= on < unsaved_until)
