"""The training request: a model, a training setup, how it spreads over GPUs, and for `fit` the
GPU type and the safety margin.

Defaults that depend on other fields are decided here, from what the user gave:
- `quant`: nf4 under QLoRA (the case format's empty cell), none otherwise;
- `gpus`: tensor_parallel x pipeline_parallel;
- `sharding`: none without data parallelism, the framework's with it; zero2 when the optimizer
  is offloaded (DeepSpeed's ZeRO-Offload), when the parameters are too the framework's FSDP
  where FSDP is its scheme, else zero3 (`vramplan.distributed.defaults.default_scheme`, which
  case rows read too);
- `grad_accum`: 1, except litgpt, whose recipes always accumulate.
A clash between fields names only the fields the user gave; a clash with a default says which
field to give.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from vramplan.distributed.defaults import default_checkpointing, default_parallelism, default_scheme
from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.sharding import check_parallelism
from vramplan.errors import VramplanError
from vramplan.model.architecture import Architecture
from vramplan.model.lora_targets import expand_targets
from vramplan.planner.setup import FitSetup
from vramplan.planner.verdict import usable_share_from_percent
from vramplan.presets.dynamic_quants import skip_modules_loaded
from vramplan.presets.frameworks.defaults import default_gradient_accumulation, framework_defaults
from vramplan.presets.gpus import Gpu, find_gpu
from vramplan.requests.fields import Field
from vramplan.requests.models import ModelChoice, model_choice, tokens_for
from vramplan.requests.reading import Inputs, check_tokens
from vramplan.requests.vocabulary import (
    ATTENTION,
    BATCH,
    BETA,
    CHECKPOINTING,
    COMPILE,
    COMPLETION_LEN,
    EMPTY_CACHE,
    EXPERT_PARALLEL,
    FRAMEWORK,
    GENERATION,
    GPU,
    GPUS,
    GPUS_PER_NODE,
    GRAD_ACCUM,
    LOSS,
    MARGIN,
    METHOD,
    METRIC,
    OFFLOAD,
    OPTIMIZER,
    OPTIMIZER_IMPL,
    PIPELINE_PARALLEL,
    POLICY,
    PRECISION,
    PRECOMPUTE_REF,
    QUANT,
    SEQ_LEN,
    SHARDING,
    TENSOR_PARALLEL,
    TILED_MLP,
    TRAIN_LAYERS,
    TRAINING_LORA_R,
    TRAINING_LORA_TARGETS,
    VALUE_ADAPTERS,
    VLLM_SHARE,
    VLLM_SLEEP,
)
from vramplan.training.setup import AlignmentSetup, TrainingSetup, check_setup, with_gpu_memory
from vramplan.vocab import (
    Checkpointing,
    Framework,
    Generation,
    LoraTarget,
    Method,
    Precision,
    Quant,
    Scheme,
)


class NeedsMethod(VramplanError):
    """A field that applies to other methods only (`--quant` without QLoRA, `--lora-r` without
    LoRA, `--train-layers` without freeze)."""

    key = "error.needs_method"


class NeedsGeneration(VramplanError):
    """A setting of the colocated vLLM engine without `generation vllm-colocate`."""

    key = "error.needs_generation"


class NotTrl(VramplanError):
    """A preference or RL method with a framework that does not run TRL's trainers."""

    key = "error.not_trl"


class SplitsHeads(VramplanError):
    """A tensor-parallel size that does not divide the attention heads."""

    key = "error.tp_heads"


class TooManyStages(VramplanError):
    """More pipeline stages than layers."""

    key = "error.pp_layers"


@dataclass(frozen=True, slots=True)
class FitRequest:
    """What `vramplan fit` answers: a setup on a GPU type, with a safety margin."""

    setup: FitSetup
    gpu: Gpu
    usable_share: float


TRL_FRAMEWORKS = frozenset({Framework.HF, Framework.ACCELERATE, Framework.DEEPSPEED,
                            Framework.GENERIC, Framework.AXOLOTL, Framework.LLAMAFACTORY,
                            Framework.UNSLOTH})
"""Stacks whose preference and RL training is TRL's trainers on transformers' models (axolotl,
LLaMA-Factory and Unsloth call TRL's; DeepSpeed and accelerate run under them)."""


def training_setup(inputs: Inputs, scheme: Scheme = Scheme.NONE) -> TrainingSetup:
    """The single-GPU part of the run, checked. What the request leaves out is the framework's
    default (`vramplan.presets.frameworks`): its 4-bit storage under QLoRA, whether it accumulates
    gradients, its activation checkpointing under `scheme`. A preference or RL method trains its
    policy as `policy` says, in TRL's default precision: weights loaded in fp32
    (`create_model_from_path`, trl/trainer/utils.py @f2cd5771) under bf16 autocast, `amp`."""
    asked = inputs.require(METHOD)
    framework = inputs.require(FRAMEWORK)
    alignment = _alignment(inputs, asked, framework)
    method = inputs.require(POLICY) if alignment is not None else asked
    chooser = POLICY if alignment is not None else METHOD  # the field that says how weights train
    defaults = framework_defaults(framework)
    only_for(inputs, QUANT, method is Method.QLORA, Method.QLORA, chooser=chooser)
    only_for(inputs, TRAINING_LORA_R, method.uses_lora, Method.LORA, Method.QLORA,
              chooser=chooser)
    only_for(inputs, TRAINING_LORA_TARGETS, method.uses_lora, Method.LORA, Method.QLORA,
              chooser=chooser)
    only_for(inputs, TRAIN_LAYERS, method is Method.FREEZE, Method.FREEZE, chooser=chooser)
    quant = inputs.get(QUANT) or (defaults.qlora_quant if method is Method.QLORA else Quant.NONE)
    if method is Method.QLORA and quant is Quant.NONE:
        raise NeedsMethod(QUANT.name, quant.value, other=chooser.name, methods=Method.LORA.value)
    check_tokens(inputs, BATCH, SEQ_LEN)
    steps = inputs.get(GRAD_ACCUM)
    # LoRA's rank and modules: as given, else the framework's (`vramplan.training.setup.
    # lora_rank_of`, `lora_targets_of`)
    targets: tuple[LoraTarget, ...] = inputs.get(TRAINING_LORA_TARGETS) or ()
    precision = inputs.get(PRECISION) or (Precision.AMP if alignment is not None
                                           else defaults.precision)
    if alignment is not None and steps is not None and steps > 1:
        alignment = replace(alignment, generation_batch=inputs.require(BATCH) * steps)
    return check_setup(TrainingSetup(
        method=method,
        precision=precision,
        optimizer=inputs.require(OPTIMIZER),
        optimizer_impl=inputs.get(OPTIMIZER_IMPL),
        quant=quant,
        lora_rank=inputs.get(TRAINING_LORA_R) if method.uses_lora else None,
        lora_targets=expand_targets(targets) if method.uses_lora else frozenset(),
        train_layers=inputs.get(TRAIN_LAYERS) or defaults.freeze_layers,
        batch=inputs.require(BATCH),
        seq_len=inputs.require(SEQ_LEN),
        checkpointing=inputs.get(CHECKPOINTING) or _default_checkpointing(alignment,
                                                                          framework, scheme),
        attention=inputs.require(ATTENTION),
        loss=inputs.get(LOSS),
        framework=framework,
        metric=inputs.require(METRIC),
        gradient_accumulation=(steps > 1 if steps is not None
                               else default_gradient_accumulation(framework, method)),
        compiled=inputs.require(COMPILE),
        empty_cache_between_steps=inputs.require(EMPTY_CACHE),
        tiled_mlp=inputs.require(TILED_MLP),
        alignment=alignment,
    ))


_ONLINE = (Method.GRPO, Method.PPO)


def _default_checkpointing(alignment: AlignmentSetup | None, framework: Framework,
                           scheme: Scheme) -> Checkpointing:
    """TRL's trainers checkpoint every layer by default (`gradient_checkpointing=True`,
    trl/trainer/base_config.py @f2cd5771), except PPO, whose trainer never enables it
    (trl/experimental/ppo/ppo_trainer.py)."""
    if alignment is None:
        return default_checkpointing(framework, scheme)
    return Checkpointing.NONE if alignment.method is Method.PPO else Checkpointing.FULL


def _alignment(inputs: Inputs, method: Method, framework: Framework) -> AlignmentSetup | None:
    """The preference or RL method's settings, each accepted only by the methods it concerns;
    the colocated engine's share only with `generation vllm-colocate`. Its GPU memory is set
    by `fit_request`, which knows the GPU."""
    only_for(inputs, POLICY, method.is_alignment, *(m for m in Method if m.is_alignment))
    only_for(inputs, PRECOMPUTE_REF, method in (Method.DPO, Method.KTO), Method.DPO,
              Method.KTO)
    only_for(inputs, BETA, method is Method.GRPO, Method.GRPO)
    only_for(inputs, VALUE_ADAPTERS, method is Method.PPO, Method.PPO)
    online: tuple[Field[Any], ...] = (COMPLETION_LEN, GENERATION)
    for field in online:
        only_for(inputs, field, method in _ONLINE, *_ONLINE)
    colocated = inputs.require(GENERATION) is Generation.VLLM_COLOCATE
    engine: tuple[Field[Any], ...] = (VLLM_SHARE, VLLM_SLEEP)
    for field in engine:
        if inputs.given(field) and not colocated:
            raise NeedsGeneration(field.name, str(inputs.get(field)), other=GENERATION.name,
                                  generation=Generation.VLLM_COLOCATE.value)
    if not method.is_alignment:
        return None
    if framework not in TRL_FRAMEWORKS:
        raise NotTrl(METHOD.name, method.value, other=FRAMEWORK.name,
                     frameworks=", ".join(sorted(f.value for f in TRL_FRAMEWORKS)))
    return AlignmentSetup(
        method=method,
        precompute_ref=inputs.require(PRECOMPUTE_REF),
        beta=inputs.require(BETA),
        completion_len=inputs.get(COMPLETION_LEN),
        generation=inputs.require(GENERATION),
        vllm_share=inputs.require(VLLM_SHARE),
        vllm_sleep=inputs.require(VLLM_SLEEP),
        value_adapters=inputs.require(VALUE_ADAPTERS),
    )


def only_for(inputs: Inputs, field: Field[Any], applies: bool, *methods: Method,
              chooser: Field[Any] = METHOD) -> None:
    """`field` given where it does not apply: an error naming the `chooser` values it needs."""
    if inputs.given(field) and not applies:
        value = inputs.get(field)
        shown = (",".join(str(v) for v in value) if isinstance(value, tuple)
                 else str(value).lower() if isinstance(value, bool) else str(value))
        raise NeedsMethod(field.name, shown, other=chooser.name,
                          methods=", ".join(m.value for m in methods))


def scheme_of(inputs: Inputs) -> Scheme:
    """The sharding asked for, or the default (`vramplan.distributed.defaults.default_scheme`:
    the scheme an offload needs, none without data parallelism, else the framework's own)."""
    scheme: Scheme | None = inputs.get(SHARDING)
    if scheme is not None:
        return scheme
    model_parallel = inputs.require(TENSOR_PARALLEL) * inputs.require(PIPELINE_PARALLEL)
    data_parallel = (inputs.get(GPUS) or model_parallel) // model_parallel
    return default_scheme(inputs.require(FRAMEWORK), max(data_parallel, 1),
                          inputs.require(OFFLOAD))


def parallelism(inputs: Inputs, training: TrainingSetup, scheme: Scheme,
                arch: Architecture | None = None) -> Parallelism:
    """How the run spreads over GPUs; with `arch`, tensor and pipeline parallelism are checked
    against the model's heads and layers."""
    tp, pp = inputs.require(TENSOR_PARALLEL), inputs.require(PIPELINE_PARALLEL)
    if arch is not None:
        _check_model_parallel(inputs, arch, tp, pp)
    plan = default_parallelism(training, scheme, inputs.get(GPUS) or tp * pp,
                               inputs.require(OFFLOAD), inputs.require(GPUS_PER_NODE),
                               tensor_parallel=tp, pipeline_parallel=pp,
                               expert_parallel=inputs.require(EXPERT_PARALLEL))
    return check_parallelism(plan)


def _check_model_parallel(inputs: Inputs, arch: Architecture, tp: int, pp: int) -> None:
    """Megatron-LM splits attention heads over tensor-parallel ranks (`num_attention_heads` must
    be divisible by the tensor-parallel size, megatron/core/transformer/transformer_config.py) and
    gives every pipeline stage at least one layer."""
    if arch.n_heads % tp:
        raise SplitsHeads(TENSOR_PARALLEL.name, str(tp), heads=arch.n_heads)
    if pp > arch.n_layers:
        raise TooManyStages(PIPELINE_PARALLEL.name, str(pp), layers=arch.n_layers)


def fit_request(inputs: Inputs) -> FitRequest:
    """The setup, the GPU type (required) and the usable share of its memory."""
    model = model_choice(inputs)
    scheme = scheme_of(inputs)
    gpu = find_gpu(inputs.require(GPU))
    training = with_gpu_memory(training_setup(inputs, scheme), gpu)
    seq_len = tokens_for(inputs, SEQ_LEN, model)
    if seq_len != training.seq_len:  # the default, cut to learned positions
        training = check_setup(replace(training, seq_len=seq_len))
    training = replace(training, unquantized_modules=unquantized_modules(model, training))
    setup = fit_setup(model, training, parallelism(inputs, training, scheme, model.arch))
    return FitRequest(setup, gpu, usable_share_from_percent(inputs.require(MARGIN)))


def unquantized_modules(model: ModelChoice, training: TrainingSetup) -> tuple[str, ...]:
    """The block modules a QLoRA run's 4-bit checkpoint keeps in 16 bits: what the model's
    config.json lists (`quantization_config.llm_int8_skip_modules`, a pre-quantized
    checkpoint's), else, for Unsloth, the skip list of the dynamic upload its mapper loads for
    the preset (`vramplan.presets.dynamic_quants.skip_modules_loaded`); none otherwise."""
    if training.method is not Method.QLORA:
        return ()
    quantization = model.config.get("quantization_config")
    listed = quantization.get("llm_int8_skip_modules") if isinstance(quantization, dict) \
        else None
    if isinstance(listed, list) and all(isinstance(name, str) for name in listed):
        return tuple(listed)
    return skip_modules_loaded(model.name, training.framework, training.code_date)


def fit_setup(model: ModelChoice, training: TrainingSetup, plan: Parallelism) -> FitSetup:
    return FitSetup(arch=model.arch, training=training, parallelism=plan, model=model.name)
