"""The model spec: one vocabulary for decoder-only transformers, and exact parameter counting.

Every family (Llama, Mistral, Mixtral, Qwen2, Gemma, Phi, Falcon, GPT-2, GPT-NeoX, ...) is
described by the same fields; `vramplan.model.hf_config` translates a Hugging Face `config.json`
into them. Counts are exact, to the parameter, and match
`sum(p.numel() for p in model.parameters())` of the transformers model (tied weights counted
once); `tests/test_param_counts_meta.py` checks that for every preset.

The block layout follows the transformers modules: a block holds an attention (q, k, v, o), an MLP
(gate, up, down; or a router and experts), and its norms. Fused projections (`query_key_value`,
`qkv_proj`, `gate_up_proj`, `c_attn`) are described by their logical parts, with GQA-sized k and v:
a fused linear has as many parameters as its parts.

No I/O here: this module is pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from vramplan import bounds
from vramplan.errors import VramplanError
from vramplan.model.vision import VisionTower


class MlpKind(StrEnum):
    """The shape of a block's feed-forward network."""

    GATED = "gated"
    """Gated linear unit (SwiGLU, GeGLU): down(act(gate(x)) * up(x)), three matrices.
    Shazeer 2020, "GLU Variants Improve Transformer", arXiv:2002.05202."""
    PLAIN = "plain"
    """Two matrices: down(act(up(x))), as in GPT-2, GPT-NeoX, Falcon, Phi-1/2."""


BLOOM_GELU = "bloom_gelu"
"""The `activation` of BLOOM's MLP (models/bloom/modeling_bloom.py `BloomGelu`): an autograd
Function that saves its input only and computes its tanh-approximated derivative in Python in
backward (`bloom_gelu_back`); BloomConfig has no activation key."""
PYTHON_TANH_GELUS = frozenset({"gelu_new", "gelu_fast"})
"""The `activation`s transformers writes out in Python, NewGELUActivation and FastGELUActivation
(`0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))`, activations.py): each step of the
chain is an intermediate-wide tensor of its own. litgpt calls F.gelu(approximate="tanh")."""


class NormKind(StrEnum):
    """The normalization layer used in blocks and before the head."""

    RMSNORM = "rmsnorm"
    """RMSNorm (Zhang & Sennrich 2019, arXiv:1910.07467): a scale vector, no bias."""
    LAYERNORM = "layernorm"
    """LayerNorm (Ba et al. 2016, arXiv:1607.06450): scale and, where `norm_bias`, a bias."""


class PositionKind(StrEnum):
    """How token positions enter the model."""

    ROPE = "rope"
    """Rotary embeddings (Su et al. 2021, arXiv:2104.09864): no parameters."""
    LEARNED = "learned"
    """A learned table of `position_table_rows` x `hidden_size` (GPT-2, StarCoder, OPT)."""
    ALIBI = "alibi"
    """Attention linear biases (Press et al. 2021, arXiv:2108.12409): no parameters."""


class QkNormKind(StrEnum):
    """Normalization applied to queries and keys before attention (none in most families)."""

    NONE = "none"
    """No query/key norm."""
    PER_HEAD_SHARED = "per_head_shared"
    """One norm over `head_dim`, shared by all heads (Qwen3, Gemma 3): 2 x head_dim scales."""
    PER_HEAD = "per_head"
    """One norm per head (StableLM `qk_layernorm`) or over all heads at once (OLMo 2): the scales
    cover (n_heads + n_kv_heads) x head_dim."""
    L2_PER_HEAD = "l2_per_head"
    """An L2 norm over each head's head_dim without a scale (Llama 4's `Llama4TextL2Norm`, on the
    layers that apply RoPE): no parameters."""


class LocalAttention(StrEnum):
    """How the attention of a local layer (`Architecture.sliding_window_layers`) is bounded."""

    SLIDING = "sliding"
    """Each token sees the `sliding_window` tokens before it (Mistral 7B v0.1, Gemma 2 and 3,
    gpt-oss, Command R7B): a cache of `sliding_window` tokens suffices."""
    CHUNKED = "chunked"
    """Tokens see only their own chunk of `sliding_window` tokens (Llama 4
    `attention_chunk_size`, transformers `chunked_attention` layers): a cache of one chunk
    suffices."""


@dataclass(frozen=True, slots=True)
class LatentAttention:
    """Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, section 2.1; DeepSeek-V3,
    Kimi K2). transformers models/deepseek_v3/modeling_deepseek_v3.py `DeepseekV3Attention`:
    queries through a low-rank `q_a_proj` -> RMSNorm -> `q_b_proj` (or one `q_proj` when
    `q_lora_rank` is null); keys and values compressed by `kv_a_proj_with_mqa` into a latent of
    `kv_lora_rank` plus one shared rotary key of `qk_rope_head_dim`, normed, then expanded per head
    by `kv_b_proj`; `o_proj` from n_heads x `v_head_dim`."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None

    @property
    def qk_head_dim(self) -> int:
        """Width of one head's query and key: the part without and the part with RoPE."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def cached_values_per_token(self) -> int:
        """Values one token leaves in one layer's cache: the latent and the rotary key
        (`kv_lora_rank + qk_rope_head_dim`, 576 for DeepSeek-V3), whatever the head count.
        transformers caches them compressed (`cache.update(kv_nope, k_rot, ...)` before
        `expand_kv`), as vLLM's MLA backends do."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def norm_params(self) -> int:
        """`q_a_layernorm` (when queries are low-rank) and `kv_a_layernorm`: RMSNorm scales."""
        return (self.q_lora_rank or 0) + self.kv_lora_rank


class ParamGroup(StrEnum):
    """Where parameters live; the keys of `Architecture.params_by_component()`."""

    EMBEDDING = "embedding"
    """The token embedding table (vocab_size x hidden_size)."""
    POSITION_EMBEDDING = "position_embedding"
    """A learned position table (0 for RoPE and ALiBi)."""
    EMBEDDING_NORM = "embedding_norm"
    """The norm on the embeddings before the first block (BLOOM; 0 elsewhere)."""
    ATTENTION = "attention"
    """q, k, v and output projections (with biases and query/key norms), all blocks."""
    MLP = "mlp"
    """Feed-forward networks, all blocks: dense MLP, or every expert plus shared experts."""
    ROUTER = "router"
    """Mixture-of-experts routers, all blocks (0 for dense models)."""
    NORMS = "norms"
    """The norms inside the blocks."""
    FINAL_NORM = "final_norm"
    """The norm before the head."""
    HEAD = "head"
    """The output projection to the vocabulary (0 when tied to the embedding)."""
    VISION = "vision"
    """The vision tower and its projector into the language model (0 for text-only models)."""
    MTP = "mtp"
    """Multi-token-prediction modules, when loaded (`Architecture.mtp_loaded`)."""


LinearRole = Literal["q", "k", "v", "o", "gate", "up", "down", "router", "head",
                     "q_a", "q_b", "kv_a", "kv_b", "gate_up", "qkv"]
"""The role of a linear layer; LoRA target names map onto these. `q_a`, `q_b`, `kv_a` and `kv_b`
are the projections of multi-head latent attention (`LatentAttention`); `gate_up` is the fused
3-D parameter of routed experts as LoRA adapters see it, or a dense block's fused gate/up
`nn.Linear`; `qkv` a fused q/k/v `nn.Linear` as peft adapts it (`vramplan.model.lora_targets`)."""


@dataclass(frozen=True, slots=True)
class LinearSpec:
    """One logical linear layer of a block (or the head), `count` times per block."""

    role: LinearRole
    in_features: int
    out_features: int
    bias: bool
    count: int = 1
    """How many copies per block (the number of experts for expert linears, else 1)."""
    routed: bool = False
    """An expert linear: only `experts_per_token` of the `count` copies see a given token."""

    @property
    def params_each(self) -> int:
        """Parameters of one copy: weight plus bias."""
        return self.in_features * self.out_features + (self.out_features if self.bias else 0)

    @property
    def params(self) -> int:
        """Parameters of all `count` copies."""
        return self.count * self.params_each


@dataclass(frozen=True, slots=True)
class Architecture:
    """A decoder-only transformer, in one vocabulary for every family.

    Sizes are as in the Hugging Face config (vocab_size is the padded size actually allocated).
    """

    family: str
    """The Hugging Face `model_type` (`llama`, `mixtral`, `gemma2`, `falcon`, ...)."""
    n_layers: int
    hidden_size: int
    intermediate_size: int
    """Width of the dense MLP (for a model whose every MLP is a mixture of experts, of each
    expert unless `moe_intermediate_size` says otherwise)."""
    n_heads: int
    n_kv_heads: int
    """Key/value heads: n_heads for MHA, fewer for GQA, 1 for MQA."""
    head_dim: int
    vocab_size: int
    tied_embeddings: bool
    """The head reuses the embedding matrix (counted once)."""
    mlp: MlpKind
    activation: str
    """The HF activation name: `silu`, `gelu_pytorch_tanh`, `gelu_new`, `gelu`, ..."""
    qkv_bias: bool
    attn_out_bias: bool
    mlp_bias: bool
    norm: NormKind
    norm_bias: bool
    position: PositionKind
    max_position_embeddings: int
    parallel_block: bool = False
    """Attention and MLP side by side on the same input (GPT-J, GPT-NeoX, Falcon, Phi-1/2)."""
    shared_block_norm: bool = False
    """One norm feeds both branches of a parallel block (Falcon-7B, Phi-1/2): one norm per block."""
    sandwich_norms: bool = False
    """Extra norms on the attention and MLP outputs (Gemma 2: four norms per block)."""
    norms_after_sublayers: bool = False
    """The block's two norms are on the outputs of attention and MLP, none on their inputs (OLMo 2:
    `post_attention_layernorm` and `post_feedforward_layernorm`, modeling_olmo2.py)."""
    norm_weight: bool = True
    """The norms have a learned scale (OLMo-1's layer norm has neither scale nor bias)."""
    layernorm_on_fp32_copy: bool = False
    """The layer norm runs on an fp32 copy of its input and casts its output back (OLMo-1's
    `OlmoLayerNorm`: `F.layer_norm(hidden_states.to(dtype=torch.float32), ...).to(orig_dtype)`),
    so `native_layer_norm` keeps that copy for backward."""
    qk_norm: QkNormKind = QkNormKind.NONE
    fused_qkv: bool = False
    """The HF module has one fused q/k/v projection (Falcon, GPT-NeoX, GPT-2, StarCoder, Phi-3)."""
    fused_gate_up: bool = False
    """The HF module has one fused gate/up projection (Phi-3)."""
    head_bias: bool = False
    """The output head has a bias (Phi-1/2)."""
    final_norm: bool = True
    """A norm before the head (every supported family has one)."""
    n_experts: int = 1
    """MLP experts per block; 1 is a dense MLP (no router)."""
    experts_per_token: int = 1
    n_shared_experts: int = 0
    """Experts every token goes through, besides the routed ones (DeepSeek style)."""
    moe_intermediate_size: int | None = None
    """Width of each expert when it differs from `intermediate_size`."""
    shared_expert_intermediate_size: int | None = None
    """Width of the shared expert when it is one MLP of its own width (Qwen2-MoE's
    `shared_expert_intermediate_size`, with `n_shared_experts` 1); None: `n_shared_experts`
    MLPs of the routed experts' width, as one MLP of their summed width (DeepSeek)."""
    shared_expert_gate: bool = False
    """A linear of one output (no bias) whose sigmoid scales the shared expert's output (Qwen2-MoE's
    `shared_expert_gate`, modeling_qwen2_moe.py `Qwen2MoeSparseMoeBlock`); listed with the
    router (`LinearSpec` role "router": neither adapted nor quantized)."""
    shared_experts_first: bool = False
    """The shared experts run before the routed ones in the layer's forward (Qwen2-MoE's
    `shared_expert_output = self.shared_expert(...)` first), so their backward runs after the
    routed experts'; DeepSeek's and GLM's add theirs last (`hidden_states +
    self.shared_experts(residuals)`), and their backward runs first."""
    router_bias: bool = False
    sliding_window: int | None = None
    """Window of local attention, in tokens, on `sliding_window_layers` layers (None: none)."""
    sliding_window_layers: int = 0
    partial_rotary_factor: float = 1.0
    """Share of each head's dimensions that get rotary embeddings (Phi-2: 0.4, Pythia: 0.25)."""
    rope_theta: float | None = None
    longrope_positions: int | None = None
    """LongRoPE (`rope_scaling` type "longrope", formerly "su": Phi-3's long-context models):
    the `original_max_position_embeddings` its short-context factors cover; None otherwise."""
    embedding_scale: float | None = None
    """A constant factor on the embeddings (Gemma: sqrt(hidden_size)); no parameters."""
    dtype: str | None = None
    """The dtype the checkpoint was published in (`torch_dtype`), if the config says."""
    attn_logit_softcapping: float | None = None
    """Attention scores soft-capped as `cap * tanh(scores / cap)` (Gemma 2; HF key of the same
    name): no fused attention kernel does it, so the score matrix is materialized."""
    final_logit_softcapping: float | None = None
    """Logits soft-capped the same way before the loss (Gemma 2; HF key of the same name)."""
    position_offset: int = 0
    """Rows of a learned position table beyond `max_position_embeddings`, which stays the usable
    context length. OPT: 2 (transformers models/opt/modeling_opt.py,
    `OPTLearnedPositionalEmbedding` allocates `num_embeddings + self.offset` rows, offset 2, and
    looks positions up at `position_ids + self.offset`)."""
    embedding_dropout: float = 0.0
    """Dropout rate on the embeddings' output in training (GPT-2 `embd_pdrop`, GPT-NeoX
    `hidden_dropout`, ...; `vramplan.model.hf_config` reads each family's key)."""
    attention_dropout: float = 0.0
    """Dropout rate on the attention probabilities in training (GPT-2 `attn_pdrop`, Llama
    `attention_dropout`, ...): eager attention's `nn.functional.dropout(attn_weights, ...)`, or the
    `dropout_p` of scaled_dot_product_attention."""
    attention_output_dropout: float = 0.0
    """Dropout rate on the attention branch's output, after its output projection (GPT-2
    `resid_pdrop` in `GPT2Attention.forward`, OPT `dropout`, ...)."""
    mlp_output_dropout: float = 0.0
    """Dropout rate on the MLP's output (GPT-2 `resid_pdrop` in `GPT2MLP.forward`, ...); in
    Falcon's parallel block, on the sum of both branches (one hidden-wide tensor all the same)."""
    eager_softmax_fp32: bool = True
    """Eager attention computes its softmax in fp32 (`softmax(..., dtype=torch.float32)` in
    transformers' Llama, OPT, Phi, GPT-NeoX, StarCoder ...; GPT-J on fp32 scores) and casts back;
    False where it runs in the scores' dtype (GPT-2's `eager_attention_forward`:
    `nn.functional.softmax(attn_weights, dim=-1)`)."""
    latent_attention: LatentAttention | None = None
    """Multi-head latent attention (DeepSeek-V3, Kimi K2); None for q/k/v/o attention. With it,
    `head_dim` is the query/key head width (`qk_nope_head_dim + qk_rope_head_dim`) and
    `n_kv_heads` the heads keys and values are expanded to."""
    attention_sinks: bool = False
    """One learned sink logit per head joins each softmax (gpt-oss `self_attn.sinks`, n_heads
    parameters per block; Xiao et al. 2023, arXiv:2309.17453, learned as in OpenAI's gpt-oss)."""
    local_attention: LocalAttention = LocalAttention.SLIDING
    """How the `sliding_window_layers` layers bound their attention."""
    dense_layers: tuple[int, ...] = ()
    """In a mixture-of-experts model, the layers (0-based) whose feed-forward is the dense MLP of
    `intermediate_size`: DeepSeek-V3's `first_k_dense_replace` first layers, Llama 4 Maverick's
    even layers, Qwen3-MoE's `mlp_only_layers`. The others hold the router and the experts."""
    vision: VisionTower | None = None
    """The vision tower and projector of a vision-language checkpoint (Gemma 3 4B+, Llama 4)."""
    mtp_layers: int = 0
    """Multi-token-prediction modules in the checkpoint (`num_nextn_predict_layers`: DeepSeek-V3
    1, GLM-4.5 1), which transformers' `*ForCausalLM` does not build (it builds them only in
    `MtpModel` for `generate(use_mtp=True)`, modeling_layers.py)."""
    mtp_loaded: bool = False
    """The MTP modules are loaded and counted (speculative decoding with them, as vLLM's and
    SGLang's MTP drafts do); off by default, as in transformers."""
    norm_scale_fp32: bool = False
    """The RMSNorm multiplies by its scale in fp32 and casts after (Gemma's `output * (1.0 +
    self.weight.float())`, OLMo 2's and gpt-oss's `(self.weight * hidden_states).to(input_dtype)`),
    so the normalized input it keeps for the scale's gradient is fp32; Llama's casts first
    (`self.weight * hidden_states.to(input_dtype)`)."""
    norm_python_layernorm: bool = False
    """The LayerNorm is written out in fp32 Python (Cohere's `CohereLayerNorm`: two centered
    copies, the inverse deviation, the normalized input), not `nn.LayerNorm`."""
    router_fp32: bool = False
    """The router computes in fp32 from an fp32 copy of its input (DeepSeek-V3's and GLM-4.5's
    `F.linear(hidden_states.type(torch.float32), self.weight.type(torch.float32))`)."""
    swiglu_limit: float | None = None
    """gpt-oss's experts clamp gate and up to this limit and gate with `gate * sigmoid(alpha *
    gate)`, `(up + 1) * glu` (`GptOssExperts._apply_gate`): four intermediate-wide tensors kept
    where act(gate) * up keeps one."""
    experts_see_every_token: bool = False
    """transformers' Llama 4 runs every token through every expert, scaled by a zero score when not
    routed (`Llama4TextMoe.forward`: `hidden_states.repeat(num_experts, 1)`, then `torch.bmm`), so
    its training activations grow with n_experts, not experts_per_token."""
    embedding_norm: bool = False
    """A norm on the token embeddings before the first block, of the blocks' kind (BLOOM's
    `word_embeddings_layernorm`, a LayerNorm with scale and bias: models/bloom/modeling_bloom.py
    `BloomModel`)."""
    eager_qk_fp32: bool = False
    """Eager attention casts queries and keys to fp32 before their product (GPT-Neo's
    `GPTNeoSelfAttention._attn`: `query.to(torch.float32)`, `key.to(torch.float32)`), so the
    product keeps fp32 copies of both and the scores, masked and softmaxed, are fp32."""
    sdpa_attention: bool = True
    """transformers' module has an SDPA path. BLOOM's and GPT-Neo's do not (`BloomAttention`
    writes its attention out; GPT-Neo's `GPT_NEO_ATTENTION_CLASSES` holds eager and
    flash_attention_2): there `sdpa`, transformers' default, runs eager attention
    (modeling_utils.py `get_correct_attn_implementation`: "Sdpa is the default, so we try it and
    fallback to eager otherwise when not possible")."""
    flash_attention: bool = True
    """transformers' module has a FlashAttention path (BLOOM's has none)."""
    causal_mask_buffers: bool = False
    """Each attention layer registers its causal mask as a bool buffer of
    `max_position_embeddings` x `max_position_embeddings` (GPT-Neo's `GPTNeoSelfAttention.bias`,
    `nn.Buffer(..., persistent=False)`: built on the model's device, in no checkpoint and no
    parameter count): `buffer_bytes`."""
    checkpoint_format: str | None = None
    """The weight format the checkpoint is published in when it is not a plain float dtype
    (`quantization_config`): `fp8-block128` (DeepSeek-V3, Kimi K2), `mxfp4` (gpt-oss); a name of
    `vramplan.presets.quant_formats`."""

    def __post_init__(self) -> None:
        for name, bound in _RANGES.items():
            _check(name, getattr(self, name), bound)
        for name, bound in _OPTIONAL_RANGES.items():
            if getattr(self, name) is not None:
                _check(name, getattr(self, name), bound)
        _check("n_shared_experts", self.n_shared_experts, bounds.MODEL_EXPERTS, minimum=0)
        _check("mtp_layers", self.mtp_layers, bounds.MODEL_LAYERS, minimum=0)
        if self.n_heads % self.n_kv_heads:
            raise ModelOutOfRange("n_kv_heads", self.n_kv_heads, key="error.model_kv_heads",
                                  heads=self.n_heads)
        if self.experts_per_token > self.n_experts:
            raise ModelOutOfRange("experts_per_token", self.experts_per_token,
                                  key="error.model_routed", experts=self.n_experts)
        if any(not 0 <= layer < self.n_layers for layer in self.dense_layers):
            raise ModelOutOfRange("dense_layers", list(self.dense_layers), minimum=0,
                                  maximum=self.n_layers - 1)
        _check("sliding_window_layers", self.sliding_window_layers, bounds.MODEL_LAYERS,
               minimum=0, maximum=self.n_layers)
        if not 0 < self.partial_rotary_factor <= 1:
            raise ModelOutOfRange("partial_rotary_factor", self.partial_rotary_factor,
                                  minimum=0, maximum=1)
        _check("position_offset", self.position_offset, bounds.MODEL_CONTEXT, minimum=0)
        for name in ("embedding_dropout", "attention_dropout", "attention_output_dropout",
                     "mlp_output_dropout"):
            if not 0 <= getattr(self, name) <= 1:  # nn.Dropout accepts p in [0, 1]
                raise ModelOutOfRange(name, getattr(self, name), minimum=0, maximum=1)
        _check_latent(self.latent_attention)
        _check_vision(self.vision)
        if self.params_total > bounds.MODEL_PARAMS:
            raise ModelOutOfRange("params", self.params_total, minimum=1,
                                  maximum=bounds.MODEL_PARAMS)

    # --- derived sizes -------------------------------------------------------------------------

    @property
    def q_dim(self) -> int:
        """Width of the queries: n_heads x head_dim (not always hidden_size: Gemma-7B)."""
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the keys: n_kv_heads x head_dim (under multi-head latent attention, of the keys
        as expanded per head)."""
        return self.n_kv_heads * self.head_dim

    @property
    def v_head_dim(self) -> int:
        """Width of one head's values: `head_dim`, or MLA's `v_head_dim`."""
        mla = self.latent_attention
        return mla.v_head_dim if mla is not None else self.head_dim

    @property
    def v_dim(self) -> int:
        """Width of the values: n_kv_heads x the value head width."""
        return self.n_kv_heads * self.v_head_dim

    @property
    def attn_out_dim(self) -> int:
        """Width of the attention output before `o_proj`: n_heads x the value head width."""
        return self.n_heads * self.v_head_dim

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 1

    @property
    def expert_intermediate_size(self) -> int:
        """Width of each expert's MLP (the dense MLP's width for a dense model)."""
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def shared_experts_width(self) -> int:
        """Intermediate width of a MoE block's shared experts together (0 without any)."""
        if not self.n_shared_experts:
            return 0
        return self.shared_expert_intermediate_size or (
            self.n_shared_experts * self.expert_intermediate_size)

    @property
    def token_mlp_width(self) -> int:
        """Intermediate width one token goes through in a MoE block: the experts it is routed to
        and the shared experts together; a dense model's MLP width."""
        if not self.is_moe:
            return self.expert_intermediate_size
        return self.expert_intermediate_size * self.experts_per_token + self.shared_experts_width

    @property
    def n_dense_layers(self) -> int:
        """Layers with a dense MLP: all of a dense model's, `dense_layers` of a MoE model's."""
        return len(set(self.dense_layers)) if self.is_moe else self.n_layers

    @property
    def n_moe_layers(self) -> int:
        """Layers holding a router and experts."""
        return self.n_layers - self.n_dense_layers

    def layer_is_moe(self, layer: int) -> bool:
        """Whether layer `layer` (0-based) holds the router and the experts."""
        return self.is_moe and layer not in self.dense_layers

    def kind_view(self, moe: bool) -> Architecture:
        """The same architecture with every block of one kind: its dense blocks (no router, no
        experts) or its MoE blocks; for code that models one block at a time."""
        from dataclasses import replace

        if not self.is_moe or (moe and not self.dense_layers):
            return self  # already all of one kind
        if moe:
            return replace(self, dense_layers=())
        return replace(self, n_experts=1, experts_per_token=1, n_shared_experts=0,
                       moe_intermediate_size=None, shared_expert_intermediate_size=None,
                       shared_expert_gate=False, router_bias=False, dense_layers=())

    @property
    def rotary_dim(self) -> int:
        """Dimensions of each head that are rotated (0 without RoPE)."""
        if self.position is not PositionKind.ROPE:
            return 0
        return int(self.head_dim * self.partial_rotary_factor)

    @property
    def norms_per_block(self) -> int:
        """Norm layers in one block: 1 shared or 2 (before attention and MLP), plus 2 sandwich."""
        return (1 if self.shared_block_norm else 2) + (2 if self.sandwich_norms else 0)

    @property
    def norm_params(self) -> int:
        """Parameters of one hidden_size-wide norm."""
        return self.hidden_size * (int(self.norm_weight) + int(self.norm_bias))

    # --- linears ---------------------------------------------------------------------------------

    def attention_linears(self) -> tuple[LinearSpec, ...]:
        """The attention's linears of one block: q, k, v and o as logical linears (k and v
        GQA-sized even when fused), or the five projections of multi-head latent attention."""
        h = self.hidden_size
        if self.latent_attention is not None:
            return self._latent_attention_linears(self.latent_attention)
        return (
            LinearSpec("q", h, self.q_dim, self.qkv_bias),
            LinearSpec("k", h, self.kv_dim, self.qkv_bias),
            LinearSpec("v", h, self.kv_dim, self.qkv_bias),
            LinearSpec("o", self.q_dim, h, self.attn_out_bias),
        )

    def _latent_attention_linears(self, mla: LatentAttention) -> tuple[LinearSpec, ...]:
        """DeepseekV3Attention.__init__: `q_a_proj` and `kv_a_proj_with_mqa` (and `o_proj`) take
        `attention_bias`; `q_proj`, `q_b_proj` and `kv_b_proj` have no bias."""
        h, heads, bias = self.hidden_size, self.n_heads, self.qkv_bias
        q_out = heads * mla.qk_head_dim
        if mla.q_lora_rank is None:
            queries: tuple[LinearSpec, ...] = (LinearSpec("q", h, q_out, False),)
        else:
            queries = (LinearSpec("q_a", h, mla.q_lora_rank, bias),
                       LinearSpec("q_b", mla.q_lora_rank, q_out, False))
        return (
            *queries,
            LinearSpec("kv_a", h, mla.kv_lora_rank + mla.qk_rope_head_dim, bias),
            LinearSpec("kv_b", mla.kv_lora_rank, heads * (mla.qk_nope_head_dim + mla.v_head_dim),
                       False),
            LinearSpec("o", heads * mla.v_head_dim, h, self.attn_out_bias),
        )

    def mlp_linears(self) -> tuple[LinearSpec, ...]:
        """The MLP of one block (of a MoE block in a model that has both kinds): the dense MLP,
        or the router, the routed experts and the shared experts (in that order)."""
        if not self.is_moe:
            return self.dense_mlp_linears()
        router = LinearSpec("router", self.hidden_size, self.n_experts, self.router_bias)
        routed = self._ffn(self.expert_intermediate_size, count=self.n_experts, routed=True)
        return (router, *routed, *self._shared_expert_linears())

    def _shared_expert_linears(self) -> tuple[LinearSpec, ...]:
        """The shared experts of a MoE block: `n_shared_experts` MLPs of the routed width, or one
        of `shared_expert_intermediate_size`; then the shared expert's gate, if any."""
        if not self.n_shared_experts:
            return ()
        if self.shared_expert_intermediate_size is None:
            shared = self._ffn(self.expert_intermediate_size, count=self.n_shared_experts,
                               routed=False)
        else:
            shared = self._ffn(self.shared_expert_intermediate_size, count=1, routed=False)
        gate = (LinearSpec("router", self.hidden_size, 1, False),) \
            if self.shared_expert_gate else ()
        return (*shared, *gate)

    def dense_mlp_linears(self) -> tuple[LinearSpec, ...]:
        """The dense MLP of `intermediate_size` (every block of a dense model, `dense_layers` of a
        MoE model)."""
        return self._ffn(self.intermediate_size, count=1, routed=False)

    def _ffn(self, width: int, count: int, routed: bool) -> tuple[LinearSpec, ...]:
        h, bias = self.hidden_size, self.mlp_bias
        down = LinearSpec("down", width, h, bias, count, routed)
        if self.mlp is MlpKind.GATED:
            return (LinearSpec("gate", h, width, bias, count, routed),
                    LinearSpec("up", h, width, bias, count, routed), down)
        return (LinearSpec("up", h, width, bias, count, routed), down)

    def block_linears(self) -> tuple[LinearSpec, ...]:
        """Every linear of ONE block: attention, then MLP (router and experts for MoE). In a
        model with both kinds of block, of a MoE block: `block_kinds()` lists both."""
        return (*self.attention_linears(), *self.mlp_linears())

    def block_kinds(self) -> tuple[BlockKind, ...]:
        """The kinds of block and how many layers of each: one kind for a dense model or a model
        whose every layer is MoE; a dense kind and a MoE kind otherwise (dense first)."""
        attention = self.attention_linears()
        per_block = self.params_attention_per_block + self.params_norms_per_block
        kinds = []
        if self.n_dense_layers:
            dense = self.dense_mlp_linears()
            kinds.append(BlockKind(self.n_dense_layers, False, (*attention, *dense),
                                   per_block + sum(lin.params for lin in dense)))
        if self.n_moe_layers:
            moe = self.mlp_linears()
            kinds.append(BlockKind(self.n_moe_layers, True, (*attention, *moe),
                                   per_block + sum(lin.params for lin in moe)))
        return tuple(kinds)

    def largest_block_linear(self) -> int:
        """Weight values of the largest linear of any block, of either kind (a dense first
        layer's MLP is the widest in DeepSeek-V3)."""
        return max(lin.in_features * lin.out_features for kind in self.block_kinds()
                   for lin in kind.linears)

    def model_linears(self) -> tuple[tuple[LinearSpec, int], ...]:
        """Every block linear of the model with the number of layers it is in."""
        return tuple((linear, kind.layers) for kind in self.block_kinds()
                     for linear in kind.linears)

    def head_linear(self) -> LinearSpec:
        """The output projection (it exists even when its weight is tied to the embedding)."""
        return LinearSpec("head", self.hidden_size, self.vocab_size, self.head_bias)

    # --- exact counts -----------------------------------------------------------------------------

    @property
    def params_qk_norm(self) -> int:
        """Query/key norm parameters of one block (RMSNorm scales or bias-free LayerNorms)."""
        if self.qk_norm is QkNormKind.PER_HEAD_SHARED:
            return 2 * self.head_dim
        if self.qk_norm is QkNormKind.PER_HEAD:
            return (self.n_heads + self.n_kv_heads) * self.head_dim
        return 0

    @property
    def params_attention_per_block(self) -> int:
        """Attention linears, query/key norms, MLA's latent norms and attention sinks."""
        latent_norms = self.latent_attention.norm_params if self.latent_attention else 0
        sinks = self.n_heads if self.attention_sinks else 0
        return (sum(lin.params for lin in self.attention_linears()) + self.params_qk_norm
                + latent_norms + sinks)

    @property
    def params_router_per_block(self) -> int:
        """The router of a MoE block (0 for a dense model)."""
        return sum(lin.params for lin in self.mlp_linears() if lin.role == "router")

    @property
    def params_mlp_per_block(self) -> int:
        """Dense MLP, or all experts (routed and shared) of a MoE block, without the router."""
        return sum(lin.params for lin in self.mlp_linears() if lin.role != "router")

    @property
    def params_dense_mlp(self) -> int:
        """The dense MLP of one block."""
        return sum(lin.params for lin in self.dense_mlp_linears())

    @property
    def params_norms_per_block(self) -> int:
        return self.norms_per_block * self.norm_params

    @property
    def params_per_block(self) -> int:
        """Parameters of one block; of the largest kind when blocks differ (a MoE block)."""
        return max(kind.params for kind in self.block_kinds())

    def params_of_layer(self, layer: int) -> int:
        """Parameters of block `layer` (0-based)."""
        moe = self.layer_is_moe(layer)
        return next(kind.params for kind in self.block_kinds() if kind.moe is moe)

    @property
    def params_blocks(self) -> int:
        return sum(kind.layers * kind.params for kind in self.block_kinds())

    @property
    def params_token_embedding(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def position_table_rows(self) -> int:
        """Rows of the learned position table (0 for RoPE and ALiBi): `max_position_embeddings`
        plus `position_offset`."""
        if self.position is PositionKind.LEARNED:
            return self.max_position_embeddings + self.position_offset
        return 0

    @property
    def params_position_embedding(self) -> int:
        return self.position_table_rows * self.hidden_size

    @property
    def params_embedding(self) -> int:
        """Token embedding plus learned position embedding."""
        return self.params_token_embedding + self.params_position_embedding

    @property
    def params_head(self) -> int:
        """The head's own parameters: 0 when tied (its bias, if any, is still its own)."""
        head = self.head_linear()
        if self.tied_embeddings:
            return head.out_features if head.bias else 0
        return head.params

    @property
    def params_final_norm(self) -> int:
        return self.norm_params if self.final_norm else 0

    @property
    def params_embedding_norm(self) -> int:
        """The norm on the embeddings (`embedding_norm`), 0 without one."""
        return self.norm_params if self.embedding_norm else 0

    @property
    def buffer_bytes(self) -> int:
        """Bytes of the model's own device buffers that scale with it: one bool causal mask of
        `max_position_embeddings`^2 per layer where `causal_mask_buffers` (2048 positions: 4 MiB
        a layer); 0 for the other families (RoPE's inverse frequencies are a few hundred
        bytes; the per-layer cos and sin tables of older code depend on the code's date:
        `rope_table_bytes`)."""
        if not self.causal_mask_buffers:
            return 0
        return self.n_layers * self.max_position_embeddings ** 2

    def rope_table_bytes(self, itemsize: int, rows: int | None = None) -> int:
        """Bytes of per-layer rotary cos and sin tables of `rows` rows (default
        `max_position_embeddings`) of `rotary_dim` values, `itemsize` bytes each (transformers'
        older rotary modules, `vramplan.presets.frameworks.transformers.TransformersCode.
        rope_caches`; Unsloth's, `UnslothCode.rope_tables_per_layer`)."""
        rows = self.max_position_embeddings if rows is None else rows
        return self.n_layers * 2 * rows * self.rotary_dim * itemsize

    def rope_cache_bytes(self, rows: int, itemsize: int, *, whole_width: bool = False) -> int:
        """Bytes of one rotary module's cache of `rows` positions: a cos and a sin for each of
        the `rotary_dim / 2` frequencies (torchtune's [rows, rotary_dim / 2, 2]), or for each of
        the `rotary_dim` rotated dimensions (`whole_width`: each frequency twice, as torchtune's
        Phi-3 and Qwen2 modules store them), `itemsize` bytes each; 0 without RoPE."""
        return rows * self.rotary_dim * itemsize * (2 if whole_width else 1)

    @property
    def params_vision(self) -> int:
        """The vision tower and its projector (0 for a text-only model)."""
        return self.vision.params if self.vision is not None else 0

    @property
    def params_mtp_module(self) -> int:
        """One multi-token-prediction module as transformers' `MtpLayer` builds it
        (modeling_layers.py): `enorm` and `hnorm` (hidden-size norms), `eh_proj` (2 x hidden ->
        hidden, no bias), one decoder block built with `first_k_dense_replace=0` (so a MoE
        block; `get_mtp_config`, configuration_utils.py) and `post_norm`; the embedding and the
        head are the main model's."""
        h = self.hidden_size
        block = next(kind.params for kind in reversed(self.block_kinds()))
        return 3 * self.norm_params + 2 * h * h + block

    @property
    def params_mtp(self) -> int:
        """The MTP modules when loaded (0 otherwise)."""
        return self.mtp_layers * self.params_mtp_module if self.mtp_loaded else 0

    @property
    def params_text(self) -> int:
        """Every parameter of the language model (no vision tower, no MTP module)."""
        return self.params_total - self.params_vision - self.params_mtp

    @property
    def params_total(self) -> int:
        """Every parameter, tied weights counted once."""
        return sum(self.params_by_component().values())

    @property
    def params_non_embedding(self) -> int:
        """Parameters outside the embeddings and the untied head (Kaplan et al. 2020,
        arXiv:2001.08361, section 2.1, count N without embeddings)."""
        return self.params_total - self.params_embedding - self.params_head

    @property
    def params_active(self) -> int:
        """Parameters one token goes through: for MoE, only `experts_per_token` routed experts
        (the vision tower is counted as loaded)."""
        inactive = sum(
            lin.params_each * (lin.count - self.experts_per_token)
            for lin in self.mlp_linears() if lin.routed
        )
        return self.params_total - self.n_moe_layers * inactive

    def params_by_component(self) -> Mapping[ParamGroup, int]:
        """Every parameter, by where it lives; the values sum to `params_total`."""
        n = self.n_layers
        return {
            ParamGroup.EMBEDDING: self.params_token_embedding,
            ParamGroup.POSITION_EMBEDDING: self.params_position_embedding,
            ParamGroup.EMBEDDING_NORM: self.params_embedding_norm,
            ParamGroup.ATTENTION: n * self.params_attention_per_block,
            ParamGroup.MLP: (self.n_dense_layers * self.params_dense_mlp
                             + self.n_moe_layers * self.params_mlp_per_block
                             if self.is_moe else n * self.params_mlp_per_block),
            ParamGroup.ROUTER: self.n_moe_layers * self.params_router_per_block,
            ParamGroup.NORMS: n * self.params_norms_per_block,
            ParamGroup.FINAL_NORM: self.params_final_norm,
            ParamGroup.HEAD: self.params_head,
            ParamGroup.VISION: self.params_vision,
            ParamGroup.MTP: (self.mtp_layers * self.params_mtp_module
                             if self.mtp_loaded else 0),
        }


@dataclass(frozen=True, slots=True)
class BlockKind:
    """Blocks of one kind (dense or MoE) and how many layers have it."""

    layers: int
    moe: bool
    linears: tuple[LinearSpec, ...]
    """Every linear of one such block: attention, then its MLP (router and experts)."""
    params: int
    """Parameters of one such block (linears, norms, query/key norms, sinks)."""


class ModelOutOfRange(VramplanError):
    """A size of the model out of `vramplan.bounds`' model ranges, or sizes that do not go
    together: a config.json typed wrong or built to exhaust the machine. Attributed to the field
    the model came from (`config` here; `model` for a repo id, see `vramplan.requests.models`)."""

    key = "error.model_out_of_range"

    def __init__(self, name: str, value: object, *, key: str = "", minimum: object = None,
                 maximum: object = None, **params: object) -> None:
        if key:
            self.key = key
        super().__init__("config", str(value), name=name, minimum=minimum, maximum=maximum,
                         **params)


_RANGES = {
    "n_layers": bounds.MODEL_LAYERS, "hidden_size": bounds.MODEL_WIDTH,
    "intermediate_size": bounds.MODEL_WIDTH, "n_heads": bounds.MODEL_HEADS,
    "n_kv_heads": bounds.MODEL_HEADS, "head_dim": bounds.MODEL_WIDTH,
    "vocab_size": bounds.MODEL_VOCAB, "max_position_embeddings": bounds.MODEL_CONTEXT,
    "n_experts": bounds.MODEL_EXPERTS, "experts_per_token": bounds.MODEL_EXPERTS,
}
_OPTIONAL_RANGES = {
    "moe_intermediate_size": bounds.MODEL_WIDTH,
    "shared_expert_intermediate_size": bounds.MODEL_WIDTH, "sliding_window": bounds.MODEL_CONTEXT,
}


def _check_latent(latent: LatentAttention | None) -> None:
    if latent is None:
        return
    for name in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
        _check(name, getattr(latent, name), bounds.MODEL_WIDTH)
    if latent.q_lora_rank is not None:
        _check("q_lora_rank", latent.q_lora_rank, bounds.MODEL_WIDTH)


def _check_vision(vision: VisionTower | None) -> None:
    if vision is None:
        return
    _check("vision.n_layers", vision.n_layers, bounds.MODEL_LAYERS)
    _check("vision.n_heads", vision.n_heads, bounds.MODEL_HEADS)
    for name in ("hidden_size", "intermediate_size", "image_size", "patch_size", "channels",
                 "text_hidden_size"):
        _check(f"vision.{name}", getattr(vision, name), bounds.MODEL_WIDTH)
    _check("vision.tokens_per_image", vision.tokens_per_image, bounds.MODEL_CONTEXT)
    for name in ("projector_input_dim", "projector_output_dim", "vision_output_dim"):
        _check(f"vision.{name}", getattr(vision, name), bounds.MODEL_WIDTH, minimum=0)


def _check(name: str, value: int, bound: bounds.NumberField, *, minimum: int | None = None,
           maximum: int | None = None) -> None:
    """`value` within `bound` (or within [minimum, maximum] where given): a whole number."""
    low = bound.minimum if minimum is None else minimum
    high = bound.maximum if maximum is None else maximum
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or not low <= value <= high:
        raise ModelOutOfRange(name, value, minimum=int(low), maximum=int(high))
