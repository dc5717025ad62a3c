"""Text fields to a typed `FitSetup`: one validation for the CLI, the JSON API and the page.

Every field is the text a user typed (CLI option, query parameter, form value), with the names and
values of the measured-case format; an empty or missing field means its default. Bad values raise
a `VramplanError` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.bounds import NumberField
from vramplan.distributed.per_gpu import default_parallelism
from vramplan.distributed.sharding import (
    EXPERT_PARALLEL,
    GPUS,
    GPUS_PER_NODE,
    PIPELINE_PARALLEL,
    TENSOR_PARALLEL,
)
from vramplan.model.architecture import Architecture
from vramplan.model.lora_targets import LORA_RANK, parse_lora_targets
from vramplan.planner.setup import FitSetup
from vramplan.training.setup import BATCH, SEQ_LEN, TrainingSetup, check_setup
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    Loss,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
    choice,
)

GRAD_ACCUM = NumberField("grad_accum", minimum=1, maximum=1_000_000, minimum_inclusive=True)


@dataclass(frozen=True, slots=True)
class FitFields:
    """The text of every field (None or empty: the default)."""

    gpus: str | None = None
    gpus_per_node: str | None = None
    sharding: str | None = None
    """Default: `none` on one GPU, `ddp` on more."""
    offload: str | None = None
    method: str | None = None
    precision: str | None = None
    optimizer: str | None = None
    optimizer_impl: str | None = None
    quant: str | None = None
    lora_r: str | None = None
    lora_targets: str | None = None
    batch: str | None = None
    seq_len: str | None = None
    checkpointing: str | None = None
    attention: str | None = None
    loss: str | None = None
    framework: str | None = None
    metric: str | None = None
    """Default `device`: reserved memory plus the CUDA context, what the card must hold."""
    grad_accum: str | None = None
    """Default: 1, except litgpt, whose recipes always accumulate."""
    tensor_parallel: str | None = None
    """Megatron-LM tensor parallelism (default 1); `gpus` must be a multiple of tp x pp."""
    pipeline_parallel: str | None = None
    """Megatron-LM pipeline stages (default 1)."""
    expert_parallel: str | None = None
    """Expert parallelism of a mixture of experts (default 1): a divisor of the data-parallel
    GPUs."""


def _given(text: str | None) -> str | None:
    return text if text is not None and text.strip() else None


def _int(field: NumberField, text: str | None, default: int) -> int:
    given = _given(text)
    return field.parse_int(given) if given is not None else default


def fit_setup(arch: Architecture, model: str, fields: FitFields) -> FitSetup:
    """The typed setup named by `fields` for `arch` (called `model` in reports)."""
    method = choice(Method, "method", fields.method, Method.FULL)
    framework = choice(Framework, "framework", fields.framework, Framework.HF)
    accumulation = (_int(GRAD_ACCUM, fields.grad_accum, 1) > 1
                    if _given(fields.grad_accum) is not None else framework is Framework.LITGPT)
    uses_lora = method.uses_lora
    targets = _given(fields.lora_targets)
    rank = _given(fields.lora_r)
    loss = _given(fields.loss)
    impl = _given(fields.optimizer_impl)
    training = check_setup(TrainingSetup(
        method=method,
        precision=choice(Precision, "precision", fields.precision, Precision.BF16_TRUE),
        optimizer=choice(Optimizer, "optimizer", fields.optimizer, Optimizer.ADAMW),
        optimizer_impl=choice(OptimizerImpl, "optimizer_impl", impl, OptimizerImpl.FOREACH)
        if impl is not None else None,
        quant=choice(Quant, "quant", fields.quant, Quant.NONE),
        lora_rank=LORA_RANK.parse_int(rank) if rank is not None else None,
        lora_targets=parse_lora_targets(targets) if targets is not None and uses_lora
        else frozenset(),
        batch=_int(BATCH, fields.batch, 1),
        seq_len=_int(SEQ_LEN, fields.seq_len, 2048),
        checkpointing=choice(Checkpointing, "checkpointing", fields.checkpointing,
                             Checkpointing.NONE),
        attention=choice(Attention, "attention", fields.attention, Attention.SDPA),
        loss=choice(Loss, "loss", loss, Loss.STANDARD) if loss is not None else None,
        framework=framework,
        metric=choice(Metric, "metric", fields.metric, Metric.DEVICE),
        gradient_accumulation=accumulation,
    ))
    gpus = _int(GPUS, fields.gpus, 1)
    model_parallel = (_int(TENSOR_PARALLEL, fields.tensor_parallel, 1)
                      * _int(PIPELINE_PARALLEL, fields.pipeline_parallel, 1))
    default_scheme = Scheme.NONE if gpus == model_parallel else Scheme.DDP
    scheme = choice(Scheme, "sharding", fields.sharding, default_scheme)
    plan = default_parallelism(training, scheme, gpus,
                               choice(Offload, "offload", fields.offload, Offload.NONE),
                               _int(GPUS_PER_NODE, fields.gpus_per_node, 8),
                               tensor_parallel=_int(TENSOR_PARALLEL, fields.tensor_parallel, 1),
                               pipeline_parallel=_int(PIPELINE_PARALLEL,
                                                      fields.pipeline_parallel, 1),
                               expert_parallel=_int(EXPERT_PARALLEL, fields.expert_parallel, 1))
    return FitSetup(arch=arch, training=training, parallelism=plan, model=model)
