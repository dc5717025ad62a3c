"""What a block's saved tensors are recorded against: the block's description (`BlockSpec`), the
ledger of saved tensors and forward moments (`Ledger`), and the small rules every operation of a
block shares (which LoRA targets sit where, autocast, the adapters' compute dtype, dropout).

All sizes are bytes per token (multiply by batch x sequence) unless the name says otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from vramplan.model.architecture import Architecture, MlpKind
from vramplan.vocab import Attention, Framework, LoraTarget

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
    `nn.Linear` modules
    (`vramplan.presets.frameworks.transformers.TransformersCode.moe_expert_linears`), not
    `grouped_mm` over 3-D expert parameters (`moe_layer`)."""
    moe_output_weighted: bool = True
    """The routed experts' outputs are multiplied by their routing weights after the down
    projection, which keeps each routed copy's output for the weights' gradient (transformers'
    `proj_out * sample_weights`; Megatron-LM's `unpermute` with `probs` before
    `vramplan.presets.frameworks.megatron.MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE`). False for
    Megatron-LM since: the probabilities weight the experts' SwiGLU output (its fused kernel saves
    its input and the probabilities) and nothing keeps the down projection's output."""
    experts_merged_per_token: int = 0
    """peft's adapters on transformers 5's fused routed experts (`target_parameters`): each
    forward rebuilds every adapted 3-D parameter as W + scaling·B·A (peft/tuners/lora/layer.py
    `ParamWrapper._activate_lora`: `nn.utils.parametrize` with `_LoraFactorsProxy`'s one
    `baddbmm`, or `_LoraParameterProxy`'s `W + delta`, in the weights' dtype), and `grouped_mm`
    keeps that merged copy for backward: one MoE layer's merged bytes over the step's tokens,
    per token (0 where no expert is adapted that way; `vramplan.training.specs.block_spec`)."""
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
    (its code from February to July 2024, `vramplan.presets.frameworks.litgpt.LitgptCode`)."""
    scores_clamped: bool = False
    """Eager attention keeps its masked scores for `torch.max` (transformers' OPT until
    v4.49.0, Llama until v4.30.0: `vramplan.presets.frameworks.transformers.TransformersCode
    .clamped_scores`)."""
    sdpa_output_saved: bool = True
    """torchtitan's per-op checkpointing keeps SDPA's output and log-sum-exp: False where the
    kernel that runs is not in its save list (`vramplan.presets.frameworks.torchtitan.TorchtitanCode
    .saves_sdpa_output`), so backward recomputes the attention."""
    tensor_parallel: int = 1
    """torchtitan's tensor-parallel degree with its sequence parallelism
    (`vramplan.training.setup.TrainingSetup.tensor_parallel`): per-op checkpointing keeps the
    row-parallel linears' outputs and reduce-scatters (`per_op_selective_saved`)."""
    reduce_scatter_saved: bool = True
    """torchtitan's per-op save list holds `_c10d_functional.reduce_scatter_tensor`
    (`vramplan.presets.frameworks.torchtitan.TorchtitanCode.saves_reduce_scatter`)."""
    autocast_16bit_weights: bool = False
    """The forward runs under the Trainer's 16-bit autocast over 16-bit weights
    (`vramplan.training.setup.autocasts_16bit_weights`): it changes nothing for 16-bit operands
    and is counted only where an adapter reads an fp32 tensor (`linear`)."""
    adapter_input_fp32: bool = False
    """peft copies each adapter's 16-bit input to fp32 for its fp32 adapters
    (`vramplan.training.setup.peft_casts_adapter_input`): under autocast `lora_A` saves its own
    16-bit cast of that copy, without autocast the fp32 copy (or fp32 dropout output) itself and
    an fp32 `lora_A` output."""
    query_joined_after_transpose: bool = False
    """transformers' attention in a family whose query is a `torch.cat` made after the
    transpose (`vramplan.presets.frameworks.transformers.QUERY_JOINED_AFTER_TRANSPOSE`): the
    flash kernels' output follows its layout, and o_proj reads a copy of it. Not under Unsloth,
    whose own attention runs the families it patches."""
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
    tokens (`vramplan.training.specs.mlp_tile_tokens`); None: not tiled. The tiled MLP
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


class Ledger:
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


_UNSLOTH_LORA_TARGETS = frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O,
                                  LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN})
"""The adapters Unsloth's fused LoRA layers take over: q, k and v together (`LoRA_QKV`), o
(`LoRA_W`), gate, up and down together (`LoRA_MLP`) (unslothai/unsloth `FastLlamaModel
.patch_peft_model`, which patches a block's attention or MLP only when all its projections carry
an adapter without dropout or bias)."""


def unsloth_lora_kernels(arch: Architecture, spec: BlockSpec) -> bool:
    """A LoRA block that Unsloth runs through its own autograd functions: adapters on every
    linear of a dense gated block (the notebooks' q, k, v, o, gate, up, down), no adapter
    dropout, frozen base weights, a standard attention (no latent attention, no soft-capping,
    which take other paths)."""
    return (spec.framework is Framework.UNSLOTH and not spec.weights_train
            and spec.lora_targets >= _UNSLOTH_LORA_TARGETS and not spec.lora_dropout
            and arch.mlp is MlpKind.GATED and not arch.is_moe and arch.latent_attention is None
            and not softcapped(arch) and not arch.parallel_block and not arch.sandwich_norms)


@dataclass(frozen=True, slots=True)
class Activation:
    """A named activation and its bytes per element."""

    name: str
    itemsize: int


QKV_TARGETS = frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V})
ATTENTION_TARGETS = QKV_TARGETS | {LoraTarget.O}
GATE_UP_TARGETS = frozenset({LoraTarget.GATE, LoraTarget.UP})
MLP_TARGETS = GATE_UP_TARGETS | {LoraTarget.DOWN}


def softcapped(arch: Architecture) -> bool:
    return arch.attn_logit_softcapping is not None


def dropout_active(spec: BlockSpec, rate: float) -> bool:
    return spec.model_dropout and rate > 0


def dropout_mask(ledger: Ledger, spec: BlockSpec, name: str, rate: float, width: int) -> None:
    """A dropout on a tensor that needs a gradient (`width` elements per token): its bool mask
    (derivatives.yaml, `native_dropout`: saves `result1`). Only called where the tensor needs
    one: dropout's output requires a gradient exactly when its input does."""
    if dropout_active(spec, rate):
        ledger.keep(name, DROPOUT_MASK_BYTES * width)


def autocasts(spec: BlockSpec) -> bool:
    """The forward runs under autocast: `amp`'s, or the Trainer's over 16-bit weights."""
    return spec.autocast or spec.autocast_16bit_weights


def adapter_compute_bytes(spec: BlockSpec) -> int:
    """Bytes per element of what LoRA's adapters compute (lora_A's and lora_B's outputs): fp32
    for fp32 adapters without autocast (`BlockSpec.adapter_input_fp32`), else the compute
    dtype, autocast's 16 bits included."""
    return FP32 if spec.adapter_input_fp32 and not autocasts(spec) else spec.compute_bytes


def total_per_token(items: tuple[Saved, ...]) -> int:
    return sum(item.bytes_per_token for item in items)
