"""What each training stack does when a setting is left to it (`FrameworkDefaults`, one entry
per framework, each default with the file it was read in), and the rules that pick a default
from a setup (attention, optimizer, FSDP version, gradient accumulation) or read a stack's name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from vramplan.presets.frameworks.dates import has_change
from vramplan.presets.frameworks.torchtitan import torchtitan_code
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
    between forward and backward (`vramplan.distributed.parallelism.Parallelism.embedding_apart`;
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
