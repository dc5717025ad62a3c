"""torchtune's code by date: the commits that published measured runs, its rotary caches, NF4
builds, and when its recipes stopped keeping their logits."""

from __future__ import annotations

from datetime import date

from vramplan.presets.frameworks.dates import has_change
from vramplan.vocab import Method

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing on the CLI path
if TYPE_CHECKING:
    from vramplan.model.architecture import Architecture

TORCHTUNE_COMMIT_DATES: dict[str, date] = {
    # the pytorch/torchtune commits that published measured runs of the case files, by their
    # first eight hex digits, and their dates (git log)
    "0914d5cf": date(2024, 4, 15),  # docs/source/tutorials/qlora_finetune.rst
    "ff594c23": date(2024, 4, 15),  # docs/source/tutorials/lora_finetune.rst
    "2ab2721e": date(2024, 4, 4),  # recipes/generate.py of the e2e_flow.rst log
    "ada52240": date(2024, 4, 12),  # docs/source/examples/e2e_flow.rst
    "20747cd8": date(2024, 4, 18),  # docs/source/tutorials/llama3.rst
    "30b8519e": date(2024, 9, 24),  # README.md "Memory and training speed"
    "fef3ed10": date(2024, 4, 16),  # README.md table, "Memory update" (#775)
    "30c75d4a": date(2024, 5, 9),  # the tree of PR #961's runs
    "1814feb1": date(2024, 11, 18),  # README.md "Optimization flags" (#2003)
}
TORCHTUNE_GENERATE_CACHE_FITS_SINCE = date(2024, 9, 17)
"""torchtune's generate recipe sizes its KV cache to the prompt and the new tokens since 0f74070f4
(PR #1603, "Set max cache seq len in generate recipe": `setup_caches(..., decoder_max_seq_len=
prompt.numel() + cfg.max_new_tokens)`); before, `model.setup_caches(max_batch_size=1, dtype)`
allocated every layer's cache, and the bool causal mask, for the model builder's `max_seq_len`
(recipes/generate.py, torchtune/modules/transformer.py @20747cd87)."""
TORCHTUNE_KV_HEADS_CACHED_SINCE = date(2024, 11, 10)
"""torchtune's `KVCache` holds the key-value heads since e1caa9f82 (PR #1961, "Update KV Cache to
use num_kv_heads instead of num_heads"); before, every query head ("We take num_heads instead of
num_kv_heads because we cache the keys and values after they have been repeated",
torchtune/modules/kv_cache.py @20747cd87)."""
TORCHTUNE_CHUNKED_NF4_SINCE = date(2024, 6, 26)
"""torchtune pinned torchao 0.1 (pyproject.toml `torchao==0.1`, f97bcdaa0, 2024-04-09; a
nightly of March 2024 before) until c1c9f308a pinned ao 0.3 (2024-06-26). torchao 0.1 quantized a
weight to NF4 in one piece (torchao/dtypes/nf4tensor.py at v0.1 `quantize_tensor_nearest`:
`(value.unsqueeze(-1) - nf4).abs()`, 16 bf16 entries per value, then `min(dim=-1)`); "perform in
chunks" (pytorch/ao 6081796bc, PR #196, 2024-05-01, in 0.2.0) quantizes by chunks of 2^20
values, whose transients (about 74 MB) change no estimate
(`vramplan.training.allocations.torchao_nf4.torchtune_nf4_build`)."""

TORCHTUNE_PER_LAYER_BUILD_SINCE = date(2024, 9, 12)
"""torchtune b0895a798 (PR #1554, "llama 3_1 instantiate pos embedding only once"): the first
builder that makes every layer itself and hands one rotary module to all of them. Before it every
decoder builder (llama2, llama3, llama3_1, mistral, gemma, phi3, qwen2: read at ff594c231,
20747cd87 and 0b9f8306d, the last commit before that date) made one template layer holding its
own rotary module, built the embeddings and the head, and `TransformerDecoder` deep-copied the
template for every layer (torchtune/modules/transformer.py `_get_clones`: `copy.deepcopy`), the
template dropped when the builder returned; the single-device recipes build on the GPU (`with
self._device: config.instantiate(cfg_model)`). Llama 3.2's builders were per layer from the
first (d002d45e3); the other families kept the template and one rotary module per layer until
23896c30d (PR #2282, 2025-01-27), which is not modelled: from this date on, every family is
read as building its layers one by one around one rotary module."""
TORCHTUNE_WIDE_ROPE_FAMILIES = frozenset({"phi3", "qwen2"})
"""The families whose torchtune rotary module caches cos and sin over the whole rotated width
(torchtune/models/phi3/_position_embeddings.py and qwen2/_positional_embeddings.py:
`freqs = torch.cat([idx_theta, idx_theta], dim=-1)`, `cache = torch.cat([freqs.cos(),
freqs.sin()], dim=-1)`, [max_seq_len, 2 x head_dim]); Llama's, Mistral's and Gemma's keep
[max_seq_len, head_dim / 2, 2]."""


def torchtune_rope_modules(n_layers: int, on: date | None) -> int:
    """How many rotary modules, each with its cache, torchtune's model of `n_layers` layers holds
    as of `on` (None: today's code): one per layer while its builders deep-copied a template
    layer, one shared since (`TORCHTUNE_PER_LAYER_BUILD_SINCE`)."""
    return 1 if has_change(on, TORCHTUNE_PER_LAYER_BUILD_SINCE) else n_layers


def torchtune_rope_cache_bytes(arch: Architecture) -> int:
    """One torchtune rotary module's cache: fp32 cos and sin for every position up to the
    builder's `max_seq_len` (torchtune/modules/position_embeddings.py
    `RotaryPositionalEmbeddings.build_rope_cache`: `.float()`, then `torch.stack`, a
    non-persistent buffer made where the model is built, on the GPU for the single-device
    recipes and re-made there by `rope_init` after the distributed ones' meta build), read as the
    config's `max_position_embeddings` (the builders pass the released context: 4,096 for Llama 2,
    8,192 for Llama 3, 131,072 for Llama 3.1 and 3.2; where they pass less, this counts more:
    Llama 3 8B's builder said 4,096 from 20747cd87 until 41341fd1d, both of 2024-04-18, and the
    Qwen2 builders cap it at 32,768); 0 without RoPE."""
    return arch.rope_cache_bytes(arch.max_position_embeddings, 4,
                                 whole_width=arch.family in TORCHTUNE_WIDE_ROPE_FAMILIES)


TORCHTUNE_DELETES_LOGITS_SINCE = date(2024, 7, 28)
"""torchtune's recipes drop their logits before backward since 8a98fbaa3 (PR #1235, "[memory
Improvement] delete logits before bwd": `del logits`, "free logits otherwise it peaks backward
memory", in full_finetune_single_device, full_finetune_distributed, lora_finetune_single_device
and qat_distributed); lora_finetune_distributed did since cb3ed29d7 (PR #1046, 2024-06-04,
`TORCHTUNE_LORA_DISTRIBUTED_DELETES_LOGITS_SINCE`). Before, the shifted fp32 copy the loop made
(`logits = logits[..., :-1, :].contiguous()`) stayed bound through backward, the optimizer step
and the next forward, until `logits = self._model(...)` returned (the recipes @20747cd87)."""
TORCHTUNE_LORA_DISTRIBUTED_DELETES_LOGITS_SINCE = date(2024, 6, 4)


def torchtune_loop_keeps_logits(method: Method, distributed: bool, on: date | None) -> bool:
    """torchtune's recipe for `method` (single-device or distributed) of `on`'s date (None:
    today's) kept its logits through backward (`TORCHTUNE_DELETES_LOGITS_SINCE`)."""
    if on is None:
        return False
    if distributed and method.uses_lora:
        return on < TORCHTUNE_LORA_DISTRIBUTED_DELETES_LOGITS_SINCE
    return on < TORCHTUNE_DELETES_LOGITS_SINCE
