"""transformers' model code by date (`TransformersCode`: its causal-LM loss, caches, masks,
rotary tables, generate's warm-up), and the remote-code families it has no class for
(`RemoteCode`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, slots=True)
class TransformersCode:
    """How transformers' model code ran at some date, where it changed what a step holds: its
    causal-LM loss, which vocabulary-sized tensors it holds (huggingface/transformers
    `models/llama/modeling_llama.py`, `loss/loss_utils.py`; Mistral, Gemma, Gemma2 and Qwen2
    copied Llama's code in each release, read in the v4.36.2 and v4.45.2 wheels)."""

    logits_fp32_in_model: bool
    """The model upcasts its logits itself and returns them in fp32 (`logits = logits.float()`
    after `self.lm_head(...)` in `LlamaForCausalLM.forward`, v4.31.0 to v4.45.2; the 16-bit
    head output lives only during the cast). From v4.46.0 the model returns its 16-bit logits
    and `ForCausalLMLoss` upcasts a copy of its own (`logits = logits.float()`)."""
    shifts_logits: bool
    """The loss drops the last position of the logits: `shift_logits = logits[..., :-1,
    :].contiguous()`, an fp32 copy of (tokens - batch) rows, whose log-softmax the
    cross-entropy saves; in backward `slice_backward` makes a zero-filled fp32 gradient of every
    row. Up to v4.48.x, in the model's forward then in `ForCausalLMLoss`; v4.49.0 pads and
    shifts the labels instead (`labels = nn.functional.pad(labels, (0, 1), value=
    ignore_index)`), so the cross-entropy takes the upcast logits whole."""
    loss_16bit: frozenset[str] = frozenset()
    """Model types whose causal-LM loss ran on the 16-bit logits: `lm_logits =
    self.lm_head(hidden_states)`, `shift_logits = lm_logits[..., :-1, :].contiguous()` and
    `CrossEntropyLoss` on that 16-bit copy, which saves its 16-bit log-softmax, with no fp32
    upcast anywhere. OPT, GPT-2, BLOOM, GPT-BigCode, GPT-NeoX and Falcon until v4.49.0 (read in
    the v4.21.0, v4.45.2, v4.46.0 and v4.48.0 wheels; v4.49.0 moved them to
    `self.loss_function`, `ForCausalLMLoss`, which upcasts), Llama until v4.31.0 (the v4.30.0
    wheel's `LlamaForCausalLM.forward` has no `logits.float()`; v4.31.0 added it)."""
    generate_holds_two_caches: bool = False
    """`generate` keeps the previous step's KV cache while a decode step builds the next one:
    the legacy cache, a tuple of per-layer tensors, stays in `model_kwargs["past_key_values"]`
    until `_update_model_kwargs_for_generation` replaces it after the forward, while each
    attention layer makes its new key and value with `torch.cat([past_key_value[0],
    key_states], dim=2)` and the model collects them in `next_decoder_cache` (v4.35.0:
    models/llama/modeling_llama.py, generation/utils.py `greedy_search`; v4.36.0 to v4.41.x wrap
    the same tuple in `DynamicCache.from_legacy_cache` at every forward). Since v4.42.0 generate
    keeps one `DynamicCache` whose `update` replaces each layer's tensor as it grows."""
    generate_all_prompt_logits: bool = False
    """`generate`'s prefill returns the logits of every prompt position: the model applies its
    head to the whole sequence, and upcasts it where `logits_fp32_in_model` holds for its type.
    v4.45.0 passes `num_logits_to_keep=1` to the models that accept it
    (generation/utils.py `_supports_num_logits_to_keep`; absent from the v4.44.2 wheel)."""
    full_logits_types: frozenset[str] = frozenset()
    """Model types whose causal-LM forward had no `logits_to_keep` (or `num_logits_to_keep`)
    argument yet once `generate` asked for the last position only: their prefill still returns
    every prompt position's logits (`TRANSFORMERS_LOGITS_TO_KEEP_SINCE`)."""
    generate_clones_logits: bool = False
    """`generate` copies the prefill's whole logits before taking the last position
    (`next_token_logits = outputs.logits.clone()[:, -1, :].float()`, v4.45.0 to v4.46.x;
    v4.47.0 slices first, `outputs.logits[:, -1, :].clone().float()`): where the model returns
    every prompt position (`full_logits_types`), they are held twice at the prefill's end."""
    generate_keeps_prefill_outputs: bool = False
    """`generate` keeps the prefill's outputs, all its logits, through the first decode step:
    `next_token_logits = outputs.logits[:, -1, :]` is a view and `outputs` is rebound only when
    the next forward returns (v4.32.0 to v4.41.2 `greedy_search`/`_sample`); v4.42.0 takes a
    `.clone()` and ends each iteration with `del outputs`."""
    warms_up_allocator: bool = True
    """`from_pretrained` with a `device_map` allocates, before loading, one fp16 `torch.empty`
    of the model's meta parameters' bytes divided by a factor, and frees it: the caching
    allocator keeps that segment, which the weights then fill (modeling_utils.py
    `caching_allocator_warmup`, since v4.50.0). The factor is 2 (the whole model) unquantized
    and 4 (half of it) for a bitsandbytes quantizer (v4.51.0: `factor=2 if hf_quantizer is
    None else 4`; v4.57.1: `HfQuantizer.get_accelerator_warm_up_factor`, 4 unless overridden,
    which bitsandbytes' does not), whose meta parameters keep the linears' full shapes in the
    load dtype until the weights are quantized as they load."""
    warmup_counts_tied: bool = False
    """`from_pretrained` with a `device_map` warms the caching allocator up with one
    `torch.empty` of every `model.state_dict()` entry's bytes (`caching_allocator_warmup`),
    where a tied head appears beside the embedding: the tied matrix is counted twice, and after
    loading that much stays reserved, unused. v4.50.0 to v4.53.x (read in the v4.50.0, v4.51.0,
    v4.53.0, v4.54.0 and v4.55.0 wheels; v4.54.0 skips tied weights, `tied_param_names`)."""
    clamped_scores: frozenset[str] = frozenset()
    """Model types whose eager attention clamped its masked scores, `attn_weights =
    torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min))`: `maximum`
    saves its input, so each layer keeps the masked scores beside the softmax. Llama until
    v4.30.0 (read in the v4.28.1 and v4.29.2 wheels, gone in v4.30.0), OPT until v4.49.0
    (`OPTAttention.forward` in the v4.28.1 to v4.48.0 wheels; v4.49.0 moved OPT to
    `eager_attention_forward`, without it)."""

    reentrant_checkpointing: bool = False
    """`gradient_checkpointing_enable()` without `gradient_checkpointing_kwargs` runs
    `torch.utils.checkpoint` with `use_reentrant=True` (modeling_utils.py, v4.35.0 to v4.57.x;
    torch's own default before that); v5.0.0 sets `use_reentrant=False` (and TRL's configs did
    from 40d8759d, 2026-01-14). The Trainer calls it with `TrainingArguments.
    gradient_checkpointing_kwargs`, None by default."""
    checkpoints_around_layers: bool = False
    """Checkpointing is called by the model's forward around each decoder layer's `__call__`
    (`self._gradient_checkpointing_func(decoder_layer.__call__, ...)` in `LlamaModel.forward`,
    v4.35.0 to v4.51.x), so around an FSDP1 unit wrapping that layer; v4.52.0 moved it into the
    layer's own `__call__` (modeling_layers.py `GradientCheckpointingLayer`), inside the unit."""
    gpt_oss_expert_loop: bool = False
    """gpt-oss's experts train one hit expert at a time in Python (`GptOssExperts.forward`: `if
    self.training:`, a loop over `expert_hitted`, v4.55.0 to v4.57.x; v5.0.0 runs
    `grouped_mm` through `@use_experts_implementation`). Each expert's weights are read as
    `self.gate_up_proj[expert_idx]`, whose backward (`select`'s or `index`'s) makes a zero tensor
    of the whole 3-D parameter for each expert and adds it to the parameter's running gradient
    (`index_backward(grad.new_zeros(self.sizes()), ...)`, tools/autograd/derivatives.yaml)."""
    gpt_oss_expert_copies: bool = False
    """v4.55.x indexed with a one-element tensor (`for expert_idx in expert_hitted[:]`,
    `expert_idx` of shape (1,)): advanced indexing copies each expert's weights, and the matmul
    saves the copy for its input's gradient; v4.56.0 indexes with `expert_idx[0]`, a 0-d tensor,
    which `select`s a view."""
    moe_expert_linears: frozenset[str] = frozenset()
    """Model types whose mixture-of-experts layer runs each expert as its own MLP of
    `nn.Linear` modules, in a Python loop over the experts (`MixtralSparseMoeBlock.forward`,
    `MixtralBlockSparseTop2MLP`; Qwen2-MoE's, Qwen3-MoE's and OLMoE's blocks the same: read in
    the v4.48.1 and v4.57.6 wheels, `TRANSFORMERS_MOE_EXPERT_LINEARS`): the loop adds each
    expert's weighted output into the layer's output with `index_add_`, and under QLoRA
    bitsandbytes quantizes every expert's linears to `Linear4bit` modules, whose outputs come
    back in their input's dtype (`vramplan.training.activations.spec.BlockSpec.moe_expert_loop`).
    v5.0.0 holds the experts as 3-D parameters (`MixtralExperts.gate_up_proj`, `down_proj`)
    run by `@use_experts_implementation`."""
    rope_caches: frozenset[str] = frozenset()
    """Model types whose every attention layer built its own rotary module holding cos and sin
    tables of `max_position_embeddings` rows, registered as non-persistent buffers in the
    default dtype of the model's construction (the load dtype under `torch_dtype`), so on the
    GPU with the model: `LlamaRotaryEmbedding._set_cos_sin_cache(seq_len=
    max_position_embeddings, ..., dtype=torch.get_default_dtype())` and `register_buffer(
    "cos_cached", ...)`/`"_cos_cached"`, one per `LlamaAttention` (`_init_rope`). Read in the
    wheels (`TRANSFORMERS_ROPE_CACHES_UNTIL`): Llama until v4.41.0, Mistral until v4.42.0, Qwen2,
    Qwen2-MoE, Phi, StableLM, StarCoder2, Falcon and GPT-NeoX until v4.45.0, Mixtral until
    v4.48.0; later releases compute cos and sin per forward from one shared module."""
    softmax_16bit: frozenset[str] = frozenset()
    """Model types whose eager attention ran its softmax in the scores' 16-bit dtype
    (`attn_weights = nn.functional.softmax(attn_scores, dim=-1)`): GPT-NeoX until v4.49.0,
    whose `eager_attention_forward` asks for fp32 (read in the v4.44.2 to v4.48.0 and v4.49.0
    to v4.56.0 wheels). GPT-2's, in every release, is the architecture's
    (`Architecture.eager_softmax_fp32`)."""
    layer_mask_buffers: frozenset[str] = frozenset()
    """Model types whose every attention layer registers its causal mask as a bool buffer of
    `max_position_embeddings`^2 (`self.register_buffer("bias", torch.tril(torch.ones(...,
    dtype=torch.bool)).view(1, 1, max_positions, max_positions), persistent=False)`), built
    with the model on its device: GPT-2 until v5.2.0, GPT-NeoX until v4.49.0, GPT-J until
    v4.45.0 (`TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL`). GPT-Neo's, in every release, is the
    architecture's (`Architecture.causal_mask_buffers`); GPT-BigCode's one mask for the whole
    model, in every release, is `TRANSFORMERS_MODEL_MASK_BUFFER_TYPES`."""
    fused_qkv_cache_views: frozenset[str] = frozenset()
    """Model types whose prompt cache keeps each layer's fused q/k/v projection output alive:
    the value, and the key where no rotary embedding rebuilds it, are views of that output
    (`query, key, value = self.c_attn(hidden_states).split(...)` in GPT-2, `qkv.chunk(3, ...)`
    in MPT, `qkv[..., query_pos + kv_dim:]` in Phi-3, GPT-BigCode's `key_value`, GPT-NeoX's
    and BLOOM's slices), and the cache stores the views as they are (a legacy tuple, or
    `DynamicCache.update` appending them), so the prompt's entries hold the whole projection
    until a decode step replaces them. From v4.56.0 `DynamicLayer.update` concatenates the
    first entry onto an empty tensor, a copy (`TRANSFORMERS_CACHE_COPIES_SINCE`). Measured on
    the CPU (benchmarks/hf_cache_views_cpu.py): the prompt's cache holds 1.5 (GPT-2, MPT,
    BLOOM), 2.0 (GPT-NeoX) and up to 5 (GPT-BigCode's multi-query) times its keys and values
    in v4.31.0 to v4.55.4, exactly its keys and values in v4.56.0, v4.56.2, v5.0.0 and v5.25.0;
    BLOOM from v4.44.0 (`TRANSFORMERS_BLOOM_QKV_VIEWS_SINCE`); Falcon's and Llama's entries
    are their own tensors in every release measured."""
    causal_mask_buffer_itemsize: int = 0
    """Bytes per element of the causal mask that `LlamaModel` and `GemmaModel` register at
    construction (`TRANSFORMERS_MASK_BUFFER_TYPES`): `max_position_embeddings`^2 elements, a
    non-persistent buffer that moves to the GPU with the model and stays there for the whole
    run, whichever attention runs (flash attention never reads it). v4.38.0 and v4.38.1 fill
    it with an int, so int64, 8 bytes (`torch.full((max_pos, max_pos), fill_value=1)`, then
    `torch.triu(..., diagonal=1)`); v4.38.2 makes it bool, 1 byte (`fill_value=True,
    dtype=torch.bool`). 0 before v4.38.0 (v4.37.2 builds its masks per forward,
    `AttentionMaskConverter`) and from v4.39.0 (`_update_causal_mask` builds one per forward
    from `cache_position`; Gemma registers one only in `_setup_cache`, for a static cache).
    Read in the v4.37.2, v4.38.0, v4.38.1, v4.38.2, v4.39.0 and v4.39.3 wheels
    (models/llama/modeling_llama.py and models/gemma/modeling_gemma.py, `__init__`)."""
    warmup_keeps_headroom: bool = False
    """The warm-up's byte count is capped by the device's free memory (`torch.cuda.mem_get_info`)
    before it is divided by the factor: at 95 % of it (v4.50.0 to v4.51.x:
    `min(byte_count, int(0.95 * device_memory))`), then at all of it but 1.2 GiB (v4.52.0 on:
    `min(byte_count, max(0, int(device_memory - 1.2 * 1024**3)))`; read in the v4.50.0,
    v4.51.3, v4.52.0 and v4.52.4 wheels)."""

    def causal_mask_buffer_bytes(self, model_type: str, positions: int, layers: int) -> int:
        """The causal-mask buffers a model of `model_type` with `layers` attention layers keeps
        on the device: v4.38's one mask (`causal_mask_buffer_itemsize`), GPT-BigCode's one bool
        mask (`TRANSFORMERS_MODEL_MASK_BUFFER_TYPES`) or a bool mask per layer
        (`layer_mask_buffers`), each `positions`^2 elements; 0 where none is made."""
        size = positions ** 2
        if model_type in self.layer_mask_buffers:
            return layers * size
        if model_type in TRANSFORMERS_MODEL_MASK_BUFFER_TYPES:
            return size
        if model_type not in TRANSFORMERS_MASK_BUFFER_TYPES:
            return 0
        return self.causal_mask_buffer_itemsize * size

    def returns_prompt_logits(self, model_type: str) -> bool:
        """The prefill of `generate` returns every prompt position's logits for `model_type`:
        before `generate` asked for the last one (`generate_all_prompt_logits`), or where the
        model could not be asked (`full_logits_types`)."""
        return self.generate_all_prompt_logits or model_type in self.full_logits_types

    def upcasts_logits(self, model_type: str) -> bool:
        """The model of `model_type` returns its logits in fp32 (`logits_fp32_in_model`), unless
        its own code never upcast them (`loss_16bit`)."""
        return self.logits_fp32_in_model and model_type not in self.loss_16bit

    def warmup_bytes(self, model_bytes: int, factor: int, free_bytes: int | None = None) -> int:
        """The fp16 tensor `caching_allocator_warmup` allocates and frees (`warms_up_allocator`):
        `torch.empty(byte_count // factor, dtype=torch.float16)`, 2 bytes per element, where
        `byte_count` is the meta model's `model_bytes` capped by the device's `free_bytes`
        (`warmup_keeps_headroom`; None: no cap known); 0 for a release without the warm-up."""
        if not self.warms_up_allocator:
            return 0
        if free_bytes is not None:
            cap = max(0, free_bytes - WARMUP_HEADROOM_BYTES) if self.warmup_keeps_headroom \
                else int(WARMUP_FREE_SHARE * free_bytes)
            model_bytes = min(model_bytes, cap)
        return 2 * (model_bytes // factor)

    def quantized_warmup_bytes(self, params: int, tied_params: int, itemsize: int,
                               free_bytes: int | None = None) -> int:
        """The segment `caching_allocator_warmup` reserves before a bitsandbytes base loads:
        half the bytes of the meta model's `params` (factor 4), every one at its full shape in
        the 16-bit load dtype of `itemsize` bytes, a tied matrix of `tied_params` counted twice
        while `warmup_counts_tied`, capped by the device's `free_bytes` (`warmup_bytes`)."""
        tied = tied_params if self.warmup_counts_tied else 0
        return self.warmup_bytes((params + tied) * itemsize, BNB_WARMUP_FACTOR, free_bytes)


BNB_WARMUP_FACTOR = 4
"""`caching_allocator_warmup`'s factor for a bitsandbytes quantizer (v4.51.0: `factor=2 if
hf_quantizer is None else 4`; v4.57.1: `get_accelerator_warm_up_factor`, 4 unless overridden);
2 without a quantizer."""
WARMUP_FREE_SHARE = 0.95
WARMUP_HEADROOM_BYTES = round(1.2 * 2**30)
"""The warm-up's caps (`TransformersCode.warmup_keeps_headroom`): before v4.52.0 95 % of the free
memory, then all of it but 1.2 GiB."""
TRANSFORMERS_GENERATE_CACHE_OBJECT_SINCE = date(2024, 6, 27)
"""transformers v4.42.0 (its wheel's date): `generate` uses one `DynamicCache` instance by
default ("This will avoid back and forth from legacy format"), so a decode step no longer holds
the previous cache beside the new one (`TransformersCode.generate_holds_two_caches`), and frees
the prefill's outputs before the first decode step (`generate_keeps_prefill_outputs`)."""
TRANSFORMERS_LAST_LOGITS_ONLY_SINCE = date(2024, 9, 25)
"""transformers v4.45.0 (its wheel's date): `generate` asks the model for the last position's
logits only (`TransformersCode.generate_all_prompt_logits`)."""
TRANSFORMERS_LOGITS_TO_KEEP_SINCE = {
    "falcon": date(2024, 12, 5),  # v4.47.0
    "gpt_neox": date(2025, 2, 17),  # v4.49.0
    "gpt2": date(2025, 6, 26),  # v4.53.0
    **dict.fromkeys(("gptj", "gpt_bigcode", "opt", "bloom", "mpt", "gpt_neo"),
                    date(2026, 1, 26)),  # v5.0.0
}
"""The first release (its wheel's date) whose causal-LM forward of the model type takes
`num_logits_to_keep`/`logits_to_keep` (`TransformersCode.full_logits_types`), where it came after
`TRANSFORMERS_LAST_LOGITS_ONLY_SINCE`: read in the v4.41.2, v4.44.2, v4.45.2, v4.46.0, v4.46.3,
v4.47.0, v4.48.0, v4.49.0, v4.50.0, v4.51.3, v4.52.4, v4.53.0, v4.55.4, v4.56.0, v4.57.6 and
v5.0.0 wheels (Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Gemma, Gemma 2, Phi, Phi-3, StableLM,
OLMo and StarCoder2 from v4.45.0; the model types added later from their first release)."""
TRANSFORMERS_LOGITS_SLICED_FIRST_SINCE = date(2024, 12, 5)
"""transformers v4.47.0 (its wheel's date): `generate` slices the last position before copying
it (`TransformersCode.generate_clones_logits` before)."""
TRANSFORMERS_WARMUP_SINCE = date(2025, 3, 21)
"""transformers v4.50.0 (its wheel's date): `caching_allocator_warmup`
(`TransformersCode.warms_up_allocator`), counting a tied head twice
(`TransformersCode.warmup_counts_tied`)."""
TRANSFORMERS_WARMUP_HEADROOM_SINCE = date(2025, 5, 20)
"""transformers v4.52.0 (its wheel's date): the warm-up leaves 1.2 GiB of the free memory
(`TransformersCode.warmup_keeps_headroom`)."""
TRANSFORMERS_WARMUP_SKIPS_TIED_SINCE = date(2025, 7, 25)
"""transformers v4.54.0 (its wheel's date): the warm-up skips tied weights."""
TRANSFORMERS_ROPE_CACHES_UNTIL = {
    "llama": date(2024, 5, 17),  # v4.41.0
    "mistral": date(2024, 6, 27),  # v4.42.0
    **dict.fromkeys(("qwen2", "qwen2_moe", "phi", "stablelm", "starcoder2", "falcon", "gpt_neox"),
                    date(2024, 9, 25)),  # v4.45.0
    "mixtral": date(2025, 1, 10),  # v4.48.0
}
"""The first release (its wheel's date) whose model type no longer keeps per-layer rotary tables
(`TransformersCode.rope_caches`): read in the v4.32.0, v4.36.2, v4.38.2, v4.40.2, v4.41.0,
v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.0, v4.46.0, v4.47.0 and v4.48.0 wheels."""
TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL = {
    "gptj": date(2024, 9, 25),  # v4.45.0
    "gpt_neox": date(2025, 2, 17),  # v4.49.0
    "gpt2": date(2026, 2, 16),  # v5.2.0
}
"""The first release (its wheel's date) whose model type no longer registers a causal mask per
layer (`TransformersCode.layer_mask_buffers`): measured by the buffers of a model built from a
config in the v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.0, v4.45.2, v4.48.3, v4.49.0, v4.50.0,
v4.51.3, v4.53.3, v4.55.4, v5.0.0, v5.1.0, v5.2.0, v5.3.0, v5.6.0, v5.8.0, v5.9.0, v5.10.4,
v5.16.0, v5.20.0, v5.22.0 and v5.25.0 releases."""
TRANSFORMERS_MODEL_MASK_BUFFER_TYPES = frozenset({"gpt_bigcode"})
"""The model types whose model registers one bool causal mask of `max_position_embeddings`^2
(`GPTBigCodeModel`'s `bias`), in every release measured (`TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL`
lists them)."""
TRANSFORMERS_FUSED_QKV_CACHE_VIEW_TYPES = frozenset({"gpt2", "gpt_neox", "gpt_bigcode", "phi3",
                                                     "mpt"})
"""The model types whose prompt cache holds views of the fused q/k/v projection
(`TransformersCode.fused_qkv_cache_views`) until `TRANSFORMERS_CACHE_COPIES_SINCE`: measured in
the v4.31.0, v4.35.2, v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.2, v4.48.3, v4.51.3, v4.53.3
and v4.55.4 releases (Phi-3 from its first, v4.40; MPT from v4.35.2)."""
TRANSFORMERS_BLOOM_QKV_VIEWS_SINCE = date(2024, 8, 6)
"""transformers v4.44.0 (its wheel's date): BLOOM's cache holds views of `query_key_value`'s
output (v4.43.4's `reshape`s copied them)."""
TRANSFORMERS_CACHE_COPIES_SINCE = date(2025, 8, 29)
"""transformers v4.56.0 (its wheel's date): `DynamicLayer.update` copies the first entry
(`torch.cat` onto the empty tensor of `lazy_initialization`)."""
TRANSFORMERS_MASK_BUFFER_TYPES = frozenset({"llama", "gemma"})
"""The model types whose model registered a `max_position_embeddings`^2 causal mask at
construction in v4.38 (`TransformersCode.causal_mask_buffer_itemsize`); Mistral, Qwen2 and the
others kept building theirs per forward."""
TRANSFORMERS_INT64_MASK_BUFFER_SINCE = date(2024, 2, 21)
"""transformers v4.38.0 (its wheel's files, v4.38.1's the same day): Llama's and Gemma's int64
causal-mask buffer."""
TRANSFORMERS_BOOL_MASK_BUFFER_SINCE = date(2024, 3, 1)
"""transformers v4.38.2 (its wheel's files): the buffer is bool."""
TRANSFORMERS_NO_MASK_BUFFER_SINCE = date(2024, 3, 20)
"""transformers v4.39.0 (its wheel's files): no buffer; the mask is built per forward."""
TRANSFORMERS_CHECKPOINTING_LAYER_SINCE = date(2025, 5, 20)
"""transformers v4.52.0 (its wheel's date): `GradientCheckpointingLayer` checkpoints inside the
decoder layer's `__call__` (`TransformersCode.checkpoints_around_layers`)."""
TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE = date(2026, 1, 26)
TRANSFORMERS_GPT_OSS_SINCE = date(2025, 8, 5)
TRANSFORMERS_GPT_OSS_EXPERT_VIEWS_SINCE = date(2025, 8, 29)
"""v4.55.0 (gpt-oss's first release, its wheel's date) and v4.56.0 (`expert_idx[0]`): the dates
of `TransformersCode.gpt_oss_expert_copies`; the loop ends with v5.0.0
(`TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE`, the same release)."""
"""transformers v5.0.0 (its wheel's date): non-reentrant checkpointing by default
(`TransformersCode.reentrant_checkpointing`)."""
TRANSFORMERS_MOE_EXPERT_LINEARS = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "olmoe"})
"""The model types whose experts are `nn.Linear` MLPs in a Python loop until v5.0.0
(`TransformersCode.moe_expert_linears`): Mixtral, Qwen2-MoE and OLMoE read in the v4.48.1
wheel, all four in the v4.57.6 wheel; v5.0.0's wheel (2026-01-26,
`TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE`) has `MixtralExperts` of 3-D parameters.
DeepSeek's and GLM-4.5's loops weight the experts in their fp32 router's dtype and are not
listed; gpt-oss's and Llama 4's experts were 3-D parameters from the first."""
TRANSFORMERS_LLAMA_UNCLAMPED_SINCE = date(2023, 6, 8)
"""transformers v4.30.0 (the date of its wheel's files): Llama's eager attention no longer
clamps its masked scores (`TransformersCode.clamped_scores`)."""
TRANSFORMERS_LLAMA_FP32_LOGITS_SINCE = date(2023, 7, 18)
"""transformers v4.31.0: `LlamaForCausalLM.forward` upcasts its logits (`logits =
logits.float()`); before it, the loss ran on the 16-bit logits (`TransformersCode.loss_16bit`)."""
LEGACY_16BIT_LOSS_TYPES = frozenset({"opt", "gpt2", "bloom", "gpt_bigcode", "gpt_neox", "falcon"})
"""The model types whose own loss took no fp32 copy until v4.49.0
(`TransformersCode.loss_16bit`)."""
@dataclass(frozen=True, slots=True)
class RemoteCode:
    """What a remote-code model's own modeling file does when it runs, whatever transformers
    release runs it (`vramplan.model.hf_remote_code` reads its config.json). Every one written
    against transformers 4.3x: its causal-LM loss shifts the logits by a copy
    (`logits[..., :-1, :].contiguous()`), and its attention returns the cache as `(key, value)`
    tuples grown by `torch.cat`, which `generate` keeps beside the next step's."""

    modeling_file: str
    """The file read, and the copy it was read in."""
    logits_fp32: bool
    """The forward upcasts its logits (`.float()`, ChatGLM's `.to(torch.float32)`) before the
    loss; else the loss runs on the 16-bit logits."""
    prompt_logits: bool
    """`generate`'s prefill gets every prompt position's logits: the head runs on every
    position (False: ChatGLM's `return_last_logit`)."""
    cache_views: bool
    """The prompt's cached value is a view of the layer's fused q/k/v output (the key being
    rebuilt by the rotary embedding), until a decode step's `torch.cat` replaces it."""
    norm_head: bool = False
    """The head normalizes its weight in every training forward (Baichuan 2's `NormHead`:
    `norm_weight = nn.functional.normalize(self.weight)`, a vocabulary x hidden tensor that
    `F.linear` keeps for backward)."""


REMOTE_CODE: dict[str, RemoteCode] = {
    "qwen": RemoteCode(
        "Qwen/Qwen-7B modeling_qwen.py @d4efd21e (git mirror github.com/zhangningboo/Qwen-7B): "
        "`lm_logits = self.lm_head(hidden_states)`, `shift_logits = lm_logits[..., :-1, "
        ":].contiguous()`, no upcast; `present = (key, value)`, the value split from `c_attn`",
        logits_fp32=False, prompt_logits=True, cache_views=True),
    "chatglm": RemoteCode(
        "THUDM/chatglm3-6b modeling_chatglm.py (git mirror github.com/czk1997/chatglm3-copy "
        "@456aa875): `lm_logits.transpose(0, 1).contiguous()`, `lm_logits.to(torch.float32)`, "
        "then the shifted copy; `prepare_inputs_for_generation` passes `return_last_logit=True`; "
        "`kv_cache = (key_layer, value_layer)`, the value split from `query_key_value`",
        logits_fp32=True, prompt_logits=False, cache_views=True),
    "baichuan": RemoteCode(
        "baichuan-inc/Baichuan2-13B-Chat modeling_baichuan.py @c6f8592a (git mirror "
        "github.com/jrd77/Baichuan2-13B-Chat): `logits = self.lm_head(hidden_states)`, the shifted "
        "copy, no upcast; `NormHead` normalizes its weight in training; the value taken from "
        "`W_pack`'s output through `unflatten`/`transpose` (not read as a view)",
        logits_fp32=False, prompt_logits=True, cache_views=False, norm_head=True),
    "internlm2": RemoteCode(
        "internlm/internlm2 modeling_internlm2.py (OpenGVLab/InternVL's copy, "
        "internvl_chat/internvl/model/internlm2/modeling_internlm2.py @0c8993dc): "
        "`logits = logits.float()`, the shifted copy; the value a slice of `wqkv`'s rearranged "
        "output",
        logits_fp32=True, prompt_logits=True, cache_views=True),
}
"""The remote-code model types, by `model_type`."""
TRANSFORMERS_LOSS_FUNCTION_SINCE = date(2024, 10, 24)
"""transformers v4.46.0 (PyPI upload date): `self.loss_function` (`ForCausalLMLoss`) upcasts,
the model returns 16-bit logits."""
TRANSFORMERS_SHIFTS_LABELS_SINCE = date(2025, 2, 17)
"""transformers v4.49.0 (PyPI upload date): `ForCausalLMLoss` shifts the labels, not the
logits; OPT's eager attention no longer clamps its scores; GPT-NeoX's softmax runs in fp32."""


def transformers_code(on: date | None) -> TransformersCode:
    """transformers' model code as of `on`; None: today's."""
    if on is None:
        return TransformersCode(logits_fp32_in_model=False, shifts_logits=False,
                                warmup_keeps_headroom=True)
    clamped = frozenset({"opt"} if on < TRANSFORMERS_SHIFTS_LABELS_SINCE else set()) \
        | frozenset({"llama"} if on < TRANSFORMERS_LLAMA_UNCLAMPED_SINCE else set())
    loss_16bit = (LEGACY_16BIT_LOSS_TYPES if on < TRANSFORMERS_SHIFTS_LABELS_SINCE
                  else frozenset()) \
        | frozenset({"llama"} if on < TRANSFORMERS_LLAMA_FP32_LOGITS_SINCE else set())
    return TransformersCode(
        logits_fp32_in_model=on < TRANSFORMERS_LOSS_FUNCTION_SINCE,
        shifts_logits=on < TRANSFORMERS_SHIFTS_LABELS_SINCE, loss_16bit=loss_16bit,
        generate_holds_two_caches=on < TRANSFORMERS_GENERATE_CACHE_OBJECT_SINCE,
        generate_keeps_prefill_outputs=on < TRANSFORMERS_GENERATE_CACHE_OBJECT_SINCE,
        generate_all_prompt_logits=on < TRANSFORMERS_LAST_LOGITS_ONLY_SINCE,
        full_logits_types=frozenset(
            model_type for model_type, since in TRANSFORMERS_LOGITS_TO_KEEP_SINCE.items()
            if TRANSFORMERS_LAST_LOGITS_ONLY_SINCE <= on < since),
        generate_clones_logits=TRANSFORMERS_LAST_LOGITS_ONLY_SINCE <= on
        < TRANSFORMERS_LOGITS_SLICED_FIRST_SINCE,
        warms_up_allocator=on >= TRANSFORMERS_WARMUP_SINCE,
        warmup_counts_tied=TRANSFORMERS_WARMUP_SINCE <= on < TRANSFORMERS_WARMUP_SKIPS_TIED_SINCE,
        warmup_keeps_headroom=on >= TRANSFORMERS_WARMUP_HEADROOM_SINCE,
        clamped_scores=clamped,
        reentrant_checkpointing=on < TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE,
        checkpoints_around_layers=on < TRANSFORMERS_CHECKPOINTING_LAYER_SINCE,
        gpt_oss_expert_loop=TRANSFORMERS_GPT_OSS_SINCE <= on
        < TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE,
        gpt_oss_expert_copies=TRANSFORMERS_GPT_OSS_SINCE <= on
        < TRANSFORMERS_GPT_OSS_EXPERT_VIEWS_SINCE,
        moe_expert_linears=TRANSFORMERS_MOE_EXPERT_LINEARS
        if on < TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE else frozenset(),
        rope_caches=frozenset(model_type for model_type, until
                              in TRANSFORMERS_ROPE_CACHES_UNTIL.items() if on < until),
        causal_mask_buffer_itemsize=_causal_mask_buffer_itemsize(on),
        fused_qkv_cache_views=_fused_qkv_cache_views(on),
        softmax_16bit=frozenset({"gpt_neox"} if on < TRANSFORMERS_SHIFTS_LABELS_SINCE
                                else set()),
        layer_mask_buffers=frozenset(model_type for model_type, until
                                     in TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL.items()
                                     if on < until))


def _fused_qkv_cache_views(on: date) -> frozenset[str]:
    """`TransformersCode.fused_qkv_cache_views` as of `on`."""
    if on >= TRANSFORMERS_CACHE_COPIES_SINCE:
        return frozenset()
    bloom = frozenset({"bloom"} if on >= TRANSFORMERS_BLOOM_QKV_VIEWS_SINCE else set())
    return TRANSFORMERS_FUSED_QKV_CACHE_VIEW_TYPES | bloom


def _causal_mask_buffer_itemsize(on: date) -> int:
    """`TransformersCode.causal_mask_buffer_itemsize` as of `on`."""
    if not TRANSFORMERS_INT64_MASK_BUFFER_SINCE <= on < TRANSFORMERS_NO_MASK_BUFFER_SINCE:
        return 0
    return 1 if on >= TRANSFORMERS_BOOL_MASK_BUFFER_SINCE else 8


QUERY_JOINED_AFTER_TRANSPOSE = frozenset({
    "phi", "phi3", "stablelm", "persimmon", "gpt_neox", "glm", "glm4", "glm4_moe", "nemotron",
    "qwen3_next"})
"""transformers' families whose query reaches attention as the contiguous (B, heads, T, head)
output of a `torch.cat` made after the transpose: RoPE on the rotated part joined to the rest
(phi3/modeling_phi3.py `apply_rotary_pos_emb`: `torch.cat([(q_rot * cos) + ..., q_pass], dim=-1)`,
also at a full rotary factor; gpt_neox, glm4_moe, nemotron, qwen3_next the same; phi, stablelm and
persimmon `torch.cat((query_rot, query_pass), dim=-1)` in their attention). The flash kernels'
output takes that layout, so `attn_output.transpose(1, 2).contiguous()` (integrations/
sdpa_attention.py, flash_attention.py) copies it, and o_proj keeps the copy beside the output
the kernel saved. Traced on transformers 5.25 (the CPU flash kernel's output follows q, as
CUDA's does), at real size: Phi-2 LoRA on every linear, 2 x 1,024 tokens, −2.1 % → 0.0 %;
Pythia-1.4B full fine-tuning with SGD −2.6 % → 0.0 %. GPT-J and CodeGen join q before the
transpose (a view); Llama's RoPE is elementwise on the transposed view (a view)."""
