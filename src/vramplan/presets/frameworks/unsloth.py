"""Unsloth's code by date (`UnslothCode`): its releases, the loss chunking, checkpoint
offloading and the buffers each release added, read in unslothai/unsloth and unsloth-zoo."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from vramplan.presets.frameworks.dates import during


class UnslothLossChunking(StrEnum):
    """How `unsloth_fused_ce_loss` splits a micro-batch's rows into chunks (unslothai/unsloth-zoo
    unsloth_zoo/fused_losses/cross_entropy_loss.py `get_chunk_size` and
    `_get_chunk_multiplier`; `vramplan.training.specs.unsloth_loss_chunks`)."""

    ONE_GIB = "one GiB"
    """`target_gb = 1`: n_chunks = max(4 * round(B*T * V * 4 / 2**30 / 1 / 4), 1), the full fp32
    logits' GiB rounded to the nearest whole, times 4 (fc29e051, 2025-08-13; passed by unsloth's
    llama.py from 806bee24, 2025-08-13, and by the zoo's compiler.py)."""
    HALF_FREE = "half free"
    """`target_gb = None`: the target is half of `torch.cuda.mem_get_info()`'s free memory at the
    first call (`functools.cache`d): n_chunks = max(4 * round(B*T * 2V / free), 1) (zoo
    770de251, 2025-09-04, which makes compiler.py pass None; unsloth 5c1b0ae9, 2025-09-04, for
    llama.py)."""
    HALF_FREE_CAPPED = "half free, at most 4 GiB"
    """The target is min(free / 2, 4 GiB), and the chunks are rounded up to a multiple of 4:
    n_chunks = 1 when the fp32 logits fit the target, else 4 * ceil(B*T * 4V / target / 4)
    (zoo d9fe1f43, 2026-07-06)."""


@dataclass(frozen=True, slots=True)
class UnslothCode:
    """What Unsloth did at some date, where it changed what a training step holds
    (unslothai/unsloth, unslothai/unsloth-zoo)."""

    offloads_checkpoints: bool
    """`use_gradient_checkpointing="unsloth"` sends each checkpointed block's input to host memory
    (`hidden_states.to("cpu", non_blocking=True)`, saved for backward, brought back to recompute
    the block): 920f0ae6 (2024-04-06) `Offloaded_Gradient_Checkpointer`, then
    `Unsloth_Offloaded_Gradient_Checkpointer` (unsloth/models/_utils.py 4474e4bc), since in
    unsloth_zoo. Before, transformers' checkpointing kept the inputs on the GPU."""
    fused_loss: bool
    """The causal-LM loss never materializes the logits: `CausalLM_fast_forward` hands the
    hidden states and the head to `fused_linear_cross_entropy`, Cut Cross-Entropy's
    `linear_cross_entropy` (unslothai/unsloth fa8e59eb, 2024-11-17; it runs when
    `cut_cross_entropy` imports, a dependency of unsloth_zoo since e5aab212, 2024-11-21, first
    in release 2024.11.8), then to `unsloth_fused_ce_loss`, which computes the head and the
    cross-entropy chunk by chunk (806bee24, 2025-08-13, release 2025.8.5); both are modelled as
    a fused linear cross-entropy. Before, the head made the 16-bit logits and
    `fast_cross_entropy_loss` (unsloth/kernels/cross_entropy_loss.py `Fast_CrossEntropyLoss`)
    saved them and wrote their gradient over them in backward."""
    loss_chunking: UnslothLossChunking | None = None
    """How `unsloth_fused_ce_loss` picks its chunks; None before it (Cut Cross-Entropy, whose
    chunks are modelled as Liger-Kernel's)."""
    small_batches_keep_logits: bool = False
    """A micro-batch of at most `UNSLOTH_SMALL_BATCH_TOKENS` tokens takes the logits path
    instead ("< 1024 Normal Unsloth uses less VRAM!": `if bsz*q_len <= 1024: RETURN_LOGITS =
    True`, b9fe2588, 2024-12-10, release 2024.12.5, until 0528b4ce, 2025-10-26, release
    2025.10.11, which sends it to `unsloth_fused_ce_loss` too)."""
    rope_tables_per_layer: bool = False
    """Unsloth's own rotary module, put in place of transformers' (unsloth/models/llama.py
    `LlamaRotaryEmbedding`; mistral.py and gemma.py `pre_patch` point their models' classes
    at it), registers cos and sin tables (`_set_cos_sin_cache`, `register_buffer("cos_cached",
    ...)`, cast to the model's dtype by `post_patch`), and every attention layer builds its own
    (`patch_llama_rope_scaling` rewrites the module's `__init__`): per-layer tables until
    63782ea3 (2025-01-07) makes each layer use the model's one (`layer.self_attn.rotary_emb =
    model.model.rotary_emb`)."""
    rope_rows_capped: bool = False
    """The tables hold `min(4 * 8192, max_position_embeddings)` rows (54dd81de, 2024-07-18:
    `self.current_rope_size`); before, `max_position_embeddings`."""
    global_dequant_buffer: bool = False
    """The LoRA kernels' forward dequantizes each 4-bit weight into one buffer per device that
    stays allocated and grows to the largest weight (unsloth/kernels/utils.py `matmul_lora`:
    `fast_dequantize(W.t(), W_quant, use_global_buffer = True)`, `WEIGHT_BUFFERS` in the
    weight's dtype and `ABSMAX_BUFFERS` in fp32, one value per 4-bit block): 144190bd
    (2025-02-06). Backward still dequantizes into a fresh tensor."""
    smart_checkpointing: bool = False
    """The offloaded checkpoints go through unsloth_zoo's `UnslothCheckpointFunction` (unsloth
    3e5f0611, 2025-03-04, release 2025.3.5: `patch_unsloth_smart_gradient_checkpointing` puts it
    in place of `torch.utils.checkpoint`'s for the Llama path; before, unsloth's own
    `Unsloth_Offloaded_Gradient_Checkpointer` sent every block's input to the host and brought it
    back into a fresh tensor). Read in unsloth_zoo/gradient_checkpointing.py from 5572cc46
    (2025-01-07) to df5fe407: the last checkpointed call's input stays on the GPU
    (`CURRENT_GC_INDEX != LAST_GC_INDEX` is the condition to offload), and each offloaded input
    comes back into a GPU buffer that grows to the largest one (`GPU_BUFFER.resize_(new_size)`)
    and stays allocated for the run."""
    first_pass_kept: bool = False
    """In the run's first micro-batch no block's input is offloaded: `LAST_GC_INDEX` grows with
    `CURRENT_GC_INDEX` while `FIRST_PASS` (unsloth_zoo 5572cc46, "Save last layer index so next
    run we do not offload activations"), so every checkpointed input stays on the GPU until the
    first backward; until df5fe407 (2025-11-24) offloads in the first pass too (`or
    FIRST_PASS`), in unsloth_zoo 2025.11.5, the minimum of unsloth 2025.11.4 (2025-11-25)."""
    reload_buffers: int = 1
    """GPU buffers the offloaded inputs come back into under `smart_checkpointing`: a second
    one since unsloth_zoo 510d987f (2026-05-04, "Double-buffer GPU activations"), grown like the
    first once the first pass is over and more than `DOUBLE_BUFFER_HEADROOM` (512 MiB) is free."""
    expandable_segments: bool = False
    """`import unsloth` sets `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` ("Reduce VRAM
    usage by reducing fragmentation", unsloth/__init__.py c599ae0f, 2024-03-17, release 2024.4;
    torch 2.2 and later; since 63b2e8fc, 2025-09-08, with `roundup_power2_divisions`
    intervals, which the simulated allocator does not take; in unsloth_zoo since 1c1f7033)."""


UNSLOTH_EXPANDABLE_SEGMENTS_SINCE = date(2024, 3, 17)
UNSLOTH_OFFLOADED_CHECKPOINTS_SINCE = date(2024, 4, 6)
UNSLOTH_FUSED_LOSS_SINCE = date(2024, 11, 21)
UNSLOTH_FUSED_CE_LOSS_SINCE = date(2025, 8, 13)
UNSLOTH_LOSS_CHUNKS_FROM_FREE_SINCE = date(2025, 9, 4)
UNSLOTH_LOSS_CHUNK_TARGET_CAPPED_SINCE = date(2026, 7, 6)
UNSLOTH_SMALL_BATCH_LOGITS = (date(2024, 12, 10), date(2025, 10, 26))
UNSLOTH_ROPE_ROWS_CAPPED_SINCE = date(2024, 7, 18)
UNSLOTH_SHARED_ROPE_SINCE = date(2025, 1, 7)
UNSLOTH_GLOBAL_DEQUANT_BUFFER_SINCE = date(2025, 2, 6)
UNSLOTH_SMART_CHECKPOINTING_SINCE = date(2025, 3, 5)
UNSLOTH_FIRST_PASS_OFFLOADED_SINCE = date(2025, 11, 25)
UNSLOTH_DOUBLE_RELOAD_BUFFER_SINCE = date(2026, 5, 4)
"""The dates of the commits named in `UnslothCode` (the fused loss: the day
`cut_cross_entropy` became a dependency; the small batches' logits: from, until)."""
UNSLOTH_ROPE_ROWS = 4 * 8192
"""`UnslothCode.rope_rows_capped`: the most rows its rotary tables hold."""
UNSLOTH_SMALL_BATCH_TOKENS = 1024
"""`UnslothCode.small_batches_keep_logits`: batch x length at most this takes the logits path."""

UNSLOTH_RELEASE_DATES: dict[tuple[int, ...], date] = {
    # the releases that brought a change of `UnslothCode`, and the date their version string
    # reached unslothai/unsloth's main branch (`git log --first-parent -G __version__
    # unsloth/models/_utils.py`); a version string names every commit until the next one, so a
    # release runs the code of its first commit at the earliest
    (2024, 4): date(2024, 4, 6),
    (2024, 11, 8): date(2024, 11, 21),
    (2024, 12, 5): date(2024, 12, 20),
    (2025, 1, 5): date(2025, 1, 14),  # fb1397d9, the first with 63782ea3's shared rotary tables
    (2025, 3, 5): date(2025, 3, 5),  # a877c370, the first version string after 3e5f0611
    (2025, 8, 5): date(2025, 8, 13),
    # 6e237fac, the first to pass `target_gb = None` (5c1b0ae9) and to require
    # unsloth_zoo>=2025.9.3 (with 770de251's free-memory chunks); 2025.9.1 allowed zoo 2025.8.9
    (2025, 9, 2): date(2025, 9, 8),
    (2025, 10, 11): date(2025, 10, 28),
    # 7af84b49, the first to require unsloth_zoo>=2025.11.5, which has df5fe407
    (2025, 11, 4): date(2025, 11, 25),
}


def unsloth_release_date(version: tuple[int, ...]) -> date:
    """The earliest date a release (year, month[, patch]) can have run: the first of its month,
    or the arrival of the latest release of `UNSLOTH_RELEASE_DATES` it is not older than,
    whichever is later (`2024.4` began on 2024-04-06, with the offloaded checkpoints)."""
    year, month = version[:2]
    arrivals = [when for release, when in UNSLOTH_RELEASE_DATES.items() if release <= version]
    return max([date(year, month, 1), *arrivals])


def unsloth_code(on: date | None) -> UnslothCode:
    """Unsloth's code as of `on`; None: today's."""
    if on is None:
        return UnslothCode(offloads_checkpoints=True, fused_loss=True, rope_rows_capped=True,
                           loss_chunking=UnslothLossChunking.HALF_FREE_CAPPED,
                           global_dequant_buffer=True, smart_checkpointing=True,
                           reload_buffers=2, expandable_segments=True)
    return UnslothCode(offloads_checkpoints=on >= UNSLOTH_OFFLOADED_CHECKPOINTS_SINCE,
                       fused_loss=on >= UNSLOTH_FUSED_LOSS_SINCE,
                       loss_chunking=_unsloth_loss_chunking(on),
                       small_batches_keep_logits=during(on, UNSLOTH_SMALL_BATCH_LOGITS),
                       rope_tables_per_layer=on < UNSLOTH_SHARED_ROPE_SINCE,
                       rope_rows_capped=on >= UNSLOTH_ROPE_ROWS_CAPPED_SINCE,
                       global_dequant_buffer=on >= UNSLOTH_GLOBAL_DEQUANT_BUFFER_SINCE,
                       smart_checkpointing=on >= UNSLOTH_SMART_CHECKPOINTING_SINCE,
                       first_pass_kept=UNSLOTH_SMART_CHECKPOINTING_SINCE <= on
                       < UNSLOTH_FIRST_PASS_OFFLOADED_SINCE,
                       reload_buffers=2 if on >= UNSLOTH_DOUBLE_RELOAD_BUFFER_SINCE else 1,
                       expandable_segments=on >= UNSLOTH_EXPANDABLE_SEGMENTS_SINCE)


def _unsloth_loss_chunking(on: date) -> UnslothLossChunking | None:
    if on >= UNSLOTH_LOSS_CHUNK_TARGET_CAPPED_SINCE:
        return UnslothLossChunking.HALF_FREE_CAPPED
    if on >= UNSLOTH_LOSS_CHUNKS_FROM_FREE_SINCE:
        return UnslothLossChunking.HALF_FREE
    if on >= UNSLOTH_FUSED_CE_LOSS_SINCE:
        return UnslothLossChunking.ONE_GIB
    return None
