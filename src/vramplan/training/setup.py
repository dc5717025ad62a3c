"""A training run on one GPU, as typed, validated data: what trains, how, and the framework's
defaults that decide what it keeps in memory."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.bounds import BATCH, LORA_RANK, SEQ_LEN, TRAIN_LAYERS
from vramplan.errors import ConflictingOptions, MissingValue, OutOfRange
from vramplan.presets.frameworks import framework_defaults
from vramplan.training.activations import LITGPT_LORA_DROPOUT
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    LoraTarget,
    Loss,
    Method,
    Metric,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
)


@dataclass(frozen=True, slots=True)
class TrainingSetup:
    """One training run on one GPU. Empty choices (None) mean the framework's default."""

    method: Method = Method.FULL
    precision: Precision = Precision.BF16_TRUE
    optimizer: Optimizer = Optimizer.ADAMW
    optimizer_impl: OptimizerImpl | None = None
    quant: Quant = Quant.NONE
    lora_rank: int | None = None
    lora_targets: frozenset[LoraTarget] = frozenset()
    batch: int = 1
    seq_len: int = 2048
    checkpointing: Checkpointing = Checkpointing.NONE
    attention: Attention = Attention.SDPA
    loss: Loss | None = None
    framework: Framework = Framework.HF
    metric: Metric = Metric.ALLOCATED
    train_layers: int = 1
    """Method `freeze`: how many of the last blocks train."""
    lora_dropout: float | None = None
    """None: the framework's default (litgpt 0.05, peft 0.0)."""
    gradient_accumulation: bool = True
    """Gradients of earlier micro-batches stay during forward and backward (litgpt always
    accumulates: global batch / micro-batch > 1 in every recipe)."""
    steady_state: bool = True
    """The peak step follows a micro-batch of the same shape (batches padded to a length cap),
    so what a loop keeps from the previous step counts. False: the largest batch comes first."""
    compiled: bool = False
    """The model and loss run under torch.compile. Modelled for torchtune's cross-entropy
    (`vramplan.training.activations`); what the compiler saves inside the blocks is not."""
    empty_cache_between_steps: bool = False
    """The loop calls `torch.cuda.empty_cache()` between steps, so the caching allocator keeps
    no free segment from one step to the next (reserved memory is then that of a steady step,
    without the first step's fragmentation)."""
    frozen_weights_need_grad: bool = False
    """The frozen weights of the trained blocks are views of a tensor that requires a gradient
    (FSDP1 flat parameters mixing frozen and trainable parameters): autograd saves what full
    fine-tuning saves and computes every weight's gradient; the optimizer still updates only the
    trainable ones. `vramplan.distributed.per_gpu` sets it for FSDP1."""


DEFAULT_LORA_RANK = 8
"""litgpt `lora_r` and peft `LoraConfig.r` default."""
DEFAULT_LORA_TARGETS = frozenset({LoraTarget.Q, LoraTarget.V})
"""litgpt (lora_query, lora_value) and peft's defaults for Llama-style models."""


def check_setup(setup: TrainingSetup) -> TrainingSetup:
    """`setup` if its fields go together; otherwise an error naming the clash."""
    BATCH.check_int(setup.batch)
    SEQ_LEN.check_int(setup.seq_len)
    TRAIN_LAYERS.check_int(setup.train_layers)
    if setup.method is Method.INFERENCE:
        raise ConflictingOptions("method", "optimizer", setup.method.value)
    if setup.lora_rank is not None:
        LORA_RANK.check_int(setup.lora_rank)
    uses_lora = setup.method.uses_lora
    if not uses_lora and (setup.lora_rank is not None or setup.lora_targets):
        raise ConflictingOptions("lora_r", "method", setup.method.value)
    if setup.method is Method.QLORA and setup.quant is Quant.NONE:
        raise MissingValue("quant")
    if setup.quant is not Quant.NONE and setup.method is not Method.QLORA:
        raise ConflictingOptions("quant", "method", setup.method.value)
    if setup.lora_dropout is not None and not 0 <= setup.lora_dropout < 1:
        raise OutOfRange("lora_dropout", str(setup.lora_dropout))
    return setup


def weight_itemsize(precision: Precision) -> int:
    """Bytes per stored weight: fp32 under `amp` and `fp32`, 16-bit otherwise."""
    return 4 if precision in (Precision.AMP, Precision.FP32) else 2


def compute_itemsize(precision: Precision) -> int:
    """Bytes per element of matmul outputs: fp32 only in `fp32` (autocast computes in 16-bit)."""
    return 4 if precision is Precision.FP32 else 2


def optimizer_state_itemsize(precision: Precision) -> int:
    """torch optimizers keep states like the parameter they update: the fp32 master copy in
    `mixed`, the bf16 weight itself in `bf16-true` (torch.optim.AdamW `zeros_like(p)`)."""
    return 2 if precision is Precision.BF16_TRUE else 4


def lora_dropout_active(setup: TrainingSetup) -> bool:
    if setup.lora_dropout is not None:
        return setup.lora_dropout > 0
    # litgpt default 0.05; peft LoraConfig default 0.0
    return setup.framework is Framework.LITGPT and LITGPT_LORA_DROPOUT > 0


def model_dropout_active(setup: TrainingSetup) -> bool:
    """The model's own dropout layers run at config.json's rates: frameworks that train
    transformers' modules in train mode (`nn.Dropout(config.resid_pdrop)`, ...). litgpt's GPT
    (litgpt/model.py) has no dropout layer besides LoRA's; torchtune, torchtitan and Megatron
    build their own modules, and what model a DeepSpeed engine wraps is not known here
    (`vramplan.presets.frameworks`)."""
    return framework_defaults(setup.framework).model_dropout


def gradients_kept(setup: TrainingSetup) -> bool:
    """Gradients of earlier micro-batches exist when the peak micro-batch starts: with gradient
    accumulation in the steady state. When the largest batch comes first (`steady_state`
    False) it is the first micro-batch of the run, and its gradients are made by its own
    backward."""
    return setup.gradient_accumulation and setup.steady_state


def optimizer_states_exist(setup: TrainingSetup) -> bool:
    """Optimizer states exist before the peak micro-batch runs: not in the run's first
    micro-batch (largest batch first), as optimizers create them at their first step
    (torch/optim/adamw.py `_init_group`: "State initialization" when `len(state) == 0`;
    bitsandbytes `Optimizer8bit.init_state` likewise)."""
    return setup.steady_state
