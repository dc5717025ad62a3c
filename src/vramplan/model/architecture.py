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

from vramplan.errors import OutOfRange


class MlpKind(StrEnum):
    """The shape of a block's feed-forward network."""

    GATED = "gated"
    """Gated linear unit (SwiGLU, GeGLU): down(act(gate(x)) * up(x)), three matrices.
    Shazeer 2020, "GLU Variants Improve Transformer", arXiv:2002.05202."""
    PLAIN = "plain"
    """Two matrices: down(act(up(x))), as in GPT-2, GPT-NeoX, Falcon, Phi-1/2."""


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


class ParamGroup(StrEnum):
    """Where parameters live; the keys of `Architecture.params_by_component()`."""

    EMBEDDING = "embedding"
    """The token embedding table (vocab_size x hidden_size)."""
    POSITION_EMBEDDING = "position_embedding"
    """A learned position table (0 for RoPE and ALiBi)."""
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


LinearRole = Literal["q", "k", "v", "o", "gate", "up", "down", "router", "head"]
"""The role of a linear layer; LoRA target names map onto these."""


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
    norm_weight: bool = True
    """The norms have a learned scale (OLMo-1's layer norm has neither scale nor bias)."""
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
    router_bias: bool = False
    sliding_window: int | None = None
    """Window of local attention, in tokens, on `sliding_window_layers` layers (None: none)."""
    sliding_window_layers: int = 0
    partial_rotary_factor: float = 1.0
    """Share of each head's dimensions that get rotary embeddings (Phi-2: 0.4, Pythia: 0.25)."""
    rope_theta: float | None = None
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

    def __post_init__(self) -> None:
        for name in ("n_layers", "hidden_size", "intermediate_size", "n_heads", "n_kv_heads",
                     "head_dim", "vocab_size", "max_position_embeddings", "n_experts",
                     "experts_per_token"):
            _check_positive(name, getattr(self, name))
        if self.n_heads % self.n_kv_heads:
            raise OutOfRange("n_kv_heads", str(self.n_kv_heads))
        if self.experts_per_token > self.n_experts:
            raise OutOfRange("experts_per_token", str(self.experts_per_token))
        if not 0 <= self.sliding_window_layers <= self.n_layers:
            raise OutOfRange("sliding_window_layers", str(self.sliding_window_layers))
        if not 0 < self.partial_rotary_factor <= 1:
            raise OutOfRange("partial_rotary_factor", str(self.partial_rotary_factor))
        if self.position_offset < 0:
            raise OutOfRange("position_offset", str(self.position_offset))
        for name in ("embedding_dropout", "attention_dropout", "attention_output_dropout",
                     "mlp_output_dropout"):
            if not 0 <= getattr(self, name) <= 1:  # nn.Dropout accepts p in [0, 1]
                raise OutOfRange(name, str(getattr(self, name)))

    # --- derived sizes -------------------------------------------------------------------------

    @property
    def q_dim(self) -> int:
        """Width of the queries: n_heads x head_dim (not always hidden_size: Gemma-7B)."""
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the keys (and of the values): n_kv_heads x head_dim."""
        return self.n_kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 1

    @property
    def expert_intermediate_size(self) -> int:
        """Width of each expert's MLP (the dense MLP's width for a dense model)."""
        return self.moe_intermediate_size or self.intermediate_size

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
        """q, k, v and o of one block, as logical linears (k and v GQA-sized even when fused)."""
        h = self.hidden_size
        return (
            LinearSpec("q", h, self.q_dim, self.qkv_bias),
            LinearSpec("k", h, self.kv_dim, self.qkv_bias),
            LinearSpec("v", h, self.kv_dim, self.qkv_bias),
            LinearSpec("o", self.q_dim, h, self.attn_out_bias),
        )

    def mlp_linears(self) -> tuple[LinearSpec, ...]:
        """The MLP of one block: the dense MLP, or the router, the routed experts and the shared
        experts (in that order)."""
        if not self.is_moe:
            return self._ffn(self.intermediate_size, count=1, routed=False)
        router = LinearSpec("router", self.hidden_size, self.n_experts, self.router_bias)
        routed = self._ffn(self.expert_intermediate_size, count=self.n_experts, routed=True)
        shared = (self._ffn(self.expert_intermediate_size, count=self.n_shared_experts,
                            routed=False) if self.n_shared_experts else ())
        return (router, *routed, *shared)

    def _ffn(self, width: int, count: int, routed: bool) -> tuple[LinearSpec, ...]:
        h, bias = self.hidden_size, self.mlp_bias
        down = LinearSpec("down", width, h, bias, count, routed)
        if self.mlp is MlpKind.GATED:
            return (LinearSpec("gate", h, width, bias, count, routed),
                    LinearSpec("up", h, width, bias, count, routed), down)
        return (LinearSpec("up", h, width, bias, count, routed), down)

    def block_linears(self) -> tuple[LinearSpec, ...]:
        """Every linear of ONE block: attention, then MLP (router and experts for MoE)."""
        return (*self.attention_linears(), *self.mlp_linears())

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
        return sum(lin.params for lin in self.attention_linears()) + self.params_qk_norm

    @property
    def params_router_per_block(self) -> int:
        return sum(lin.params for lin in self.mlp_linears() if lin.role == "router")

    @property
    def params_mlp_per_block(self) -> int:
        """Dense MLP, or all experts (routed and shared), without the router."""
        return sum(lin.params for lin in self.mlp_linears() if lin.role != "router")

    @property
    def params_norms_per_block(self) -> int:
        return self.norms_per_block * self.norm_params

    @property
    def params_per_block(self) -> int:
        return (self.params_attention_per_block + self.params_router_per_block
                + self.params_mlp_per_block + self.params_norms_per_block)

    @property
    def params_blocks(self) -> int:
        return self.n_layers * self.params_per_block

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
        """Parameters one token goes through: for MoE, only `experts_per_token` routed experts."""
        inactive = sum(
            lin.params_each * (lin.count - self.experts_per_token)
            for lin in self.mlp_linears() if lin.routed
        )
        return self.params_total - self.n_layers * inactive

    def params_by_component(self) -> Mapping[ParamGroup, int]:
        """Every parameter, by where it lives; the values sum to `params_total`."""
        n = self.n_layers
        return {
            ParamGroup.EMBEDDING: self.params_token_embedding,
            ParamGroup.POSITION_EMBEDDING: self.params_position_embedding,
            ParamGroup.ATTENTION: n * self.params_attention_per_block,
            ParamGroup.MLP: n * self.params_mlp_per_block,
            ParamGroup.ROUTER: n * self.params_router_per_block,
            ParamGroup.NORMS: n * self.params_norms_per_block,
            ParamGroup.FINAL_NORM: self.params_final_norm,
            ParamGroup.HEAD: self.params_head,
        }


def _check_positive(name: str, value: int) -> None:
    if value <= 0:
        raise OutOfRange(name, str(value))
