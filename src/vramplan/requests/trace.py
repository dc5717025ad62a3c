"""The trace request: a model (its config.json keys) and the training step to trace."""

from __future__ import annotations

from vramplan.requests.models import model_choice
from vramplan.requests.reading import Inputs
from vramplan.requests.training import training_setup
from vramplan.requests.vocabulary import (
    ATTENTION,
    BATCH,
    CHECKPOINTING,
    DEVICE,
    LORA_R,
    LORA_TARGETS,
    METHOD,
    OPTIMIZER,
    OPTIMIZER_IMPL,
    PRECISION,
    QUANT,
    SEQ_LEN,
    TRAIN_LAYERS,
)
from vramplan.trace.setup import TraceSetup, make_setup


def trace_setup(inputs: Inputs) -> TraceSetup:
    """The setup a trace runs; the fields are checked as `vramplan fit` checks them (the same
    defaults: QLoRA's nf4, LoRA's rank 8 on q and v), then as a trace can run them."""
    training_setup(inputs)  # the same checks and messages as fit
    model = model_choice(inputs)
    if model.preset is not None:
        config = dict(model.preset.config)
    else:
        from vramplan.model.hf_config import read_config_file  # reads the file again

        config = read_config_file(model.text)
    method = inputs.require(METHOD)
    return make_setup(
        model.name, config, method=method, precision=inputs.require(PRECISION),
        optimizer=inputs.require(OPTIMIZER), optimizer_impl=inputs.get(OPTIMIZER_IMPL),
        quant=inputs.get(QUANT),
        lora_r=inputs.require(LORA_R) if method.uses_lora else None,
        lora_targets=(tuple(t.value for t in inputs.require(LORA_TARGETS))
                      if method.uses_lora else None),
        train_layers=inputs.require(TRAIN_LAYERS), batch=inputs.require(BATCH),
        seq_len=inputs.require(SEQ_LEN), checkpointing=inputs.require(CHECKPOINTING),
        attention=inputs.require(ATTENTION), device=inputs.require(DEVICE))
