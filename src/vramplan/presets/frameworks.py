"""What each training stack does when a setting is left to it: data, one entry per framework, each
default with the file it was read in.

The case format's rule is that an empty cell means "the framework's default"; so does an option a
user leaves out. `framework_defaults(framework)` answers for every `vramplan.vocab.Framework`;
`read_framework(text)` reads a name that is not one of them as `generic`, and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from vramplan.vocab import (
    BLOCK_TARGETS,
    PEFT_LORA_RANK,
    PEFT_LORA_TARGETS,
    Attention,
    Checkpointing,
    Framework,
    FsdpVersion,
    LoraTarget,
    Loss,
    Method,
    Metric,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
    member_named,
)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing on the CLI path
if TYPE_CHECKING:
    from vramplan.model.architecture import Architecture


class ModelCode(StrEnum):
    """Whose module code runs the model: it decides what each operation saves for backward."""

    TRANSFORMERS = "transformers"
    """transformers' modeling files (and peft's LoRA layers)."""
    LITGPT = "litgpt"
    """litgpt/model.py and litgpt/lora.py."""
    TORCHTUNE = "torchtune"
    """torchtune.modules: its own attention (k and v expanded under GQA), RMSNorm and LoRALinear."""
    TORCHTITAN = "torchtitan"
    """torchtitan's models (Llama 3: `torchtitan/models/llama3/model/model.py`)."""
    MEGATRON = "megatron"
    """Megatron-LM's modules (modelled as transformers')."""


@dataclass(frozen=True, slots=True)
class FrameworkDefaults:
    """The defaults of one training stack; `source` says where each was read."""

    framework: Framework
    model_code: ModelCode
    scheme: Scheme
    """The data-parallel scheme on several GPUs when none is named."""
    fsdp_version: FsdpVersion
    """Which FSDP a `fsdp` run gets."""
    accumulate_without_sync: bool
    """Gradient accumulation inside FSDP's/DDP's `no_sync()`: unsharded gradients kept whole."""
    accumulates_full: bool
    """Full fine-tuning accumulates gradients over micro-batches by default."""
    accumulates_adapters: bool
    """LoRA/QLoRA recipes accumulate gradients by default."""
    optimizer_impl: OptimizerImpl | None
    """How AdamW steps when the run does not say; None: as transformers' `Trainer` builds it for
    the `optim` that `TrainingArguments` defaulted to at the run's date
    (`trainer_optimizer_impl`, read through `default_optimizer_impl`)."""
    qlora_quant: Quant
    """The 4-bit storage of a QLoRA run that names none."""
    checkpointing: Checkpointing
    """Activation checkpointing of a run that names none (on one GPU)."""
    loss: Loss
    """The loss of a run that names none."""
    peft_fsdp_wrap: bool
    """Under FSDP1, peft's `fsdp_auto_wrap_policy` wraps every trainable LoRA layer in its own
    unit, so the blocks' flat parameters hold frozen weights only."""
    model_dropout: bool
    """The model's own dropout layers run at config.json's rates in training."""
    source: str
    fsdp2_embedding_apart: bool = False
    """FSDP2 wraps the input embedding as a unit of its own and keeps only the head gathered
    between forward and backward (`vramplan.distributed.sharding.Parallelism.embedding_apart`;
    torchtitan's as dated by `TorchtitanCode.embedding_apart`: `embedding_apart`)."""
    freeze_layers: int = 1
    """Method `freeze`: how many of the last blocks train when the run does not say (the last
    one for stacks without a freeze method of their own)."""
    float_quant_storage: bool = False
    """QLoRA's 4-bit base is stored in the compute dtype (bitsandbytes `bnb_4bit_quant_storage`)
    rather than bitsandbytes' default uint8 (`vramplan.training.setup.adapters_in_fp32`)."""
    accelerate_no_sync: bool = False
    """The stack accumulates gradients in accelerate's `Accelerator.no_sync` (the transformers
    Trainer and its wrappers): under FSDP2 that is a no-op before accelerate 1.11
    (`accumulate_without_sync`)."""
    autocasts: bool = True
    """An `amp` run computes under `torch.autocast`. torchtitan has no autocast: FSDP2's
    `MixedPrecisionPolicy(param_dtype=bfloat16)` gathers bf16 copies of its fp32 parameters and
    the model computes in them (train.py had no autocast until torchtitan/distributed/utils.py
    `maybe_enable_amp`, 0b44d4c43, 2025-06-16, which returns a null context under FSDP: "FSDP
    handles mixed precision internally")."""
    accelerate_autocast: bool = False
    """The loop runs the model under accelerate's autocast whenever the run trains in 16 bits:
    the Trainer's `bf16=True` (or `fp16=True`) hands accelerate `mixed_precision`, whose
    `Accelerator.__init__` sets `native_amp` for it unless the run is on DeepSpeed or
    Megatron-LM, and `prepare_model` then wraps `model.forward` in `torch.autocast`
    (huggingface/accelerate src/accelerate/accelerator.py; the Trainer's stacks and a loop of
    one's own under accelerate). Read by `vramplan.training.setup.autocasts_16bit_weights`."""
    fsdp_casts_params: bool = False
    """Under FSDP, an `amp` run's fp32 parameters are gathered as copies in the 16-bit compute
    dtype: the stack sets FSDP's mixed-precision `param_dtype` to it
    (`vramplan.training.setup.TrainingSetup.params_cast_for_compute`). accelerate's
    `AcceleratorState` calls `fsdp_plugin.set_mixed_precision(mixed_precision)` under FSDP,
    which builds `MixedPrecision(param_dtype=dtype, reduce_dtype=dtype, buffer_dtype=dtype)`
    (accelerate/state.py, utils/dataclasses.py `FullyShardedDataParallelPlugin`); Lightning
    Fabric's `bf16-mixed` keeps `param_dtype=torch.float32` and lets autocast cast
    (lightning/fabric/plugins/precision/fsdp.py `mixed_precision_config`)."""
    main_grad_buffer: bool = False
    """Every trainable parameter's gradient lives in one contiguous buffer allocated when the
    model is wrapped and never freed (zeroed between steps), in fp32 under `mixed` precision
    (the gradients accumulate and are all-reduced in fp32), reduced in place: its buckets are
    views of it, not copies. A distributed optimizer (`zero1`) shards only the fp32 master
    weights and the optimizer states. Megatron-LM: megatron/core/distributed/
    param_and_grad_buffer.py (`self.grad_data = torch.zeros(self.numel, dtype=
    self.grad_dtype, ...)`), megatron/training/arguments.py (`--bf16` sets
    `accumulate_allreduce_grads_in_fp32 = True` unless `--grad-reduce-in-bf16`);
    docs/user-guide/features/dist_optimizer.md: bf16 parameters with fp32 gradients hold 18
    bytes per parameter, 6 + 12/d with the distributed optimizer (NVIDIA/Megatron-LM
    @d98e8a64)."""
    lora_rank: int = PEFT_LORA_RANK
    """LoRA's rank when the run names none (peft's and litgpt's by default)."""
    lora_targets: frozenset[LoraTarget] = frozenset(PEFT_LORA_TARGETS)
    """The adapted linears when the run names none (peft's and litgpt's q and v by default)."""
    reentrant_checkpointing: bool | None = None
    """Full checkpointing runs `torch.utils.checkpoint` with `use_reentrant=True` whatever the
    model code's default; None: as transformers' `gradient_checkpointing_enable` does as of
    the run's date (`TransformersCode.reentrant_checkpointing`)."""
    loop_keeps_outputs: bool = False
    """The training loop binds the model's outputs to a variable and keeps it through backward
    and the optimizer step (`outputs = model(**batch); loss = outputs.loss;
    accelerator.backward(loss)`: the loop of the Hugging Face course, chapter 3 "A full
    training", and of transformers' `examples/pytorch/*_no_trainer.py`; DeepSpeed-Chat's
    training/step1_supervised_finetuning/main.py, deepspeedai/DeepSpeedExamples @45b4b715:
    `outputs = model(**batch, use_cache=False); loss = outputs.loss; model.backward(loss);
    model.step()`): the logits stay alive until the next forward returns and rebinds the
    variable. The transformers Trainer keeps only the loss (`training_step`)."""
    precision: Precision = Precision.BF16_TRUE
    """The precision of a run that names none: bf16 weights, gradients and optimizer states
    (transformers' `torch_dtype=bfloat16` under the Trainer, litgpt's `bf16-true`, torchtune's
    `dtype: bf16`), except the stacks whose 16-bit training always keeps fp32 master weights
    (`mixed`): Megatron-LM (megatron/core/optimizer/__init__.py @d98e8a64: bf16 or fp16 runs get
    `Float16OptimizerWithFloat16Params` or the distributed optimizer, both with fp32 main
    params), DeepSpeed (ZeRO's fp32 partitions, deepspeed/runtime/zero/stage_1_and_2.py and
    stage3.py; fp16 without ZeRO: `FP16_Optimizer`'s fp32 master; bf16 without ZeRO steps on
    the bf16 weights unless `grad_accum_dtype` is fp32, engine.py @edaa7221
    `_do_optimizer_sanity_check`, `DDP_BFLOAT16`: a row of that kind names its precision) and
    torchtitan (fp32 parameters sharded by FSDP2, bf16 `param_dtype` for compute)."""
    kbit_upcast_at_load: bool = False
    """A QLoRA run on unsharded weights goes through peft's `prepare_model_for_kbit_training`,
    which casts every 16-bit parameter that bitsandbytes left unquantized (embeddings, norms,
    the head) to fp32, then casts the embeddings and the head back to 16-bit once the adapters
    exist (TRL's `peft_module_casting_to_bf16` until 2025-12, axolotl's
    `_convert_embedding_modules_dtype`): the copies stay in the allocator's cache
    (`vramplan.training.allocations.load._upcast_and_back`)."""
    reported_metric: Metric = Metric.ALLOCATED
    """The peak the stack prints by itself, what a published figure of it is when the figure
    does not say (a case row whose `metric` cell is empty: the format reads an empty cell as
    the framework's default). `allocated` where the stack prints `max_memory_allocated` first or
    prints nothing of its own (litgpt's `Memory used`, DeepSpeed's `see_memory_usage` MA/Max_MA,
    Megatron-LM's `report_memory`, the transformers Trainer's memory metrics); `reserved` where
    it prints only `max_memory_reserved`: torchtitan's `memory:` log line
    (torchtitan/components/metrics.py `DeviceMemoryMonitor.get_peak_stats`,
    `max_reserved_gib`) and Unsloth's notebooks (`used_memory = round(torch.cuda.
    max_memory_reserved() / 1024 / 1024 / 1024, 3)`, unslothai/notebooks)."""


_TRANSFORMERS_SOURCE = (
    "transformers training_args.py: gradient_accumulation_steps default 1; accelerate "
    "utils/dataclasses.py FullyShardedDataParallelPlugin: FSDP_VERSION default '1', "
    "Accelerator.accumulate -> no_sync; transformers integrations/fsdp.py update_fsdp_plugin_peft "
    "installs peft.utils.other.fsdp_auto_wrap_policy; transformers utils/quantization_config.py "
    "BitsAndBytesConfig: bnb_4bit_quant_type='fp4', bnb_4bit_use_double_quant=False; "
    "training_args.py default_optim (see trainer_optimizer_impl); torch.optim.AdamW: foreach on "
    "CUDA (torch/optim/optimizer.py _default_to_fused_or_foreach)")

HF_TRAINER_TORCH_ADAMW_SINCE = date(2023, 8, 21)
"""transformers v4.32.0 (its wheel's date; huggingface/transformers #25109): `TrainingArguments.
optim` defaults to "adamw_torch", torch.optim.AdamW (`foreach` on CUDA since PyTorch 2.0), instead
of "adamw_hf", transformers.optimization.AdamW, which loops over the parameters (`denom =
exp_avg_sq.sqrt().add_(eps)`, one parameter's temporary at a time). Read in the v4.31.0 and
v4.32.0 wheels (training_args.py `default_optim`, optimization.py `AdamW.step`)."""
HF_TRAINER_FUSED_ADAMW_SINCE = date(2025, 8, 6)
"""transformers v4.54.0 (2025-07-25; #37358) defaults `optim` to "adamw_torch_fused" when
PyTorch is 2.8 or newer (training_args.py `default_optim`, read in the v4.53.3 and v4.54.0
wheels: v4.53.3 still "adamw_torch"); PyTorch 2.8.0 was released on 2025-08-06, so a run from
that date on can have both."""

AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE = date(2026, 5, 28)
"""axolotl's tiled MLP (`tiled_mlp: true`, src/axolotl/monkeypatch/tiled_mlp/patch.py) splits
each sequence into `ceil(seqlen / hidden)` shards from its introduction (f7ea14083, 2025-07-25)
and into `ceil(seqlen / 32768)` since 9a79b6801 (2026-05-28, "Target ~32K tokens per shard",
`AXOLOTL_TILED_MLP_SHARD_TOKENS`); `tiled_mlp_num_shards` overrides both."""
AXOLOTL_TILED_MLP_SHARD_TOKENS = 32768


def has_change(on: date | None, since: date) -> bool:
    """A run of the code of `on` (None: today's code) has the change dated `since`."""
    return on is None or on >= since


def during(on: date | None, window: tuple[date, date]) -> bool:
    """A run of the code of `on` has the behaviour of `window` (from its first date, until its
    second); None: today's code, after every window that has ended."""
    start, end = window
    return on is not None and start <= on < end


def trainer_optimizer_impl(on: date | None) -> OptimizerImpl:
    """How the AdamW that transformers' `Trainer` builds by default steps, as of `on` (None:
    today): a loop over the parameters, then `foreach`, then the fused kernel."""
    if on is None or on >= HF_TRAINER_FUSED_ADAMW_SINCE:
        return OptimizerImpl.FUSED
    if on >= HF_TRAINER_TORCH_ADAMW_SINCE:
        return OptimizerImpl.FOREACH
    return OptimizerImpl.FOR_LOOP


def _transformers(framework: Framework, *, quant: Quant = Quant.FP4,
                  impl: OptimizerImpl | None = None,
                  scheme: Scheme = Scheme.DDP, fsdp: FsdpVersion = FsdpVersion.FSDP1,
                  freeze_layers: int = 1, float_quant_storage: bool = False,
                  kbit_upcast: bool = False, checkpointing: Checkpointing = Checkpointing.NONE,
                  keeps_outputs: bool = False, reported_metric: Metric = Metric.ALLOCATED,
                  embedding_apart: bool = True, reentrant: bool | None = None,
                  lora_rank: int = PEFT_LORA_RANK,
                  lora_targets: frozenset[LoraTarget] = frozenset(PEFT_LORA_TARGETS),
                  source: str = _TRANSFORMERS_SOURCE) -> FrameworkDefaults:
    """A stack on transformers' models; `impl` None: AdamW as the `Trainer` builds it by
    default (`trainer_optimizer_impl`)."""
    return FrameworkDefaults(
        framework=framework, model_code=ModelCode.TRANSFORMERS, scheme=scheme,
        fsdp_version=fsdp, accumulate_without_sync=True, accumulates_full=False,
        accumulates_adapters=False, optimizer_impl=impl, qlora_quant=quant,
        checkpointing=checkpointing, loss=Loss.STANDARD, peft_fsdp_wrap=True,
        model_dropout=True, fsdp2_embedding_apart=embedding_apart,
        freeze_layers=freeze_layers, float_quant_storage=float_quant_storage,
        accelerate_no_sync=True, kbit_upcast_at_load=kbit_upcast, fsdp_casts_params=True,
        accelerate_autocast=True,
        loop_keeps_outputs=keeps_outputs, reported_metric=reported_metric,
        reentrant_checkpointing=reentrant, lora_rank=lora_rank, lora_targets=lora_targets,
        source=source)


# QLoRA preparation (`kbit_upcast_at_load`): peft's `prepare_model_for_kbit_training`
# (huggingface/peft src/peft/utils/other.py @5d602fdb) gives every float16/bfloat16 parameter
# that is not `Params4bit` an fp32 copy (`param.data = param.data.to(torch.float32)`).
# hf and accelerate: the transformers Trainer never calls it; TRL's trainers called it through
# `prepare_peft_model` (trl/models/utils.py @e2ab4354, 2025-10-21: skipped when the 4-bit
# weights sit on the CPU or the meta device, i.e. sharded QLoRA), then, under `bf16`, cast the
# modules named lm_head, embed_tokens, wte, wpe back to bf16 (`peft_module_casting_to_bf16`;
# modules named *norm* stay fp32) until 2af35fb0d (2025-12-04, "Clean up model preparation"),
# which dropped both from SFTTrainer, GRPOTrainer and RewardTrainer: today's default is no
# preparation, and a row whose script prepared says so (`TrainingSetup.kbit_upcast`).
# axolotl (src/axolotl/loaders/model.py @067b021c `_configure_embedding_dtypes`,
# `_prepare_model_for_quantization`): embeddings to fp32, `prepare_model_for_kbit_training`
# unless FSDP or ZeRO-3, then embeddings and norms back to the model's dtype for an adapter.
# LLaMA-Factory never calls it (hiyouga/LLaMA-Factory @ff6d4d12: src/llamafactory/model/
# model_utils/checkpointing.py `prepare_model_for_training` upcasts norms only under
# `upcast_layernorm`, hparams/model_args.py default False).
DEFAULTS: dict[Framework, FrameworkDefaults] = {
    Framework.HF: _transformers(Framework.HF),
    # A plain PyTorch loop on transformers modules: DDP on several GPUs, FSDP2 (`fully_shard`,
    # the API PyTorch documents today) when sharded, no accumulation.
    Framework.GENERIC: FrameworkDefaults(
        framework=Framework.GENERIC, model_code=ModelCode.TRANSFORMERS, scheme=Scheme.DDP,
        fsdp_version=FsdpVersion.FSDP2, accumulate_without_sync=False, accumulates_full=False,
        accumulates_adapters=False, optimizer_impl=OptimizerImpl.FOREACH,
        qlora_quant=Quant.FP4, checkpointing=Checkpointing.NONE, loss=Loss.STANDARD,
        peft_fsdp_wrap=False, model_dropout=True, loop_keeps_outputs=True,
        source="torch.optim.AdamW foreach default; transformers BitsAndBytesConfig defaults"),
    # a loop of one's own under accelerate builds torch.optim.AdamW itself
    Framework.ACCELERATE: _transformers(
        Framework.ACCELERATE, keeps_outputs=True, impl=OptimizerImpl.FOREACH,
        source="accelerate utils/dataclasses.py: FSDP_VERSION default '1'; "
               "Accelerator.accumulate -> no_sync; " + _TRANSFORMERS_SOURCE),
    # axolotl: the transformers Trainer; src/axolotl/loaders/model.py builds QLoRA's
    # BitsAndBytesConfig with bnb_4bit_quant_type 'nf4' and bnb_4bit_use_double_quant True;
    # src/axolotl/utils/schemas/training.py: optimizer default 'adamw_torch_fused',
    # gradient_accumulation_steps default 1 (axolotl-ai-cloud/axolotl @067b021c).
    # axolotl replaces accelerate's FSDP2 preparation with its own
    # (src/axolotl/monkeypatch/accelerate/fsdp2.py `fsdp2_prepare_model` @067b021c): the
    # wrapped decoder layers and adapters, then `fully_shard(model)`, the embedding in the root
    Framework.AXOLOTL: _transformers(
        Framework.AXOLOTL, quant=Quant.NF4_DQ, impl=OptimizerImpl.FUSED, kbit_upcast=True,
        embedding_apart=False,
        source="axolotl src/axolotl/loaders/model.py (nf4, double quant), "
               "src/axolotl/utils/schemas/training.py (adamw_torch_fused, accumulation 1), "
               "src/axolotl/monkeypatch/accelerate/fsdp2.py @067b021c"),
    # LLaMA-Factory: the transformers Trainer; src/llamafactory/hparams/model_args.py
    # QuantizationArguments: quantization_type 'nf4', double_quantization True;
    # src/llamafactory/hparams/finetuning_args.py FreezeArguments: freeze_trainable_layers 2,
    # the last two blocks (`num_layer_trainable` 2 since 5d7d8bd5, 2024-03-09; 3 before);
    # model/model_utils/quantization.py: `bnb_4bit_quant_storage=model_args.compute_dtype`
    # ("crucial for fsdp+qlora"; model/patcher.py since v0.6.0). model/adapter.py casts the
    # trainable parameters to fp32 unless `pure_bf16` (our `bf16-true`): under `--bf16` autocast
    # an fp32 trainable weight with its fp32 gradient holds what `mixed`'s 16-bit weight,
    # gradient and fp32 master hold.
    # LLaMA-Factory checkpoints every trainable block unless the run sets
    # `disable_gradient_checkpointing` (False by default), reentrant (`use_reentrant_gc`, True
    # by default; `{"use_reentrant": True}` before it, 4196d5b4d, 2024-12-17, and transformers'
    # reentrant default before that): model/model_utils/checkpointing.py
    # `prepare_model_for_training` @ff6d4d12e, as src/llmtuner/model/patcher.py did in
    # 921f59363 (2023-12-24). Under FSDP2 it sets `use_reentrant_gc` False (not modelled).
    Framework.LLAMAFACTORY: _transformers(
        Framework.LLAMAFACTORY, quant=Quant.NF4_DQ, freeze_layers=2, float_quant_storage=True,
        checkpointing=Checkpointing.FULL, reentrant=True, lora_targets=BLOCK_TARGETS,
        source="hiyouga/LLaMA-Factory src/llamafactory/hparams/model_args.py "
               "QuantizationArguments (nf4, double quantization), ModelArguments "
               "(disable_gradient_checkpointing False, use_reentrant_gc True), "
               "hparams/finetuning_args.py FreezeArguments (freeze_trainable_layers 2), "
               "LoraArguments (lora_rank 8, lora_target 'all' since 5d7d8bd55, 2024-03-09), "
               "model/model_utils/quantization.py (bnb_4bit_quant_storage = compute dtype), "
               "model/model_utils/checkpointing.py (@ff6d4d12e); " + _TRANSFORMERS_SOURCE),
    # Unsloth: TRL's SFTTrainer on transformers' models that `FastLanguageModel` patches
    # (unslothai/unsloth unsloth/models/llama.py @015bdef0): `from_pretrained(load_in_4bit=True)`
    # builds a BitsAndBytesConfig with nf4 and double quantization, `get_peft_model` defaults to
    # `use_gradient_checkpointing="unsloth"` (every block checkpointed, its input kept in host
    # memory: `UnslothCode`).
    Framework.UNSLOTH: _transformers(
        Framework.UNSLOTH, quant=Quant.NF4_DQ, checkpointing=Checkpointing.FULL,
        reported_metric=Metric.RESERVED, lora_rank=16, lora_targets=BLOCK_TARGETS,
        source="unslothai/unsloth unsloth/models/llama.py @015bdef0 (nf4 with double quant, "
               "use_gradient_checkpointing='unsloth'; `get_peft_model(r = 16, target_modules "
               "= q, k, v, o, gate, up, down projections)`, as at 738e9159, 2024-01-11), "
               "unsloth/kernels/ (fast_lora.py, "
               "rms_layernorm.py, cross_entropy_loss.py); " + _TRANSFORMERS_SOURCE),
    # litgpt finetune/*.py: `if devices * num_nodes > 1: strategy = FSDPStrategy(
    # auto_wrap_policy={Block}, activation_checkpointing_policy={Block}, ...)` (FSDP1 through
    # Lightning Fabric), accumulation in `fabric.no_backward_sync`; every recipe accumulates
    # (global batch / micro-batch > 1); config_hub QLoRA recipes quantize with bnb.nf4.
    Framework.LITGPT: FrameworkDefaults(
        framework=Framework.LITGPT, model_code=ModelCode.LITGPT, scheme=Scheme.FSDP,
        fsdp_version=FsdpVersion.FSDP1, accumulate_without_sync=True, accumulates_full=True,
        accumulates_adapters=True, optimizer_impl=OptimizerImpl.FOREACH, qlora_quant=Quant.NF4,
        checkpointing=Checkpointing.NONE, loss=Loss.STANDARD, peft_fsdp_wrap=False,
        model_dropout=False,
        source="litgpt finetune/lora.py, full.py (FSDPStrategy, no_backward_sync); "
               "config_hub/finetune/*/qlora.yaml (bnb.nf4)"),
    # torchtune (pytorch/torchtune @bd2a0fc7, and @1814feb1 for the 2024 README runs):
    # recipes/configs: 150 of 159 torch.optim.AdamW optimizers set `fused: True`; 118 of 178
    # configs set enable_activation_checkpointing True; full single-device configs use
    # gradient_accumulation_steps 1 (optimizer_in_bwd needs it), LoRA configs mostly 8; the
    # loss is torch.nn.CrossEntropyLoss in the configs until August 2024 (@0914d5cf), then
    # CEWithChunkedOutputLoss (8 chunks, PR #1390), then LinearCrossEntropyLoss: a run that
    # chunks names it in the `loss` column, an empty one is read as the unchunked loss;
    # distributed recipes shard with FSDP2 (`training.shard_model`,
    # torchtune/training/_distributed.py: fully_shard without an mp_policy, so parameters,
    # gradients and states stay bf16); QLoRA stores the base as torchao's NF4Tensor (4-bit
    # codes, int8 scalers per 64 values, one scale per 256 scalers: double quantization).
    Framework.TORCHTUNE: FrameworkDefaults(
        framework=Framework.TORCHTUNE, model_code=ModelCode.TORCHTUNE, scheme=Scheme.FSDP,
        fsdp_version=FsdpVersion.FSDP2, accumulate_without_sync=False, accumulates_full=False,
        accumulates_adapters=True, optimizer_impl=OptimizerImpl.FUSED, qlora_quant=Quant.NF4_DQ,
        checkpointing=Checkpointing.FULL, loss=Loss.STANDARD, peft_fsdp_wrap=False,
        model_dropout=False,
        source="torchtune recipes/configs (fused AdamW, activation checkpointing, "
               "CrossEntropyLoss until 2024-08), torchtune/training/_distributed.py shard_model "
               "(FSDP2), torchao dtypes/nf4tensor.py @bd2a0fc7"),
    # torchtitan (pytorch/torchtitan): torchtitan/config/job_config.py (until 9810191b, then
    # configs.py) `Optimizer.implementation = "fused"`, `mixed_precision_param = "bfloat16"`,
    # `mixed_precision_reduce = "float32"`; parallelize builds the model in fp32 and applies
    # `fully_shard` per block with MixedPrecisionPolicy(bf16, fp32): sharded fp32 parameters,
    # gradients and AdamW states, bf16 compute copies; the shipped llama3 train configs set
    # activation_checkpoint mode 'selective' with selective_ac_option 'op' (per-op SAC).
    Framework.TORCHTITAN: FrameworkDefaults(
        framework=Framework.TORCHTITAN, model_code=ModelCode.TORCHTITAN, scheme=Scheme.FSDP,
        fsdp_version=FsdpVersion.FSDP2, accumulate_without_sync=False, accumulates_full=False,
        accumulates_adapters=False, optimizer_impl=OptimizerImpl.FUSED,
        qlora_quant=Quant.NF4, checkpointing=Checkpointing.SELECTIVE, loss=Loss.STANDARD,
        peft_fsdp_wrap=False, model_dropout=False,
        fsdp2_embedding_apart=True, fsdp_casts_params=True, autocasts=False,
        precision=Precision.AMP, reported_metric=Metric.RESERVED,
        source="torchtitan torchtitan/config/job_config.py @9810191b^ (fused AdamW, "
               "bf16 param / fp32 reduce), torchtitan/distributed/fsdp.py, "
               "train_configs/llama3_8b.toml (selective 'op')"),
    # DeepSpeed's `zero_optimization.stage` defaults to 0: plain data parallelism. The engine
    # wraps the model it is given, most often transformers' (DeepSpeed-Chat's `create_hf_model`),
    # in train mode: its dropout layers run at config.json's rates. The config's "Adam"/"AdamW"
    # optimizer is DeepSpeed's FusedAdam on the GPU (runtime/engine.py
    # `_configure_basic_optimizer`: `torch_adam` defaults to false; DeepSpeedCPUAdam when
    # offloaded), a multi-tensor kernel that updates in place.
    Framework.DEEPSPEED: FrameworkDefaults(
        framework=Framework.DEEPSPEED, model_code=ModelCode.TRANSFORMERS, scheme=Scheme.DDP,
        fsdp_version=FsdpVersion.FSDP2, accumulate_without_sync=False, accumulates_full=True,
        accumulates_adapters=True, optimizer_impl=OptimizerImpl.FUSED,
        qlora_quant=Quant.FP4, checkpointing=Checkpointing.NONE, loss=Loss.STANDARD,
        peft_fsdp_wrap=False, model_dropout=True, loop_keeps_outputs=True,
        precision=Precision.MIXED,
        source="deepspeed runtime/zero/config.py (stage 0), runtime/config.py "
               "(gradient_accumulation_steps from train_batch_size), runtime/engine.py "
               "_configure_basic_optimizer (FusedAdam unless torch_adam)"),
    # Megatron-LM's DistributedDataParallel, with its fp32 gradient buffer (`main_grad_buffer`);
    # its distributed optimizer is opt-in (--use-distributed-optimizer: `zero1` here);
    # pretraining runs accumulate (global batch / micro-batch).
    Framework.MEGATRON: FrameworkDefaults(
        framework=Framework.MEGATRON, model_code=ModelCode.MEGATRON, scheme=Scheme.DDP,
        fsdp_version=FsdpVersion.FSDP2, accumulate_without_sync=False, accumulates_full=True,
        accumulates_adapters=True, optimizer_impl=OptimizerImpl.FUSED,
        qlora_quant=Quant.NF4, checkpointing=Checkpointing.NONE, loss=Loss.STANDARD,
        peft_fsdp_wrap=False, model_dropout=True, main_grad_buffer=True,
        precision=Precision.MIXED,
        source="Megatron-LM megatron/training/arguments.py (--use-distributed-optimizer "
               "opt-in; Apex/TE fused Adam; bf16 gradients accumulated in fp32), "
               "megatron/core/distributed/param_and_grad_buffer.py (contiguous gradient "
               "buffer) @d98e8a64"),
}
"""Every framework's defaults; a test checks that each `Framework` has one."""


@dataclass(frozen=True, slots=True)
class LitgptCode:
    """What litgpt's model code did at some date, where it changed what a block saves for
    backward (Lightning-AI/litgpt, `lit_gpt/model.py` then `litgpt/model.py`)."""

    mqa_kv_expanded: bool
    """A multi-query model's single key-value head is expanded to every query head before SDPA
    in training (50b1974b, 2023-10-24: `if self.config.n_query_groups != self.config.n_head and
    (input_pos is None or ...)`, "training: flash attention requires it"). Before, `if
    self.config.n_query_groups != 1` left it unexpanded, and torch's SDPA, whose fused kernels
    need as many key and value heads as query heads (aten/src/ATen/native/transformers/
    sdp_utils_cpp.h `check_batch_size_and_num_heads`), ran its math kernel."""
    rmsnorm_scale_after_cast: bool
    """RMSNorm casts the normalized input back to the input's dtype before the scale
    (`x_normed = x_normed.to(dtype=dtype)`, then `x_normed * self.weight`), so the scale's
    gradient keeps a 16-bit copy: from 7c157492 (2024-02-23) to 916a84ca (2024-07-23). Before
    it the scale multiplied in fp32 (`(self.weight * x_normed).to(dtype=dtype)`, 6178c7cc), and
    since then again (`(x_normed * weight.float()).to(dtype=dtype)`). Before 6178c7cc
    (2023-10-24) the whole norm ran in the input's dtype, which is not modelled."""
    fabric_quantization: bool
    """`--quantize bnb.*` goes through Lightning Fabric's `BitsandbytesPrecision` (982abcbc,
    2023-10-05, PR #596 "Use Fabric's quantization"), which quantizes each weight from float16
    and computes in the plugin's dtype, so a quantized linear returns the compute dtype. Before
    it (from 064fd523, 2023-08-21) lit-gpt's own `quantize/bnb.py` subclassed bitsandbytes'
    `Linear4bit` with no compute dtype: each weight was quantized from the model's own dtype
    when moved to the GPU (fp32 under `bf16-mixed`), the compute dtype became the first input's
    (`set_compute_type`), and the output was cast back to the input's dtype (`out =
    out.to(inp_dtype)`, bitsandbytes 0.41.1 nn/modules.py `Linear4bit.forward`)."""


class UnslothLossChunking(StrEnum):
    """How `unsloth_fused_ce_loss` splits a micro-batch's rows into chunks (unslothai/unsloth-zoo
    unsloth_zoo/fused_losses/cross_entropy_loss.py `get_chunk_size` and
    `_get_chunk_multiplier`; `vramplan.training.specs.unsloth_loss_chunks`)."""

    ONE_GIB = "one GiB"
    """`target_gb = 1`: n_chunks = max(4 * round(B*T * V * 4 / 2**30 / 1 / 4), 1), the full fp32
    logits' GiB rounded to the nearest whole, times 4 (fc29e051, 2025-08-13; passed by unsloth's
    llama.py from 806bee24, 2025-08-13, and by the zoo's compiler.py)."""
    HALF_FREE = "half free"
    """`target_gb = None`: the target is half of `torch.cuda.mem_get_info()`'s free memory at the
    first call (`functools.cache`d): n_chunks = max(4 * round(B*T * 2V / free), 1) (zoo
    770de251, 2025-09-04, which makes compiler.py pass None; unsloth 5c1b0ae9, 2025-09-04, for
    llama.py)."""
    HALF_FREE_CAPPED = "half free, at most 4 GiB"
    """The target is min(free / 2, 4 GiB), and the chunks are rounded up to a multiple of 4:
    n_chunks = 1 when the fp32 logits fit the target, else 4 * ceil(B*T * 4V / target / 4)
    (zoo d9fe1f43, 2026-07-06)."""


@dataclass(frozen=True, slots=True)
class UnslothCode:
    """What Unsloth did at some date, where it changed what a training step holds
    (unslothai/unsloth, unslothai/unsloth-zoo)."""

    offloads_checkpoints: bool
    """`use_gradient_checkpointing="unsloth"` sends each checkpointed block's input to host memory
    (`hidden_states.to("cpu", non_blocking=True)`, saved for backward, brought back to recompute
    the block): 920f0ae6 (2024-04-06) `Offloaded_Gradient_Checkpointer`, then
    `Unsloth_Offloaded_Gradient_Checkpointer` (unsloth/models/_utils.py 4474e4bc), since in
    unsloth_zoo. Before, transformers' checkpointing kept the inputs on the GPU."""
    fused_loss: bool
    """The causal-LM loss never materializes the logits: `CausalLM_fast_forward` hands the
    hidden states and the head to `fused_linear_cross_entropy`, Cut Cross-Entropy's
    `linear_cross_entropy` (unslothai/unsloth fa8e59eb, 2024-11-17; it runs when
    `cut_cross_entropy` imports, a dependency of unsloth_zoo since e5aab212, 2024-11-21, first
    in release 2024.11.8), then to `unsloth_fused_ce_loss`, which computes the head and the
    cross-entropy chunk by chunk (806bee24, 2025-08-13, release 2025.8.5); both are modelled as
    a fused linear cross-entropy. Before, the head made the 16-bit logits and
    `fast_cross_entropy_loss` (unsloth/kernels/cross_entropy_loss.py `Fast_CrossEntropyLoss`)
    saved them and wrote their gradient over them in backward."""
    loss_chunking: UnslothLossChunking | None = None
    """How `unsloth_fused_ce_loss` picks its chunks; None before it (Cut Cross-Entropy, whose
    chunks are modelled as Liger-Kernel's)."""
    small_batches_keep_logits: bool = False
    """A micro-batch of at most `UNSLOTH_SMALL_BATCH_TOKENS` tokens takes the logits path
    instead ("< 1024 Normal Unsloth uses less VRAM!": `if bsz*q_len <= 1024: RETURN_LOGITS =
    True`, b9fe2588, 2024-12-10, release 2024.12.5, until 0528b4ce, 2025-10-26, release
    2025.10.11, which sends it to `unsloth_fused_ce_loss` too)."""
    rope_tables_per_layer: bool = False
    """Unsloth's own rotary module, put in place of transformers' (unsloth/models/llama.py
    `LlamaRotaryEmbedding`; mistral.py and gemma.py `pre_patch` point their models' classes
    at it), registers cos and sin tables (`_set_cos_sin_cache`, `register_buffer("cos_cached",
    ...)`, cast to the model's dtype by `post_patch`), and every attention layer builds its own
    (`patch_llama_rope_scaling` rewrites the module's `__init__`): per-layer tables until
    63782ea3 (2025-01-07) makes each layer use the model's one (`layer.self_attn.rotary_emb =
    model.model.rotary_emb`)."""
    rope_rows_capped: bool = False
    """The tables hold `min(4 * 8192, max_position_embeddings)` rows (54dd81de, 2024-07-18:
    `self.current_rope_size`); before, `max_position_embeddings`."""
    global_dequant_buffer: bool = False
    """The LoRA kernels' forward dequantizes each 4-bit weight into one buffer per device that
    stays allocated and grows to the largest weight (unsloth/kernels/utils.py `matmul_lora`:
    `fast_dequantize(W.t(), W_quant, use_global_buffer = True)`, `WEIGHT_BUFFERS` in the
    weight's dtype and `ABSMAX_BUFFERS` in fp32, one value per 4-bit block): 144190bd
    (2025-02-06). Backward still dequantizes into a fresh tensor."""
    smart_checkpointing: bool = False
    """The offloaded checkpoints go through unsloth_zoo's `UnslothCheckpointFunction` (unsloth
    3e5f0611, 2025-03-04, release 2025.3.5: `patch_unsloth_smart_gradient_checkpointing` puts it
    in place of `torch.utils.checkpoint`'s for the Llama path; before, unsloth's own
    `Unsloth_Offloaded_Gradient_Checkpointer` sent every block's input to the host and brought it
    back into a fresh tensor). Read in unsloth_zoo/gradient_checkpointing.py from 5572cc46
    (2025-01-07) to df5fe407: the last checkpointed call's input stays on the GPU
    (`CURRENT_GC_INDEX != LAST_GC_INDEX` is the condition to offload), and each offloaded input
    comes back into a GPU buffer that grows to the largest one (`GPU_BUFFER.resize_(new_size)`)
    and stays allocated for the run."""
    first_pass_kept: bool = False
    """In the run's first micro-batch no block's input is offloaded: `LAST_GC_INDEX` grows with
    `CURRENT_GC_INDEX` while `FIRST_PASS` (unsloth_zoo 5572cc46, "Save last layer index so next
    run we do not offload activations"), so every checkpointed input stays on the GPU until the
    first backward; until df5fe407 (2025-11-24) offloads in the first pass too (`or
    FIRST_PASS`), in unsloth_zoo 2025.11.5, the minimum of unsloth 2025.11.4 (2025-11-25)."""
    reload_buffers: int = 1
    """GPU buffers the offloaded inputs come back into under `smart_checkpointing`: a second
    one since unsloth_zoo 510d987f (2026-05-04, "Double-buffer GPU activations"), grown like the
    first once the first pass is over and more than `DOUBLE_BUFFER_HEADROOM` (512 MiB) is free."""
    expandable_segments: bool = False
    """`import unsloth` sets `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` ("Reduce VRAM
    usage by reducing fragmentation", unsloth/__init__.py c599ae0f, 2024-03-17, release 2024.4;
    torch 2.2 and later; since 63b2e8fc, 2025-09-08, with `roundup_power2_divisions`
    intervals, which the simulated allocator does not take; in unsloth_zoo since 1c1f7033)."""


UNSLOTH_EXPANDABLE_SEGMENTS_SINCE = date(2024, 3, 17)
UNSLOTH_OFFLOADED_CHECKPOINTS_SINCE = date(2024, 4, 6)
UNSLOTH_FUSED_LOSS_SINCE = date(2024, 11, 21)
UNSLOTH_FUSED_CE_LOSS_SINCE = date(2025, 8, 13)
UNSLOTH_LOSS_CHUNKS_FROM_FREE_SINCE = date(2025, 9, 4)
UNSLOTH_LOSS_CHUNK_TARGET_CAPPED_SINCE = date(2026, 7, 6)
UNSLOTH_SMALL_BATCH_LOGITS = (date(2024, 12, 10), date(2025, 10, 26))
UNSLOTH_ROPE_ROWS_CAPPED_SINCE = date(2024, 7, 18)
UNSLOTH_SHARED_ROPE_SINCE = date(2025, 1, 7)
UNSLOTH_GLOBAL_DEQUANT_BUFFER_SINCE = date(2025, 2, 6)
UNSLOTH_SMART_CHECKPOINTING_SINCE = date(2025, 3, 5)
UNSLOTH_FIRST_PASS_OFFLOADED_SINCE = date(2025, 11, 25)
UNSLOTH_DOUBLE_RELOAD_BUFFER_SINCE = date(2026, 5, 4)
"""The dates of the commits named in `UnslothCode` (the fused loss: the day
`cut_cross_entropy` became a dependency; the small batches' logits: from, until)."""
UNSLOTH_ROPE_ROWS = 4 * 8192
"""`UnslothCode.rope_rows_capped`: the most rows its rotary tables hold."""
UNSLOTH_SMALL_BATCH_TOKENS = 1024
"""`UnslothCode.small_batches_keep_logits`: batch x length at most this takes the logits path."""

UNSLOTH_RELEASE_DATES: dict[tuple[int, ...], date] = {
    # the releases that brought a change of `UnslothCode`, and the date their version string
    # reached unslothai/unsloth's main branch (`git log --first-parent -G __version__
    # unsloth/models/_utils.py`); a version string names every commit until the next one, so a
    # release runs the code of its first commit at the earliest
    (2024, 4): date(2024, 4, 6),
    (2024, 11, 8): date(2024, 11, 21),
    (2024, 12, 5): date(2024, 12, 20),
    (2025, 1, 5): date(2025, 1, 14),  # fb1397d9, the first with 63782ea3's shared rotary tables
    (2025, 3, 5): date(2025, 3, 5),  # a877c370, the first version string after 3e5f0611
    (2025, 8, 5): date(2025, 8, 13),
    # 6e237fac, the first to pass `target_gb = None` (5c1b0ae9) and to require
    # unsloth_zoo>=2025.9.3 (with 770de251's free-memory chunks); 2025.9.1 allowed zoo 2025.8.9
    (2025, 9, 2): date(2025, 9, 8),
    (2025, 10, 11): date(2025, 10, 28),
    # 7af84b49, the first to require unsloth_zoo>=2025.11.5, which has df5fe407
    (2025, 11, 4): date(2025, 11, 25),
}


def unsloth_release_date(version: tuple[int, ...]) -> date:
    """The earliest date a release (year, month[, patch]) can have run: the first of its month,
    or the arrival of the latest release of `UNSLOTH_RELEASE_DATES` it is not older than,
    whichever is later (`2024.4` began on 2024-04-06, with the offloaded checkpoints)."""
    year, month = version[:2]
    arrivals = [when for release, when in UNSLOTH_RELEASE_DATES.items() if release <= version]
    return max([date(year, month, 1), *arrivals])


def unsloth_code(on: date | None) -> UnslothCode:
    """Unsloth's code as of `on`; None: today's."""
    if on is None:
        return UnslothCode(offloads_checkpoints=True, fused_loss=True, rope_rows_capped=True,
                           loss_chunking=UnslothLossChunking.HALF_FREE_CAPPED,
                           global_dequant_buffer=True, smart_checkpointing=True,
                           reload_buffers=2, expandable_segments=True)
    return UnslothCode(offloads_checkpoints=on >= UNSLOTH_OFFLOADED_CHECKPOINTS_SINCE,
                       fused_loss=on >= UNSLOTH_FUSED_LOSS_SINCE,
                       loss_chunking=_unsloth_loss_chunking(on),
                       small_batches_keep_logits=during(on, UNSLOTH_SMALL_BATCH_LOGITS),
                       rope_tables_per_layer=on < UNSLOTH_SHARED_ROPE_SINCE,
                       rope_rows_capped=on >= UNSLOTH_ROPE_ROWS_CAPPED_SINCE,
                       global_dequant_buffer=on >= UNSLOTH_GLOBAL_DEQUANT_BUFFER_SINCE,
                       smart_checkpointing=on >= UNSLOTH_SMART_CHECKPOINTING_SINCE,
                       first_pass_kept=UNSLOTH_SMART_CHECKPOINTING_SINCE <= on
                       < UNSLOTH_FIRST_PASS_OFFLOADED_SINCE,
                       reload_buffers=2 if on >= UNSLOTH_DOUBLE_RELOAD_BUFFER_SINCE else 1,
                       expandable_segments=on >= UNSLOTH_EXPANDABLE_SEGMENTS_SINCE)


def _unsloth_loss_chunking(on: date) -> UnslothLossChunking | None:
    if on >= UNSLOTH_LOSS_CHUNK_TARGET_CAPPED_SINCE:
        return UnslothLossChunking.HALF_FREE_CAPPED
    if on >= UNSLOTH_LOSS_CHUNKS_FROM_FREE_SINCE:
        return UnslothLossChunking.HALF_FREE
    if on >= UNSLOTH_FUSED_CE_LOSS_SINCE:
        return UnslothLossChunking.ONE_GIB
    return None


PEFT_EMPTY_CACHE_AFTER_UPCAST_SINCE = date(2026, 7, 7)
"""huggingface/peft 537805209 (v0.20.0): `prepare_model_for_kbit_training(...,
auto_clear_cache=True)` calls `torch.cuda.empty_cache()` after the fp32 casts."""

PEFT_ADAPTERS_FOLLOW_BASE_SINCE = date(2023, 11, 2)
"""huggingface/peft v0.6.0 (tagged 2023-11-02; b786b884f of 2023-09-12 on main): `update_layer`
ends with `self.to(weight.device, dtype=weight.dtype)` on a floating-point base, so the adapters
take the base layer's 16-bit dtype; up to v0.5.0 (tagged 2023-08-22) it ends with
`self.to(self.weight.device)`, so the `nn.Linear` adapters stay in torch's default fp32 on any
base, and `forward` copies their input to it (`x = x.to(self.lora_A[...].weight.dtype)`,
src/peft/tuners/lora.py @v0.4.0 and @v0.5.0)."""

PEFT_UPCASTS_ADAPTERS_SINCE = date(2024, 7, 24)
"""huggingface/peft v0.12.0 (e6cd24c9, tagged 2024-07-24): `get_peft_model(...,
autocast_adapter_dtype=True)`, the default, casts float16 and bfloat16 adapter weights to float32
(tuners_utils.py `_cast_adapter_dtype`: "Currently, this only upcasts float16 and bfloat16 to
float32"); v0.11.1 had no such argument, and adapters took the base layer's dtype."""

LLAMAFACTORY_PURE_BF16_ADAPTERS_SINCE = date(2026, 8, 13)
"""hiyouga/LLaMA-Factory bc4b42ce: `get_peft_model(model, peft_config,
autocast_adapter_dtype=cast_trainable_params_to_fp32)`, False under `pure_bf16`
(src/llamafactory/model/adapter.py): a pure-bf16 run's adapters stay bf16. Before, peft's default
upcast them."""

BITSANDBYTES_4BIT_DROPS_INPUT_SINCE = date(2024, 7, 23)
"""bitsandbytes v0.43.2 (tagged 2024-07-23), with 9e753741 ("fix QLoRA mem bug: delete useless
buffered activation", #1270, 2024-07-16): `MatMul4Bit.forward` stores `ctx.tensors = (None, B)`,
no longer the input `A`, which its backward never read (autograd/_functions.py; the same at
95f9af30)."""

LITGPT_BITSANDBYTES_DROPS_4BIT_INPUT_SINCE = date(2024, 12, 28)
"""Lightning-AI/litgpt d2ed13c3 ("Bump PyTorch, PyTorch-Lightning and BnB versions", #1893,
2024-12-28): pyproject.toml requires `bitsandbytes >=0.44.0,<0.44.2` on Linux. Before it litgpt
pinned `bitsandbytes==0.42.0` (929f9c79, 2024-03-15) and `==0.41.0` before that (2bcb2c3e), so a
litgpt install kept the 4-bit base's input (`BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`) until then,
whatever bitsandbytes had released."""


def bitsandbytes_drops_4bit_input(framework: Framework, on: date | None) -> bool:
    """`MatMul4Bit` of the bitsandbytes that `framework` installed on `on`'s date (None:
    today's) no longer keeps its input: the release itself (`BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`),
    or litgpt's pin of it (`LITGPT_BITSANDBYTES_DROPS_4BIT_INPUT_SINCE`)."""
    since = LITGPT_BITSANDBYTES_DROPS_4BIT_INPUT_SINCE if framework is Framework.LITGPT \
        else BITSANDBYTES_4BIT_DROPS_INPUT_SINCE
    return on is None or on >= since


DEEPSPEED_OFFLOAD_STEP_ON_GPU = (date(2024, 4, 14), date(2025, 5, 27))
"""deepspeedai/DeepSpeed 7b5b06602 ("fix pagable h2d memcpy", #5301, in v0.14.1) to 17c8be070
("Fix the GPU memory usage of ZeRO-Offload", #7309, in v0.17.0): ZeRO-1/2 with the optimizer on
the host brings the updated fp32 partition to the GPU before casting it into the 16-bit
partition (stage_1_and_2.py `step`: `copy_(fp32_partition.to(current_device_name()).data)`,
read at v0.14.2); #7309: "the memory usage is about 3x that of params_FP16", since then the
cast goes through a pinned 16-bit host buffer. Before #5301 `copy_(fp32_partition.data)` cast
on the host."""

DEEPSPEED_NO_GATHER_AT_ONE_RANK_SINCE = date(2023, 4, 7)
"""deepspeedai/DeepSpeed 4d27225f3 (v0.9.0, "zero.Init() should pin params in GPU memory as
requested"): ZeRO-3 on one rank fetches a parameter without an all-gather
(partition_parameters.py `all_gather_coalesced`: `if self.world_size == 1: return
_no_gather_coalesced(params)`; `num_partitions` since v0.9.2; the same at edaa7221)."""

DEEPSPEED_RETAINS_PREFETCHED_SINCE = date(2022, 7, 13)
"""deepspeedai/DeepSpeed 2a1a40964 ("Retain available params until last use", #2016, first
released in v0.6.6 of 2022-07-13): ZeRO-3's coordinator keeps a parameter whose later use its
prefetch walked past until that use (partitioned_param_coordinator.py `__params_to_release`:
`__most_recent_step_id_param_fetched_for[param] > step_id`), so it holds about
`stage3_max_live_parameters` once its prefetches have filled it
(`vramplan.distributed.sharding.Zero3Coordinator`). Before it, only the reuse distance kept
a parameter."""

DEEPSPEED_OVERFLOW_CHECK_ON_DEVICE_SINCE = date(2024, 2, 15)
"""deepspeedai/DeepSpeed 1c9e5ef2d (v0.13.3, "Check overflow on device without host
synchronization for each tensor", #5115): ZeRO-1/2's `_has_inf_or_nan` builds masks on the device
(`vramplan.distributed.sharding.OVERFLOW_CHECK_BYTES` per value) where `float(x.float().sum())`
made the fp32 copy alone; the same at edaa7221."""

LITGPT_MQA_EXPANDED_SINCE = date(2023, 10, 24)
LITGPT_RMSNORM_CAST_BEFORE_SCALE = (date(2024, 2, 23), date(2024, 7, 23))
LITGPT_FABRIC_QUANTIZATION_SINCE = date(2023, 10, 5)
"""The dates of the commits named in `LitgptCode` (the window is half-open)."""


TORCHTUNE_COMMIT_DATES: dict[str, date] = {
    # the pytorch/torchtune commits that published measured runs of the case files, by their
    # first eight hex digits, and their dates (git log)
    "0914d5cf": date(2024, 4, 15),  # docs/source/tutorials/qlora_finetune.rst
    "ff594c23": date(2024, 4, 15),  # docs/source/tutorials/lora_finetune.rst
    "2ab2721e": date(2024, 4, 4),  # recipes/generate.py of the e2e_flow.rst log
    "ada52240": date(2024, 4, 12),  # docs/source/examples/e2e_flow.rst
    "20747cd8": date(2024, 4, 18),  # docs/source/tutorials/llama3.rst
    "30b8519e": date(2024, 9, 24),  # README.md "Memory and training speed"
    "fef3ed10": date(2024, 4, 16),  # README.md table, "Memory update" (#775)
    "30c75d4a": date(2024, 5, 9),  # the tree of PR #961's runs
    "1814feb1": date(2024, 11, 18),  # README.md "Optimization flags" (#2003)
}
TORCHTUNE_GENERATE_CACHE_FITS_SINCE = date(2024, 9, 17)
"""torchtune's generate recipe sizes its KV cache to the prompt and the new tokens since 0f74070f4
(PR #1603, "Set max cache seq len in generate recipe": `setup_caches(..., decoder_max_seq_len=
prompt.numel() + cfg.max_new_tokens)`); before, `model.setup_caches(max_batch_size=1, dtype)`
allocated every layer's cache, and the bool causal mask, for the model builder's `max_seq_len`
(recipes/generate.py, torchtune/modules/transformer.py @20747cd87)."""
TORCHTUNE_KV_HEADS_CACHED_SINCE = date(2024, 11, 10)
"""torchtune's `KVCache` holds the key-value heads since e1caa9f82 (PR #1961, "Update KV Cache to
use num_kv_heads instead of num_heads"); before, every query head ("We take num_heads instead of
num_kv_heads because we cache the keys and values after they have been repeated",
torchtune/modules/kv_cache.py @20747cd87)."""
TORCHTUNE_CHUNKED_NF4_SINCE = date(2024, 6, 26)
"""torchtune pinned torchao 0.1 (pyproject.toml `torchao==0.1`, f97bcdaa0, 2024-04-09; a
nightly of March 2024 before) until c1c9f308a pinned ao 0.3 (2024-06-26). torchao 0.1 quantized a
weight to NF4 in one piece (torchao/dtypes/nf4tensor.py at v0.1 `quantize_tensor_nearest`:
`(value.unsqueeze(-1) - nf4).abs()`, 16 bf16 entries per value, then `min(dim=-1)`); "perform in
chunks" (pytorch/ao 6081796bc, PR #196, 2024-05-01, in 0.2.0) quantizes by chunks of 2^20
values, whose transients (about 74 MB) change no estimate
(`vramplan.training.allocations.torchao_nf4.torchtune_nf4_build`)."""

TORCHTUNE_PER_LAYER_BUILD_SINCE = date(2024, 9, 12)
"""torchtune b0895a798 (PR #1554, "llama 3_1 instantiate pos embedding only once"): the first
builder that makes every layer itself and hands one rotary module to all of them. Before it every
decoder builder (llama2, llama3, llama3_1, mistral, gemma, phi3, qwen2: read at ff594c231,
20747cd87 and 0b9f8306d, the last commit before that date) made one template layer holding its
own rotary module, built the embeddings and the head, and `TransformerDecoder` deep-copied the
template for every layer (torchtune/modules/transformer.py `_get_clones`: `copy.deepcopy`), the
template dropped when the builder returned; the single-device recipes build on the GPU (`with
self._device: config.instantiate(cfg_model)`). Llama 3.2's builders were per layer from the
first (d002d45e3); the other families kept the template and one rotary module per layer until
23896c30d (PR #2282, 2025-01-27), which is not modelled: from this date on, every family is
read as building its layers one by one around one rotary module."""
TORCHTUNE_WIDE_ROPE_FAMILIES = frozenset({"phi3", "qwen2"})
"""The families whose torchtune rotary module caches cos and sin over the whole rotated width
(torchtune/models/phi3/_position_embeddings.py and qwen2/_positional_embeddings.py:
`freqs = torch.cat([idx_theta, idx_theta], dim=-1)`, `cache = torch.cat([freqs.cos(),
freqs.sin()], dim=-1)`, [max_seq_len, 2 x head_dim]); Llama's, Mistral's and Gemma's keep
[max_seq_len, head_dim / 2, 2]."""


def torchtune_rope_modules(n_layers: int, on: date | None) -> int:
    """How many rotary modules, each with its cache, torchtune's model of `n_layers` layers holds
    as of `on` (None: today's code): one per layer while its builders deep-copied a template
    layer, one shared since (`TORCHTUNE_PER_LAYER_BUILD_SINCE`)."""
    return 1 if has_change(on, TORCHTUNE_PER_LAYER_BUILD_SINCE) else n_layers


def torchtune_rope_cache_bytes(arch: Architecture) -> int:
    """One torchtune rotary module's cache: fp32 cos and sin for every position up to the
    builder's `max_seq_len` (torchtune/modules/position_embeddings.py
    `RotaryPositionalEmbeddings.build_rope_cache`: `.float()`, then `torch.stack`, a
    non-persistent buffer made where the model is built, on the GPU for the single-device
    recipes and re-made there by `rope_init` after the distributed ones' meta build), read as the
    config's `max_position_embeddings` (the builders pass the released context: 4,096 for Llama 2,
    8,192 for Llama 3, 131,072 for Llama 3.1 and 3.2; where they pass less, this counts more:
    Llama 3 8B's builder said 4,096 from 20747cd87 until 41341fd1d, both of 2024-04-18, and the
    Qwen2 builders cap it at 32,768); 0 without RoPE."""
    return arch.rope_cache_bytes(arch.max_position_embeddings, 4,
                                 whole_width=arch.family in TORCHTUNE_WIDE_ROPE_FAMILIES)


TORCHTUNE_DELETES_LOGITS_SINCE = date(2024, 7, 28)
"""torchtune's recipes drop their logits before backward since 8a98fbaa3 (PR #1235, "[memory
Improvement] delete logits before bwd": `del logits`, "free logits otherwise it peaks backward
memory", in full_finetune_single_device, full_finetune_distributed, lora_finetune_single_device
and qat_distributed); lora_finetune_distributed did since cb3ed29d7 (PR #1046, 2024-06-04,
`TORCHTUNE_LORA_DISTRIBUTED_DELETES_LOGITS_SINCE`). Before, the shifted fp32 copy the loop made
(`logits = logits[..., :-1, :].contiguous()`) stayed bound through backward, the optimizer step
and the next forward, until `logits = self._model(...)` returned (the recipes @20747cd87)."""
TORCHTUNE_LORA_DISTRIBUTED_DELETES_LOGITS_SINCE = date(2024, 6, 4)


def torchtune_loop_keeps_logits(method: Method, distributed: bool, on: date | None) -> bool:
    """torchtune's recipe for `method` (single-device or distributed) of `on`'s date (None:
    today's) kept its logits through backward (`TORCHTUNE_DELETES_LOGITS_SINCE`)."""
    if on is None:
        return False
    if distributed and method.uses_lora:
        return on < TORCHTUNE_LORA_DISTRIBUTED_DELETES_LOGITS_SINCE
    return on < TORCHTUNE_DELETES_LOGITS_SINCE


LITGPT_COMMIT_DATES: dict[str, date] = {
    # the Lightning-AI/litgpt commits that published measured runs of the case files, by their
    # first eight hex digits, and their dates (git log)
    "064fd523": date(2023, 8, 21),  # tutorials/finetune_lora.md (QLoRA tables)
    "29de2828": date(2023, 9, 27),  # tutorials/prepare_dataset.md
    "982abcbc": date(2023, 10, 5),  # tutorials/finetune_lora.md (Fabric's quantization)
    "0cc02afa": date(2023, 10, 27),  # tutorials/resource-tables.md
    "4a9b7e62": date(2024, 3, 14),  # config_hub/finetune/README.md (TinyLlama)
    "41dece20": date(2024, 3, 15),  # config_hub/finetune/README.md (Llama 2 7B)
    "84a73fd0": date(2024, 3, 27),  # config_hub/finetune/README.md (Gemma 7B)
    "58c5b188": date(2024, 4, 19),  # config_hub/finetune/README.md (Llama 3 8B)
    "5895df10": date(2024, 4, 26),  # config_hub/finetune/README.md
    "101e31d2": date(2024, 5, 6),  # extensions/thunder/README.md
    "e5493986": date(2024, 7, 22),  # config_hub/finetune/README.md
    "916a84ca": date(2024, 7, 23),  # config_hub/finetune/README.md
    "fd71063c": date(2024, 7, 24),  # config_hub/finetune/README.md
    "2b195c7f": date(2024, 8, 2),  # config_hub/finetune/README.md (Gemma 2 2B)
    "00af8b0d": date(2024, 9, 27),  # config_hub/finetune/README.md (Llama 3.2)
}


def litgpt_code(on: date | None) -> LitgptCode:
    """litgpt's model code as of `on`; None: today's."""
    if on is None:
        return LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=False,
                          fabric_quantization=True)
    return LitgptCode(mqa_kv_expanded=on >= LITGPT_MQA_EXPANDED_SINCE,
                      rmsnorm_scale_after_cast=during(on, LITGPT_RMSNORM_CAST_BEFORE_SCALE),
                      fabric_quantization=on >= LITGPT_FABRIC_QUANTIZATION_SINCE)


@dataclass(frozen=True, slots=True)
class TransformersCode:
    """How transformers' model code ran at some date, where it changed what a step holds: its
    causal-LM loss, which vocabulary-sized tensors it holds (huggingface/transformers
    `models/llama/modeling_llama.py`, `loss/loss_utils.py`; Mistral, Gemma, Gemma2 and Qwen2
    copied Llama's code in each release, read in the v4.36.2 and v4.45.2 wheels)."""

    logits_fp32_in_model: bool
    """The model upcasts its logits itself and returns them in fp32 (`logits = logits.float()`
    after `self.lm_head(...)` in `LlamaForCausalLM.forward`, v4.31.0 to v4.45.2; the 16-bit
    head output lives only during the cast). From v4.46.0 the model returns its 16-bit logits
    and `ForCausalLMLoss` upcasts a copy of its own (`logits = logits.float()`)."""
    shifts_logits: bool
    """The loss drops the last position of the logits: `shift_logits = logits[..., :-1,
    :].contiguous()`, an fp32 copy of (tokens - batch) rows, whose log-softmax the
    cross-entropy saves; in backward `slice_backward` makes a zero-filled fp32 gradient of every
    row. Up to v4.48.x, in the model's forward then in `ForCausalLMLoss`; v4.49.0 pads and
    shifts the labels instead (`labels = nn.functional.pad(labels, (0, 1), value=
    ignore_index)`), so the cross-entropy takes the upcast logits whole."""
    loss_16bit: frozenset[str] = frozenset()
    """Model types whose causal-LM loss ran on the 16-bit logits: `lm_logits =
    self.lm_head(hidden_states)`, `shift_logits = lm_logits[..., :-1, :].contiguous()` and
    `CrossEntropyLoss` on that 16-bit copy, which saves its 16-bit log-softmax, with no fp32
    upcast anywhere. OPT, GPT-2, BLOOM, GPT-BigCode, GPT-NeoX and Falcon until v4.49.0 (read in
    the v4.21.0, v4.45.2, v4.46.0 and v4.48.0 wheels; v4.49.0 moved them to
    `self.loss_function`, `ForCausalLMLoss`, which upcasts), Llama until v4.31.0 (the v4.30.0
    wheel's `LlamaForCausalLM.forward` has no `logits.float()`; v4.31.0 added it)."""
    generate_holds_two_caches: bool = False
    """`generate` keeps the previous step's KV cache while a decode step builds the next one:
    the legacy cache, a tuple of per-layer tensors, stays in `model_kwargs["past_key_values"]`
    until `_update_model_kwargs_for_generation` replaces it after the forward, while each
    attention layer makes its new key and value with `torch.cat([past_key_value[0],
    key_states], dim=2)` and the model collects them in `next_decoder_cache` (v4.35.0:
    models/llama/modeling_llama.py, generation/utils.py `greedy_search`; v4.36.0 to v4.41.x wrap
    the same tuple in `DynamicCache.from_legacy_cache` at every forward). Since v4.42.0 generate
    keeps one `DynamicCache` whose `update` replaces each layer's tensor as it grows."""
    generate_all_prompt_logits: bool = False
    """`generate`'s prefill returns the logits of every prompt position: the model applies its
    head to the whole sequence, and upcasts it where `logits_fp32_in_model` holds for its type.
    v4.45.0 passes `num_logits_to_keep=1` to the models that accept it
    (generation/utils.py `_supports_num_logits_to_keep`; absent from the v4.44.2 wheel)."""
    full_logits_types: frozenset[str] = frozenset()
    """Model types whose causal-LM forward had no `logits_to_keep` (or `num_logits_to_keep`)
    argument yet once `generate` asked for the last position only: their prefill still returns
    every prompt position's logits (`TRANSFORMERS_LOGITS_TO_KEEP_SINCE`)."""
    generate_clones_logits: bool = False
    """`generate` copies the prefill's whole logits before taking the last position
    (`next_token_logits = outputs.logits.clone()[:, -1, :].float()`, v4.45.0 to v4.46.x;
    v4.47.0 slices first, `outputs.logits[:, -1, :].clone().float()`): where the model returns
    every prompt position (`full_logits_types`), they are held twice at the prefill's end."""
    generate_keeps_prefill_outputs: bool = False
    """`generate` keeps the prefill's outputs, all its logits, through the first decode step:
    `next_token_logits = outputs.logits[:, -1, :]` is a view and `outputs` is rebound only when
    the next forward returns (v4.32.0 to v4.41.2 `greedy_search`/`_sample`); v4.42.0 takes a
    `.clone()` and ends each iteration with `del outputs`."""
    warms_up_allocator: bool = True
    """`from_pretrained` with a `device_map` allocates, before loading, one fp16 `torch.empty`
    of the model's meta parameters' bytes divided by a factor, and frees it: the caching
    allocator keeps that segment, which the weights then fill (modeling_utils.py
    `caching_allocator_warmup`, since v4.50.0). The factor is 2 (the whole model) unquantized
    and 4 (half of it) for a bitsandbytes quantizer (v4.51.0: `factor=2 if hf_quantizer is
    None else 4`; v4.57.1: `HfQuantizer.get_accelerator_warm_up_factor`, 4 unless overridden,
    which bitsandbytes' does not), whose meta parameters keep the linears' full shapes in the
    load dtype until the weights are quantized as they load."""
    warmup_counts_tied: bool = False
    """`from_pretrained` with a `device_map` warms the caching allocator up with one
    `torch.empty` of every `model.state_dict()` entry's bytes (`caching_allocator_warmup`),
    where a tied head appears beside the embedding: the tied matrix is counted twice, and after
    loading that much stays reserved, unused. v4.50.0 to v4.53.x (read in the v4.50.0, v4.51.0,
    v4.53.0, v4.54.0 and v4.55.0 wheels; v4.54.0 skips tied weights, `tied_param_names`)."""
    clamped_scores: frozenset[str] = frozenset()
    """Model types whose eager attention clamped its masked scores, `attn_weights =
    torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min))`: `maximum`
    saves its input, so each layer keeps the masked scores beside the softmax. Llama until
    v4.30.0 (read in the v4.28.1 and v4.29.2 wheels, gone in v4.30.0), OPT until v4.49.0
    (`OPTAttention.forward` in the v4.28.1 to v4.48.0 wheels; v4.49.0 moved OPT to
    `eager_attention_forward`, without it)."""

    reentrant_checkpointing: bool = False
    """`gradient_checkpointing_enable()` without `gradient_checkpointing_kwargs` runs
    `torch.utils.checkpoint` with `use_reentrant=True` (modeling_utils.py, v4.35.0 to v4.57.x;
    torch's own default before that); v5.0.0 sets `use_reentrant=False` (and TRL's configs did
    from 40d8759d, 2026-01-14). The Trainer calls it with `TrainingArguments.
    gradient_checkpointing_kwargs`, None by default."""
    checkpoints_around_layers: bool = False
    """Checkpointing is called by the model's forward around each decoder layer's `__call__`
    (`self._gradient_checkpointing_func(decoder_layer.__call__, ...)` in `LlamaModel.forward`,
    v4.35.0 to v4.51.x), so around an FSDP1 unit wrapping that layer; v4.52.0 moved it into the
    layer's own `__call__` (modeling_layers.py `GradientCheckpointingLayer`), inside the unit."""
    gpt_oss_expert_loop: bool = False
    """gpt-oss's experts train one hit expert at a time in Python (`GptOssExperts.forward`: `if
    self.training:`, a loop over `expert_hitted`, v4.55.0 to v4.57.x; v5.0.0 runs
    `grouped_mm` through `@use_experts_implementation`). Each expert's weights are read as
    `self.gate_up_proj[expert_idx]`, whose backward (`select`'s or `index`'s) makes a zero tensor
    of the whole 3-D parameter for each expert and adds it to the parameter's running gradient
    (`index_backward(grad.new_zeros(self.sizes()), ...)`, tools/autograd/derivatives.yaml)."""
    gpt_oss_expert_copies: bool = False
    """v4.55.x indexed with a one-element tensor (`for expert_idx in expert_hitted[:]`,
    `expert_idx` of shape (1,)): advanced indexing copies each expert's weights, and the matmul
    saves the copy for its input's gradient; v4.56.0 indexes with `expert_idx[0]`, a 0-d tensor,
    which `select`s a view."""
    moe_expert_linears: frozenset[str] = frozenset()
    """Model types whose mixture-of-experts layer runs each expert as its own MLP of
    `nn.Linear` modules, in a Python loop over the experts (`MixtralSparseMoeBlock.forward`,
    `MixtralBlockSparseTop2MLP`; Qwen2-MoE's, Qwen3-MoE's and OLMoE's blocks the same: read in
    the v4.48.1 and v4.57.6 wheels, `TRANSFORMERS_MOE_EXPERT_LINEARS`): the loop adds each
    expert's weighted output into the layer's output with `index_add_`, and under QLoRA
    bitsandbytes quantizes every expert's linears to `Linear4bit` modules, whose outputs come
    back in their input's dtype (`vramplan.training.activations.spec.BlockSpec.moe_expert_loop`).
    v5.0.0 holds the experts as 3-D parameters (`MixtralExperts.gate_up_proj`, `down_proj`)
    run by `@use_experts_implementation`."""
    rope_caches: frozenset[str] = frozenset()
    """Model types whose every attention layer built its own rotary module holding cos and sin
    tables of `max_position_embeddings` rows, registered as non-persistent buffers in the
    default dtype of the model's construction (the load dtype under `torch_dtype`), so on the
    GPU with the model: `LlamaRotaryEmbedding._set_cos_sin_cache(seq_len=
    max_position_embeddings, ..., dtype=torch.get_default_dtype())` and `register_buffer(
    "cos_cached", ...)`/`"_cos_cached"`, one per `LlamaAttention` (`_init_rope`). Read in the
    wheels (`TRANSFORMERS_ROPE_CACHES_UNTIL`): Llama until v4.41.0, Mistral until v4.42.0, Qwen2,
    Qwen2-MoE, Phi, StableLM, StarCoder2, Falcon and GPT-NeoX until v4.45.0, Mixtral until
    v4.48.0; later releases compute cos and sin per forward from one shared module."""
    softmax_16bit: frozenset[str] = frozenset()
    """Model types whose eager attention ran its softmax in the scores' 16-bit dtype
    (`attn_weights = nn.functional.softmax(attn_scores, dim=-1)`): GPT-NeoX until v4.49.0,
    whose `eager_attention_forward` asks for fp32 (read in the v4.44.2 to v4.48.0 and v4.49.0
    to v4.56.0 wheels). GPT-2's, in every release, is the architecture's
    (`Architecture.eager_softmax_fp32`)."""
    layer_mask_buffers: frozenset[str] = frozenset()
    """Model types whose every attention layer registers its causal mask as a bool buffer of
    `max_position_embeddings`^2 (`self.register_buffer("bias", torch.tril(torch.ones(...,
    dtype=torch.bool)).view(1, 1, max_positions, max_positions), persistent=False)`), built
    with the model on its device: GPT-2 until v5.2.0, GPT-NeoX until v4.49.0, GPT-J until
    v4.45.0 (`TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL`). GPT-Neo's, in every release, is the
    architecture's (`Architecture.causal_mask_buffers`); GPT-BigCode's one mask for the whole
    model, in every release, is `TRANSFORMERS_MODEL_MASK_BUFFER_TYPES`."""
    fused_qkv_cache_views: frozenset[str] = frozenset()
    """Model types whose prompt cache keeps each layer's fused q/k/v projection output alive:
    the value, and the key where no rotary embedding rebuilds it, are views of that output
    (`query, key, value = self.c_attn(hidden_states).split(...)` in GPT-2, `qkv.chunk(3, ...)`
    in MPT, `qkv[..., query_pos + kv_dim:]` in Phi-3, GPT-BigCode's `key_value`, GPT-NeoX's
    and BLOOM's slices), and the cache stores the views as they are (a legacy tuple, or
    `DynamicCache.update` appending them), so the prompt's entries hold the whole projection
    until a decode step replaces them. From v4.56.0 `DynamicLayer.update` concatenates the
    first entry onto an empty tensor, a copy (`TRANSFORMERS_CACHE_COPIES_SINCE`). Measured on
    the CPU (benchmarks/hf_cache_views_cpu.py): the prompt's cache holds 1.5 (GPT-2, MPT,
    BLOOM), 2.0 (GPT-NeoX) and up to 5 (GPT-BigCode's multi-query) times its keys and values
    in v4.31.0 to v4.55.4, exactly its keys and values in v4.56.0, v4.56.2, v5.0.0 and v5.25.0;
    BLOOM from v4.44.0 (`TRANSFORMERS_BLOOM_QKV_VIEWS_SINCE`); Falcon's and Llama's entries
    are their own tensors in every release measured."""
    causal_mask_buffer_itemsize: int = 0
    """Bytes per element of the causal mask that `LlamaModel` and `GemmaModel` register at
    construction (`TRANSFORMERS_MASK_BUFFER_TYPES`): `max_position_embeddings`^2 elements, a
    non-persistent buffer that moves to the GPU with the model and stays there for the whole
    run, whichever attention runs (flash attention never reads it). v4.38.0 and v4.38.1 fill
    it with an int, so int64, 8 bytes (`torch.full((max_pos, max_pos), fill_value=1)`, then
    `torch.triu(..., diagonal=1)`); v4.38.2 makes it bool, 1 byte (`fill_value=True,
    dtype=torch.bool`). 0 before v4.38.0 (v4.37.2 builds its masks per forward,
    `AttentionMaskConverter`) and from v4.39.0 (`_update_causal_mask` builds one per forward
    from `cache_position`; Gemma registers one only in `_setup_cache`, for a static cache).
    Read in the v4.37.2, v4.38.0, v4.38.1, v4.38.2, v4.39.0 and v4.39.3 wheels
    (models/llama/modeling_llama.py and models/gemma/modeling_gemma.py, `__init__`)."""
    warmup_keeps_headroom: bool = False
    """The warm-up's byte count is capped by the device's free memory (`torch.cuda.mem_get_info`)
    before it is divided by the factor: at 95 % of it (v4.50.0 to v4.51.x:
    `min(byte_count, int(0.95 * device_memory))`), then at all of it but 1.2 GiB (v4.52.0 on:
    `min(byte_count, max(0, int(device_memory - 1.2 * 1024**3)))`; read in the v4.50.0,
    v4.51.3, v4.52.0 and v4.52.4 wheels)."""

    def causal_mask_buffer_bytes(self, model_type: str, positions: int, layers: int) -> int:
        """The causal-mask buffers a model of `model_type` with `layers` attention layers keeps
        on the device: v4.38's one mask (`causal_mask_buffer_itemsize`), GPT-BigCode's one bool
        mask (`TRANSFORMERS_MODEL_MASK_BUFFER_TYPES`) or a bool mask per layer
        (`layer_mask_buffers`), each `positions`^2 elements; 0 where none is made."""
        size = positions ** 2
        if model_type in self.layer_mask_buffers:
            return layers * size
        if model_type in TRANSFORMERS_MODEL_MASK_BUFFER_TYPES:
            return size
        if model_type not in TRANSFORMERS_MASK_BUFFER_TYPES:
            return 0
        return self.causal_mask_buffer_itemsize * size

    def returns_prompt_logits(self, model_type: str) -> bool:
        """The prefill of `generate` returns every prompt position's logits for `model_type`:
        before `generate` asked for the last one (`generate_all_prompt_logits`), or where the
        model could not be asked (`full_logits_types`)."""
        return self.generate_all_prompt_logits or model_type in self.full_logits_types

    def upcasts_logits(self, model_type: str) -> bool:
        """The model of `model_type` returns its logits in fp32 (`logits_fp32_in_model`), unless
        its own code never upcast them (`loss_16bit`)."""
        return self.logits_fp32_in_model and model_type not in self.loss_16bit

    def warmup_bytes(self, model_bytes: int, factor: int, free_bytes: int | None = None) -> int:
        """The fp16 tensor `caching_allocator_warmup` allocates and frees (`warms_up_allocator`):
        `torch.empty(byte_count // factor, dtype=torch.float16)`, 2 bytes per element, where
        `byte_count` is the meta model's `model_bytes` capped by the device's `free_bytes`
        (`warmup_keeps_headroom`; None: no cap known); 0 for a release without the warm-up."""
        if not self.warms_up_allocator:
            return 0
        if free_bytes is not None:
            cap = max(0, free_bytes - WARMUP_HEADROOM_BYTES) if self.warmup_keeps_headroom \
                else int(WARMUP_FREE_SHARE * free_bytes)
            model_bytes = min(model_bytes, cap)
        return 2 * (model_bytes // factor)

    def quantized_warmup_bytes(self, params: int, tied_params: int, itemsize: int,
                               free_bytes: int | None = None) -> int:
        """The segment `caching_allocator_warmup` reserves before a bitsandbytes base loads:
        half the bytes of the meta model's `params` (factor 4), every one at its full shape in
        the 16-bit load dtype of `itemsize` bytes, a tied matrix of `tied_params` counted twice
        while `warmup_counts_tied`, capped by the device's `free_bytes` (`warmup_bytes`)."""
        tied = tied_params if self.warmup_counts_tied else 0
        return self.warmup_bytes((params + tied) * itemsize, BNB_WARMUP_FACTOR, free_bytes)


BNB_WARMUP_FACTOR = 4
"""`caching_allocator_warmup`'s factor for a bitsandbytes quantizer (v4.51.0: `factor=2 if
hf_quantizer is None else 4`; v4.57.1: `get_accelerator_warm_up_factor`, 4 unless overridden);
2 without a quantizer."""
WARMUP_FREE_SHARE = 0.95
WARMUP_HEADROOM_BYTES = round(1.2 * 2**30)
"""The warm-up's caps (`TransformersCode.warmup_keeps_headroom`): before v4.52.0 95 % of the free
memory, then all of it but 1.2 GiB."""


@dataclass(frozen=True, slots=True)
class TorchtitanCode:
    """What torchtitan's training loop and Llama model did at some date, where it changed what a
    step holds (pytorch/torchtitan train.py, torchtitan/models/llama/model.py,
    torchtitan/components/loss.py)."""

    loop_keeps_logits: bool
    """`pred = model(input_ids); loss = loss_fn(pred, labels); loss.backward()`: the logits stay
    referenced through backward and the step, until the next forward rebinds `pred`. e29b6b4d4
    (#391, 2024-06-12) added `del pred` before backward ("to save 3.9G memory")."""
    logits_fp32_in_model: bool
    """The model returned `self.output(h).float()`: fp32 logits, its 16-bit head output freed by
    the cast, and the loss's `.float()` a no-op. e10cb9494 (2024-10-22) moved the `.float()` into
    the loss function."""
    compiles_loss: bool
    """Under `training.compile` the loss function is compiled too: from e10cb9494 (2024-10-22)
    until e8977b007 ("turning off compile on loss function", 2024-12-18), then again since
    bbb1b616e (#1033, 2025-04-02: `build_cross_entropy_loss`). Eager otherwise."""
    launcher_expandable_segments: bool
    """The launcher (`run_llama_train.sh`, `run_train.sh` since) exports
    `PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"` (`PYTORCH_ALLOC_CONF` at b5bcd76c):
    a5e57e4a9 (#643, 2024-10-22). Runs launched another way set what they say."""
    embedding_apart: bool
    """`apply_fsdp` shards `tok_embeddings` as a unit of its own (resharded after forward) and
    the final norm with the head as another: 83e694105 (#1094, 2025-07-28). Before, they stayed
    in the root unit (`fully_shard(model)`), which FSDP2 never reshards after forward: the
    embedding stayed gathered from forward to backward (`FrameworkDefaults.fsdp2_embedding_apart`,
    `embedding_apart`)."""
    cudnn_attention_from: tuple[int, int] | None
    """The CUDA compute capability from which `ScaledDotProductAttention` puts cuDNN's kernel
    first (`sdpa_kernel(backends, set_priority=True)`, torchtitan/models/attention.py): from
    3b85aa31f (#1196, 2025-05-14, "Use cudnn backend on B200") on Blackwell only,
    `has_cuda_capability(10, 0)`; from 6a3a9da95 (#1776, 2025-10-09) on every CUDA device
    (`sdpa_backends = [CUDNN_ATTENTION, FLASH_ATTENTION, EFFICIENT_ATTENTION]`, read at
    028a455c1). None: flash first everywhere."""
    saves_cudnn_attention: bool
    """The per-op checkpointing policy's save list holds `aten._scaled_dot_product_cudnn_attention`
    (b39377f9f, #2095, 2025-12-01, "to avoid recomputing attention during backward"; before,
    only the flash and memory-efficient kernels: torchtitan/models/llama3/infra/parallelize.py
    `_save_list` at 6fc499f6, `_op_sac_save_list` at 028a455c1)."""
    saves_reduce_scatter: bool
    """The per-op policy's save list holds `_c10d_functional.reduce_scatter_tensor`: since the
    first commit (torchtitan/parallelisms/parallelize_llama.py `_save_list` at c22d1a8d1,
    2024-04-11), except from 247f4e3aa (#965, 2025-03-20, "Don't save reduce scatter output for
    per op SAC", for async TP's pattern matching) until 88d8ab372 (#1031, 2025-04-21, "Add back
    reduce_scatter_tensor to save list"); still there today (torchtitan/distributed/
    activation_checkpoint.py `_get_default_save_ops` at b5bcd76c6)."""

    def saves_sdpa_output(self, cuda_capability: tuple[int, int] | None) -> bool:
        """Per-op checkpointing keeps SDPA's output and log-sum-exp on a card of
        `cuda_capability` (None: not a CUDA card, or not known): unless cuDNN's kernel runs
        there and the save list lacks it, in which case backward recomputes the attention."""
        runs_cudnn = (self.cudnn_attention_from is not None and cuda_capability is not None
                      and cuda_capability >= self.cudnn_attention_from)
        return self.saves_cudnn_attention or not runs_cudnn


TORCHTITAN_FREES_LOGITS_SINCE = date(2024, 6, 12)
TORCHTITAN_LOSS_UPCASTS_SINCE = date(2024, 10, 22)
TORCHTITAN_COMPILED_LOSS = ((date(2024, 10, 22), date(2024, 12, 18)), (date(2025, 4, 2), None))
TORCHTITAN_EMBEDDING_APART_SINCE = date(2025, 7, 28)
TORCHTITAN_LAUNCHER_EXPANDABLE_SINCE = date(2024, 10, 22)
TORCHTITAN_CUDNN_ON_BLACKWELL_SINCE = date(2025, 5, 14)
TORCHTITAN_CUDNN_EVERYWHERE_SINCE = date(2025, 10, 9)
TORCHTITAN_SAVES_CUDNN_ATTENTION_SINCE = date(2025, 12, 1)
TORCHTITAN_REDUCE_SCATTER_UNSAVED = (date(2025, 3, 20), date(2025, 4, 21))
"""The dates of the commits named in `TorchtitanCode` (the compiled loss and the reduce-scatter
left out of the save list: from, until)."""
BLACKWELL_CAPABILITY = (10, 0)
"""torchtitan's `has_cuda_capability(10, 0)`: B200 and later (compute capability 10.0)."""
ANY_CUDA_CAPABILITY = (0, 0)
"""Every CUDA device (torchtitan's cuDNN-first list from 6a3a9da95 has no capability test)."""


def _torchtitan_cudnn_from(on: date) -> tuple[int, int] | None:
    if on >= TORCHTITAN_CUDNN_EVERYWHERE_SINCE:
        return ANY_CUDA_CAPABILITY
    return BLACKWELL_CAPABILITY if on >= TORCHTITAN_CUDNN_ON_BLACKWELL_SINCE else None


def torchtitan_code(on: date | None) -> TorchtitanCode:
    """torchtitan's code as of `on`; None: today's."""
    if on is None:
        return TorchtitanCode(loop_keeps_logits=False, logits_fp32_in_model=False,
                              compiles_loss=True, launcher_expandable_segments=True,
                              embedding_apart=True, cudnn_attention_from=ANY_CUDA_CAPABILITY,
                              saves_cudnn_attention=True, saves_reduce_scatter=True)
    unsaved_from, unsaved_until = TORCHTITAN_REDUCE_SCATTER_UNSAVED
    return TorchtitanCode(
        loop_keeps_logits=on < TORCHTITAN_FREES_LOGITS_SINCE,
        logits_fp32_in_model=on < TORCHTITAN_LOSS_UPCASTS_SINCE,
        compiles_loss=any(start <= on and (end is None or on < end)
                          for start, end in TORCHTITAN_COMPILED_LOSS),
        launcher_expandable_segments=on >= TORCHTITAN_LAUNCHER_EXPANDABLE_SINCE,
        embedding_apart=on >= TORCHTITAN_EMBEDDING_APART_SINCE,
        cudnn_attention_from=_torchtitan_cudnn_from(on),
        saves_cudnn_attention=on >= TORCHTITAN_SAVES_CUDNN_ATTENTION_SINCE,
        saves_reduce_scatter=not unsaved_from <= on < unsaved_until)
TRANSFORMERS_GENERATE_CACHE_OBJECT_SINCE = date(2024, 6, 27)
"""transformers v4.42.0 (its wheel's date): `generate` uses one `DynamicCache` instance by
default ("This will avoid back and forth from legacy format"), so a decode step no longer holds
the previous cache beside the new one (`TransformersCode.generate_holds_two_caches`), and frees
the prefill's outputs before the first decode step (`generate_keeps_prefill_outputs`)."""
TRANSFORMERS_LAST_LOGITS_ONLY_SINCE = date(2024, 9, 25)
"""transformers v4.45.0 (its wheel's date): `generate` asks the model for the last position's
logits only (`TransformersCode.generate_all_prompt_logits`)."""
TRANSFORMERS_LOGITS_TO_KEEP_SINCE = {
    "falcon": date(2024, 12, 5),  # v4.47.0
    "gpt_neox": date(2025, 2, 17),  # v4.49.0
    "gpt2": date(2025, 6, 26),  # v4.53.0
    **dict.fromkeys(("gptj", "gpt_bigcode", "opt", "bloom", "mpt", "gpt_neo"),
                    date(2026, 1, 26)),  # v5.0.0
}
"""The first release (its wheel's date) whose causal-LM forward of the model type takes
`num_logits_to_keep`/`logits_to_keep` (`TransformersCode.full_logits_types`), where it came after
`TRANSFORMERS_LAST_LOGITS_ONLY_SINCE`: read in the v4.41.2, v4.44.2, v4.45.2, v4.46.0, v4.46.3,
v4.47.0, v4.48.0, v4.49.0, v4.50.0, v4.51.3, v4.52.4, v4.53.0, v4.55.4, v4.56.0, v4.57.6 and
v5.0.0 wheels (Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Gemma, Gemma 2, Phi, Phi-3, StableLM,
OLMo and StarCoder2 from v4.45.0; the model types added later from their first release)."""
TRANSFORMERS_LOGITS_SLICED_FIRST_SINCE = date(2024, 12, 5)
"""transformers v4.47.0 (its wheel's date): `generate` slices the last position before copying
it (`TransformersCode.generate_clones_logits` before)."""
TRANSFORMERS_WARMUP_SINCE = date(2025, 3, 21)
"""transformers v4.50.0 (its wheel's date): `caching_allocator_warmup`
(`TransformersCode.warms_up_allocator`), counting a tied head twice
(`TransformersCode.warmup_counts_tied`)."""
TRANSFORMERS_WARMUP_HEADROOM_SINCE = date(2025, 5, 20)
"""transformers v4.52.0 (its wheel's date): the warm-up leaves 1.2 GiB of the free memory
(`TransformersCode.warmup_keeps_headroom`)."""
TRANSFORMERS_WARMUP_SKIPS_TIED_SINCE = date(2025, 7, 25)
"""transformers v4.54.0 (its wheel's date): the warm-up skips tied weights."""
TRANSFORMERS_ROPE_CACHES_UNTIL = {
    "llama": date(2024, 5, 17),  # v4.41.0
    "mistral": date(2024, 6, 27),  # v4.42.0
    **dict.fromkeys(("qwen2", "qwen2_moe", "phi", "stablelm", "starcoder2", "falcon", "gpt_neox"),
                    date(2024, 9, 25)),  # v4.45.0
    "mixtral": date(2025, 1, 10),  # v4.48.0
}
"""The first release (its wheel's date) whose model type no longer keeps per-layer rotary tables
(`TransformersCode.rope_caches`): read in the v4.32.0, v4.36.2, v4.38.2, v4.40.2, v4.41.0,
v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.0, v4.46.0, v4.47.0 and v4.48.0 wheels."""
TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL = {
    "gptj": date(2024, 9, 25),  # v4.45.0
    "gpt_neox": date(2025, 2, 17),  # v4.49.0
    "gpt2": date(2026, 2, 16),  # v5.2.0
}
"""The first release (its wheel's date) whose model type no longer registers a causal mask per
layer (`TransformersCode.layer_mask_buffers`): measured by the buffers of a model built from a
config in the v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.0, v4.45.2, v4.48.3, v4.49.0, v4.50.0,
v4.51.3, v4.53.3, v4.55.4, v5.0.0, v5.1.0, v5.2.0, v5.3.0, v5.6.0, v5.8.0, v5.9.0, v5.10.4,
v5.16.0, v5.20.0, v5.22.0 and v5.25.0 releases."""
TRANSFORMERS_MODEL_MASK_BUFFER_TYPES = frozenset({"gpt_bigcode"})
"""The model types whose model registers one bool causal mask of `max_position_embeddings`^2
(`GPTBigCodeModel`'s `bias`), in every release measured (`TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL`
lists them)."""
TRANSFORMERS_FUSED_QKV_CACHE_VIEW_TYPES = frozenset({"gpt2", "gpt_neox", "gpt_bigcode", "phi3",
                                                     "mpt"})
"""The model types whose prompt cache holds views of the fused q/k/v projection
(`TransformersCode.fused_qkv_cache_views`) until `TRANSFORMERS_CACHE_COPIES_SINCE`: measured in
the v4.31.0, v4.35.2, v4.41.2, v4.42.4, v4.43.4, v4.44.2, v4.45.2, v4.48.3, v4.51.3, v4.53.3
and v4.55.4 releases (Phi-3 from its first, v4.40; MPT from v4.35.2)."""
TRANSFORMERS_BLOOM_QKV_VIEWS_SINCE = date(2024, 8, 6)
"""transformers v4.44.0 (its wheel's date): BLOOM's cache holds views of `query_key_value`'s
output (v4.43.4's `reshape`s copied them)."""
TRANSFORMERS_CACHE_COPIES_SINCE = date(2025, 8, 29)
"""transformers v4.56.0 (its wheel's date): `DynamicLayer.update` copies the first entry
(`torch.cat` onto the empty tensor of `lazy_initialization`)."""
TRANSFORMERS_MASK_BUFFER_TYPES = frozenset({"llama", "gemma"})
"""The model types whose model registered a `max_position_embeddings`^2 causal mask at
construction in v4.38 (`TransformersCode.causal_mask_buffer_itemsize`); Mistral, Qwen2 and the
others kept building theirs per forward."""
TRANSFORMERS_INT64_MASK_BUFFER_SINCE = date(2024, 2, 21)
"""transformers v4.38.0 (its wheel's files, v4.38.1's the same day): Llama's and Gemma's int64
causal-mask buffer."""
TRANSFORMERS_BOOL_MASK_BUFFER_SINCE = date(2024, 3, 1)
"""transformers v4.38.2 (its wheel's files): the buffer is bool."""
TRANSFORMERS_NO_MASK_BUFFER_SINCE = date(2024, 3, 20)
"""transformers v4.39.0 (its wheel's files): no buffer; the mask is built per forward."""
TRANSFORMERS_CHECKPOINTING_LAYER_SINCE = date(2025, 5, 20)
"""transformers v4.52.0 (its wheel's date): `GradientCheckpointingLayer` checkpoints inside the
decoder layer's `__call__` (`TransformersCode.checkpoints_around_layers`)."""
TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE = date(2026, 1, 26)
TRANSFORMERS_GPT_OSS_SINCE = date(2025, 8, 5)
TRANSFORMERS_GPT_OSS_EXPERT_VIEWS_SINCE = date(2025, 8, 29)
"""v4.55.0 (gpt-oss's first release, its wheel's date) and v4.56.0 (`expert_idx[0]`): the dates
of `TransformersCode.gpt_oss_expert_copies`; the loop ends with v5.0.0
(`TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE`, the same release)."""
"""transformers v5.0.0 (its wheel's date): non-reentrant checkpointing by default
(`TransformersCode.reentrant_checkpointing`)."""
TRANSFORMERS_MOE_EXPERT_LINEARS = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "olmoe"})
"""The model types whose experts are `nn.Linear` MLPs in a Python loop until v5.0.0
(`TransformersCode.moe_expert_linears`): Mixtral, Qwen2-MoE and OLMoE read in the v4.48.1
wheel, all four in the v4.57.6 wheel; v5.0.0's wheel (2026-01-26,
`TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE`) has `MixtralExperts` of 3-D parameters.
DeepSeek's and GLM-4.5's loops weight the experts in their fp32 router's dtype and are not
listed; gpt-oss's and Llama 4's experts were 3-D parameters from the first."""
TRANSFORMERS_LLAMA_UNCLAMPED_SINCE = date(2023, 6, 8)
"""transformers v4.30.0 (the date of its wheel's files): Llama's eager attention no longer
clamps its masked scores (`TransformersCode.clamped_scores`)."""
TRANSFORMERS_LLAMA_FP32_LOGITS_SINCE = date(2023, 7, 18)
"""transformers v4.31.0: `LlamaForCausalLM.forward` upcasts its logits (`logits =
logits.float()`); before it, the loss ran on the 16-bit logits (`TransformersCode.loss_16bit`)."""
LEGACY_16BIT_LOSS_TYPES = frozenset({"opt", "gpt2", "bloom", "gpt_bigcode", "gpt_neox", "falcon"})
"""The model types whose own loss took no fp32 copy until v4.49.0
(`TransformersCode.loss_16bit`)."""
@dataclass(frozen=True, slots=True)
class RemoteCode:
    """What a remote-code model's own modeling file does when it runs, whatever transformers
    release runs it (`vramplan.model.hf_remote_code` reads its config.json). Every one written
    against transformers 4.3x: its causal-LM loss shifts the logits by a copy
    (`logits[..., :-1, :].contiguous()`), and its attention returns the cache as `(key, value)`
    tuples grown by `torch.cat`, which `generate` keeps beside the next step's."""

    modeling_file: str
    """The file read, and the copy it was read in."""
    logits_fp32: bool
    """The forward upcasts its logits (`.float()`, ChatGLM's `.to(torch.float32)`) before the
    loss; else the loss runs on the 16-bit logits."""
    prompt_logits: bool
    """`generate`'s prefill gets every prompt position's logits: the head runs on every
    position (False: ChatGLM's `return_last_logit`)."""
    cache_views: bool
    """The prompt's cached value is a view of the layer's fused q/k/v output (the key being
    rebuilt by the rotary embedding), until a decode step's `torch.cat` replaces it."""
    norm_head: bool = False
    """The head normalizes its weight in every training forward (Baichuan 2's `NormHead`:
    `norm_weight = nn.functional.normalize(self.weight)`, a vocabulary x hidden tensor that
    `F.linear` keeps for backward)."""


REMOTE_CODE: dict[str, RemoteCode] = {
    "qwen": RemoteCode(
        "Qwen/Qwen-7B modeling_qwen.py @d4efd21e (git mirror github.com/zhangningboo/Qwen-7B): "
        "`lm_logits = self.lm_head(hidden_states)`, `shift_logits = lm_logits[..., :-1, "
        ":].contiguous()`, no upcast; `present = (key, value)`, the value split from `c_attn`",
        logits_fp32=False, prompt_logits=True, cache_views=True),
    "chatglm": RemoteCode(
        "THUDM/chatglm3-6b modeling_chatglm.py (git mirror github.com/czk1997/chatglm3-copy "
        "@456aa875): `lm_logits.transpose(0, 1).contiguous()`, `lm_logits.to(torch.float32)`, "
        "then the shifted copy; `prepare_inputs_for_generation` passes `return_last_logit=True`; "
        "`kv_cache = (key_layer, value_layer)`, the value split from `query_key_value`",
        logits_fp32=True, prompt_logits=False, cache_views=True),
    "baichuan": RemoteCode(
        "baichuan-inc/Baichuan2-13B-Chat modeling_baichuan.py @c6f8592a (git mirror "
        "github.com/jrd77/Baichuan2-13B-Chat): `logits = self.lm_head(hidden_states)`, the shifted "
        "copy, no upcast; `NormHead` normalizes its weight in training; the value taken from "
        "`W_pack`'s output through `unflatten`/`transpose` (not read as a view)",
        logits_fp32=False, prompt_logits=True, cache_views=False, norm_head=True),
    "internlm2": RemoteCode(
        "internlm/internlm2 modeling_internlm2.py (OpenGVLab/InternVL's copy, "
        "internvl_chat/internvl/model/internlm2/modeling_internlm2.py @0c8993dc): "
        "`logits = logits.float()`, the shifted copy; the value a slice of `wqkv`'s rearranged "
        "output",
        logits_fp32=True, prompt_logits=True, cache_views=True),
}
"""The remote-code model types, by `model_type`."""
TRANSFORMERS_LOSS_FUNCTION_SINCE = date(2024, 10, 24)
"""transformers v4.46.0 (PyPI upload date): `self.loss_function` (`ForCausalLMLoss`) upcasts,
the model returns 16-bit logits."""
TRANSFORMERS_SHIFTS_LABELS_SINCE = date(2025, 2, 17)
"""transformers v4.49.0 (PyPI upload date): `ForCausalLMLoss` shifts the labels, not the
logits; OPT's eager attention no longer clamps its scores; GPT-NeoX's softmax runs in fp32."""


def transformers_code(on: date | None) -> TransformersCode:
    """transformers' model code as of `on`; None: today's."""
    if on is None:
        return TransformersCode(logits_fp32_in_model=False, shifts_logits=False,
                                warmup_keeps_headroom=True)
    clamped = frozenset({"opt"} if on < TRANSFORMERS_SHIFTS_LABELS_SINCE else set()) \
        | frozenset({"llama"} if on < TRANSFORMERS_LLAMA_UNCLAMPED_SINCE else set())
    loss_16bit = (LEGACY_16BIT_LOSS_TYPES if on < TRANSFORMERS_SHIFTS_LABELS_SINCE
                  else frozenset()) \
        | frozenset({"llama"} if on < TRANSFORMERS_LLAMA_FP32_LOGITS_SINCE else set())
    return TransformersCode(
        logits_fp32_in_model=on < TRANSFORMERS_LOSS_FUNCTION_SINCE,
        shifts_logits=on < TRANSFORMERS_SHIFTS_LABELS_SINCE, loss_16bit=loss_16bit,
        generate_holds_two_caches=on < TRANSFORMERS_GENERATE_CACHE_OBJECT_SINCE,
        generate_keeps_prefill_outputs=on < TRANSFORMERS_GENERATE_CACHE_OBJECT_SINCE,
        generate_all_prompt_logits=on < TRANSFORMERS_LAST_LOGITS_ONLY_SINCE,
        full_logits_types=frozenset(
            model_type for model_type, since in TRANSFORMERS_LOGITS_TO_KEEP_SINCE.items()
            if TRANSFORMERS_LAST_LOGITS_ONLY_SINCE <= on < since),
        generate_clones_logits=TRANSFORMERS_LAST_LOGITS_ONLY_SINCE <= on
        < TRANSFORMERS_LOGITS_SLICED_FIRST_SINCE,
        warms_up_allocator=on >= TRANSFORMERS_WARMUP_SINCE,
        warmup_counts_tied=TRANSFORMERS_WARMUP_SINCE <= on < TRANSFORMERS_WARMUP_SKIPS_TIED_SINCE,
        warmup_keeps_headroom=on >= TRANSFORMERS_WARMUP_HEADROOM_SINCE,
        clamped_scores=clamped,
        reentrant_checkpointing=on < TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE,
        checkpoints_around_layers=on < TRANSFORMERS_CHECKPOINTING_LAYER_SINCE,
        gpt_oss_expert_loop=TRANSFORMERS_GPT_OSS_SINCE <= on
        < TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE,
        gpt_oss_expert_copies=TRANSFORMERS_GPT_OSS_SINCE <= on
        < TRANSFORMERS_GPT_OSS_EXPERT_VIEWS_SINCE,
        moe_expert_linears=TRANSFORMERS_MOE_EXPERT_LINEARS
        if on < TRANSFORMERS_NONREENTRANT_CHECKPOINTING_SINCE else frozenset(),
        rope_caches=frozenset(model_type for model_type, until
                              in TRANSFORMERS_ROPE_CACHES_UNTIL.items() if on < until),
        causal_mask_buffer_itemsize=_causal_mask_buffer_itemsize(on),
        fused_qkv_cache_views=_fused_qkv_cache_views(on),
        softmax_16bit=frozenset({"gpt_neox"} if on < TRANSFORMERS_SHIFTS_LABELS_SINCE
                                else set()),
        layer_mask_buffers=frozenset(model_type for model_type, until
                                     in TRANSFORMERS_LAYER_MASK_BUFFERS_UNTIL.items()
                                     if on < until))


def _fused_qkv_cache_views(on: date) -> frozenset[str]:
    """`TransformersCode.fused_qkv_cache_views` as of `on`."""
    if on >= TRANSFORMERS_CACHE_COPIES_SINCE:
        return frozenset()
    bloom = frozenset({"bloom"} if on >= TRANSFORMERS_BLOOM_QKV_VIEWS_SINCE else set())
    return TRANSFORMERS_FUSED_QKV_CACHE_VIEW_TYPES | bloom


def _causal_mask_buffer_itemsize(on: date) -> int:
    """`TransformersCode.causal_mask_buffer_itemsize` as of `on`."""
    if not TRANSFORMERS_INT64_MASK_BUFFER_SINCE <= on < TRANSFORMERS_NO_MASK_BUFFER_SINCE:
        return 0
    return 1 if on >= TRANSFORMERS_BOOL_MASK_BUFFER_SINCE else 8


def framework_defaults(framework: Framework) -> FrameworkDefaults:
    return DEFAULTS[framework]


def default_optimizer_impl(framework: Framework, on: date | None) -> OptimizerImpl:
    """How `framework`'s AdamW steps when a run does not say, as of `on` (None: today)."""
    return DEFAULTS[framework].optimizer_impl or trainer_optimizer_impl(on)


def builds_transformers_adamw(framework: Framework, on: date | None) -> bool:
    """`framework`'s AdamW, when a run does not say, is transformers' own ("adamw_hf", the
    `Trainer`'s default before `HF_TRAINER_TORCH_ADAMW_SINCE`): its loop makes one temporary a
    parameter (`denom = exp_avg_sq.sqrt().add_(eps)`) where torch's `for-loop` makes two."""
    return DEFAULTS[framework].optimizer_impl is None \
        and not has_change(on, HF_TRAINER_TORCH_ADAMW_SINCE)


AXOLOTL_EMPTY_CACHE_AFTER_LOAD_SINCE = date(2024, 7, 18)
"""axolotl 7830fe04b (#1767): `load_model` ends with `gc.collect(); torch.cuda.empty_cache()`
three times, after the adapters and the k-bit preparation (src/axolotl/loaders/model.py
@067b021c keeps it): what loading left in the allocator's cache is released before training."""
ACCELERATE_FSDP2_EMBEDDING_APART_SINCE = date(2026, 4, 24)
"""huggingface/accelerate 60b5c258 (#4015, "Fsdp2 fully_shard embedding and norm", first in
v1.14.0): `fsdp2_prepare_model` shards the input embedding and the final norm with the head as
units of their own; before, they stayed in the root unit (`fully_shard(model)`), which FSDP2 keeps
gathered from forward to backward."""


def embedding_apart(framework: Framework, on: date | None) -> bool:
    """`framework`'s FSDP2 wrapping shards the token embedding as a unit of its own, as of `on`
    (None: today's): `FrameworkDefaults.fsdp2_embedding_apart`, accelerate's from
    `ACCELERATE_FSDP2_EMBEDDING_APART_SINCE` for the stacks that prepare their model through it,
    torchtitan's as its code of that date did (`TorchtitanCode.embedding_apart`)."""
    if framework is Framework.TORCHTITAN:
        return torchtitan_code(on).embedding_apart
    defaults = DEFAULTS[framework]
    if defaults.fsdp2_embedding_apart and defaults.model_code is ModelCode.TRANSFORMERS:
        return has_change(on, ACCELERATE_FSDP2_EMBEDDING_APART_SINCE)
    return defaults.fsdp2_embedding_apart


def runs_transformers_code(framework: Framework) -> bool:
    """`framework` runs transformers' model code (`ModelCode.TRANSFORMERS`), whose dated
    behaviours `transformers_code` gives."""
    return DEFAULTS[framework].model_code is ModelCode.TRANSFORMERS


TORCHTUNE_FSDP2_SINCE = {Method.FULL: date(2024, 8, 11), Method.FREEZE: date(2024, 8, 11),
                         Method.LORA: date(2024, 9, 10)}
"""When torchtune's distributed recipes moved from FSDP1 (`FullyShardedDataParallel` with
its wrap policies) to FSDP2 (`fully_shard`, `training.shard_model`): full fine-tuning in
afd23fd0b ("Full finetune FSDP2 recipe (#1287)", 2024-08-11), LoRA in 6deeda92c ("LoRA FSDP2
recipe migration (#1517)", 2024-09-10; git log -S of recipes/full_finetune_distributed.py and
lora_finetune_distributed.py). Its distributed QLoRA only ever ran on FSDP2 (the dev recipe
lora_finetune_fsdp2.py before #1517)."""


def default_fsdp_version(framework: Framework, method: Method, on: date | None) -> FsdpVersion:
    """The FSDP a `fsdp` run of `framework` gets when it names none, as of its code's date `on`
    (None: today's): the framework's (`FrameworkDefaults.fsdp_version`), but FSDP1 for a
    torchtune full or LoRA run dated before its recipe moved to FSDP2
    (`TORCHTUNE_FSDP2_SINCE`)."""
    since = TORCHTUNE_FSDP2_SINCE.get(method) if framework is Framework.TORCHTUNE else None
    if since is not None and on is not None and on < since:
        return FsdpVersion.FSDP1
    return DEFAULTS[framework].fsdp_version


LIGHTNING_PRECISION_ALIASES = {"16": Precision.AMP, "bf16": Precision.AMP, "32": Precision.FP32}
"""Lightning's older names of its precisions, which it still reads (litgpt runs on it;
lightning/fabric/plugins/precision/precision.py `_PRECISION_INPUT_STR_ALIAS_CONVERSION`: "16"
is "16-mixed", "bf16" is "bf16-mixed", "32" is "32-true")."""


def default_optimizer(framework: Framework, method: Method) -> Optimizer:
    """The optimizer of a training run that names none: AdamW, but bitsandbytes' PagedAdamW for
    a litgpt QLoRA run, whose scripts replace the AdamW they build when the model is quantized
    (litgpt/finetune/lora.py: `if isinstance(fabric.strategy.precision, BitsandbytesPrecision):
    optimizer = instantiate_bnb_optimizer(...)`, litgpt/utils.py: `bnb.optim.PagedAdamW`; since
    QLoRA came to litgpt, 064fd523, #275, 2023-08-21)."""
    if framework is Framework.LITGPT and method is Method.QLORA:
        return Optimizer.PAGED_ADAMW
    return Optimizer.ADAMW


TRANSFORMERS_SDPA_DEFAULT_SINCE = date(2023, 12, 11)
"""transformers v4.36.0 (released 2023-12-11) made `attn_implementation="sdpa"` the default of
the models that support it (PR #26572, "F.scaled_dot_product_attention support"; issue #28005:
"In Transformers 4.36, we started adding native support of ... SDPA, enabled by default");
before, its models ran their eager attention."""


SDPA_BEFORE_THE_DEFAULT = frozenset({"falcon"})
"""The `model_type`s whose transformers code called `F.scaled_dot_product_attention` itself
before v4.36.0: Falcon without ALiBi (`FalconAttention.forward`, as its remote modelling_RW.py
did: `if alibi is None: ... F.scaled_dot_product_attention(query_layer_, key_layer_, ...)`)."""


MEGATRON_TE_DEFAULT_SINCE = date(2024, 4, 2)
"""NVIDIA/Megatron-LM e7b74a4b7e ("Change default `transformer_impl` to `transformer_engine`
instead of `local`", 2024-04-02; megatron/training/arguments.py): before it a run that did not
pass `--use-flash-attn` or `--transformer-impl transformer_engine` ran the local unfused
attention (`CoreAttention`: `baddbmm` scores and a fused scale-mask-softmax)."""
TE_FUSED_ATTENTION_CAPABILITY = (8, 0)
"""Transformer Engine's flash and cuDNN fused attention backends need sm80 or newer
(`get_attention_backend`, transformer_engine/pytorch/attention: "flash-attn is only supported
for sm80+" and the fused backends' own checks, TE 1.10); below it TE runs its unfused
attention."""


def default_attention(framework: Framework, on: date | None,
                      model_type: str | None = None,
                      capability: tuple[int, int] | None = None) -> Attention:
    """The attention of a run that names none:
    - transformers' model code: eager when dated before `TRANSFORMERS_SDPA_DEFAULT_SINCE`, else
      SDPA. Unsloth patches in its own attention kernels whatever the date, and Falcon's code
      called SDPA itself (`SDPA_BEFORE_THE_DEFAULT`). Models that gained SDPA after v4.36
      (GPT-NeoX in v4.42.0, OPT later) are not told apart: they ran eager longer than this says;
    - Megatron-LM: its local unfused attention when dated before Transformer Engine became its
      default (`MEGATRON_TE_DEFAULT_SINCE`) or on a card below sm80 (`capability`, where TE has
      no fused backend: `TE_FUSED_ATTENTION_CAPABILITY`), else TE's flash or fused attention;
    - Unsloth on gpt-oss: its Flex Attention (Unsloth's docs, "Long Context gpt-oss Training",
      as copied in radna0/cuda-norm docs/test/longcontext.md: "Unsloth Flex Attention support
      for OpenAI gpt-oss training"), which keeps no score matrix, where transformers' SDPA
      cannot run gpt-oss's attention sinks;
    - else SDPA."""
    if framework is Framework.UNSLOTH and model_type == "gpt_oss":
        return Attention.FLASH
    if runs_transformers_code(framework) and framework is not Framework.UNSLOTH \
            and model_type not in SDPA_BEFORE_THE_DEFAULT \
            and on is not None and on < TRANSFORMERS_SDPA_DEFAULT_SINCE:
        return Attention.EAGER
    if DEFAULTS[framework].model_code is ModelCode.MEGATRON:
        if (on is not None and on < MEGATRON_TE_DEFAULT_SINCE) or \
                (capability is not None and capability < TE_FUSED_ATTENTION_CAPABILITY):
            return Attention.EAGER
        return Attention.FLASH
    return Attention.SDPA


MEGATRON_CORE_RELEASE_DATES: dict[tuple[int, int], date] = {
    # NVIDIA/Megatron-LM release tags and their commits' dates (git log -1 core_r0.N.0)
    (0, 5): date(2024, 2, 26),  # core_r0.5.0, 0acc240e
    (0, 7): date(2024, 5, 30),  # core_r0.7.0, a645f896
    (0, 8): date(2024, 8, 12),  # core_r0.8.0, baf94af3
}
MEGATRON_MAX_SUBTRACTED_IN_PLACE_SINCE = date(2024, 6, 13)
"""NVIDIA/Megatron-LM 9634c0e4 (first in core_r0.8.0): the vocabulary-parallel cross-entropy
subtracts the logits' maximum in place (`vramplan.training.activations.head.HeadSpec.
megatron_max_subtracted_apart` before it)."""


TE_DUMMY_WGRAD_CACHE_SINCE = date(2025, 4, 8)
"""NVIDIA/TransformerEngine ba5dc5dde (#1651, 2025-04-08, first in v2.3): with fused weight-
gradient accumulation `_Linear` and `_LayerNormLinear` return `get_dummy_wgrad(shape, dtype)`,
one tensor per (shape, dtype) cached in the module-level `_dummy_wgrads` and never freed
(transformer_engine/pytorch/module/base.py); before it, a fresh `torch.empty` each backward
(`vramplan.training.dummy_wgrads`)."""
TE_GROUPED_DUMMY_WGRAD_CACHE_SINCE = date(2025, 10, 27)
"""NVIDIA/TransformerEngine d2945c6a5 (#2305, 2025-10-27, first in v2.10): `GroupedLinear`, the
routed experts' linear, takes its dummy weight gradients from the same cache."""
MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE = date(2025, 5, 20)
"""NVIDIA/Megatron-LM 2659630721 (!2668 "perf(MoE): Memory efficient token permutation", 2025-04-09
on main), dated by its first release, core_v0.12.1 of 2025-05-20 (core_r0.11.0 and core_v0.12.0
of 2025-05-06 still have the old code, checked by ancestry): Megatron-Core runs from release
branches (ms-swift's Megatron-SWIFT cloned `core_r0.11.0` until it moved to core_r0.13.0,
swift/megatron/init.py), not main. With it, the routed experts multiply their activation by the
routing probabilities (megatron/core/transformer/moe/experts.py `TEGroupedMLP.forward`:
`weighted_bias_swiglu_impl(intermediate_parallel, bias_parallel, permuted_probs)`, or
`activation_func_with_probs`), and the token dispatchers restore the token order without them
(token_dispatcher.py `MoEAlltoAllTokenDispatcher.combine_postprocess`: `unpermute(...)` without
`probs`; the flex dispatcher's `HybridEPCombine`/`FusedCombine` keep only their handle), so
nothing keeps the experts' fc2 output. Before it `unpermute(..., probs=self.probs)` weighted
that output (moe_utils.py `unpermute`: `permuted_tokens * permuted_probs.unsqueeze(-1)`, or
Transformer Engine's `moe_unpermute` with `probs`), which keeps it for the probabilities'
gradient (`vramplan.training.activations.spec.BlockSpec.moe_output_weighted`)."""
MEGATRON_HEAD_DUMMY_WGRAD_CACHE_SINCE = date(2025, 8, 1)
"""NVIDIA/Megatron-LM e7c55de99e (2025-08-01, first in core_v0.14.0): Megatron's own linear
(`LinearWithGradAccumulationAndAsyncCommunication`, megatron/core/tensor_parallel/layers.py),
the output layer's, takes its dummy weight gradient from Transformer Engine's cache when TE is
installed; before it, a fresh `torch.empty` each backward."""


ACCELERATE_FSDP2_NO_SYNC_SINCE = date(2025, 9, 7)
"""The transformers Trainer runs every micro-batch but the last in `accelerator.no_sync(model)`
(trainer.py `_inner_training_loop`). huggingface/accelerate ec92b1af (#3762, 2025-09-07, first
released in v1.11.0): under FSDP2,
`Accelerator.no_sync` calls `model.set_requires_gradient_sync(False)`, so FSDP2 keeps the
unsharded gradients between micro-batches. Before it (v1.10.1, and 9359a019, the commit axolotl
pinned in August 2025) `no_sync` was `getattr(model, "no_sync", nullcontext)`: a `fully_shard`
module has no `no_sync`, so every micro-batch's gradients were reduce-scattered and kept
sharded."""


def accumulate_without_sync(framework: Framework, fsdp_version: FsdpVersion,
                            on: date | None = None) -> bool:
    """Whether `framework` accumulates gradients inside FSDP's/DDP's `no_sync()` (unsharded
    gradients kept whole between micro-batches), with its code as of `on` (None: today's):
    accelerate's `no_sync` reached FSDP2 only on `ACCELERATE_FSDP2_NO_SYNC_SINCE`."""
    defaults = DEFAULTS[framework]
    if defaults.accelerate_no_sync and fsdp_version is FsdpVersion.FSDP2 and on is not None \
            and on < ACCELERATE_FSDP2_NO_SYNC_SINCE:
        return False
    return defaults.accumulate_without_sync


def default_gradient_accumulation(framework: Framework, method: Method) -> bool:
    """Whether a run of `framework` accumulates gradients over micro-batches when it does not
    say (the case format has no column for it)."""
    defaults = DEFAULTS[framework]
    return defaults.accumulates_adapters if method.uses_lora else defaults.accumulates_full


@dataclass(frozen=True, slots=True)
class FrameworkReading:
    """A framework name as read: the framework, and whether the name was unknown (then read as
    `generic`, whose defaults are those of a plain PyTorch loop on transformers modules)."""

    framework: Framework
    unknown_name: str | None = None


def read_framework(text: str | None) -> FrameworkReading:
    """`text` as a framework: empty is `generic`; an unknown name is read as `generic` too, and
    returned so the caller can say so (a stack not in the vocabulary still trains a model)."""
    if text is None or not text.strip():
        return FrameworkReading(Framework.GENERIC)
    framework = member_named(Framework, text)
    if framework is None:
        framework = _one_stack_named(text)
    if framework is None:
        return FrameworkReading(Framework.GENERIC, unknown_name=text.strip())
    return FrameworkReading(framework)


_STACKS_JOINED = re.compile(r"\s*(?:\+|&|,|\band\b|\bwith\b|\bon\b)\s*", re.IGNORECASE)


def _one_stack_named(text: str) -> Framework | None:
    """The framework that libraries named together all run on (`PEFT + TRL`, `transformers and
    peft`: transformers), or None where they name different ones or one is unknown."""
    parts = [part for part in _STACKS_JOINED.split(text) if part.strip()]
    named = {member_named(Framework, part) for part in parts}
    if len(parts) < 2 or len(named) != 1 or None in named:
        return None
    return named.pop()
