"""The trace request: a model (its config.json keys) and the training step to trace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramplan.requests.fields import Field
from vramplan.requests.models import model_choice, tokens_for
from vramplan.requests.reading import Inputs
from vramplan.requests.training import only_for, training_setup
from vramplan.requests.vocabulary import (
    ADAPTERS_FP32,
    ALLOC_CONF,
    ATTENTION,
    BATCH,
    BETA,
    CHECKPOINTING,
    COMPLETION_LEN,
    DEVICE,
    FSDP_VERSION,
    GPUS,
    METHOD,
    OPTIMIZER,
    OPTIMIZER_IMPL,
    PEFT_WRAP,
    POLICY,
    PRECOMPUTE_REF,
    QUANT,
    SEQ_LEN,
    SHARDING,
    TILED_MLP,
    TRAINING_LORA_R,
    TRAINING_LORA_TARGETS,
)
from vramplan.tracer.setup import TraceSetup, make_setup
from vramplan.vocab import Checkpointing, Method


def trace_setup(inputs: Inputs, config: Mapping[str, Any] | None = None) -> TraceSetup:
    """The setup a trace runs; the fields are checked as `vramplan fit` checks them (the same
    defaults: QLoRA's nf4, LoRA's rank 8 on q and v), then as a trace can run them. DPO and GRPO
    take fit's defaults for TRL too: fp32 weights under bf16 autocast (`amp`) and every layer
    checkpointed, unless `precision` and `checkpointing` are given. The model is `model` or
    `config`, or `config` given here as a config.json mapping (the Python API)."""
    training = training_setup(inputs)  # the same checks and messages as fit
    if config is None:
        # a sequence past learned positions refused, as fit refuses it (fake tensors index past
        # the table without failing)
        model = model_choice(inputs)
        name, keys, seq_len = model.name, dict(model.config), tokens_for(inputs, SEQ_LEN, model)
    else:
        (name, keys), seq_len = _named(config), inputs.require(SEQ_LEN)
    aligned = training.alignment is not None
    policy = training.method
    # LoRA given or not: a trace has no framework, so the tracer's own (peft's rank 8 on q, v)
    targets = inputs.get(TRAINING_LORA_TARGETS) if policy.uses_lora else None
    return make_setup(
        name, keys, method=inputs.require(METHOD),
        policy=inputs.get(POLICY) if aligned else None,
        precision=training.precision,
        optimizer=inputs.require(OPTIMIZER), optimizer_impl=inputs.get(OPTIMIZER_IMPL),
        quant=inputs.get(QUANT),
        lora_r=inputs.get(TRAINING_LORA_R) if policy.uses_lora else None,
        lora_targets=tuple(target.value for target in targets) if targets else None,
        train_layers=training.train_layers, batch=inputs.require(BATCH),
        seq_len=seq_len,
        checkpointing=(training.checkpointing if aligned
                       else inputs.get(CHECKPOINTING) or Checkpointing.NONE),
        tiled_mlp=inputs.require(TILED_MLP),
        attention=inputs.require(ATTENTION), device=inputs.require(DEVICE),
        gpus=inputs.get(GPUS) or 1, sharding=inputs.get(SHARDING),
        fsdp_version=inputs.require(FSDP_VERSION), peft_wrap=inputs.require(PEFT_WRAP),
        adapters_fp32=_adapters_fp32(inputs, policy, POLICY if aligned else METHOD),
        alloc_conf=inputs.require(ALLOC_CONF),
        precompute_ref=inputs.require(PRECOMPUTE_REF), beta=inputs.require(BETA),
        completion_len=inputs.get(COMPLETION_LEN))


def _adapters_fp32(inputs: Inputs, policy: Method, chooser: Field[Any]) -> bool:
    """Whether LoRA's adapters are fp32; asked of a policy without adapters, the error
    `vramplan fit` gives a LoRA field there (`only_for`, naming `chooser`, method or policy)."""
    only_for(inputs, ADAPTERS_FP32, policy.uses_lora, Method.LORA, Method.QLORA, chooser=chooser)
    return bool(inputs.require(ADAPTERS_FP32))


def _named(config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    return str(config.get("_name_or_path") or config.get("model_type") or "config"), dict(config)
