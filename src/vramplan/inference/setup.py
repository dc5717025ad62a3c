"""One inference setup, as typed, validated data: the weights' format, the context and batch, the
KV cache's dtype, the engine and its tensor parallelism."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from vramplan.bounds import BATCH, CONTEXT, IMAGES, LAYER_SPLIT, PROMPT, TENSOR_PARALLEL
from vramplan.errors import ConflictingOptions, OutOfRange
from vramplan.model.architecture import Architecture
from vramplan.presets.frameworks.transformers import REMOTE_CODE, TransformersCode
from vramplan.presets.inference_engines import ENGINES, EngineProfile
from vramplan.presets.quant_formats import FormatFamily, QuantFormat
from vramplan.vocab import Attention, ComputeDtype, Engine, KvDtype


@dataclass(frozen=True, slots=True)
class InferenceInputs:
    """One inference setup. Build it with `inference_inputs` (validated)."""

    arch: Architecture
    weights: QuantFormat
    context: int
    """Tokens cached per sequence: prompt plus generated tokens."""
    batch: int = 1
    """Concurrent sequences."""
    prompt: int | None = None
    """Prompt tokens processed in prefill (None: the whole context, the worst case)."""
    kv_dtype: KvDtype = KvDtype.FP16
    compute_dtype: ComputeDtype = ComputeDtype.BF16
    engine: Engine = Engine.GENERIC
    tensor_parallel: int = 1
    attention: Attention = Attention.SDPA
    """`eager` keeps the score matrix (batch x heads x chunk x context, in the compute dtype
    beside its fp32 softmax) during prefill; `sdpa` and `flash` run fused kernels that keep
    none."""
    model_name: str = ""
    images: int = 0
    """Images per sequence (vision-language models): each adds the tower's tokens per image to
    the context and the prompt."""
    mtp: bool = False
    """The multi-token-prediction modules are loaded (speculative decoding with them, vLLM's and
    SGLang's MTP drafts): their weights and their layers' KV cache."""
    layer_split: int = 1
    """GPUs the blocks are placed on in equal consecutive chunks, one process driving them all
    (litgpt generate/sequentially.py @51d53287: `layer_to_device`, "only balanced partitioning"):
    the figures are the first GPU's, which holds its chunk of blocks and their cache, and the
    embedding, final norm, head, RoPE and mask caches, prefill and logits ("root")."""
    cache_tokens: int | None = None
    """Tokens per sequence the engine allocates its KV cache for, when more than it caches
    (torchtune's generate recipe before 2024-09-17: the model's max_seq_len); None: the
    context."""
    kv_all_heads: bool | None = None
    """The cache holds a key and a value per query head, not per KV head (torchtune before
    2024-11-10); None: the engine's behaviour (`EngineProfile.kv_expands_gqa`)."""
    previous_cache_alive: bool = False
    """A decode step builds the grown cache beside the previous one, freed only after the step
    (transformers' `generate` before v4.42.0, `TransformersCode.generate_holds_two_caches`): the
    peak holds the cache twice, less one token, once a decode step runs (`decode_steps`)."""
    prompt_logits_bytes: int = 0
    """Bytes per value of the logits the model returns for every prompt position at prefill:
    transformers before v4.45.0, whose `generate` did not yet ask for the last position only
    (`num_logits_to_keep`), in fp32 (4) where the model upcast them (`logits.float()`) or in
    the compute dtype; 0: the engine's own (`EngineProfile.logits_all_prompt_tokens`)."""
    prompt_logits_kept: bool = False
    """The prefill's logits stay referenced through the first decode step (transformers'
    `generate` before v4.42.0: `next_token_logits = outputs.logits[:, -1, :]`, a view, and no
    `del outputs`, so the prefill's `outputs` lives until the next forward returns)."""
    prompt_logits_cloned: bool = False
    """`generate` copies the prefill's whole logits before it takes the last position
    (transformers v4.45.0 to v4.46.x, `TransformersCode.generate_clones_logits`): the copy sits
    beside them at the prefill's end."""
    bnb_compute_16bit: bool = False
    """The run set bitsandbytes' 4-bit compute dtype to a 16-bit one (`BitsAndBytesConfig(
    bnb_4bit_compute_dtype=torch.float16)`): no fp32 copy of the dequantized weight, where the
    engine computes in fp32 by default (`EngineProfile.bnb_4bit_compute_fp32`)."""
    eager_softmax_16bit: bool = False
    """The eager softmax of the run's code runs in the scores' 16-bit dtype
    (`vramplan.presets.frameworks.transformers.TransformersCode.softmax_16bit`), as the
    architecture's does where `Architecture.eager_softmax_fp32` is False."""
    mask_buffer_bytes: int = 0
    """The causal masks the transformers model of the run's date registers at construction
    (`vramplan.presets.frameworks.transformers.TransformersCode.causal_mask_buffer_bytes`)."""
    fused_qkv_cache_views: bool = False
    """The prompt's cache entries are views of each layer's fused q/k/v projection output, which
    they keep alive until a decode step replaces them (transformers' older code,
    `vramplan.presets.frameworks.transformers.TransformersCode.fused_qkv_cache_views`)."""
    rope_tables: bool = False
    """Every attention layer holds rotary cos and sin tables of `max_position_embeddings` rows
    in the compute dtype (transformers' older model code,
    `vramplan.presets.frameworks.transformers.TransformersCode.rope_caches`)."""
    torchtune_rope_modules: int = 0
    """torchtune's rotary modules, each holding an fp32 cache of every position
    (`vramplan.presets.frameworks.torchtune.torchtune_rope_modules`: one per layer in models built
    before 2024-09-12); 0 for the other engines."""

    @property
    def decode_steps(self) -> int:
        """Forward passes after the prefill: each generated token but the last is fed back
        (`generate` with n new tokens runs the prefill and n - 1 decode steps)."""
        return max(0, self.cached_tokens - self.prompt_tokens - 1)

    @property
    def image_tokens(self) -> int:
        """Tokens the images add to each sequence."""
        vision = self.arch.vision
        return self.images * vision.tokens_per_image if vision is not None else 0

    @property
    def cached_tokens(self) -> int:
        """Tokens cached per sequence: the context and the image tokens."""
        return self.context + self.image_tokens

    @property
    def allocated_cache_tokens(self) -> int:
        """Tokens per sequence the KV cache (and a mask sized with it) is allocated for."""
        return max(self.cache_tokens or 0, self.cached_tokens)

    @property
    def prompt_tokens(self) -> int:
        """Tokens of the prefill: the prompt (the whole context by default) and the images."""
        return (self.context if self.prompt is None else self.prompt) + self.image_tokens

    @property
    def profile(self) -> EngineProfile:
        return ENGINES[self.engine]


def inference_inputs(arch: Architecture, weights: QuantFormat, context: int, *, batch: int = 1,
                     prompt: int | None = None, kv_dtype: KvDtype = KvDtype.FP16,
                     compute_dtype: ComputeDtype = ComputeDtype.BF16,
                     engine: Engine = Engine.GENERIC, tensor_parallel: int = 1,
                     attention: Attention = Attention.SDPA,
                     model_name: str = "", images: int = 0, mtp: bool = False,
                     layer_split: int = 1, cache_tokens: int | None = None,
                     kv_all_heads: bool | None = None,
                     previous_cache_alive: bool = False, prompt_logits_bytes: int = 0,
                     prompt_logits_kept: bool = False, prompt_logits_cloned: bool = False,
                     bnb_compute_16bit: bool = False,
                     rope_tables: bool = False,
                     fused_qkv_cache_views: bool = False, mask_buffer_bytes: int = 0,
                     eager_softmax_16bit: bool = False,
                     torchtune_rope_modules: int = 0) -> InferenceInputs:
    """Validated inputs: counts in range, prompt within the context, a GGUF file only on
    llama.cpp and llama.cpp only with GGUF, images only for a model with a vision tower, MTP
    modules only for a checkpoint that has some."""
    CONTEXT.check_int(context)
    IMAGES.check_int(images)
    if images and arch.vision is None:
        raise ConflictingOptions("images", "model", str(images), "no_vision")
    if mtp and not arch.mtp_layers:
        raise ConflictingOptions("mtp", "model", "true", "no_mtp")
    BATCH.check_int(batch)
    TENSOR_PARALLEL.check_int(tensor_parallel)
    LAYER_SPLIT.check_int(layer_split)
    if layer_split > 1 and tensor_parallel > 1:
        raise ConflictingOptions("layer_split", "tensor_parallel", str(layer_split))
    if arch.n_layers % layer_split:
        raise ConflictingOptions("layer_split", "model", str(layer_split), "layer_split_even",
                                 layers=arch.n_layers)
    if cache_tokens is not None:
        CONTEXT.check_int(cache_tokens)
    if prompt is not None:
        PROMPT.check_int(prompt)
        if prompt > context:
            raise OutOfRange("prompt", str(prompt))
    is_gguf = weights.family is FormatFamily.GGUF
    if is_gguf != (engine is Engine.LLAMA_CPP) and engine is not Engine.GENERIC:
        raise ConflictingOptions("weights", "engine", weights.name)
    if is_gguf and engine is Engine.GENERIC:
        engine = Engine.LLAMA_CPP
    if kv_dtype in (KvDtype.Q8_0, KvDtype.Q4_0) and engine is not Engine.LLAMA_CPP:
        raise ConflictingOptions("kv_dtype", "engine", kv_dtype.value)
    return InferenceInputs(arch=arch, weights=weights, context=context, batch=batch,
                           prompt=prompt, kv_dtype=kv_dtype, compute_dtype=compute_dtype,
                           engine=engine, tensor_parallel=tensor_parallel, attention=attention,
                           model_name=model_name, images=images, mtp=mtp,
                           layer_split=layer_split, cache_tokens=cache_tokens,
                           kv_all_heads=kv_all_heads, previous_cache_alive=previous_cache_alive,
                           prompt_logits_bytes=prompt_logits_bytes,
                           prompt_logits_kept=prompt_logits_kept,
                           prompt_logits_cloned=prompt_logits_cloned,
                           bnb_compute_16bit=bnb_compute_16bit, rope_tables=rope_tables,
                           fused_qkv_cache_views=fused_qkv_cache_views,
                           mask_buffer_bytes=mask_buffer_bytes,
                           eager_softmax_16bit=eager_softmax_16bit,
                           torchtune_rope_modules=torchtune_rope_modules)


@dataclass(frozen=True)
class GenerateSettings:
    """What transformers' `generate` of one release does with one model, as `InferenceInputs`
    fields (each documented there)."""

    previous_cache_alive: bool
    prompt_logits_bytes: int
    prompt_logits_kept: bool
    prompt_logits_cloned: bool
    rope_tables: bool
    fused_qkv_cache_views: bool
    mask_buffer_bytes: int
    eager_softmax_16bit: bool

    def as_kwargs(self) -> dict[str, Any]:
        """The settings as `inference_inputs` keyword arguments."""
        return asdict(self)


def transformers_generate_settings(arch: Architecture, code: TransformersCode,
                                   compute: ComputeDtype) -> GenerateSettings:
    """`generate` as `code`'s release runs `arch`
    (`vramplan.presets.frameworks.transformers.TransformersCode`): the two caches and the prefill's
    outputs of the legacy cache, every prompt position's logits where the model returns them (fp32
    where it upcasts them, else the compute dtype) and generate's copy of them, per-layer rotary
    tables, the prompt cache's views of a fused projection, the causal-mask buffers and a 16-bit
    eager softmax. A remote-code model (`REMOTE_CODE`) runs its own forward whatever the release:
    its tuple caches held twice, its prompt logits and its cache's views as its file has them."""
    family = arch.family
    remote = REMOTE_CODE.get(family)
    logits = 0
    if remote is not None:
        if remote.prompt_logits:
            logits = ComputeDtype.FP32.bytes if remote.logits_fp32 else compute.bytes
    elif code.returns_prompt_logits(family):
        logits = ComputeDtype.FP32.bytes if code.upcasts_logits(family) else compute.bytes
    return GenerateSettings(
        previous_cache_alive=code.generate_holds_two_caches or remote is not None,
        prompt_logits_bytes=logits,
        prompt_logits_kept=code.generate_keeps_prefill_outputs,
        prompt_logits_cloned=code.generate_clones_logits,
        rope_tables=family in code.rope_caches,
        fused_qkv_cache_views=family in code.fused_qkv_cache_views
        or (remote is not None and remote.cache_views),
        mask_buffer_bytes=code.causal_mask_buffer_bytes(family, arch.max_position_embeddings,
                                                        arch.n_layers),
        eager_softmax_16bit=family in code.softmax_16bit)
