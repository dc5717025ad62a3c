"""Activation memory: the tensors each operation saves for backward, and the logits and loss.

The starting point is Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models" (arXiv:2205.05198), section 4.1: per layer, s·b·h·(34 + 5·a·s/h) bytes in
16-bit with every weight trained and eager attention. We do not use that closed form: we list what
autograd really keeps, operation by operation, because what a layer saves depends on what trains.

Rules of autograd used throughout (PyTorch `tools/autograd/derivatives.yaml` and the codegen's
`should_compute_output` guards in `gen_variable_type.py`):
- a linear layer saves its input only when its weight needs a gradient, and its weight only when
  its input needs one: a frozen linear keeps no activation (checked in tests/test_activations.py);
- element-wise ops save what their derivative needs (SiLU/GELU their input, ReLU its output, a
  product both factors, dropout its mask: one byte per element on CUDA, `native_dropout`);
- a view keeps its whole base alive: litgpt's value tensor is a view of the fused qkv output;
- FlashAttention and PyTorch's SDPA kernels save q, k, v, the output and the log-sum-exp per row
  (Dao et al. 2022, arXiv:2205.14135, section 3.1); eager attention also saves the probabilities.

Framework implementations are followed from their source: litgpt `litgpt/model.py` (Block,
CausalSelfAttention, RMSNorm with an fp32 copy, GptNeoxMLP/LLaMAMLP), `litgpt/lora.py`
(LoRAQKVLinear with `lora_dropout`, `zero_pad` through `index_copy`, which keeps its source),
bitsandbytes `autograd/_functions.py` MatMul4Bit (kept its input A whenever A needed a gradient,
even with a frozen weight, until v0.43.2), Lightning Fabric `plugins/precision/half.py`
(`convert_output` casts the model's output, the logits, to the default dtype float32), and
transformers' `LlamaRMSNorm` and `ForCausalLMLoss` (`logits.float()`).

All sizes are bytes per token (multiply by batch x sequence) unless the name says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from vramplan.model.architecture import (
    BLOOM_GELU,
    PYTHON_TANH_GELUS,
    Architecture,
    LinearRole,
    MlpKind,
    NormKind,
    PositionKind,
    QkNormKind,
)
from vramplan.units import ceil_div
from vramplan.vocab import Attention, Checkpointing, Framework, LoraTarget

FP32 = 4
DROPOUT_MASK_BYTES = 1
"""`native_dropout` on CUDA returns a bool mask (aten/src/ATen/native/cuda/Dropout.cu), which
autograd saves for `native_dropout_backward` (derivatives.yaml: `native_dropout` saves `result1`).
`nn.functional.dropout` reaches it through `at::dropout` when `is_fused_kernel_acceptable` (a CUDA
input, 0 < p < 1: aten/src/ATen/native/Dropout.cpp); on CPU the same call would multiply by a
noise tensor of the input's dtype, so the tracer routes it to `native_dropout`
(vramplan.tracer.run)."""
LITGPT_LM_HEAD_CHUNK = 128
"""litgpt finetune scripts call `model(input_ids, lm_head_chunk_size=128)` and
`chunked_cross_entropy(..., chunk_size=128)` (litgpt/finetune/lora.py, litgpt/utils.py)."""
LITGPT_LORA_DROPOUT = 0.05
"""litgpt's default `lora_dropout` (finetune/lora.py hyperparameters and config_hub YAMLs)."""


@dataclass(frozen=True, slots=True)
class BlockSpec:
    """What decides which tensors one block saves."""

    framework: Framework
    residual_bytes: int
    """Bytes per element of the residual stream and norm outputs (4 under autocast and fp32)."""
    compute_bytes: int
    """Bytes per element of linear-layer outputs (2 in bf16/fp16 and under autocast)."""
    autocast: bool
    weights_train: bool
    """The block's own weights train (full fine-tuning, or a trained block of `freeze`)."""
    base_keeps_input: bool
    """A quantized frozen base whose matmul keeps its input (bitsandbytes `MatMul8bitLt`, and
    `MatMul4Bit` until v0.43.2: `presets.frameworks.BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`)."""
    lora_targets: frozenset[LoraTarget]
    lora_rank: int
    lora_dropout: bool
    attention: Attention
    model_dropout: bool = False
    """The model's own dropout layers run at the config's rates (transformers modules in train
    mode); litgpt's GPT has none."""
    base_output_in_input_dtype: bool = False
    """A quantized frozen base whose linears return their output in their input's dtype
    (bitsandbytes `Linear4bit.forward`: `x.to(self.compute_dtype)`, then `out.to(inp_dtype)`,
    every version read from 0.41.0 to 95f9af30): fp32 where the residual stream is (`amp`)."""
    moe_expert_loop: bool = False
    """The mixture-of-experts layer is transformers' Python loop over experts that are MLPs of
    `nn.Linear` modules (`vramplan.presets.frameworks.TransformersCode.moe_expert_linears`),
    not `grouped_mm` over 3-D expert parameters (`_moe`)."""
    moe_output_weighted: bool = True
    """The routed experts' outputs are multiplied by their routing weights after the down
    projection, which keeps each routed copy's output for the weights' gradient (transformers'
    `proj_out * sample_weights`; Megatron-LM's `unpermute` with `probs` before
    `vramplan.presets.frameworks.MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE`). False for Megatron-LM
    since: the probabilities weight the experts' SwiGLU output (its fused kernel saves its input
    and the probabilities) and nothing keeps the down projection's output."""
    experts_merged_per_token: int = 0
    """peft's adapters on transformers 5's fused routed experts (`target_parameters`): each
    forward rebuilds every adapted 3-D parameter as W + scaling·B·A (peft/tuners/lora/layer.py
    `ParamWrapper._activate_lora`: `nn.utils.parametrize` with `_LoraFactorsProxy`'s one
    `baddbmm`, or `_LoraParameterProxy`'s `W + delta`, in the weights' dtype), and `grouped_mm`
    keeps that merged copy for backward: one MoE layer's merged bytes over the step's tokens,
    per token (0 where no expert is adapted that way; `vramplan.training.estimate.block_spec`)."""
    experts_gathered: int = 1
    """Megatron-Core's expert-tensor-parallel degree (`vramplan.training.setup.TrainingSetup
    .experts_gathered`): each GPU's routed experts see this many GPUs' tokens, so their first
    linear keeps that many times one GPU's share of the routed input."""
    compiled: bool = False
    """The block runs under torch.compile: AOTAutograd's min-cut partitioner, not each
    operation, decides what it saves (`COMPILED_SAVES`)."""
    linears_keep_input: bool = False
    """Every linear saves its input, frozen ones included (DeepSpeed ZeRO-3's
    `LinearFunctionForZeroStage3`, `vramplan.training.setup.TrainingSetup.linears_keep_input`);
    unlike bitsandbytes' context tensors they are saved tensors, released by backward."""
    rmsnorm_scale_after_cast: bool = False
    """litgpt's RMSNorm casts its normalized input back to the input's dtype before the scale
    (its code from February to July 2024, `vramplan.presets.frameworks.LitgptCode`)."""
    scores_clamped: bool = False
    """Eager attention keeps its masked scores for `torch.max` (transformers' OPT until
    v4.49.0, Llama until v4.30.0: `vramplan.presets.frameworks.TransformersCode
    .clamped_scores`)."""
    sdpa_output_saved: bool = True
    """torchtitan's per-op checkpointing keeps SDPA's output and log-sum-exp: False where the
    kernel that runs is not in its save list (`vramplan.presets.frameworks.TorchtitanCode
    .saves_sdpa_output`), so backward recomputes the attention."""
    tensor_parallel: int = 1
    """torchtitan's tensor-parallel degree with its sequence parallelism
    (`vramplan.training.setup.TrainingSetup.tensor_parallel`): per-op checkpointing keeps the
    row-parallel linears' outputs and reduce-scatters (`per_op_selective_saved`)."""
    reduce_scatter_saved: bool = True
    """torchtitan's per-op save list holds `_c10d_functional.reduce_scatter_tensor`
    (`vramplan.presets.frameworks.TorchtitanCode.saves_reduce_scatter`)."""
    autocast_16bit_weights: bool = False
    """The forward runs under the Trainer's 16-bit autocast over 16-bit weights
    (`vramplan.training.setup.autocasts_16bit_weights`): it changes nothing for 16-bit operands
    and is counted only where an adapter reads an fp32 tensor (`_linear`)."""
    adapter_input_fp32: bool = False
    """peft copies each adapter's 16-bit input to fp32 for its fp32 adapters
    (`vramplan.training.setup.peft_casts_adapter_input`): under autocast `lora_A` saves its own
    16-bit cast of that copy, without autocast the fp32 copy (or fp32 dropout output) itself and
    an fp32 `lora_A` output."""
    lora_on_modules: bool = False
    """The adapters sit on the checkpoint's own modules (peft on transformers' code,
    `vramplan.training.setup.lora_on_modules`): a fused q/k/v or gate/up linear gets one."""
    liger_kernels: bool = False
    """Liger-Kernel's modules replace transformers' norms and gated MLP activation
    (`TrainingSetup.liger_kernels`): `LigerRMSNormFunction` saves its input and its fp32 rstd
    (linkedin/Liger-Kernel src/liger_kernel/ops/rms_norm.py `save_for_backward(X, W, RSTD)`),
    `LigerSiLUMulFunction` its two inputs, not the activation's output (ops/swiglu.py
    `save_for_backward(a, b)`)."""
    mlp_tile_share: Fraction | None = None
    """The MLP runs tiled (`TrainingSetup.tiled_mlp`): its largest tile's share of the step's
    tokens (`vramplan.training.estimate.mlp_tile_tokens`); None: not tiled. The tiled MLP
    (unsloth-zoo unsloth_zoo/tiled_mlp.py `TiledMLP` @7209a767; DeepSpeed
    deepspeed/runtime/sequence_parallel/ulysses_sp.py `TiledMLP`, the same scheme) runs its
    forward tile by tile under `no_grad` and saves only its input (`ctx.save_for_backward(x)`);
    its backward makes the input's gradient whole (`torch.zeros_like(x)`) and runs each tile
    again with its gradient, so one tile's saved tensors and gradients exist at a time
    (`tiled_mlp_backward`)."""


@dataclass(frozen=True, slots=True)
class Saved:
    """One tensor saved for backward: its name and its bytes per token."""

    name: str
    bytes_per_token: int


class _Ledger:
    """Saved tensors by name: a tensor saved by two operations is counted once. It also notes
    the forward's moments that can outgrow what the block saves (`moment`)."""

    def __init__(self) -> None:
        self._items: dict[str, int] = {}
        self.moments: list[tuple[int, int]] = []
        """(bytes saved so far, bytes alive beyond them), per token, in forward order."""

    def keep(self, name: str, bytes_per_token: int) -> None:
        self._items.setdefault(name, bytes_per_token)

    def has(self, name: str) -> bool:
        return name in self._items

    def total(self) -> int:
        return sum(self._items.values())

    def moment(self, alive: int) -> None:
        """The forward holds `alive` bytes per token beyond what it has saved so far."""
        self.moments.append((self.total(), alive))

    def items(self) -> tuple[Saved, ...]:
        return tuple(Saved(name, n) for name, n in self._items.items() if n > 0)


def block_saved(arch: Architecture, spec: BlockSpec, seq_len: int,
                input_needs_grad: bool = True) -> tuple[Saved, ...]:
    """Tensors one transformer block keeps for backward, per token.

    `input_needs_grad` is False for a block whose input comes from frozen layers (the first block
    under LoRA, the first trained block under `freeze`): its first norm and the frozen matmuls
    that read it save nothing (autograd builds no graph for them).
    """
    return _block_ledger(arch, spec, seq_len, input_needs_grad).items()


def _block_ledger(arch: Architecture, spec: BlockSpec, seq_len: int,
                  input_needs_grad: bool) -> _Ledger:
    ledger = _Ledger()
    r = spec.residual_bytes
    if arch.norms_after_sublayers:
        _post_norm_block(ledger, arch, spec, seq_len, input_needs_grad)
        return ledger
    if _unsloth_lora_kernels(arch, spec):
        _unsloth_lora_block(ledger, arch, spec, input_needs_grad)
        return ledger
    _norm(ledger, arch, spec, _Tensor("x_in", r), name="norm_1", needs_grad=input_needs_grad)
    n1 = _Tensor("norm_1_out", r)
    _attention(ledger, arch, spec, n1, seq_len=seq_len, input_needs_grad=input_needs_grad)
    if arch.parallel_block:
        if not arch.shared_block_norm:
            _norm(ledger, arch, spec, _Tensor("x_in", r), name="norm_2",
                  needs_grad=input_needs_grad)
        n2 = n1 if arch.shared_block_norm else _Tensor("norm_2_out", r)
    else:
        mid_needs_grad = _residual_after_attention_needs_grad(spec, input_needs_grad)
        if arch.sandwich_norms:
            _norm(ledger, arch, spec, _Tensor("attn_proj_out", spec.compute_bytes),
                  name="post_attention_norm", needs_grad=mid_needs_grad)
        _norm(ledger, arch, spec, _Tensor("x_mid", r), name="norm_2", needs_grad=mid_needs_grad)
        n2 = _Tensor("norm_2_out", r)
    _mlp_or_tiled(ledger, arch, spec, n2,
                  input_needs_grad if arch.parallel_block else mid_needs_grad)
    if arch.sandwich_norms:
        _norm(ledger, arch, spec, _Tensor("mlp_out", spec.compute_bytes), name="post_mlp_norm",
              needs_grad=True)
    return ledger


def _residual_after_attention_needs_grad(spec: BlockSpec, input_needs_grad: bool) -> bool:
    """The residual after attention needs a gradient once anything before it trains: the
    block's input, the attention's weights or its adapters (the first block under LoRA of the
    MLP alone builds no graph until its MLP)."""
    return input_needs_grad or spec.weights_train or bool(spec.lora_targets & _ATTENTION_TARGETS)


def first_block_graphless_linears(arch: Architecture, spec: BlockSpec) -> tuple[LinearRole, ...]:
    """The frozen linears of a LoRA run's first block whose input needs no gradient (the block's
    input does not), so that their matmul saves nothing for backward, their weight's 16-bit
    cast under autocast included: q, k and v always; o unless q, k or v has an adapter; gate,
    up and the router unless the residual after attention needs a gradient
    (`_residual_after_attention_needs_grad`; in a parallel block the MLP reads the block's input
    like the attention); down unless gate or up has one too. Traced (`amp`, 2-layer Llama and
    Qwen2, no checkpointing): LoRA on gate alone was +5.7 to +6.0 % and on down alone +4.4 to
    +4.6 % above the trace while the MLP's casts were counted."""
    targets = spec.lora_targets
    mlp_input = not arch.parallel_block and _residual_after_attention_needs_grad(spec, False)
    product = mlp_input or bool(targets & _GATE_UP_TARGETS)
    graphless: list[LinearRole] = ["q", "k", "v"]
    if not targets & _QKV_TARGETS:
        graphless.append("o")
    if not mlp_input:
        graphless += ["gate", "up", "router"]
    if not product:
        graphless.append("down")
    return tuple(graphless)


def _post_norm_block(ledger: _Ledger, arch: Architecture, spec: BlockSpec, seq_len: int,
                     input_needs_grad: bool) -> None:
    """OLMo 2's block (modeling_olmo2.py `Olmo2DecoderLayer`): attention reads the block's input
    itself, its output is normed before the residual add, and the same for the MLP."""
    r, c = spec.residual_bytes, spec.compute_bytes
    _attention(ledger, arch, spec, _Tensor("x_in", r), seq_len=seq_len,
               input_needs_grad=input_needs_grad)
    _norm(ledger, arch, spec, _Tensor("attn_proj_out", c), name="post_attention_norm",
          needs_grad=True)
    _mlp_or_tiled(ledger, arch, spec, _Tensor("x_mid", r), True)
    _norm(ledger, arch, spec, _Tensor("mlp_out", c), name="post_mlp_norm", needs_grad=True)


_UNSLOTH_LORA_TARGETS = frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O,
                                  LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN})
"""The adapters Unsloth's fused LoRA layers take over: q, k and v together (`LoRA_QKV`), o
(`LoRA_W`), gate, up and down together (`LoRA_MLP`) (unslothai/unsloth `FastLlamaModel
.patch_peft_model`, which patches a block's attention or MLP only when all its projections carry
an adapter without dropout or bias)."""


def _unsloth_lora_kernels(arch: Architecture, spec: BlockSpec) -> bool:
    """A LoRA block that Unsloth runs through its own autograd functions: adapters on every
    linear of a dense gated block (the notebooks' q, k, v, o, gate, up, down), no adapter
    dropout, frozen base weights, a standard attention (no latent attention, no soft-capping,
    which take other paths)."""
    return (spec.framework is Framework.UNSLOTH and not spec.weights_train
            and spec.lora_targets >= _UNSLOTH_LORA_TARGETS and not spec.lora_dropout
            and arch.mlp is MlpKind.GATED and not arch.is_moe and arch.latent_attention is None
            and not _softcapped(arch) and not arch.parallel_block and not arch.sandwich_norms)


def _unsloth_lora_block(ledger: _Ledger, arch: Architecture, spec: BlockSpec,
                        input_needs_grad: bool) -> None:
    """A LoRA block as Unsloth's kernels run it (unslothai/unsloth unsloth/kernels/fast_lora.py
    and rms_layernorm.py @4474e4bc, the same at @015bdef0): each RMSNorm keeps its input and
    inverse RMS (`Fast_RMS_Layernorm`); `LoRA_QKV` keeps only its input X, the normed hidden
    state, and `LoRA_W` (o_proj) its input, the attention's output; the attention kernel keeps
    q, k, v, its output and log-sum-exp, the key and value expanded to every query head unless
    flash-attn runs (`LlamaAttention_fast_forward`: xformers and SDPA get `K.expand(...)
    .reshape(...)` copies under GQA); `LoRA_MLP` keeps X and the gate and up outputs e and g,
    and recomputes swiglu(e, g) in backward. The adapters' low-rank products are not kept:
    `matmul_lora` adds `(X @ A) @ B` into the output."""
    r, c = spec.residual_bytes, spec.compute_bytes
    h, q, f = arch.hidden_size, arch.q_dim, arch.intermediate_size
    kv = arch.kv_dim if spec.attention is Attention.FLASH or arch.n_kv_heads == arch.n_heads \
        else q
    if input_needs_grad:
        ledger.keep("x_in", r * h)
        ledger.keep("norm_1_stats", FP32)
    ledger.keep("norm_1_out", r * h)
    ledger.keep("q", c * q)
    ledger.keep("k", c * kv)
    ledger.keep("v", c * kv)
    ledger.keep("attn_out", c * q)
    ledger.keep("attn_logsumexp", FP32 * arch.n_heads)
    ledger.keep("x_mid", r * h)
    ledger.keep("norm_2_stats", FP32)
    ledger.keep("norm_2_out", r * h)
    if spec.mlp_tile_share is None:  # tiled, `LoRA_MLP` runs inside each tile (`_mlp_or_tiled`)
        ledger.keep("gate_out", c * f)
        ledger.keep("up_out", c * f)


@dataclass(frozen=True, slots=True)
class _Tensor:
    """A named activation and its bytes per element."""

    name: str
    itemsize: int


_FUSED_NORMS = frozenset({Framework.MEGATRON, Framework.UNSLOTH})
"""Frameworks whose norms are fused kernels (`_norm`)."""


def _norms_fused(spec: BlockSpec) -> bool:
    """The block's norms are fused kernels that keep their input and per-row statistics: its
    framework's (`_FUSED_NORMS`) or Liger-Kernel's (`BlockSpec.liger_kernels`)."""
    return spec.framework in _FUSED_NORMS or spec.liger_kernels


def _norm(ledger: _Ledger, arch: Architecture, spec: BlockSpec, source: _Tensor, *, name: str,
          needs_grad: bool) -> None:
    """A norm layer reading `source`."""
    h = arch.hidden_size
    if _norms_fused(spec):
        # Megatron-LM's fused norms (Transformer Engine's LayerNormLinear / RMSNorm, Apex's
        # FusedLayerNorm / FusedRMSNorm) and Unsloth's (unsloth/kernels/rms_layernorm.py
        # `Fast_RMS_Layernorm`: `save_for_backward(X, W, r)`) save their input and per-row
        # statistics, and compute the weight's gradient from them; their output is saved by
        # the linear that reads it; Liger-Kernel's RMSNorm and LayerNorm likewise
        # (`BlockSpec.liger_kernels`)
        if needs_grad or spec.weights_train:
            ledger.keep(source.name, source.itemsize * h)
            ledger.keep(f"{name}_stats", (FP32 if arch.norm is NormKind.RMSNORM else 2 * FP32))
        return
    if arch.norm is NormKind.RMSNORM and spec.compiled:
        _compiled_rmsnorm(ledger, source, name=name, width=h,
                          needs_grad=needs_grad or spec.weights_train)
    elif arch.norm is NormKind.RMSNORM:
        # litgpt RMSNorm and transformers' LlamaRMSNorm compute in fp32: `x.float()` is a new
        # fp32 copy, saved by `x * x` and `x * rsqrt(...)` (no copy when x already is fp32).
        if needs_grad:
            if source.itemsize == FP32:
                ledger.keep(source.name, FP32 * h)
            else:
                ledger.keep(f"{name}_input_fp32", FP32 * h)
            ledger.keep(f"{name}_rstd", FP32)
        if spec.weights_train:
            # `weight * x_normed` saves x_normed for the weight's gradient: fp32 in litgpt and
            # where the scale multiplies in fp32 (Gemma, OLMo 2, gpt-oss: `norm_scale_fp32`),
            # the 16-bit cast in Llama's transformers norm (`self.weight *
            # hidden_states.to(input_dtype)`) and in litgpt's of 2024-02 to 2024-07, Gemma's
            # `x_normed * (1 + self.weight)` too
            if spec.framework is Framework.LITGPT:
                fp32 = not spec.rmsnorm_scale_after_cast
            else:
                fp32 = arch.norm_scale_fp32
            ledger.keep(f"{name}_normed", (FP32 if fp32 else spec.residual_bytes) * h)
    elif arch.norm_python_layernorm:
        _python_layernorm(ledger, spec, name, h, needs_grad)
    elif needs_grad or spec.weights_train:
        # native_layer_norm saves its input and its fp32 mean and rstd, whatever trains
        ledger.keep(source.name, source.itemsize * h)
        ledger.keep(f"{name}_stats", 2 * FP32)


COMPILED_SAVES = (
    "torch.compile partitions a block's joint graph with AOTAutograd's min-cut "
    "(torch/_functorch/partitioners.py `min_cut_rematerialization_partition`): pointwise "
    "ops, casts and views are recomputed in backward; a tensor that a matmul or the attention "
    "kernel reads in backward is saved (`is_materialized_backwards`), so is a reduction's "
    "small output (`ban_recompute_reductions`: 4x smaller than its input), and the cut keeps "
    "the fewest bytes among the rest")
"""Why a compiled block saves less than its operations would (`BlockSpec.compiled`)."""


def _compiled_rmsnorm(ledger: _Ledger, source: _Tensor, *, name: str, width: int,
                      needs_grad: bool) -> None:
    """An fp32 Python RMSNorm under torch.compile (`COMPILED_SAVES`): the min-cut saves its
    input in its own dtype and the per-row inverse RMS, and recomputes in backward the fp32
    upcast and the normalized tensor that eager autograd saves (`x.float()`, `x * rsqrt(...)`);
    its output is saved by the matmuls that read it. Counted against the eager ledger, a
    torchtune Llama block under full fine-tuning keeps 8 h + 2 f bytes per token fewer
    (tests/test_activations.py)."""
    if needs_grad:
        ledger.keep(source.name, source.itemsize * width)
        ledger.keep(f"{name}_rstd", FP32)


def _python_layernorm(ledger: _Ledger, spec: BlockSpec, name: str, width: int,
                      needs_grad: bool) -> None:
    """Cohere's `CohereLayerNorm` in fp32 Python (modeling_cohere.py): `(x - mean).pow(2)` keeps
    one centered copy, `(x - mean) * rsqrt(...)` a second (it is computed twice) and the inverse
    deviation; `weight * x_normed` keeps the fp32 normalized input when the weight trains."""
    if needs_grad:
        ledger.keep(f"{name}_centered", FP32 * width)
        ledger.keep(f"{name}_centered_again", FP32 * width)
        ledger.keep(f"{name}_rstd", FP32)
    if spec.weights_train:
        ledger.keep(f"{name}_normed", FP32 * width)


def _qk_norms(ledger: _Ledger, arch: Architecture, spec: BlockSpec, *, q_grad: bool,
              k_grad: bool) -> None:
    """RMSNorms on the queries and keys after their projections (Qwen3, Gemma 3, GLM-4.5: over
    each head's head_dim, one scale shared by all heads; OLMo 2: over the whole projection). Each
    keeps its fp32 input copy and inverse RMS (per head, or per token over the whole width) when
    its input needs a gradient, and its normalized input for the scale's gradient. A fused norm
    (Megatron-LM's Transformer Engine `q_layernorm`/`k_layernorm`, Unsloth's, Liger's
    module-wide RMSNorm) keeps its 16-bit input and the inverse RMS."""
    if arch.qk_norm is QkNormKind.NONE:
        return
    per_head = arch.qk_norm in (QkNormKind.PER_HEAD_SHARED, QkNormKind.L2_PER_HEAD)
    scaled = arch.qk_norm is not QkNormKind.L2_PER_HEAD
    c = spec.compute_bytes
    fused = _norms_fused(spec)
    for tag, width, heads, needs_grad in (("q", arch.q_dim, arch.n_heads, q_grad),
                                           ("k", arch.kv_dim, arch.n_kv_heads, k_grad)):
        if fused and scaled:
            # a fused norm (as `_norm`): its 16-bit input and the inverse RMS per row
            if needs_grad or spec.weights_train:
                ledger.keep(f"{tag}_norm_input", c * width)
                ledger.keep(f"{tag}_norm_rstd", FP32 * (heads if per_head else 1))
            continue
        if needs_grad:
            ledger.keep(f"{tag}_norm_input_fp32", FP32 * width)
            ledger.keep(f"{tag}_norm_rstd", FP32 * (heads if per_head else 1))
        if spec.weights_train and scaled:
            ledger.keep(f"{tag}_norm_normed", (FP32 if arch.norm_scale_fp32 else c) * width)


def _linear(ledger: _Ledger, spec: BlockSpec, source: _Tensor, width: int, *, lora: int,
            prefix: str, needs_grad: bool = True, readers: int = 1, copies: int = 1,
            out_width: int = 0) -> None:
    """What linear layers reading `source` (`width` elements per token) keep; `lora` is how
    many of them carry an adapter (each with its own dropout); `readers` how many separate
    matmuls read it (under autocast each casts its own 16-bit copy of the input); `copies` how
    many rows a token makes (a routed expert's: each adapter's lora_A output is per row). With
    `out_width` (one linear's output width), the moment lora_A runs on a copy it does not keep
    (`_Ledger.moment`)."""
    if spec.weights_train:
        if spec.autocast and source.itemsize != spec.compute_bytes:
            for reader in range(readers):
                ledger.keep(f"{prefix}{reader}_input_16bit", spec.compute_bytes * width)
        else:
            ledger.keep(source.name, source.itemsize * width)
    elif (spec.base_keeps_input or spec.linears_keep_input) and needs_grad:
        # the input as it came: DeepSpeed's `autocast_custom_fwd` passes no `cast_inputs`, so
        # the function saves it before its matmul casts it
        ledger.keep(source.name, source.itemsize * width)
    autocast = _autocasts(spec)
    # peft's fp32 copy of the input for fp32 adapters (`BlockSpec.adapter_input_fp32`)
    adapter_input = FP32 if spec.adapter_input_fp32 else source.itemsize
    adapter_out = _adapter_compute_bytes(spec)
    for i in range(lora):
        tag = f"{prefix}{i}"
        if spec.lora_dropout:
            # dropout saves its mask; lora_A its output, or under autocast its 16-bit cast
            if needs_grad:
                ledger.keep(f"{tag}_lora_dropout_mask", DROPOUT_MASK_BYTES * width)
            ledger.keep(f"{tag}_lora_dropout_out", adapter_out * width)
        elif autocast and adapter_input != spec.compute_bytes:
            # each adapter's lora_A casts its own 16-bit copy of the input
            ledger.keep(f"{tag}_lora_input_16bit", spec.compute_bytes * width)
            if out_width and adapter_input != source.itemsize:
                # peft's fp32 copy of a 16-bit input is lora_A's input, not kept: as lora_A
                # runs, it, the input and the base layer's output are alive
                alive = FP32 * width + spec.compute_bytes * out_width \
                    + (0 if ledger.has(source.name) else source.itemsize * width)
                ledger.moment(alive + adapter_out * spec.lora_rank * copies)
        elif adapter_input != source.itemsize:
            # each adapter's lora_A keeps peft's own fp32 copy of the input
            ledger.keep(f"{tag}_lora_input_fp32", FP32 * width)
        else:
            ledger.keep(source.name, source.itemsize * width)
        ledger.keep(f"{tag}_lora_a_out", adapter_out * spec.lora_rank * copies)


def _attention(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n1: _Tensor, *,
               seq_len: int, input_needs_grad: bool) -> None:
    if arch.latent_attention is not None and spec.framework is not Framework.LITGPT:
        _latent_attention(ledger, arch, spec, n1, seq_len=seq_len,
                          input_needs_grad=input_needs_grad)
        return
    c, q, kv = spec.compute_bytes, arch.q_dim, arch.kv_dim
    qkv_lora = spec.lora_targets & {LoraTarget.Q, LoraTarget.K, LoraTarget.V}
    fused = spec.framework is Framework.LITGPT
    # one adapter on litgpt's fused `LoRAQKVLinear`, or peft's on a fused q/k/v nn.Linear
    one_adapter = fused or (arch.fused_qkv and spec.lora_on_modules)
    adapters = (1 if qkv_lora else 0) if one_adapter else len(qkv_lora)
    _linear(ledger, spec, n1, arch.hidden_size, lora=adapters, prefix="qkv",
            needs_grad=input_needs_grad, readers=1 if fused or arch.fused_qkv else 3)
    if not (input_needs_grad or spec.weights_train or qkv_lora):
        return  # nothing inside attention needs a gradient
    if fused and qkv_lora and len(qkv_lora) < 3:
        # zero_pad: `index_copy` keeps its source, the reshaped B output (litgpt/lora.py)
        widths = {LoraTarget.Q: q, LoraTarget.K: kv, LoraTarget.V: kv}
        ledger.keep("qkv_lora_zero_pad_source", c * sum(widths[t] for t in qkv_lora))
    grouped = arch.n_kv_heads != arch.n_heads
    # q and k are new tensors after RoPE; under GQA/MQA k and v are expanded copies in litgpt
    # (`k.expand(...).reshape(...)`), in transformers' parallel fused-qkv blocks (Falcon's
    # `broadcast_to(...).flatten(2, 3)`) and eager attention (`repeat_kv`), while transformers'
    # SDPA path passes `enable_gqa=True` (torch >= 2.5, no mask: `use_gqa_in_sdpa`)
    falcon_style = arch.fused_qkv and arch.parallel_block
    # torchtune's MultiHeadAttention expands k and v to the query heads before SDPA
    # (torchtune/modules/attention.py: `k.unsqueeze(2).expand(expand_shape).flatten(1, 2)`)
    expands = fused or falcon_style or spec.attention is Attention.EAGER \
        or spec.framework is Framework.TORCHTUNE
    expanded_kv = q if grouped and expands else kv
    eager = spec.attention is Attention.EAGER or _softcapped(arch)
    # litgpt always calls SDPA (but for soft-capping): eager there is SDPA's math kernel
    # (aten/src/ATen/native/transformers/attention.cpp `_scaled_dot_product_attention_math`),
    # whose first matmul reads `query * scale`, a new tensor saved in place of q, and whose
    # matmuls expand and copy a single key-value head
    math = fused and eager and not _softcapped(arch)
    # which of q, k, v need a gradient: all of them once the block's input does
    everything = input_needs_grad or spec.weights_train
    q_grad, k_grad, v_grad = (everything or t in qkv_lora
                              for t in (LoraTarget.Q, LoraTarget.K, LoraTarget.V))
    # SDPA's kernels save q, k, v and the output whatever needs a gradient; eager matmuls save
    # only the factor the other one's gradient needs (q @ k.T keeps k for dq, q for dk)
    keep_q, keep_k, keep_v = (k_grad, q_grad, q_grad or k_grad) if eager else (True,) * 3
    _qk_norms(ledger, arch, spec, q_grad=q_grad, k_grad=k_grad)
    # GPT-Neo's `_attn` casts q and k to fp32 before `matmul`, which keeps fp32 copies (the
    # (B, nh, T, hs) views of the projections' outputs are not contiguous: `reshape` copies);
    # under autocast the matmul casts them back to 16 bits first
    qk = FP32 if eager and arch.eager_qk_fp32 and not spec.autocast else c
    if keep_q:
        ledger.keep("q_scaled" if math else "q", qk * q)
    if keep_k:
        ledger.keep("k", qk * expanded_kv)
    # v = qkv.split(...)[2].reshape(...) is a view: it keeps the whole fused output alive
    # (the math kernel's matmul reshapes it into a contiguous copy, which it keeps instead). So
    # in transformers' fused q/k/v linears whose q and k RoPE makes new (Phi-3's `qkv_proj`:
    # `value_states = qkv[..., query_pos + kv_dim:]`, a view) where SDPA reads v as it is,
    # without GQA's expansion; eager attention's matmul reshapes the transposed view into a
    # copy. Traced (vramplan.tracer, a 2-layer Phi-3, 2 x 128 tokens, SDPA): the fused output,
    # q+2kv wide, is kept whole (LoRA on qkv_proj -5.3 % -> -0.5 %, full fine-tuning -5.0 % ->
    # -2.0 %). Not where q and k are views too (GPT-2's `c_attn`, ALiBi's BLOOM and MPT): there
    # q, k and v together are that output
    v_view = (fused and not math) or (arch.fused_qkv and arch.position is PositionKind.ROPE
                                      and not eager)
    if v_view and not (grouped and (expands or arch.family in _REMOTE_CODE_EXPANDS_KV)):
        ledger.keep("qkv", c * (q + 2 * kv))
    elif keep_v:
        ledger.keep("v", c * expanded_kv)
    attn_out = _Tensor("attn_out", c)
    if not eager:
        # the SDPA kernels save their output for backward; eager attention's `probs @ v` saves
        # its factors only, and o_proj keeps its input (the transposed, contiguous copy) only
        # when its weight trains or it carries an adapter (`_linear` below). Traced: LoRA on
        # q and v with eager attention kept no attention output (qwen3-0.6b, 2 x 512)
        ledger.keep(attn_out.name, c * q)
    if eager:
        _eager_scores(ledger, arch, spec, seq_len, probs_needed=v_grad,
                      probs_grad=q_grad or k_grad)
    else:
        # with dropout_p > 0 the CUDA flash and memory-efficient kernels save only the Philox
        # seed and offset and regenerate the mask in backward (derivatives.yaml:
        # `_scaled_dot_product_flash_attention` / `_efficient_attention` backward take
        # `philox_seed, philox_offset`): no mask
        ledger.keep("attn_logsumexp", FP32 * arch.n_heads)
    # litgpt: `y.transpose(1, 2)` then `y.reshape(B, T, C)` (litgpt/model.py
    # CausalSelfAttention). Its q is the contiguous (B, nh, T, hs) output of `torch.cat` after
    # RoPE, and the flash kernel's output takes q's layout (flash_api.cpp `mha_fwd`:
    # `out = at::empty_like(q_padded)` on the (B, T, nh, hs) transpose), as does the math
    # kernel's `attn @ v`: the reshape copies, and o_proj keeps the copy beside the output that
    # SDPA saves. (The memory-efficient kernel allocates (B, T, nh, hs): a view there. Which
    # kernel runs depends on the GPU, not known here: flash is counted.)
    proj_in = _Tensor("attn_out_merged", c) if fused else attn_out
    _linear(ledger, spec, proj_in, q, lora=int(LoraTarget.O in spec.lora_targets), prefix="o")
    # dropout on the output projection's result: its mask; the output goes to the residual add,
    # which saves nothing
    _dropout_mask(ledger, spec, "attn_out_dropout_mask", arch.attention_output_dropout,
                  arch.hidden_size)


_REMOTE_CODE_EXPANDS_KV = frozenset({"chatglm", "internlm2"})
"""Remote-code families whose attention copies grouped keys and values to the query heads
whatever the kernel: ChatGLM2/3's `value_layer.expand(...).contiguous()` under
`multi_query_attention` (THUDM/chatglm3-6b modeling_chatglm.py `SelfAttention.forward`),
InternLM2's `repeat_kv` before every kernel (internlm/internlm2-7b modeling_internlm2.py)."""


def _latent_attention(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n1: _Tensor, *,
                      seq_len: int, input_needs_grad: bool) -> None:
    """Multi-head latent attention as transformers runs it (modeling_deepseek_v3.py
    `DeepseekV3Attention.forward`): q_a_proj and kv_a_proj_with_mqa read the normed input; the
    query latent and the key-value latent each go through an RMSNorm (fp32 copy, inverse RMS,
    and the normalized input when the weights train) into q_b_proj and kv_b_proj; the query is a
    new tensor (`torch.cat` of its parts), the key a new tensor (`new_empty` + `copy_`), the value a
    view of kv_b_proj's output, which it keeps alive whole; SDPA keeps q, k, v, its output and the
    log-sum-exp, o_proj its input."""
    mla = arch.latent_attention
    if mla is None:
        return
    c, h = spec.compute_bytes, arch.hidden_size
    targets = spec.lora_targets
    q_lora = int(LoraTarget.Q in targets)
    kv_lora = int(bool(targets & {LoraTarget.K, LoraTarget.V}))
    _linear(ledger, spec, n1, h, lora=q_lora + kv_lora, prefix="latent_a",
            needs_grad=input_needs_grad, readers=2)
    if not (input_needs_grad or spec.weights_train or targets & _ATTENTION_TARGETS):
        return
    for tag, rank, lora in (("q_latent", mla.q_lora_rank, q_lora),
                            ("kv_latent", mla.kv_lora_rank, kv_lora)):
        if rank is None:
            continue
        ledger.keep(f"{tag}_norm_input_fp32", FP32 * rank)
        ledger.keep(f"{tag}_norm_rstd", FP32)
        if spec.weights_train:
            ledger.keep(f"{tag}_norm_normed", c * rank)
        _linear(ledger, spec, _Tensor(f"{tag}_normed_out", c), rank, lora=lora,
                prefix=f"{tag}_b")
    heads = arch.n_heads
    ledger.keep("q", c * arch.q_dim)
    ledger.keep("k", c * arch.kv_dim)
    ledger.keep("kv_b_out", c * heads * (mla.qk_nope_head_dim + mla.v_head_dim))
    attn_out = _Tensor("attn_out", c)
    ledger.keep(attn_out.name, c * arch.attn_out_dim)
    if spec.attention is Attention.EAGER:
        _eager_scores(ledger, arch, spec, seq_len)
    else:
        ledger.keep("attn_logsumexp", FP32 * heads)
    _linear(ledger, spec, attn_out, arch.attn_out_dim, lora=int(LoraTarget.O in targets),
            prefix="o")


_QKV_TARGETS = frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V})
_ATTENTION_TARGETS = _QKV_TARGETS | {LoraTarget.O}
_GATE_UP_TARGETS = frozenset({LoraTarget.GATE, LoraTarget.UP})
_MLP_TARGETS = _GATE_UP_TARGETS | {LoraTarget.DOWN}


def _softcapped(arch: Architecture) -> bool:
    return arch.attn_logit_softcapping is not None


def _eager_scores(ledger: _Ledger, arch: Architecture, spec: BlockSpec, seq_len: int, *,
                  probs_needed: bool = True, probs_grad: bool = True) -> None:
    """Scores materialized, n_heads x seq_len per token; `probs_needed`: v needs a gradient, so
    probs @ v keeps the probabilities; `probs_grad`: q or k needs one, so the probabilities do."""
    per_row = arch.n_heads * seq_len
    c = spec.compute_bytes
    if arch.attention_sinks and spec.framework is not Framework.LITGPT:
        # gpt-oss's eager_attention_forward: the sink logit joins each row (`torch.cat`), the
        # row's max is subtracted (`max` keeps its int64 indices), softmax runs in the scores'
        # dtype over seq_len + 1 columns and `probs[..., :-1]`, a view, is what probs @ v keeps
        ledger.keep("attn_max_indices", 8 * arch.n_heads)
        ledger.keep("attn_probs", c * arch.n_heads * (seq_len + 1))
        return
    if spec.framework is Framework.LITGPT and not _softcapped(arch):
        # SDPA's math kernel: its 16-bit probabilities, saved by softmax and by `attn @ v`
        # (the scaled q is counted with q, k and v)
        if probs_needed or probs_grad:
            ledger.keep("attn_probs", c * per_row)
        return
    # transformers' eager attention and litgpt's soft-capped path: softmax(dtype=float32) saves
    # its fp32 output, `.to(q.dtype)` is saved by probs @ v (the same tensor when both dtypes
    # agree: GPT-2's softmax in the scores' dtype, fp32 training); tanh saves its output
    # (Megatron-LM's FusedScaleMaskSoftmax computes in fp32 inside its kernel and returns the
    # scores' dtype: megatron/core/fusions/fused_softmax.py)
    if spec.scores_clamped and probs_grad:
        ledger.keep("attn_scores_clamped", c * per_row)
    fp32_scores = arch.eager_qk_fp32 and not spec.autocast  # GPT-Neo: fp32 q @ k.T
    fp32_softmax = (arch.eager_softmax_fp32 or spec.autocast or fp32_scores) \
        and spec.framework is not Framework.MEGATRON  # autocast runs softmax in fp32
    softmax_out = FP32 if fp32_softmax else c
    ledger.keep("attn_probs_fp32" if softmax_out != c else "attn_probs", softmax_out * per_row)
    if _dropout_active(spec, arch.attention_dropout):
        # `nn.functional.dropout(attn_weights, ...)` (eager_attention_forward): its bool mask
        # when the probabilities need a gradient, and its output, a new tensor, is what
        # probs @ v saves
        if probs_grad:
            ledger.keep("attn_probs_dropout_mask", DROPOUT_MASK_BYTES * per_row)
        if probs_needed:
            ledger.keep("attn_probs_dropped", c * per_row)
    elif probs_needed:
        ledger.keep("attn_probs", c * per_row)
    if _softcapped(arch):
        ledger.keep("attn_tanh", c * per_row)


def _dropout_active(spec: BlockSpec, rate: float) -> bool:
    return spec.model_dropout and rate > 0


def _dropout_mask(ledger: _Ledger, spec: BlockSpec, name: str, rate: float, width: int) -> None:
    """A dropout on a tensor that needs a gradient (`width` elements per token): its bool mask
    (derivatives.yaml, `native_dropout`: saves `result1`). Only called where the tensor needs
    one: dropout's output requires a gradient exactly when its input does."""
    if _dropout_active(spec, rate):
        ledger.keep(name, DROPOUT_MASK_BYTES * width)


def masked_local_layers_bytes(arch: Architecture, spec: BlockSpec, seq_len: int,
                              layers_with_graph: int) -> int:
    """Per token, all layers: `masked_local_layer_bytes` for each local layer of the
    `layers_with_graph` layers (the trained ones under `freeze`), taken in the model's
    proportion."""
    local = arch.sliding_window_layers * layers_with_graph // arch.n_layers
    return local * masked_local_layer_bytes(arch, spec, seq_len)


def masked_local_layer_bytes(arch: Architecture, spec: BlockSpec, seq_len: int) -> int:
    """Per token, one layer: what a sliding-window or chunked layer adds under SDPA once the
    sequence reaches its window. transformers then passes an explicit bool mask (masking_utils
    `_ignore_causal_mask_sdpa`: no `is_causal` shortcut when `kv_length >= local_attention_size`),
    which `scaled_dot_product_attention` converts to a float mask in the query's dtype
    (aten/src/ATen/native/transformers/attention.cpp `convert_boolean_attn_mask`) that the kernel
    keeps for backward: batch x T x T; and a mask rules out SDPA's own grouped-query path
    (sdpa_attention.py `use_gqa_in_sdpa`: `attention_mask is None`), so `repeat_kv` expands k
    and v to every query head on those layers."""
    window = arch.sliding_window
    if (not window or not arch.sliding_window_layers or seq_len < window
            or spec.attention is not Attention.SDPA or spec.framework is Framework.LITGPT
            or arch.latent_attention is not None):
        return 0
    c = spec.compute_bytes
    expanded = 2 * c * (arch.q_dim - arch.kv_dim)
    return c * seq_len + expanded


def embedding_saved_bytes(arch: Architecture, spec: BlockSpec, needs_grad: bool, *,
                          leaf: bool = False) -> int:
    """Per token, what the embeddings' output keeps before the first block, only when it needs
    a gradient (the embedding trains, or its output was made to require one): the mask of its
    dropout, and the input and per-row statistics of a norm on it (BLOOM's
    `word_embeddings_layernorm`: `native_layer_norm` saves its input, mean and rstd). The
    dropped or normed output is the first block's input, counted there.

    A frozen embedding's output made to require a gradient (`leaf`: transformers'
    `enable_input_require_grads`, a forward hook calling `output.requires_grad_(True)`) is a
    leaf of the graph, which its `AccumulateGrad` node holds until the graph is freed: where the
    first block reads another tensor (learned positions added, a scale, a dropout), the leaf is
    kept beside it. Traced (OPT and GPT-2 with LoRA under full checkpointing, Gemma 3): the
    token embedding's output is alive at the loss's backward."""
    if not needs_grad:
        return 0
    dropped = _dropout_active(spec, arch.embedding_dropout)
    saved = DROPOUT_MASK_BYTES * arch.hidden_size if dropped else 0
    first_block_reads_another = arch.position is PositionKind.LEARNED \
        or arch.embedding_scale is not None or dropped
    if leaf and first_block_reads_another and not arch.embedding_norm:
        saved += spec.residual_bytes * arch.hidden_size
    if arch.embedding_norm:
        ledger = _Ledger()
        _norm(ledger, arch, spec, _Tensor("x_embedded", spec.residual_bytes),
              name="embedding_norm", needs_grad=True)
        saved += total_per_token(ledger.items())
    return saved


def _mlp_or_tiled(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n2: _Tensor,
                  input_needs_grad: bool) -> None:
    """The MLP's saved tensors (`_mlp`), or under a tiled MLP (`BlockSpec.mlp_tile_share`) its
    input alone, which `TiledMLP` saves whole for its backward."""
    if spec.mlp_tile_share is None:
        _mlp(ledger, arch, spec, n2, input_needs_grad)
    elif input_needs_grad or spec.weights_train or spec.lora_targets & _MLP_TARGETS:
        ledger.keep(n2.name, n2.itemsize * arch.hidden_size)


def tiled_mlp_backward(arch: Architecture, spec: BlockSpec, share: Fraction) -> int:
    """Per token of the step, what a tiled MLP's backward holds beyond the block's saved
    tensors: the incoming gradient of its output, which the function's backward holds through
    every tile (the compute dtype), the gradient of its input, made whole before the first tile
    (`torch.zeros_like(x)`, the input's dtype), and the largest tile run again with its
    gradient: what the MLP saves for that tile (less its input, a view of the saved one) and
    the MLP's backward tensors (`_mlp_backward_tensors`), that tile's share of the step's
    tokens. Traced (`vramplan.tracer.tiled_mlp` on a Llama block, LoRA and full fine-tuning,
    with and without full checkpointing): the peak holds these beside the saved tensors."""
    n2 = _Tensor("norm_2_out", spec.residual_bytes)
    untiled = replace(spec, mlp_tile_share=None)
    if _unsloth_lora_kernels(arch, spec):
        tile_saved = 2 * spec.compute_bytes * arch.intermediate_size  # `LoRA_MLP`: e and g
    else:
        ledger = _Ledger()
        _mlp(ledger, arch, untiled, n2, True)
        tile_saved = sum(item.bytes_per_token for item in ledger.items()
                         if item.name != n2.name)
    tile_backward = _mlp_backward_tensors(arch, untiled) * _mlp_backward_itemsize(arch, untiled) \
        * arch.expert_intermediate_size
    whole = (n2.itemsize + spec.compute_bytes) * arch.hidden_size
    return whole + int((tile_saved + tile_backward) * share)


def _mlp(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n2: _Tensor,
         input_needs_grad: bool) -> None:
    h = arch.hidden_size
    if not (input_needs_grad or spec.weights_train or spec.lora_targets & _MLP_TARGETS):
        return  # the MLP of a parallel first block reads a tensor that needs no gradient
    if arch.is_moe and spec.framework is not Framework.LITGPT:
        _moe(ledger, arch, spec, n2, input_needs_grad)
        return
    f = arch.token_mlp_width
    targets = spec.lora_targets
    if arch.mlp is MlpKind.GATED:
        lora_in = int(LoraTarget.GATE in targets) + int(LoraTarget.UP in targets)
        megatron = spec.framework is Framework.MEGATRON
        fused_gate_up = (arch.fused_gate_up or megatron) and spec.framework is not Framework.LITGPT
        if arch.fused_gate_up and spec.lora_on_modules:
            lora_in = min(lora_in, 1)  # peft's one adapter on the fused gate_up nn.Linear
        _linear(ledger, spec, n2, h, lora=lora_in, prefix="gate_up", needs_grad=input_needs_grad,
                readers=1 if fused_gate_up else 2)
        m = _mlp_hidden_itemsize(spec, n2.itemsize)
        if lora_in and (fused_gate_up or LoraTarget.UP not in targets):
            # the fused gate_up's adapter, or gate's alone, ends before act(gate) exists
            ledger.moment(_adapter_tail(spec, m, 2 * f if fused_gate_up else f))
        # act(gate) saves its input; act * up saves both factors (compiled: act(gate) is
        # recomputed from gate in backward, COMPILED_SAVES). Megatron-LM's linear_fc1 makes
        # gate and up as one tensor and its fused SwiGLU saves only that input
        # (megatron/core/fusions/fused_bias_swiglu.py `SwiGLUFunction`); Liger's SiLU-mul
        # saves gate and up, not the activation (`BlockSpec.liger_kernels`)
        if input_needs_grad or spec.weights_train or lora_in:
            # else (the first trained block, only its down projection adapted) gate and up
            # need no gradient, so neither act(gate) nor the product saves anything: down's
            # adapter keeps the product alone (traced, tests/test_trace_agreement.py)
            ledger.keep("gate_out", m * f)
            if not (spec.compiled or megatron or spec.liger_kernels):
                ledger.keep("act_out", m * f)
            if LoraTarget.UP in targets and not fused_gate_up:
                # up's adapter ends beside gate's output and act(gate)
                ledger.moment(_adapter_tail(spec, m, f))
            ledger.keep("up_out", m * f)
        _down_projection(ledger, spec, _Tensor("mlp_hidden", m), f, h)
    else:
        _linear(ledger, spec, n2, h, lora=int(LoraTarget.UP in targets), prefix="up",
                needs_grad=input_needs_grad)
        m = _mlp_hidden_itemsize(spec, n2.itemsize)
        if LoraTarget.UP in targets:
            ledger.moment(_adapter_tail(spec, m, f))
        for name, itemsize in _activation_saved_tensors(arch, spec):
            ledger.keep(name, max(itemsize, m) * f)
        _down_projection(ledger, spec, _Tensor("act_out", m), f, h)
    _dropout_mask(ledger, spec, "mlp_out_dropout_mask", arch.mlp_output_dropout, h)
    if arch.is_moe:
        ledger.keep("router_probs", FP32 * arch.n_experts)


def _mlp_hidden_itemsize(spec: BlockSpec, input_itemsize: int) -> int:
    """Bytes per element of the MLP's intermediate-wide tensors (gate, activation, product): a
    quantized base hands its outputs back in its input's dtype, and the activation and the
    product, not autocast's ops, stay in it; else the compute dtype."""
    return input_itemsize if spec.base_output_in_input_dtype else spec.compute_bytes


def _down_projection(ledger: _Ledger, spec: BlockSpec, product: _Tensor, width: int,
                     hidden: int = 0) -> None:
    """What the MLP's down projection keeps, reading the product act(gate) * up of a gated MLP
    or the activation's output; with `hidden` (its output's width), the moment its adapter
    ends, its input alive beside it."""
    adapted = LoraTarget.DOWN in spec.lora_targets
    _linear(ledger, spec, product, width, lora=int(adapted), prefix="down", out_width=hidden)
    if adapted and hidden:
        product_alive = 0 if ledger.has(product.name) else product.itemsize * width
        ledger.moment(product_alive + _adapter_tail(spec, spec.compute_bytes, hidden))


def _adapter_tail(spec: BlockSpec, base_itemsize: int, width: int) -> int:
    """Per token, what an adapted linear's forward holds as its adapter ends, beyond its input
    and what it saved: the base layer's output and two adapter-wide tensors of `width`, lora_B's
    output and its scaled copy, then the scaled copy and their sum (peft `Linear.forward`:
    `result = result + lora_B(lora_A(dropout(x))) * scaling`, then `result.to(
    torch_result_dtype)`; litgpt's and torchtune's LoRA linears add the same way). fp32
    adapters without autocast compute in fp32 (`BlockSpec.adapter_input_fp32`), so the sum is
    fp32 beside the 16-bit base output. Traced (vramplan.tracer, a Llama block recomputed under
    full checkpointing, LoRA on up with fp32 adapters): the block's peak is at that sum."""
    return (base_itemsize + 2 * _adapter_compute_bytes(spec)) * width


def _autocasts(spec: BlockSpec) -> bool:
    """The forward runs under autocast: `amp`'s, or the Trainer's over 16-bit weights."""
    return spec.autocast or spec.autocast_16bit_weights


def _adapter_compute_bytes(spec: BlockSpec) -> int:
    """Bytes per element of what LoRA's adapters compute (lora_A's and lora_B's outputs): fp32
    for fp32 adapters without autocast (`BlockSpec.adapter_input_fp32`), else the compute
    dtype, autocast's 16 bits included."""
    return FP32 if spec.adapter_input_fp32 and not _autocasts(spec) else spec.compute_bytes


def released_before_block_peak(arch: Architecture, spec: BlockSpec) -> tuple[Saved, ...]:
    """The block's saved tensors (`block_saved`'s names) already freed when its backward peaks:
    those that only the adapters of a gated MLP's frozen down projection keep (the product
    act(gate) * up, read by lora_A, and lora_A's output, read by lora_B's gradient). The down
    projection runs its backward first in a pre-norm block, and autograd frees a node's saved
    tensors once the node has run (a non-reentrant checkpoint drops each recomputed one once
    unpacked), so the block's peak, the product's backward (d(product), d(act), d(up)) or a
    later one, comes without them. Traced (vramplan.tracer, Llama, Qwen2 and Mistral, LoRA on
    the MLP or on every linear, full checkpointing, 2 x 128 tokens): the peak is at the
    product's backward with the product freed, and the model counted it by 3.9 to 7.7 % too
    much before this (tests/test_trace_agreement.py `MLP_LORA_MATRIX`). Not where the down
    projection's own backward holds more: its base keeping its input too (full fine-tuning, whose
    weight gradient is made there; FSDP1's flat views, `BlockSpec.linears_keep_input`), peft's
    fp32 copies of the adapters' inputs (`BlockSpec.adapter_input_fp32`) or `amp`'s fp32
    weights under autocast, where the same traces peak there and counting the release put the
    model 7 to 13 % under them; nor in blocks whose backward runs in another order (parallel,
    post-norm or sandwich-norm blocks), a MoE layer, a tiled MLP, Unsloth's kernels or a
    compiled block."""
    if (LoraTarget.DOWN not in spec.lora_targets or arch.mlp is not MlpKind.GATED
            or arch.is_moe or arch.parallel_block or arch.sandwich_norms
            or arch.norms_after_sublayers or spec.weights_train or spec.base_keeps_input
            or spec.linears_keep_input or spec.adapter_input_fp32 or spec.autocast
            or spec.mlp_tile_share is not None or spec.compiled
            or _unsloth_lora_kernels(arch, spec)):
        return ()
    ledger = _Ledger()
    product = _Tensor("mlp_hidden", _mlp_hidden_itemsize(spec, spec.residual_bytes))
    _down_projection(ledger, spec, product, arch.token_mlp_width)
    return ledger.items()


def recomputed_forward_peak(arch: Architecture, spec: BlockSpec, seq_len: int, *,
                            reentrant: bool) -> int:
    """Per token, the most a block recomputed under full checkpointing holds while its forward
    runs again, where an adapter's end outgrows what the block saves (`_adapter_tail`): what
    was saved up to that moment, the moment's own tensors, the mid-block residual and the
    second norm's output (the decoder layer's locals, unless saved), and the gradient coming
    into the block (in a parallel block, attention's output instead of the mid-block residual,
    and the norm's output). 0 where no such moment is modelled.

    A non-reentrant checkpoint recomputes when the block's backward first unpacks a saved
    tensor and stops once the last one is made again (torch/utils/checkpoint.py
    `_checkpoint_hook`, `_StopRecomputationError`; on by default wherever the module has
    `set_checkpoint_early_stop`; a release without it runs the whole forward again, not
    modelled):
    a moment after the last saved tensor never comes, and an adapted output projection of the
    MLP has run its adapter's backward down to lora_B, whose saved lora_A output starts the
    recomputation, so the gradients of its base output and of lora_B's output wait beside it
    (`_adapter_gradients_pending`). A reentrant one runs the whole forward again from the
    block's backward, before any of its gradients.

    Traced (vramplan.tracer, Llama, Qwen2 and Mistral, LoRA on the MLP or every linear with
    fp32 adapters over bf16 weights, full checkpointing, 2 x 128 tokens): the peak is at up's
    adapter, bytes as counted here; the block's backward holds less (tests/
    test_trace_agreement.py `FP32_ADAPTER_MATRIX`; Cohere's parallel blocks -5.7 % before,
    -1.1 % with their locals). Only the MLP's moments are written (attention's adapters end with
    less saved), in pre-norm blocks of dense MLPs run by their own code (not post-norm or
    sandwich-norm blocks, MoE layers, tiled MLPs, Unsloth's kernels or a compiled block)."""
    if (arch.sandwich_norms or arch.norms_after_sublayers or arch.is_moe
            or spec.compiled or spec.mlp_tile_share is not None
            or _unsloth_lora_kernels(arch, spec)):
        return 0
    ledger = _block_ledger(arch, spec, seq_len, True)
    saved = ledger.total()
    moments = [so_far + alive for so_far, alive in ledger.moments if reentrant or so_far < saved]
    if not moments:
        return 0
    h, r = arch.hidden_size, spec.residual_bytes
    if arch.parallel_block:
        # the MLP runs after attention on the norms' output; attention's output waits for the
        # sum
        norms = ("norm_1_out",) if arch.shared_block_norm else ("norm_1_out", "norm_2_out")
        layer_locals = spec.compute_bytes * h \
            + sum(r * h for name in norms if not ledger.has(name))
    else:
        layer_locals = sum(r * h for name in ("x_mid", "norm_2_out") if not ledger.has(name))
    pending = 0 if reentrant else _adapter_gradients_pending(spec, h)
    if arch.parallel_block and arch.mlp is MlpKind.GATED and r != spec.compute_bytes \
            and not reentrant:
        # attention's 16-bit cast of the incoming gradient, made first (`block_backward_transient`)
        pending += spec.compute_bytes * h
    return r * h + pending + layer_locals + max(moments)


def _adapter_gradients_pending(spec: BlockSpec, hidden: int) -> int:
    """Per token, the gradients an adapted MLP output projection has made when its lora_B's
    backward unpacks the first recomputed tensor: of lora_B's output (the scaled sum's
    gradient times the scale, in the adapter's dtype) and of the base layer's output, a new
    16-bit tensor where a cast made it (fp32 adapters without autocast: the sum was fp32; under
    autocast the residual stream is fp32), else the incoming gradient itself."""
    if LoraTarget.DOWN not in spec.lora_targets:
        return 0
    c = spec.compute_bytes
    adapter = _adapter_compute_bytes(spec)
    cast = c if adapter != c or spec.residual_bytes != c else 0
    return (adapter + cast) * hidden


ROUTING_INDEX_VECTORS = 4
"""int64 vectors of experts_per_token entries a token leaves in a transformers MoE layer's graph:
the top-k indices, and the sort permutation, its inverse and the gather index of
`grouped_mm_experts_forward` (integrations/moe.py), which index ops keep for backward."""


def _moe(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n2: _Tensor,
         input_needs_grad: bool) -> None:
    """A transformers 5 mixture-of-experts layer (the `grouped_mm` experts path, the default,
    integrations/moe.py `grouped_mm_experts_forward`), per token with k routed experts: the
    router's probabilities (fp32 softmax or sigmoid) and, when it trains, its input (an fp32 copy
    for DeepSeek's and GLM's routers); the gathered input of each routed copy when the experts
    train (grouped_mm keeps its input for the weight's gradient); the gate_up output (act(gate)
    keeps the gate half, a view that keeps it whole; gpt-oss's clamped gate keeps four
    intermediate-wide tensors); act(gate) * up; the down projection's input when the experts
    train; its output and the routing weights (`proj_out * sample_weights`: both need a gradient
    once the layer's input does); the routing indices. Shared experts are a dense MLP on the
    layer's input. Llama 4's experts see every token (`experts_see_every_token`): n_experts
    copies of each, and `routed_in * router_scores` keeps the repeated input. Megatron-LM's
    experts keep no act(gate) (its fused SwiGLU, as in `_mlp`), and since April 2025 no down
    projection output (`BlockSpec.moe_output_weighted`).

    transformers' per-expert loop before v5.0.0 (`BlockSpec.moe_expert_loop`; transformers
    v4.48.1 models/mixtral/modeling_mixtral.py `MixtralSparseMoeBlock.forward`) saves the same
    tensors, and more: the routing weights are cast to the layer's input's dtype
    (`routing_weights.to(hidden_states.dtype)`), so the weighted output `expert_layer(
    current_state) * routing_weights[top_x, idx, None]` is in that dtype too, and
    `final_hidden_states.index_add_(0, top_x, ...)` saves it whole (torch v2.4.1
    tools/autograd/derivatives.yaml `index_add`: the source's gradient is `grad.index_select(dim,
    index).expand_as(source)`, and the generated `IndexAddBackward0` keeps `source_`). Under QLoRA
    each expert's linears are `Linear4bit` modules, which cast their input to the compute dtype
    and their output back (`out.to(inp_dtype)`, bitsandbytes 0.43.3 nn/modules.py
    `Linear4bit.forward`): behind a norm kept in fp32, w1's and w3's outputs, act(w1) and w2's
    output are fp32 too (autocast casts neither `silu` nor `mul`)."""
    c, h = spec.compute_bytes, arch.hidden_size
    # the experts' tensors: the compute dtype, or their input's when the loop's experts are
    # Linear4bit modules; the loop's routing weights and weighted outputs: the input's dtype
    loop = spec.moe_expert_loop
    e = n2.itemsize if loop and spec.base_output_in_input_dtype else c
    weights = FP32 if arch.router_fp32 else n2.itemsize if loop else c
    width = arch.expert_intermediate_size
    train = spec.weights_train
    routed = arch.n_experts if arch.experts_see_every_token else arch.experts_per_token
    if train:
        ledger.keep(n2.name, n2.itemsize * h)  # the router's (and shared experts') input
        if arch.router_fp32:
            ledger.keep("router_input_fp32", FP32 * h)
    ledger.keep("router_probs", FP32 * arch.n_experts)
    if arch.experts_see_every_token:
        # Llama4Router: top-k indices; `routed_in * router_scores` keeps both factors
        ledger.keep("routing_indices", 8 * arch.experts_per_token)
        ledger.keep("routed_in_repeated", c * routed * h)
        ledger.keep("routing_weights", c * routed)
    else:
        ledger.keep("routing_indices", 8 * ROUTING_INDEX_VECTORS * arch.experts_per_token)
    # peft's adapters on the fused experts (`BlockSpec.experts_merged_per_token`): the merged
    # weight's gradient needs the matmul's input, as a trained weight's does
    merged = spec.experts_merged_per_token > 0
    adapted = spec.lora_targets if merged else frozenset()
    gate_up_adapted = bool(_GATE_UP_TARGETS & adapted)
    if train or gate_up_adapted:
        # Megatron-Core all-gathers the routed tokens over the expert-tensor-parallel group
        # before its grouped fc1, which keeps them (`BlockSpec.experts_gathered`): counted that
        # many times, so the per-GPU split over tensor parallelism leaves them whole
        ledger.keep("routed_input", c * routed * h * spec.experts_gathered)
    if merged:
        ledger.keep("experts_merged_weights", spec.experts_merged_per_token)
    gated = arch.mlp is MlpKind.GATED
    ledger.keep("experts_gate_up_out", e * routed * width * (2 if gated else 1))
    # Megatron-LM's experts run its fused SwiGLU as its dense MLP does (`_mlp`): only the
    # fc1 output is saved, not act(gate)
    megatron = spec.framework is Framework.MEGATRON
    glu_tensors = 4 if arch.swiglu_limit is not None else 1
    if not megatron:
        ledger.keep("experts_act_out", e * routed * width * glu_tensors)
    if train or LoraTarget.DOWN in adapted:
        ledger.keep("experts_down_input", e * routed * width)
    if not arch.experts_see_every_token:
        if spec.moe_output_weighted:
            ledger.keep("experts_down_out", e * routed * h)
        ledger.keep("routing_weights", weights * routed)
    if loop:
        ledger.keep("experts_weighted_out", n2.itemsize * routed * h)
        _loop_expert_adapters(ledger, arch, spec, n2, e=e, routed=routed)
    _moe_shared_experts(ledger, arch, spec, n2, e=e, input_needs_grad=input_needs_grad)


def _loop_expert_adapters(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n2: _Tensor, *,
                          e: int, routed: int) -> None:
    """peft's adapters on the `nn.Linear` experts of transformers' per-expert loop (before
    v5.0.0: `BlockSpec.moe_expert_loop`), as on a dense MLP's linears (`_linear`): lora_A keeps
    the expert's rows (`current_state = hidden_states[None, top_x]`, one gathered copy per
    routed copy of a token, which its gate and up adapters share), or each adapter its own fp32
    copy of them, and the down adapter the product act(gate) * up; each lora_A output is per row.
    Measured on the CPU (2026-12-06, transformers 4.48.3, peft 0.14.0, a 2-layer Mixtral of 8
    experts, top-2, hidden 128, width 352, 2 x 128 tokens, r 8, bf16 weights, no autocast): 2,016
    bytes a token a layer more with w1, w2 and w3 adapted than with q and v alone, 5,056 with
    fp32 adapters, what these terms give."""
    targets = spec.lora_targets if spec.lora_on_modules else frozenset()
    if not targets & _MLP_TARGETS:
        return
    h, width = arch.hidden_size, arch.expert_intermediate_size
    gated = arch.mlp is MlpKind.GATED
    lora_in = int(LoraTarget.UP in targets) + int(gated and LoraTarget.GATE in targets)
    if arch.fused_gate_up:
        lora_in = min(lora_in, 1)  # one adapter on a fused gate_up nn.Linear
    _linear(ledger, spec, _Tensor("routed_input", n2.itemsize), routed * h, lora=lora_in,
            prefix="experts_gate_up", readers=1 if arch.fused_gate_up or not gated else 2,
            copies=routed)
    _linear(ledger, spec, _Tensor("experts_down_input", e), routed * width,
            lora=int(LoraTarget.DOWN in targets), prefix="experts_down", copies=routed)


def _moe_shared_experts(ledger: _Ledger, arch: Architecture, spec: BlockSpec, n2: _Tensor, *,
                        e: int, input_needs_grad: bool) -> None:
    """A MoE layer's shared experts (`_moe`): a dense MLP on the layer's input whose tensors
    are `e` bytes per value, and Qwen2-MoE's sigmoid gate on its output."""
    h = arch.hidden_size
    if arch.n_shared_experts:
        shared = arch.shared_experts_width
        targets = spec.lora_targets
        lora_in = int(LoraTarget.GATE in targets) + int(LoraTarget.UP in targets)
        _linear(ledger, spec, n2, h, lora=lora_in, prefix="shared_gate_up",
                needs_grad=input_needs_grad, readers=2)
        ledger.keep("shared_gate_out", e * shared)
        if spec.framework is not Framework.MEGATRON:  # its fused SwiGLU keeps no act(gate)
            ledger.keep("shared_act_out", e * shared)
        ledger.keep("shared_up_out", e * shared)
        _linear(ledger, spec, _Tensor("shared_hidden", e), shared,
                lora=int(LoraTarget.DOWN in targets), prefix="shared_down")
    if arch.shared_expert_gate:
        # Qwen2MoeSparseMoeBlock.forward (transformers models/qwen2_moe/modeling_qwen2_moe.py):
        # `F.sigmoid(self.shared_expert_gate(x)) * shared_expert_output`: sigmoid saves its
        # output, the product both factors (the gate's input is the layer's input, kept above)
        ledger.keep("shared_gate_sigmoid", e)
        ledger.keep("shared_expert_out", e * h)


def quantized_base_inputs(arch: Architecture, spec: BlockSpec) -> int:
    """Bytes per token that a block's quantized linears keep in their autograd context: the input
    of every matmul (bitsandbytes MatMul4Bit stored `ctx.tensors = (A, B)` until v0.43.2). These
    are plain attributes of the context, not saved tensors: backward does not release them, only
    the death of the graph does (PyTorch releases `save_for_backward` tensors after a node
    runs)."""
    if not spec.base_keeps_input:
        return 0
    r, c, h = spec.residual_bytes, spec.compute_bytes, arch.hidden_size
    shared = arch.parallel_block and arch.shared_block_norm
    inputs = r * h + c * arch.q_dim + (0 if shared else r * h)
    return inputs + c * arch.token_mlp_width


_SAVES_OUTPUT = frozenset({"relu"})
"""Activations whose backward reads their output, not their input: transformers' "relu" is
`nn.ReLU`, and PyTorch's `tools/autograd/derivatives.yaml` gives `relu: threshold_backward(grad,
result, 0)`, so autograd saves the result, which the next linear (fc2) saves anyway."""


def _activation_saved(arch: Architecture) -> str:
    """The intermediate-wide tensor a plain MLP's activation saves: its input (SiLU, GELU) or,
    for ReLU, its output."""
    return "act_out" if arch.activation in _SAVES_OUTPUT else "up_out"


def _activation_saved_tensors(arch: Architecture, spec: BlockSpec) -> tuple[tuple[str, int], ...]:
    """What a plain MLP's activation saves, each intermediate-wide: name and bytes per element.

    transformers' tanh GELU in Python under autocast (`amp`) on CUDA: `torch.pow` is on CUDA
    autocast's fp32 list (aten/src/ATen/autocast_mode.h `AT_FORALL_FP32`; docs/source/amp.rst
    "CUDA Ops that can autocast to float32"), so pow casts the 16-bit input to fp32 and saves
    that copy (the 16-bit input itself is saved by nothing), the sum it joins is fp32 by type
    promotion, and so are the tanh output and `1 + tanh(...)`; only `0.5 * x` stays 16-bit. The
    product `0.5 * x * (1 + tanh)` is fp32, cast back to 16 bits by the next linear (counted
    there). Without autocast every tensor of the chain is in the compute dtype."""
    c = spec.compute_bytes
    if _fp32_gelu_chain(arch, spec):
        return (("up_out_fp32", FP32), ("act_tanh", FP32), ("act_half_x", c),
                ("act_one_plus_tanh", FP32))
    return ((_activation_saved(arch), c),
            *((f"act_intermediate_{index}", c)
              for index in range(_activation_extra_tensors(arch, spec))))


def _fp32_gelu_chain(arch: Architecture, spec: BlockSpec) -> bool:
    """A Python tanh GELU under autocast: on CUDA its chain runs in fp32 from `pow` on
    (`_activation_saved_tensors`)."""
    return spec.autocast and _activation_extra_tensors(arch, spec) > 0


def _activation_extra_tensors(arch: Architecture, spec: BlockSpec) -> int:
    """Intermediate-wide tensors an activation saves beyond its input (compiled: none, the
    pointwise chain is recomputed from its input, COMPILED_SAVES)."""
    if spec.compiled:
        return 0
    # transformers' tanh GELU in Python (`PYTHON_TANH_GELUS`): autograd saves the tanh output,
    # `0.5 * x` and `1 + tanh(...)` besides x. litgpt calls torch's GELU; Megatron-LM its fused
    # bias-GELU, which saves only its input (megatron/core/fusions/fused_bias_gelu.py
    # `GeLUFunction`)
    if spec.framework not in (Framework.LITGPT, Framework.MEGATRON) \
            and arch.activation in PYTHON_TANH_GELUS:
        return 3
    return 0


BLOOM_GELU_BACKWARD_TENSORS = 6
"""Intermediate-wide tensors alive at the peak of BloomGelu's backward (models/bloom/
modeling_bloom.py `bloom_gelu_back`, written out in Python): the incoming gradient, `tanh_out`,
`0.5 * x`, `1 - tanh_out * tanh_out`, `0.79788456 + 0.1070322243 * x * x` and their product;
traced (vramplan.tracer, bloom full fp32, 2 x 128 tokens), the step's peak holds these six."""


def _mlp_backward_tensors(arch: Architecture, spec: BlockSpec) -> int:
    """Intermediate-wide tensors the MLP's backward holds at once: d(act*up), d(act), d(up)
    in a gated MLP; d(act) and d(up) in a plain one whose activation is one ATen kernel (ReLU,
    `gelu` with or without tanh: `threshold_backward`/`gelu_backward` read the incoming
    gradient and one saved tensor); three through a Python tanh GELU, whose chain of
    elementwise ops backpropagates through an intermediate of its own;
    `BLOOM_GELU_BACKWARD_TENSORS` for BLOOM's own GELU. Traced (vramplan.tracer, StarCoder2 and
    OPT under full checkpointing, 2 x 128 tokens): the recomputed block's MLP backward holds
    two beside its saved tensors. One under Liger-Kernel's SwiGLU."""
    if arch.activation == BLOOM_GELU:
        return BLOOM_GELU_BACKWARD_TENSORS
    if arch.mlp is MlpKind.GATED and spec.liger_kernels:
        # Liger-Kernel's SwiGLU backward writes the gradients of gate and up over the saved
        # gate and up (liger_kernel/ops/swiglu.py `swiglu_backward`: `_swiglu_backward_kernel`
        # stores into a and b, `return a, b`, since 45055fed): d(act*up) alone is new
        return 1
    if arch.mlp is MlpKind.PLAIN and not _activation_extra_tensors(arch, spec):
        return 2
    return 3


def _mlp_backward_itemsize(arch: Architecture, spec: BlockSpec) -> int:
    """Bytes per element of the MLP's backward tensors: fp32 through a Python tanh GELU under
    autocast, whose chain runs in fp32 on CUDA (`_activation_saved_tensors`), so its gradients
    do too (traced with `vramplan.tracer.cuda_autocast`: three fp32 intermediate-wide tensors
    beside the saved ones at the peak of Phi's MLP backward); and the dtype of the MLP's
    intermediate tensors where a quantized base hands them back in its input's (fp32 under
    `amp`, `_mlp_hidden_itemsize`; traced, QLoRA under `amp` and full checkpointing: the
    recomputed MLP's backward peaks with three fp32 intermediate-wide tensors, the product's
    gradient, the product and the first gradient of its backward). Dense MLPs only: a routed
    expert's backward under a quantized base is not traced (the tracer's grouped experts run in
    bf16 alone)."""
    if _fp32_gelu_chain(arch, spec):
        return FP32
    if arch.is_moe:
        return spec.compute_bytes
    return max(spec.compute_bytes, _mlp_hidden_itemsize(spec, spec.residual_bytes))


RMSNORM_BACKWARD_FP32_TENSORS = 5
"""Residual-wide fp32 tensors alive at the peak of an fp32 Python RMSNorm's backward (the
gradients of `x * rsqrt(...)`, of `x.pow(2)` and their sum, the casts): traced, a Llama block's
backward at its peak holds five (vramplan.tracer on 4 x 128 tokens, bf16, vocabulary 32 so that
no logit hides it); transformers' LlamaRMSNorm alone, 18 bytes per element beyond its saved
tensors and output."""


def block_backward_transient(arch: Architecture, spec: BlockSpec,
                             saved: tuple[Saved, ...] = ()) -> int:
    """Bytes per token created while one block runs backward, beyond what it saved: the MLP's
    gradients (three intermediate-wide tensors at once: d(act*up), d(act), d(up)), attention's
    (dq, dk, dv and FlashAttention's fp32 dq accumulator, flash_bwd_kernel.h), eager
    attention's softmax backward (`scores_backward_extra`, from the block's `saved` tensors), or
    an RMSNorm's, computed in fp32 (litgpt's, transformers' and torchtune's RMSNorms upcast their
    input), whichever is larger."""
    c = spec.compute_bytes
    mlp = _mlp_backward_tensors(arch, spec) * _mlp_backward_itemsize(arch, spec) \
        * arch.expert_intermediate_size if spec.mlp_tile_share is None \
        else tiled_mlp_backward(arch, spec, spec.mlp_tile_share)
    attention = 3 * c * arch.q_dim + FP32 * arch.q_dim
    norm = RMSNORM_BACKWARD_FP32_TENSORS * FP32 * arch.hidden_size \
        if arch.norm is NormKind.RMSNORM else 0
    if norm and (arch.sandwich_norms or arch.norms_after_sublayers):
        # a norm on the MLP's output runs the block's backward first, beside the incoming
        # gradient, which the residual add hands on whole and which lives through the block's
        # backward; after a pre-norm, the norm's backward runs last, and the gradients it
        # joins are the ones the five fp32 tensors were traced with. Traced (Gemma 3, LoRA, full
        # checkpointing, 2 x 128 tokens): the peak holds the block's saved tensors, the five
        # fp32 tensors of `post_feedforward_layernorm`'s backward and the incoming gradient
        norm += spec.residual_bytes * arch.hidden_size
    if arch.parallel_block and arch.mlp is MlpKind.GATED and spec.residual_bytes != c:
        # a parallel block's MLP runs its backward beside the fp32 incoming gradient and its
        # two 16-bit casts, for the MLP's output and attention's: Cohere's `residual +
        # attention + mlp` adds attention's output last, so its add's backward, which casts,
        # runs before the MLP's. Traced (Cohere and Cohere2, full fine-tuning and LoRA under
        # `amp`, full checkpointing, 2 x 128 tokens): -4.0 to -5.9 % before, -1.4 to +0.3 %
        # with them. Phi's plain MLP under autocast runs its fp32 GELU chain, whose traced peak
        # `_mlp_backward_itemsize` holds already (its configurations move away from their
        # traces with them)
        mlp += (spec.residual_bytes + 2 * c) * arch.hidden_size
    return max(mlp, attention, scores_backward_extra(saved), norm)


def scores_backward_extra(saved: tuple[Saved, ...]) -> int:
    """Per token: what the softmax backward of a materialized score matrix (eager attention,
    litgpt's math path) holds beyond the block's saved tensors (`saved`, in forward order).

    The softmax saves its output; autograd's `_softmax_backward_data(grad, output, dim,
    input_dtype)` (aten/src/ATen/native/SoftMax.cpp) needs the gradient of that output, in its
    dtype (an fp32 softmax of 16-bit scores gets it through the backward of the `.to(q.dtype)`
    cast, `ToCopyBackward`), and writes the gradient of its input in the input's dtype: fp32
    where `softmax(x, dtype=torch.float32)` converted a bf16 `x` first (`input_.toType(dtype)`;
    only float16 on CUDA takes the `half_to_float` kernel, whose input gradient is 16-bit, not
    counted). So three score-sized tensors of the output's dtype at once, one of them saved,
    while what the ops after the softmax saved (the 16-bit cast or dropout's output and mask
    that `probs @ v` kept, the output projection's input, the MLP's tensors) was freed by their
    backward, which ran first. Traced: `vramplan trace` holds the fp32 output, its gradient and
    the input's gradient at the peak of a Llama block's eager backward."""
    names = [item.name for item in saved]
    softmax = "attn_probs_fp32" if "attn_probs_fp32" in names else "attn_probs"
    if softmax not in names:
        return 0
    index = names.index(softmax)
    after = sum(item.bytes_per_token for item in saved[index + 1:])
    return max(2 * saved[index].bytes_per_token - after, 0)


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


def total_per_token(items: tuple[Saved, ...]) -> int:
    return sum(item.bytes_per_token for item in items)


@dataclass(frozen=True, slots=True)
class HeadSpec:
    """What decides the memory of the final norm, the head, the logits and the loss."""

    framework: Framework
    chunked: bool
    """litgpt's `lm_head_chunk_size=128` (LoRA scripts): logits come as a list of chunks, so no
    copy is made when the last position is dropped."""
    head_trains: bool
    head_lora: bool
    head_keeps_input: bool
    """The head keeps its input though its weight is frozen: a quantized head (bitsandbytes
    MatMul4Bit), or DeepSpeed ZeRO-3's linear (`BlockSpec.linears_keep_input`)."""
    head_dequant_bytes: int
    """Bytes of a copy of the head weight made for each matmul and kept for backward: the
    weight dequantized to 16 bits (a quantized head), or normalized (Baichuan 2's `NormHead`,
    `vramplan.presets.frameworks.RemoteCode.norm_head`); 0 for a plain head."""
    previous_logits: bool = False
    """The previous micro-batch's logits are still referenced during this forward (litgpt's
    loop variable `logits` is rebound only when the new forward returns; a loop that keeps the
    model's outputs, `outputs_kept`, likewise)."""
    outputs_kept: bool = False
    """The loop keeps the model's outputs, so the logits it returns stay alive through backward
    and the optimizer step (`vramplan.presets.frameworks.FrameworkDefaults.loop_keeps_outputs`)."""
    compiled: bool = False
    """The cross-entropy runs under torch.compile (torchtune's `compile_loss`)."""
    log_probs: bool = False
    """The loss takes per-token log-probabilities (TRL's `selective_log_softmax`), not a
    cross-entropy."""
    coati_orpo: bool = False
    """The loss is ColossalChat's ORPO loss on chosen and rejected rows (`_coati_orpo_loss`)."""
    autocast: bool = False
    """The model runs under autocast (`amp`): its 16-bit logits are turned into an fp32 copy."""
    loss_in_function: bool = False
    """litgpt: logits and loss computed in a function that returns the loss alone
    (`vramplan.training.setup.TrainingSetup.loss_in_function`)."""
    logits_fp32_in_model: bool = False
    """transformers up to v4.45: the model returns fp32 logits, its 16-bit head output is freed
    once cast (`vramplan.presets.frameworks.TransformersCode.logits_fp32_in_model`)."""
    shifts_logits: bool = False
    """transformers up to v4.48: the loss takes an fp32 copy of the logits without their last
    position (`vramplan.presets.frameworks.TransformersCode.shifts_logits`)."""
    loss_16bit: bool = False
    """That copy and its cross-entropy stay in the 16-bit compute dtype: the model's own loss
    never upcast (`vramplan.presets.frameworks.TransformersCode.loss_16bit`: OPT, GPT-2,
    BLOOM, GPT-NeoX... before v4.49)."""
    shift_cast_by_autocast: bool = False
    """The model's own loss shifts its 16-bit logits by a 16-bit copy, and autocast's
    `cross_entropy` casts that copy to fp32 (a 16-bit loss's code run under autocast:
    `vramplan.training.setup.autocast_casts_shifted_logits`)."""
    outputs_copied_fp32: bool = False
    """accelerate returns the model's outputs in fp32 (`convert_outputs_to_fp32` around
    `forward` under its mixed precision: `vramplan.training.setup.accelerate_copies_outputs`)."""
    loss_parallel: bool = False
    """The cross-entropy runs under DTensor's `loss_parallel()` on vocabulary-sharded logits
    (`vramplan.training.setup.TrainingSetup.loss_parallel`): `_loss_parallel`."""
    te_cross_entropy: bool = False
    """Megatron-LM's fused cross-entropy runs Transformer Engine's kernel
    (`vramplan.training.setup.TrainingSetup.te_cross_entropy`): `_vocab_parallel_loss`."""
    native_fused_cross_entropy: bool = False
    """Megatron-LM's native fused cross-entropy (megatron/core/fusions/fused_cross_entropy.py,
    the same compiled steps from 7b4a6d76, 2024-06-14, where it was added, to d98e8a64,
    2026-08-22) runs the unfused one's steps as functions compiled by `jit_fuser`,
    `torch.compile` on torch 2.2 and later (megatron/core/jit.py). Inductor does not keep an
    in-place update of a graph input in place when the same graph reduces over it or scatters
    into it: it computes the new value in a fresh buffer and copies it back.
    `calculate_predicted_logits` subtracts the maximum and exponentiates the fp32 logits in
    place, then sums them; `calculate_gradients` scatters into the saved softmax, then scales
    it: one fp32 logits-sized transient in the loss's forward and one in its backward (seen in
    inductor's output for the backward on torch 2.13, CPU; a later version of the file, which
    compiles the pointwise steps alone, says so of both)."""
    megatron_max_subtracted_apart: bool = False
    """Megatron-LM's cross-entropy subtracted the logits' maximum out of place
    (`vocab_parallel_logits = vocab_parallel_logits - logits_max.unsqueeze(dim=-1)`), an fp32
    copy beside the `logits.float()` its caller passed, until 9634c0e4 (2024-06-13, "Reduce logit
    memory pressure by using in-place operation", first in core_r0.8.0)."""
    head_grad_bytes: int = 0
    """A fused linear cross-entropy that trains the head makes the head weight's whole gradient
    in forward (Liger-Kernel `fused_linear_cross_entropy_forward`: `grad_weight =
    torch.zeros_like(weight)`, accumulated chunk by chunk): its bytes, else 0."""
    norm_input_needs_grad: bool = True
    """The final norm's input, the last block's output, needs a gradient; not when no block
    builds a graph (`vramplan.training.estimate.checkpoints_cut_the_graph`): a frozen norm then
    saves nothing."""
    fused_rows: int | None = None
    """Rows of a fused linear cross-entropy's chunk when its framework picks them otherwise than
    Liger-Kernel (Unsloth's `unsloth_fused_ce_loss`,
    `vramplan.training.estimate.unsloth_loss_chunks`); None: `fused_loss_rows`."""

    @property
    def fused_linear(self) -> bool:
        """A chunked loss outside litgpt and torchtune, whose chunking is their own: a fused
        linear cross-entropy (Liger-Kernel's)."""
        return self.chunked and self.framework not in (Framework.LITGPT, Framework.TORCHTUNE)


@dataclass(frozen=True, slots=True)
class LossMemory:
    """The final norm, head and loss, in bytes for the whole micro-batch."""

    saved_bytes: int
    """Final norm and head inputs kept for backward."""
    logits_alive_bytes: int
    """Logits still referenced when backward runs through the blocks (and, in litgpt's loop,
    through the optimizer step: `logits` is a loop variable)."""
    forward_peak_bytes: int
    """Vocabulary-sized tensors alive when the loss has just been computed."""
    backward_peak_bytes: int
    """Vocabulary-sized tensors alive while the loss's backward runs (first chunk)."""


def fused_loss_rows(tokens: int, vocab: int, hidden: int) -> int:
    """Rows of logits a fused linear cross-entropy computes at once: enough chunks that a chunk's
    logits take about as much as the hidden states, a power of two (Liger-Kernel
    `chunk_size = triton.next_power_of_2(triton.cdiv(BT, triton.cdiv(V, H)))`)."""
    rows = ceil_div(tokens, ceil_div(vocab, hidden))
    return min(tokens, 1 << (rows - 1).bit_length())


def head_and_loss(arch: Architecture, block: BlockSpec, head: HeadSpec, batch: int,
                  seq_len: int, *, logit_len: int | None = None) -> LossMemory:
    """Logits and loss memory, with the fp32 upcast that every framework does before the
    softmax: Fabric's `convert_output` (to float32) for litgpt, `logits.float()` in transformers'
    `ForCausalLMLoss`; the fp32 log-softmax is saved by the loss.

    `logit_len`: the positions per sequence the head computes (GRPO's `logits_to_keep`; None:
    all). The final norm runs over every position and the head takes a slice of its output
    (`self.lm_head(hidden_states[:, slice_indices, :])`, modeling_llama.py
    `LlamaForCausalLM.forward`), a view that keeps the whole normalized tensor alive: what they
    save covers every position."""
    every_position = batch * seq_len
    h, vocab, c = arch.hidden_size, arch.vocab_size, block.compute_bytes
    saved = _final_norm_bytes(arch, block, head) * every_position
    if head.head_trains or head.head_keeps_input:
        saved += block.residual_bytes * h * every_position
    tokens = batch * (seq_len if logit_len is None else logit_len)
    saved += _head_adapter_saved(block, head, hidden=h, tokens=tokens,
                                 every_position=every_position)
    fp32_logits = FP32 * vocab * tokens
    log_softmax = fp32_logits  # saved by the cross-entropy for its backward
    softcap = _final_softcap_bytes(arch, c) * tokens
    if head.framework is Framework.LITGPT:
        # Fabric's convert_output: the list of logit chunks, in fp32, is the training loop's
        # `logits` variable, alive through backward and the optimizer step; computed inside a
        # function, they die with its frame once the loss is returned (extensions/thunder/
        # pretrain.py `forward_and_loss`: `chunked_cross_entropy(logits, targets,
        # chunk_size=0)` on the whole logits, their targets already shifted)
        alive = 0 if head.loss_in_function else fp32_logits
        # finetune/*.py: `logits[..., :-1, :]` reshaped by the loss is a copy when batch > 1
        sliced = not (head.chunked or batch == 1 or head.loss_in_function)
        copy = fp32_logits if sliced else 0
        chunk = min(LITGPT_LM_HEAD_CHUNK, seq_len) * batch if head.chunked else tokens
        # Inside `model(...)`, the previous step's fp32 logits are still bound (the loop rebinds
        # `logits` when the call returns) beside the head's 16-bit chunks: the last chunk
        # dequantizes a quantized head, then convert_output makes the fp32 copies while the
        # 16-bit chunks are still referenced (lightning_utilities `apply_to_collection` builds
        # a new list). After the call, the loss adds its log-softmax to the fp32 logits.
        previous = alive if head.previous_logits else 0
        model_out = c * vocab * tokens
        converted = fp32_logits if c != FP32 else 0
        in_call = previous + softcap + model_out + max(converted, head.head_dequant_bytes)
        forward = max(in_call, fp32_logits + softcap + log_softmax + copy)
        backward = (alive + softcap + log_softmax + 2 * FP32 * vocab * chunk
                    + head.head_dequant_bytes)
        return LossMemory(saved_bytes=saved, logits_alive_bytes=alive,
                          forward_peak_bytes=forward, backward_peak_bytes=backward)
    if head.framework is Framework.TORCHTUNE:
        return _torchtune_loss(head, saved=saved, tokens=tokens, vocab=vocab, hidden=h,
                               compute=c)
    if head.coati_orpo or head.log_probs:
        return _preference_loss(head, saved=saved, elements=vocab * tokens, compute=c)
    if (head.framework in (Framework.MEGATRON, Framework.UNSLOTH) and not head.chunked) \
            or (head.framework is Framework.TORCHTITAN and head.compiled):
        return _kernel_loss(head, saved=saved, elements=vocab * tokens, compute=c,
                            softcap=softcap)
    if head.chunked:
        # fused linear + cross-entropy (linkedin/Liger-Kernel ops/fused_linear_cross_entropy.py
        # `fused_linear_cross_entropy_forward`, @c7dd3294 and @ead96b61): the gradients of the
        # hidden states (`zeros_like(_input)`) and of a trained head (`zeros_like(weight)`) are
        # made in forward and kept for backward, which only scales them in place; the logits
        # exist one chunk at a time, in the compute dtype, their gradient written over them by
        # the kernel, and `grad_logits_chunk @ weight` makes the chunk's hidden gradient before
        # it is copied into place
        chunk = head.fused_rows or fused_loss_rows(tokens, vocab, h)
        grad_input = c * h * tokens
        forward = (grad_input + head.head_grad_bytes + c * (vocab + h) * chunk
                   + head.head_dequant_bytes)
        return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                          backward_peak_bytes=grad_input + head.head_dequant_bytes)
    return _transformers_loss(head, saved=saved, tokens=tokens, rows=batch, vocab=vocab,
                              compute=c, softcap=softcap)


def _head_adapter_saved(block: BlockSpec, head: HeadSpec, *, hidden: int, tokens: int,
                        every_position: int) -> int:
    """What a LoRA adapter on the head keeps for its backward, as `_linear` counts a block's:
    `lora_A` needs its input for its weight gradient (peft `Linear.forward`, litgpt and
    torchtune's `LoRALinear`: `lora_A(dropout(x))`, the dropout an identity at p = 0), while the
    frozen head's own matmul keeps nothing (autograd saves a matmul's input only for a weight
    that needs a gradient, tools/autograd/derivatives.yaml `mm`). Without dropout that input is
    the final norm's output, kept whole when the head reads a slice of it (`logit_len`), and
    already counted when the head trains or keeps its input. Then `lora_A`'s rank-wide output,
    which `lora_B` keeps."""
    if not head.head_lora:
        return 0
    c, norm_output = block.compute_bytes, block.residual_bytes
    autocast = _autocasts(block)
    adapter_input = FP32 if block.adapter_input_fp32 else norm_output
    adapter_out = _adapter_compute_bytes(block)
    if block.lora_dropout:
        kept = (DROPOUT_MASK_BYTES + adapter_out) * hidden * tokens
    elif autocast and adapter_input != c:
        kept = c * hidden * tokens  # lora_A's own 16-bit cast
    elif adapter_input != norm_output:
        kept = FP32 * hidden * tokens  # peft's fp32 copy for fp32 adapters
    elif head.head_trains or head.head_keeps_input:
        kept = 0
    else:
        kept = norm_output * hidden * every_position
    return kept + adapter_out * block.lora_rank * tokens


def _compiled_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """torchtitan's `torch.compile`d `cross_entropy(pred.flatten(0, 1).float(), labels)`
    (torchtitan/components/loss.py, `TorchtitanCode.compiles_loss`): inductor fuses the fp32
    upcast into the cross-entropy's reductions, so the graph saves its 16-bit input and a
    log-sum-exp per row, and its backward writes one 16-bit gradient (the model's `pred` itself
    is deleted before backward, torchtitan/train.py `del pred`)."""
    logits = compute * elements  # the log-sum-exp, 4 bytes a row, is not counted
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=logits,
                      backward_peak_bytes=2 * logits + head.head_dequant_bytes)


def _transformers_loss(head: HeadSpec, *, saved: int, tokens: int, rows: int, vocab: int,
                       compute: int, softcap: int) -> LossMemory:
    """transformers: the model's 16-bit logits, `logits.float()` in ForCausalLMLoss (no copy
    when already fp32), the fp32 log-softmax. The Trainer keeps only the loss (`training_step`
    drops the outputs), so backward starts with the log-softmax and adds the fp32 gradients of
    the log-softmax and of the logits. Before v4.49: `_shifted_hf_loss`; on vocabulary-sharded
    logits under DTensor's `loss_parallel()`: `_loss_parallel`."""
    if head.loss_parallel:
        return _loss_parallel(saved=saved, elements=vocab * tokens, compute=compute)
    if head.shifts_logits:
        return _shifted_hf_loss(head, saved=saved, tokens=tokens, rows=rows, vocab=vocab,
                                compute=compute, softcap=softcap)
    # a loss on the 16-bit logits as they are (`HeadSpec.loss_16bit`) takes no fp32 copy: its
    # log-softmax and gradients are in the 16-bit dtype; a model that returns fp32 logits
    # (torchtitan's before October 2024, `TorchtitanCode.logits_fp32_in_model`) leaves the
    # loss's `.float()` nothing to copy
    loss_bytes = compute if head.loss_16bit else FP32
    returns_fp32 = head.logits_fp32_in_model and loss_bytes == FP32
    logits = (FP32 if returns_fp32 else compute) * vocab * tokens
    copy = 0 if loss_bytes == compute or returns_fp32 else loss_bytes * vocab * tokens
    log_softmax = loss_bytes * vocab * tokens
    alive, previous = _kept_outputs(head, logits)
    forward = previous + logits + softcap + copy + log_softmax
    backward = alive + softcap + log_softmax + 2 * loss_bytes * vocab * tokens \
        + head.head_dequant_bytes
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _kept_outputs(head: HeadSpec, returned: int) -> tuple[int, int]:
    """The logits a loop that keeps the model's outputs holds through backward and the step
    (`returned`, the bytes of the logits the model returns), and those of the previous step it
    still holds during this forward; (0, 0) for a loop that drops them (the Trainer)."""
    if not head.outputs_kept:
        return 0, 0
    return returned, returned if head.previous_logits else 0


def _kernel_loss(head: HeadSpec, *, saved: int, elements: int, compute: int,
                 softcap: int) -> LossMemory:
    """A framework's own cross-entropy kernel on `elements` = tokens x vocabulary logits:
    Megatron-LM's (`_vocab_parallel_loss`), torchtitan's compiled one (`_compiled_loss`) or
    Unsloth's `fast_cross_entropy_loss`
    (unsloth/kernels/cross_entropy_loss.py `Fast_CrossEntropyLoss` @4474e4bc): one fp32 loss
    and log-sum-exp per row, the 16-bit logits saved, and their gradient written over them in
    backward (`return logits`)."""
    if head.framework is Framework.MEGATRON:
        return _vocab_parallel_loss(head, saved=saved, elements=elements, compute=compute,
                                    softcap=softcap)
    if head.framework is Framework.TORCHTITAN:
        return _compiled_loss(head, saved=saved, elements=elements, compute=compute)
    logits = compute * elements + softcap
    # Unsloth returns the 16-bit logits its kernel saved, and the Trainer's mixed precision
    # (its notebooks' `fp16 = not is_bfloat16_supported()`, `bf16 = is_bfloat16_supported()`)
    # wraps `forward` in accelerate's `convert_outputs_to_fp32` (accelerate/accelerator.py
    # `prepare_model`; utils/operations.py: `tensor.float()`): an fp32 copy of them lives until
    # the Trainer drops the outputs, before backward
    returned = UNSLOTH_RETURNED_LOGITS_COPY * elements
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0,
                      forward_peak_bytes=logits + returned,
                      backward_peak_bytes=logits + head.head_dequant_bytes)


def _loss_parallel(*, saved: int, elements: int, compute: int) -> LossMemory:
    """`cross_entropy(pred.float(), labels)` under DTensor's `loss_parallel()` on logits sharded
    over the vocabulary (torchtitan with tensor parallelism: the output layer's
    `ColwiseParallel(use_local_output=False)`), on `elements` local logits
    (torch/distributed/tensor/parallel/loss.py `_log_softmax`,
    `_nll_loss_and_log_softmax_backward`):
    forward, beside the 16-bit logits, the fp32 copy, `shifted = x - max` and `exp(shifted)`,
    whose place the log-probabilities then take (kept for backward; the loop deletes `pred`
    before backward); backward, beside them, `zeros_like(x)`, `exp(x)` and their sum, then the
    gradient. 2 + 12 bytes per local logit in forward, 16 in backward, where the single-GPU
    cross-entropy holds 10 and 12 (counted on one rank of a fake 8-rank group, on the CPU)."""
    forward = (compute + 3 * FP32) * elements
    backward = 4 * FP32 * elements
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


UNSLOTH_RETURNED_LOGITS_COPY = FP32
"""Bytes per logit of the copy accelerate makes of the 16-bit logits Unsloth's model returns."""


def _vocab_parallel_loss(head: HeadSpec, *, saved: int, elements: int, compute: int,
                         softcap: int) -> LossMemory:
    """Megatron-LM's cross-entropy (NVIDIA/Megatron-LM @d98e8a64 megatron/core/tensor_parallel/
    cross_entropy.py `_VocabParallelCrossEntropy`, its default: `--cross-entropy-loss-fusion`
    is opt-in), on `elements` = tokens x vocabulary logits (this GPU's share of the
    vocabulary under tensor parallelism). One autograd Function: `logits.float()`, then in
    place the max subtracted, `exp`, the division by the sum: the fp32 softmax is saved, and
    the 16-bit logits die once the model returns its loss (`GPTModel._postprocess`). Its
    backward turns the saved softmax into the gradient in place, which autograd casts to the
    logits' 16-bit dtype: the softmax and its 16-bit copy exist together. Transformer Engine's
    fused kernel keeps the 16-bit logits alone (`HeadSpec.te_cross_entropy`)."""
    logits = compute * elements
    if head.te_cross_entropy:
        # Transformer Engine's `parallel_cross_entropy` (`cross_entropy_fusion_impl="te"`:
        # transformer_engine/pytorch/cross_entropy.py `CrossEntropyFunction`): its Triton kernel
        # writes the gradient over the 16-bit logits in forward and saves them
        # (`save_for_backward(_input.detach())`); backward scales them in place
        return LossMemory(saved_bytes=saved, logits_alive_bytes=0,
                          forward_peak_bytes=logits + softcap,
                          backward_peak_bytes=logits + softcap + head.head_dequant_bytes)
    softmax = FP32 * elements
    upcast = logits if compute != FP32 else 0
    # the fp32 input the caller passed, beside the copy the max was subtracted into
    apart = FP32 * elements if head.megatron_max_subtracted_apart else 0
    # the compiled steps' fresh buffer beside the fp32 logits they update
    compiled_copy = FP32 * elements if head.native_fused_cross_entropy else 0
    forward = upcast + softmax + apart + softcap + compiled_copy
    backward = softmax + upcast + softcap + head.head_dequant_bytes + compiled_copy
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _shifted_hf_loss(head: HeadSpec, *, saved: int, tokens: int, rows: int, vocab: int,
                     compute: int, softcap: int) -> LossMemory:
    """transformers' causal-LM loss before v4.49 (`vramplan.presets.frameworks.TransformersCode`;
    huggingface/transformers v4.45.2 models/llama/modeling_llama.py `LlamaForCausalLM.forward`,
    v4.46.0 loss/loss_utils.py `ForCausalLMLoss`): `logits = logits.float()`, then
    `shift_logits = logits[..., :-1, :].contiguous()`, an fp32 copy of the `tokens - rows`
    positions that predict a next token, and `CrossEntropyLoss` on it, which saves its fp32
    log-softmax (the copy itself dies with the forward: log_softmax saves its output only).

    Forward peak: the logits the model returns (fp32 up to v4.45; 16-bit from v4.46 with the
    loss's fp32 upcast beside them), the shifted copy and its log-softmax. The Trainer drops the
    outputs, so backward starts with the log-softmax alone: the NLL's gradient and the
    log-softmax's gradient beside it (three fp32 tensors of the shifted rows), then
    `slice_backward` writes that gradient into a zero-filled fp32 tensor of every row, then
    `ToCopyBackward0` casts it to the 16-bit logits' gradient. A model whose loss never
    upcast (`HeadSpec.loss_16bit`) does all of it in the 16-bit dtype, with no cast."""
    every = vocab * tokens
    shifted = vocab * (tokens - rows)
    if head.shift_cast_by_autocast and compute != FP32:
        return _shifted_16bit_loss_under_autocast(head, saved=saved, every=every,
                                                  shifted=shifted, compute=compute,
                                                  softcap=softcap)
    loss_bytes = compute if head.loss_16bit else FP32
    if head.loss_16bit or head.logits_fp32_in_model or compute == FP32:
        logits = loss_bytes * every  # fp32: the 16-bit head output is freed by the cast
        returned = logits
    else:
        logits = compute * every + FP32 * every
        returned = compute * every
    alive, previous = _kept_outputs(head, returned)
    forward = previous + logits + softcap + 2 * loss_bytes * shifted
    cast_back = (compute + FP32) * every if loss_bytes != compute else 0
    backward = alive + softcap + max(3 * loss_bytes * shifted, loss_bytes * (shifted + every),
                                     cast_back) + head.head_dequant_bytes
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _shifted_16bit_loss_under_autocast(head: HeadSpec, *, saved: int, every: int, shifted: int,
                                       compute: int, softcap: int) -> LossMemory:
    """A 16-bit loss's code under autocast (`HeadSpec.shift_cast_by_autocast`): transformers'
    OPT, GPT-2, BLOOM... before v4.49 (`shift_logits = lm_logits[..., :-1, :].contiguous()`,
    then `CrossEntropyLoss`), Qwen (v1) and Baichuan 2's own files. The 16-bit logits, their
    shifted 16-bit copy, the fp32 cast autocast's `cross_entropy` makes of it (torch.amp: the
    op autocasts to fp32) and the fp32 log-softmax it saves; the cast dies with the op. When the
    forward returns, accelerate's `convert_outputs_to_fp32` copies the 16-bit logits to fp32
    beside the saved log-softmax (`HeadSpec.outputs_copied_fp32`), until the Trainer drops the
    outputs. Backward: the NLL's and the log-softmax's fp32 gradients of the shifted rows, their
    16-bit cast (`ToCopyBackward0`), then `slice_backward`'s zero-filled 16-bit gradient of every
    row."""
    logits = compute * every
    log_softmax = FP32 * shifted
    alive, previous = _kept_outputs(head, logits)
    in_loss = logits + compute * shifted + FP32 * shifted + log_softmax
    returned = logits + FP32 * every + log_softmax if head.outputs_copied_fp32 else 0
    forward = previous + softcap + max(in_loss, returned)
    backward = alive + softcap + max(3 * FP32 * shifted, FP32 * shifted + compute * shifted,
                                     compute * (shifted + every)) + head.head_dequant_bytes
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive, forward_peak_bytes=forward,
                      backward_peak_bytes=backward)


def _log_prob_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """TRL's per-token log-probabilities (trl/trainer/utils.py `selective_log_softmax`
    @f2cd5771), on `elements` = rows x positions x vocabulary logits.

    Under autocast, accelerate returns the model's outputs in fp32 (`convert_outputs_to_fp32`
    around `forward`): the 16-bit logits and their fp32 copy exist together. fp32 logits take the
    gather and a `logsumexp` per row, which saves its input: the fp32 logits stay for backward.
    16-bit logits take a `log_softmax` per row, which saves its output: the logits themselves
    are freed, one 16-bit tensor of log-probabilities stays. In backward, fp32 logits get the
    gather's dense gradient, the per-row gradients and their stack (unbind's backward) beside
    the saved logits: four fp32 tensors of the logits' size. Counted per element by tracing the
    function's forward and backward (vramplan.tracer.tracker on CPU tensors): fp32 kept 4, peak
    forward 4 + 2 under autocast, backward 16; 16-bit kept 2, forward 4, backward 4."""
    if compute == FP32 or head.autocast:
        kept = FP32 * elements
        forward = kept + (compute * elements if head.autocast else 0)
        backward = 4 * FP32 * elements
    else:
        kept = compute * elements
        forward = 2 * kept
        backward = 2 * kept
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=backward + head.head_dequant_bytes)


def _preference_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """A preference or RL method's loss on per-token log-probabilities: coati's ORPO loss, or
    TRL's `selective_log_softmax`."""
    if head.coati_orpo:
        return _coati_orpo_loss(head, saved=saved, elements=elements, compute=compute)
    return _log_prob_loss(head, saved=saved, elements=elements, compute=compute)


def _coati_orpo_loss(head: HeadSpec, *, saved: int, elements: int, compute: int) -> LossMemory:
    """ColossalChat's ORPO step (hpcaitech/ColossalAI applications/ColossalChat @d888c378
    coati/trainer/orpo.py `ORPOTrainer._train`, coati/models/utils.py `calc_masked_log_probs`,
    coati/models/loss.py `OddsRatioLoss`) on `elements` = chosen and rejected rows x positions x
    vocabulary logits; U below is the fp32 logits of one half.

    One forward of both halves; `actor_out["logits"].to(torch.float32)` is the model's fp32
    logits themselves where its forward upcasts them (transformers up to v4.45), else an fp32
    copy beside the 16-bit logits `actor_out` holds. Each half's `F.log_softmax(logits[:, :-1,
    :])` saves its output (U each); `actor_chosen_logits[:, :-1, :].contiguous()` copies the
    chosen half (U) and `CrossEntropyLoss` saves its log-softmax (U): 6U at the end of forward
    (at the head's cast, the previous step's 3U beside the new 16-bit and fp32 logits are as
    many). In backward each of the three branches scatters its gradient into a new zero tensor
    of its half (`slice_backward`), then of the whole logits (2U), which autograd sums into the
    first one's buffer in place: 8U at the last branch's slice, beside the fp32 logits and the
    chosen copy (traced on CPU tensors with the loop's code, 8.05U; the tracer's dispatch mode
    turns the in-place sums and `scatter_add_` out of place, which reads 9.05U, a third 2U at
    the last sum). `torch.autograd.set_detect_anomaly(True)` checks each node's outputs with
    `isnan`, a byte per value, after its inputs are freed: below that peak. The loop holds
    `actor_out`, `actor_all_logits` and `chosen_logits` through backward and the optimizer step,
    until the next iteration rebinds them: 3U."""
    fp32 = FP32 * elements
    half = fp32 // 2
    model_16bit = 0 if head.logits_fp32_in_model else compute * elements
    alive = fp32 + half + model_16bit  # the fp32 logits, the chosen copy, actor_out's 16-bit
    return LossMemory(saved_bytes=saved, logits_alive_bytes=alive,
                      forward_peak_bytes=alive + 3 * half,
                      backward_peak_bytes=alive + 2 * fp32 + half + head.head_dequant_bytes)


TORCHTUNE_OUTPUT_CHUNKS = 8
"""torchtune `CEWithChunkedOutputLoss(num_output_chunks=8)` (torchtune/modules/loss/
ce_chunked_output_loss.py): the model returns its output as 8 chunks along the sequence
(`TransformerDecoder.chunked_output`)."""


def _torchtune_loss(head: HeadSpec, *, saved: int, tokens: int, vocab: int, hidden: int,
                    compute: int) -> LossMemory:
    """torchtune's head and cross-entropy (pytorch/torchtune @1814feb1 and @bd2a0fc7).

    Unchunked: the model returns `self.output(h).float()` (torchtune/modules/transformer.py), so
    its 16-bit logits live only during the cast; `F.cross_entropy` saves its fp32 log-softmax
    and the recipe drops the logits before backward (`del logits`, recipes/
    full_finetune_single_device.py `_loss_step`), which its recipes of before July 2024 did not
    (`vramplan.presets.frameworks.TORCHTUNE_DELETES_LOGITS_SINCE`). `training.compile_loss`
    compiles such a loss by returning `torch.compile(loss)`: the LoRA single-device recipe keeps
    what it returns (`self._loss_fn = training.compile_loss(self._loss_fn)`), the full
    fine-tuning recipes call it and drop the result, so their unchunked loss runs eagerly; a
    compiled one saves its fp32 input, not the log-probabilities, and its backward makes one
    gradient.

    Chunked (`CEWithChunkedOutputLoss`): the 16-bit chunks stay referenced until `del logits`.
    Eager, each chunk is cast to fp32 and its log-softmax saved. Compiled (`compile_loss`
    replaces `compute_cross_entropy` in place in every recipe, "the CE and upcasting have to be
    compiled together"): inductor fuses the cast into the cross-entropy's reductions, the graph
    saves its 16-bit input and the log-sum-exp, and its backward writes one 16-bit gradient.

    Backward, every chunk's loss runs before the head's (autograd's engine runs the ready node
    with the highest sequence number first, and the loss's nodes were made after the head's
    matmuls): the chunks' gradients wait, and the head then runs once per chunk. A trained head
    sums its weight's gradients in autograd's input buffer, the first sum out of place (the
    linear's weight gradient is a transposed view, see vramplan.training.estimate
    `_embedding_gradients_in_flight`): the buffer, the new gradient and their sum, beside the
    chunks' gradients still waiting (torchtune trains in bf16 or fp32: the head's weight, and its
    gradient, are in the compute dtype)."""
    logits16, logits32 = compute * vocab * tokens, 4 * vocab * tokens
    if not head.chunked:
        compiled = head.compiled and not head.head_trains
        kept = logits32  # the log-softmax (eager) or the fp32 logits themselves (compiled)
        # before the recipes' `del logits`, the shifted fp32 copy stays bound through backward
        # and the step, and the previous micro-batch's during the model's forward
        # (`HeadSpec.outputs_kept`, `previous_logits`)
        alive = logits32 if head.outputs_kept else 0
        previous = alive if head.previous_logits else 0
        forward = logits16 + logits32 if compiled else max(previous + logits16 + logits32,
                                                           logits32 + kept)
        backward = alive + kept + (1 if compiled else 2) * logits32
        return LossMemory(saved_bytes=saved, logits_alive_bytes=alive,
                          forward_peak_bytes=forward, backward_peak_bytes=backward)
    chunk32 = ceil_div(logits32, TORCHTUNE_OUTPUT_CHUNKS)
    chunk16 = ceil_div(logits16, TORCHTUNE_OUTPUT_CHUNKS)
    if head.compiled:
        forward = logits16
        losses = logits16 + chunk16
    else:
        forward = logits16 + logits32 + chunk32
        losses = logits32 + 2 * chunk32 + chunk16
    head_gradient = compute * vocab * hidden if head.head_trains else 0
    heads = (TORCHTUNE_OUTPUT_CHUNKS - 1) * chunk16 + 3 * head_gradient
    return LossMemory(saved_bytes=saved, logits_alive_bytes=0, forward_peak_bytes=forward,
                      backward_peak_bytes=max(losses, heads))


def _final_softcap_bytes(arch: Architecture, compute_bytes: int) -> int:
    """Per token: the final soft-cap `tanh(logits / cap) * cap` saves its tanh output in the
    logits' 16-bit dtype until the loss's backward reaches it (litgpt litgpt/model.py
    `do_softcapping` on each head chunk; transformers modeling_gemma2.py
    `Gemma2ForCausalLM.forward`); the division and the product by a constant save nothing."""
    if arch.final_logit_softcapping is None:
        return 0
    return compute_bytes * arch.vocab_size


def _final_norm_bytes(arch: Architecture, block: BlockSpec, head: HeadSpec) -> int:
    ledger = _Ledger()
    spec = BlockSpec(block.framework, block.residual_bytes, block.compute_bytes, block.autocast,
                     weights_train=head.head_trains, base_keeps_input=False,
                     lora_targets=frozenset(), lora_rank=0, lora_dropout=False,
                     attention=block.attention)
    if arch.final_norm:
        _norm(ledger, arch, spec, _Tensor("x_last", block.residual_bytes), name="final_norm",
              needs_grad=head.norm_input_needs_grad)
    return total_per_token(ledger.items())
