"""What a row's `notes` (and `source`) say about how its run was made, where the format has no
column for it: the `*_NOTE` patterns and the readers that take a `Case` and return one fact
(compiled, the code's date, the allocator settings, the parallel sizes...), each with the
`TrainingSetup`, `Parallelism` or `InferenceInputs` field it sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

from vramplan.allocator import PYTORCH_DEFAULTS, AllocatorConfig, AllocConfError, parse_alloc_conf
from vramplan.distributed.defaults import MS_SWIFT_ZERO3, ZERO3_CONFIG_FILES
from vramplan.distributed.parallelism import (
    FSDP_SCHEMES,
    SHARDED_PARAMETER_SCHEMES,
    Zero3ConfigFile,
)
from vramplan.errors import UnknownName
from vramplan.presets.cuda import DRIVER_RESERVE_BYTES
from vramplan.presets.dynamic_quants import dynamic_quant_named_in, skip_modules_loaded
from vramplan.presets.frameworks.defaults import (
    LIGHTNING_PRECISION_ALIASES,
    ModelCode,
    default_gradient_accumulation,
    framework_defaults,
)
from vramplan.presets.frameworks.litgpt import LITGPT_COMMIT_DATES
from vramplan.presets.frameworks.megatron import MEGATRON_CORE_RELEASE_DATES
from vramplan.presets.frameworks.torchtune import (
    TORCHTUNE_COMMIT_DATES,
    TORCHTUNE_GENERATE_CACHE_FITS_SINCE,
    TORCHTUNE_KV_HEADS_CACHED_SINCE,
)
from vramplan.presets.frameworks.unsloth import unsloth_release_date
from vramplan.presets.inference_engines import VLLM_MEMORY_UTILIZATION
from vramplan.presets.litgpt_recipes import LITGPT_HUB_RECIPES, LITGPT_HUB_SOURCE, LitgptRecipe
from vramplan.presets.models import architecture_of, find_model
from vramplan.vocab import (
    Checkpointing,
    Framework,
    FsdpVersion,
    Loss,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Scheme,
    member_named,
)

if TYPE_CHECKING:
    from vramplan.validation.cases import Case


E = TypeVar("E", bound=StrEnum)

_UNDENIED = r"(?<!no )(?<!not )(?<!without )(?<!w/o )"
"""Prefix of a notes pattern: a name not denied ("no FSDP2", "not Unsloth", "without ...",
"w/o ...")."""
_NOT_SET_FALSE = r"(?!\W{0,4}(?:false|off|disabled|0)\b)"
"""Suffix of a notes pattern: a setting not given as off (`cut_cross_entropy: false`,
`optimizer_in_bwd=False`)."""

UNSLOTH_NOTE = re.compile(rf"{_UNDENIED}(?<!non-)\bunsloth\b(?!/)", re.IGNORECASE)
"""A row whose notes name Unsloth (not to deny it, "without Unsloth", nor as the organization of
a Hub repository, "unsloth/Mistral-7B-v0.2"): Unsloth loaded and ran
the model, which the format's frameworks cannot say: a `hf` or `generic` row is read as
`unsloth` (its nf4 with double quantization, its kernels and checkpointing:
`vramplan.presets.frameworks`)."""
TORCHTITAN_NOTE = re.compile(rf"{_UNDENIED}\btorchtitan\b", re.IGNORECASE)
"""A row whose notes or source name torchtitan (not to deny it): torchtitan ran it, its own
model code, FSDP2 with fp32 sharded parameters and its per-op selective checkpointing, which
the format's six frameworks cannot say (a run of it written `generic`, as a plain PyTorch loop,
would be read as transformers' model code under FSDP1). Its source counts too: every figure of
torchtitan's repository, pull requests and tutorials was logged by torchtitan's trainer."""
STACK_HOSTS = frozenset({Framework.HF, Framework.GENERIC})
"""The frameworks whose rows are read as another stack's when their notes name it
(`stack_named`)."""


def stack_named(framework: Framework, notes: str, source: str) -> Framework:
    """The stack a row ran: its `framework` cell, unless that cell is `hf` or `generic` and the
    row names a stack the format has no word for: Unsloth in its notes (`UNSLOTH_NOTE`; not its
    source, where benchmark tables also hold transformers' baselines), torchtitan in its notes
    or source (`TORCHTITAN_NOTE`)."""
    if framework not in STACK_HOSTS:
        return framework
    if UNSLOTH_NOTE.search(notes):
        return Framework.UNSLOTH
    if TORCHTITAN_NOTE.search(notes) or TORCHTITAN_NOTE.search(source):
        return Framework.TORCHTITAN
    return framework


QUANTIZED_EXPERTS_NOTE = re.compile(r"\bquantize_moe_experts\W{0,4}true\b", re.IGNORECASE)
"""A row whose notes say axolotl quantized the fused expert tensors
(`TrainingSetup.quantized_experts`)."""


USE_KERNELS_NOTE = re.compile(r"\buse_kernels\W{0,4}true\b", re.IGNORECASE)
"""A row whose notes say its model loaded with transformers' `use_kernels=True`."""


def unquantized_modules(case: Case) -> tuple[str, ...]:
    """The skip list of the 4-bit checkpoint a QLoRA row's notes name, else of the dynamic
    upload Unsloth loads for the row's model at its date, where it was read
    (`vramplan.presets.dynamic_quants`): `TrainingSetup.unquantized_modules`."""
    if case.method is not Method.QLORA:
        return ()
    quant = dynamic_quant_named_in(case.notes)
    if quant is not None:
        return quant.skip_modules
    return skip_modules_loaded(find_model(case.model).name, case.framework, code_date(case))


def moe_hub_kernel(case: Case) -> bool:
    """The Hub's MoE kernel replaced the experts' forward (`TrainingSetup.moe_hub_kernel`): the
    notes say `use_kernels` true, and the model loaded on its GPU; sharded by FSDP or ZeRO-3 it
    loads on the CPU (no `device_map`), where `kernelize` keeps the model's forward (transformers
    4.55 modeling_utils.py: `kernelize(model, device=Device(type=model.device.type))`; kernels
    0.9.0 maps no kernel to "cpu")."""
    return USE_KERNELS_NOTE.search(case.notes) is not None \
        and case.sharding not in SHARDED_PARAMETER_SCHEMES


_REENTRANT = re.compile(r"\b(?:use_reentrant|reentrant_checkpointing)\W{0,4}(true|false)\b",
                        re.IGNORECASE)
_NO_REENTRANT = re.compile(r"\bNO_REENTRANT\b")


def reentrant_checkpointing(case: Case) -> bool | None:
    """Whether a row's notes give its checkpointing as reentrant ("use_reentrant True/False",
    Answer.AI's "--reentrant_checkpointing True", torch's `CheckpointImpl.NO_REENTRANT`); None
    where they say nothing (`TrainingSetup.reentrant_checkpointing`)."""
    said = _REENTRANT.search(case.notes)
    if said is not None:
        return said.group(1).lower() == "true"
    return False if _NO_REENTRANT.search(case.notes) else None


COATI_TRAINER_NOTE = re.compile(r"\bcoati (?:ORPO|DPO|KTO|SimPO)Trainer\b")
"""A preference row whose notes name ColossalChat's trainer ("coati ORPOTrainer": hpcaitech/
ColossalAI applications/ColossalChat coati/trainer @d888c378), which runs the method its own way
(`AlignmentSetup.coati`)."""


NO_INPUT_REQUIRE_GRADS_NOTE = re.compile(r"\bconvert_to_lora_module\b")
"""A row whose adapters were made by ColossalChat's `convert_to_lora_module` (hpcaitech/
ColossalAI applications/ColossalChat coati/models/lora.py @d888c378: every `nn.Linear` becomes
its own `LoraLinear`, then loralib's `mark_only_lora_as_trainable`), not by peft: nothing calls
`enable_input_require_grads()`, and transformers' `gradient_checkpointing_enable` before v5 calls
it only for a loaded peft adapter (`TrainingSetup.input_require_grads` False)."""


SUBMODULE_CHECKPOINT_NOTE = re.compile(
    r"\bseparately with (?:torch(?:'s)? )?checkpoint_wrapper\b|"
    r"\bper[- ]sub-?module checkpoint_wrapper\b", re.IGNORECASE)
"""A row whose notes say each sub-module of a block is wrapped in a checkpoint of its own
("wraps, in every decoder layer, self_attn, mlp, input_layernorm and post_attention_layernorm
separately with torch checkpoint_wrapper", "per-sub-module checkpoint_wrapper checkpointing":
`TrainingSetup.checkpoint_submodules`)."""


CHECKPOINT_IN_UNITS_NOTE = re.compile(
    r"\bapply_activation_checkpointing\b|\bfsdp_activation_checkpointing\W{0,4}true\b|"
    r"--reentrant_checkpointing\b", re.IGNORECASE)
"""A row whose checkpoint wrapper sits inside each FSDP unit (`TrainingSetup.
checkpoint_in_units`): torch's `apply_activation_checkpointing`, accelerate's and llama-recipes'
`fsdp_activation_checkpointing`, and Answer.AI's train.py, whose `--reentrant_checkpointing` flag
exists only there (AnswerDotAI/fsdp_qlora train.py applies `apply_activation_checkpointing` to
the wrapped model)."""


LARGEST_BATCH_FIRST = re.compile(
    r"\b(?:longest|largest) (?:samples?|sequences?|examples?|batch)\b[^.;]{0,40}?\bfirst\b",
    re.IGNORECASE)
"""How a row's notes say that its run processed its largest batch first ("longest sample forced
into the first batch", "the longest sequence placed first", "largest batch first"): litgpt's
2023 finetune scripts put the longest sample into the first batch "so potential OOMs happen
right away" (Lightning-AI/litgpt finetune/lora.py @0010d8ef: `get_batch(..., longest_seq_ix
if iter_num == 0 else None)`), so later micro-batches, drawn at random, are shorter and unknown."""


_COMPILE_MENTION = re.compile(r"(?<![a-z])(?:torch[._ ]?)?compiled?\b", re.IGNORECASE)
_NEGATED_BEFORE = re.compile(r"\b(?:no|not|without|w/o)\s+$", re.IGNORECASE)
_FALSE_AFTER = re.compile(
    r"^\W{0,3}(?:flag\s+|mode\s+)?(?:\.?enabled?\s*)?(?:[:=]\s*)?"
    r"(?:false|off|disabled?|0|none|no|not\s+(?:stated|set|used|enabled))\b"
    r"|^\s+(?:from|by)\b", re.IGNORECASE)


def compiled(case: Case) -> bool:
    """Whether the row's run used torch.compile: its notes name it (`torch.compile`,
    `--training.compile`, `compile: True`, `compiled`) other than to deny it (`no compile`,
    `without torch.compile`, `not compiled`, and a config's `compile: False`, `compile=False`,
    `compile off`, `compile (off)`, `compile flag not stated`) or in its other sense ("figures
    compiled from Table 3", "compiled by the authors"); the format has no column for it."""
    return any(
        _NEGATED_BEFORE.search(case.notes, 0, m.start()) is None
        and _FALSE_AFTER.match(case.notes[m.end():]) is None
        for m in _COMPILE_MENTION.finditer(case.notes))


TE_CROSS_ENTROPY_NOTE = re.compile(
    r"\bcross_entropy_loss_fusion\W{0,4}true\W{0,4}impl\W{0,4}te\b"
    r"|\bcross_entropy_fusion_impl\W{0,4}(?:=\s*)?['\"]?te\b", re.IGNORECASE)
"""A Megatron row whose notes say its fused cross-entropy ran Transformer Engine's kernel
(`cross_entropy_fusion_impl te`): `TrainingSetup.te_cross_entropy`."""


CROSS_ENTROPY_FUSION_NOTE = re.compile(
    r"--cross-entropy-loss-fusion\b(?!\W{0,4}(?:=\s*)?false\b)"
    r"|\bcross_entropy_loss_fusion\W{0,4}(?:=\s*)?true\b", re.IGNORECASE)
"""A Megatron row whose notes say it fused its cross-entropy (`--cross-entropy-loss-fusion`,
`cross_entropy_loss_fusion true`): Megatron-LM's native implementation unless the notes name
Transformer Engine's (`TE_CROSS_ENTROPY_NOTE`): `TrainingSetup.native_fused_cross_entropy`."""


NO_GRADIENT_ACCUMULATION_FUSION_NOTE = re.compile(
    r"--no-gradient-accumulation-fusion\b"
    r"|\bgradient_accumulation_fusion\W{0,4}(?:=\s*)?false\b"
    r"|\bno_gradient_accumulation_fusion\W{0,4}(?:=\s*)?true\b", re.IGNORECASE)
"""A Megatron row whose notes say it ran without gradient-accumulation fusion
(`--no-gradient-accumulation-fusion`, `gradient_accumulation_fusion False`, ms-swift's
`no_gradient_accumulation_fusion true`): `TrainingSetup.gradient_accumulation_fusion`."""


NO_AUTOCAST_NOTE = re.compile(
    r"\b(?:no autocast|(?:use_amp|amp_training)\W{0,4}false)\b", re.IGNORECASE)
"""A row whose notes say its loop runs the model without `torch.autocast`
(`TrainingSetup.no_autocast`): "no autocast", universal-llm-trainer's `amp_training False`,
PEFT's MetaMathQA harness `use_amp false` (method_comparison/MetaMathQA/run.py: `autocast_ctx =
nullcontext` unless `use_amp`; default_training_params.json `"use_amp": false`)."""


TILED_MLP_NOTE = re.compile(
    r"\b(?:unsloth_)?tiled_mlp(?:_compute)?\W{0,4}(?:=\s*)?true\b"
    r"|\bUNSLOTH_TILED_MLP\s*=\s*[\"']?(?:arctic|1)\b", re.IGNORECASE)
"""A row whose notes say the MLP ran tiled (Unsloth's `unsloth_tiled_mlp True` or
`UNSLOTH_TILED_MLP=arctic`, axolotl's `tiled_mlp: true`, ArcticTraining's recipe key
`tiled_mlp_compute: true`, which calls DeepSpeed's `TiledMLP`): `TrainingSetup.tiled_mlp`."""


CHECKPOINTS_ON_HOST_NOTE = re.compile(r"\bactivation_checkpoint_cpu_offload\W{0,4}(?:=\s*)?true\b",
                                      re.IGNORECASE)
"""A row whose notes say ArcticTraining offloaded the checkpointed blocks' inputs to the CPU
(its recipe key `activation_checkpoint_cpu_offload: true`): `TrainingSetup.checkpoints_on_host`."""


LIGER_KERNELS_NOTE = re.compile(
    r"\b(?:use_liger(?:_kernel)?\W{0,4}(?:=\s*)?true\b(?!\s*/)|apply_liger_kernel\w*\b"
    r"|liger_rms_norm\b|LigerPlugin\b|AutoLigerKernelForCausalLM\b)", re.IGNORECASE)
"""A row whose notes say Liger-Kernel patched the model (`use_liger_kernel True`,
`--use_liger_kernel true`, `apply_liger_kernel_to_llama`, axolotl's `LigerPlugin` with
`liger_rms_norm`, `AutoLigerKernelForCausalLM`, whose `from_pretrained` applies the model
type's `apply_liger_kernel_to_*`: liger_kernel/transformers/auto_model.py; not a command's
`--use_liger True/False`): `TrainingSetup.liger_kernels`."""


FUSED_LOSS_NOTE = re.compile(
    rf"{_UNDENIED}"
    r"(?:\bcut[-_ ]cross[-_ ]entropy\b|\bCutCrossEntropy\w*|\bCEWithChunkedOutputLoss\b|"
    r"\bfused[-_ ]linear[-_ ]cross[-_ ]entropy\b|\bFusedLinearCrossEntropy\w*|"
    rf"\bchunked[-_ ](?:cross[-_ ]entropy|CE)\b|(?-i:\bCCE\b)){_NOT_SET_FALSE}", re.IGNORECASE)
"""A row whose notes name a loss that never holds the whole logits: Cut Cross-Entropy
(axolotl's `cut_cross_entropy: true`, its CutCrossEntropyPlugin), torchtune's
`CEWithChunkedOutputLoss`, a fused linear or chunked cross-entropy; not denied ("no CCE",
`cut_cross_entropy: false`). With Liger-Kernel's patching (`LIGER_KERNELS_NOTE`, whose
`fused_linear_cross_entropy` is on by default), an empty `loss` cell of a supervised row reads
`chunked` (`notes_loss`): a preference or RL trainer (TRL's GRPO, DPO) computes its loss from
the model's logits, which Liger's patched forward returns whole when no labels are passed."""


def notes_loss(notes: str) -> Loss | None:
    """The loss an empty `loss` cell reads as when the notes name a fused or chunked one
    (`FUSED_LOSS_NOTE`, `LIGER_KERNELS_NOTE`); None: the framework's default."""
    if FUSED_LOSS_NOTE.search(notes) or LIGER_KERNELS_NOTE.search(notes):
        return Loss.CHUNKED
    return None


OPTIMIZER_IN_BACKWARD_NOTE = re.compile(
    rf"{_UNDENIED}"
    r"(?:\boptimizer[-_ ]in[-_ ](?:bwd|backward)\b|\bopt[-_ ]in[-_ ](?:bwd|backward)\b|"
    r"\b(?:optimizer|SGD|AdamW?)(?:'s)?(?: step| update)? (?:fused |run |applied )?"
    r"(?:into|in|inside|during) "
    rf"(?:the )?backward\b){_NOT_SET_FALSE}", re.IGNORECASE)
"""A row whose notes say its optimizer stepped inside backward (torchtune's
`optimizer_in_bwd: True`, "optimizer in backward", "opt-in-bwd", "optimizer step fused into
backward"; not denied nor set false): an empty `optimizer_impl` cell reads `in-backward`
(`notes_optimizer_impl`)."""


def notes_optimizer_impl(notes: str) -> OptimizerImpl | None:
    """The step an empty `optimizer_impl` cell reads as when the notes say it ran inside
    backward (`OPTIMIZER_IN_BACKWARD_NOTE`); None: the framework's default."""
    return OptimizerImpl.IN_BACKWARD if OPTIMIZER_IN_BACKWARD_NOTE.search(notes) else None


_CHECKPOINTING = r"(?:use_|enable_|fsdp_)?(?:gradient|activation)[-_ ]checkpointing"
_SET_ON = r"\s*[=:]?\s*(?:default\s+)?['\"]?(?:true|yes|on|enabled|1|unsloth|offload)\b"
_SET_OFF = r"\s*[=:]?\s*['\"]?(?:false|no|off|disabled|none|0)\b"
CHECKPOINTING_ON_NOTE = re.compile(
    rf"(?<!no )(?<!no --)\b{_CHECKPOINTING}{_SET_ON}|"
    rf"(?<!no )--{_CHECKPOINTING}\b(?!{_SET_OFF})|\bgradient_checkpointing_enable\(|"
    rf"\b(?:with|w/) {_CHECKPOINTING}\b|\b{_CHECKPOINTING}\W{{0,3}}(?:of |on )?every\b|"
    rf"\bgradient_checkpointing(?:_kwargs)?\W{{0,4}}use_reentrant\b|"
    r"\bapply_activation_checkpointing\(|\bcheckpoint_wrapper\b|"
    r"\brecompute[-_ ]granularity\W{0,4}(?:full|selective)\b|"
    rf"(?<!no )--checkpoint[-_]activations\b(?!{_SET_OFF})|"
    r"\bactivation_checkpoint\.?\s*mode\W{0,4}['\"]?(?:full|selective)\b|"
    r"\bselective (?:activation )?(?:checkpointing|recomputation)\b", re.IGNORECASE)
"""A row whose notes set activation checkpointing on, as configs and command lines do
(`gradient_checkpointing=True`, `--gradient_checkpointing`, `gradient_checkpointing_enable()`,
torchtune's `enable_activation_checkpointing: True`, Unsloth's
`use_gradient_checkpointing="unsloth"`, axolotl's `gradient_checkpointing: offload`, a
`use_reentrant` given to it, torch's `apply_activation_checkpointing(` and `checkpoint_wrapper`,
Megatron-LM's `--recompute-granularity full` or `selective` and its older
`--checkpoint-activations`, litgpt's `--checkpoint_activations True`, torchtitan's
`activation_checkpoint.mode`) or say "with gradient checkpointing" or "activation checkpointing
of every block". Prose that only mentions it is not read: whether a
sentence denies it ("we did not turn on any memory-saving options, e.g. gradient
checkpointing") is not a pattern's to tell."""
CHECKPOINTING_OFF_NOTE = re.compile(
    rf"\b{_CHECKPOINTING}{_SET_OFF}|\b(?:no|without|w/o) (?:--)?{_CHECKPOINTING}\b(?! key)|"
    r"\brecompute[-_ ]granularity\W{0,4}none\b", re.IGNORECASE)
"""A row whose notes set activation checkpointing off (`gradient_checkpointing=False`,
`enable_activation_checkpointing: False`, "no gradient checkpointing", "without activation
checkpointing", `--recompute-granularity none`)."""


def notes_checkpointing(notes: str) -> Checkpointing | None:
    """The checkpointing an empty `checkpointing` cell reads as when the notes set it
    (`CHECKPOINTING_OFF_NOTE` first, then `CHECKPOINTING_ON_NOTE`: `selective` when they name
    Megatron's or torchtitan's selective mode, else `full`, every block); None: the framework's
    default."""
    if CHECKPOINTING_OFF_NOTE.search(notes):
        return Checkpointing.NONE
    found = CHECKPOINTING_ON_NOTE.search(notes)
    if found is None:
        return None
    return Checkpointing.SELECTIVE if "selective" in found.group(0).lower() \
        else Checkpointing.FULL


_OPTIMIZER_SET = re.compile(
    r"(?:\b(?:--)?(?:optim|optimizer(?:[-_ ]type)?|optimizer\.name)\b\s*(?:[=:]|\s)\s*['\"]?"
    r"([\w.\-]+)|\b((?:bitsandbytes|bnb|torch)\.optim\.\w+))"
    r"(?![^;]{0,80}\breplaced by\b)", re.IGNORECASE)
"""An optimizer as configs and command lines set it (`optim="paged_adamw_8bit"`, `--optim
adamw_bnb_8bit`, `optimizer: AdamW8bit`, "optimizer type AdamW") or by its class
(`bitsandbytes.optim.PagedAdamW8bit`, torchtune's `_component_`), not one a later clause says
was replaced ("optimizer torch.optim.AdamW ... replaced by bitsandbytes PagedAdamW")."""


def _only(named: set[E | None]) -> E | None:
    """The one value the notes name, None when they name none or several."""
    named.discard(None)
    return named.pop() if len(named) == 1 else None


def notes_optimizer(notes: str) -> Optimizer | None:
    """The optimizer an empty `optimizer` cell reads as: the one the notes set
    (`_OPTIMIZER_SET`, its value a name of the vocabulary's), when they set one only; None: the
    framework's default."""
    return _only({member_named(Optimizer, found.group(1) or found.group(2))
                  for found in _OPTIMIZER_SET.finditer(notes)})


_PRECISION_SET = re.compile(r"\b(?:--)?precision\b\s*[=: ]\s*['\"]?([\w\-]+)", re.IGNORECASE)
"""A precision as Lightning's and litgpt's command lines and configs set it (`--precision
bf16-true`, `precision: 16-mixed`)."""


def notes_precision(notes: str, lightning: bool = False) -> Precision | None:
    """The precision an empty `precision` cell reads as: the one the notes set
    (`_PRECISION_SET`, its value a name of the vocabulary's, `bf16-mixed` is `amp`, or, on a
    stack run by Lightning (`lightning`), one of its older names, `LIGHTNING_PRECISION_ALIASES`;
    other stacks give `bf16` other meanings: Answer.AI's `--precision bf16` is pure bf16), when
    they set one only; None: the framework's default."""
    aliases = LIGHTNING_PRECISION_ALIASES if lightning else {}
    return _only({member_named(Precision, found.group(1)) or aliases.get(found.group(1).lower())
                  for found in _PRECISION_SET.finditer(notes)})


_ZERO_STAGE = re.compile(
    rf"{_UNDENIED}(?:\bzero[-_ ]?(?:stage[-_ ]?)?|--zero[-_]stage[= ]\s*|\bzero_stage\W{{0,4}}|"
    r"\bzero_optimization\.stage\W{0,4}|\bstage\W{0,3})([0-3])\b(?!\.\d)", re.IGNORECASE)
_SHARDING_NAMED = (
    (re.compile(rf"{_UNDENIED}\b(?:SHARD_GRAD_OP|shard-grad-op)\b", re.IGNORECASE),
     Scheme.FSDP_GRAD_OP),
    (re.compile(rf"{_UNDENIED}\b(?:HYBRID_SHARD|HSDP)\b", re.IGNORECASE), Scheme.HSDP),
    (re.compile(rf"{_UNDENIED}\bNO_SHARD\b", re.IGNORECASE), Scheme.DDP),
    (re.compile(rf"{_UNDENIED}(?:\bFSDP[12]?\b(?![-_ ]?(?:grad|hybrid|no))|\bfully_shard\b|"
                r"\bFULL_SHARD\b|\bFullyShardedDataParallel\b)", re.IGNORECASE), Scheme.FSDP),
    (re.compile(rf"{_UNDENIED}(?:\bDDP\b|\bDistributedDataParallel\b)", re.IGNORECASE),
     Scheme.DDP),
)
_ZERO_STAGES = (Scheme.DDP, Scheme.ZERO1, Scheme.ZERO2, Scheme.ZERO3)


def notes_sharding(notes: str, gpus: int) -> Scheme | None:
    """The data-parallel scheme an empty `sharding` cell reads as: the one its notes name (a
    ZeRO stage, `--zero_stage 3`, `zero_optimization.stage 2`; FSDP and its sharding strategies,
    `fully_shard`; DDP), when they name one only and not to deny it; on one GPU only a ZeRO
    stage, which DeepSpeed runs there too (an FSDP or DDP named beside a one-GPU run is
    another run's). FSDP named with a ZeRO stage is FSDP's strategy of that name (FSDP's docs:
    FULL_SHARD is ZeRO-3, SHARD_GRAD_OP ZeRO-2; lightning-thunder's benchmark's `--shard_mode
    zero3`). None: the framework's default. Megatron-LM's rows read their distributed optimizer
    instead (`megatron_distributed_optimizer`)."""
    zero = {_ZERO_STAGES[int(found.group(1))] for found in _ZERO_STAGE.finditer(notes)}
    named: set[Scheme | None] = {scheme for pattern, scheme in _SHARDING_NAMED
                                 if gpus > 1 and pattern.search(notes)}
    if named == {Scheme.FSDP} and zero in ({Scheme.ZERO3}, {Scheme.ZERO2}):
        return Scheme.FSDP if zero == {Scheme.ZERO3} else Scheme.FSDP_GRAD_OP
    return _only(named | zero)


_OPTIMIZER_OFFLOAD = re.compile(
    r"(?<!no )(?:\boffload_optimizer\W{0,12}(?:device\W{0,4})?['\"]?cpu\b|"
    r"--adam_offload\b(?!\W{0,4}false))", re.IGNORECASE)
_OPTIMIZER_NOT_OFFLOADED = re.compile(
    r"\bno --adam_offload\b|\badam_offload\W{0,4}false\b|"
    r"\boffload_optimizer\W{0,12}(?:device\W{0,4})?['\"]?none\b", re.IGNORECASE)
_PARAMS_OFFLOAD = re.compile(
    r"\boffload_param\W{0,12}(?:device\W{0,4})?['\"]?cpu\b|\boffload_params\W{0,4}(?:=\s*)?true\b|"
    r"\bfsdp_offload_params\W{0,4}true\b|\bfsdp_cpu_offload\W{0,4}true\b|"
    r"--use_cpu_offload\W{0,4}true\b", re.IGNORECASE)
_ACTIVATIONS_OFFLOAD = re.compile(r"\benable_activation_offloading\W{0,4}true\b", re.IGNORECASE)


def notes_offload(notes: str) -> Offload | None:
    """What an empty `offload` cell reads as when the notes configure an offload: DeepSpeed's
    `offload_param` / FSDP's `offload_params=True` (accelerate's `fsdp_offload_params`,
    torchtune's `fsdp_cpu_offload`, Answer.AI's `--use_cpu_offload`): `params-optimizer`;
    DeepSpeed's `offload_optimizer` on the CPU or OpenRLHF's `--adam_offload`: `optimizer`;
    torchtune's `enable_activation_offloading: True`: `activations`. Only these settings are
    read: prose about offloading is as often about another run. None: the framework's
    default."""
    if _PARAMS_OFFLOAD.search(notes):
        return Offload.PARAMS_OPTIMIZER
    if _OPTIMIZER_OFFLOAD.search(notes) and not _OPTIMIZER_NOT_OFFLOADED.search(notes):
        return Offload.OPTIMIZER
    if _ACTIVATIONS_OFFLOAD.search(notes):
        return Offload.ACTIVATIONS
    return None


GRAD_BUFFER_16BIT_NOTE = re.compile(
    r"\b(?:grad_reduce_in_fp32|accumulate_allreduce_grads_in_fp32)\W{0,4}(?:=\s*)?false\b",
    re.IGNORECASE)
"""A Megatron row whose notes say its gradient buffer is not fp32 (`grad_reduce_in_fp32 False`,
`accumulate_allreduce_grads_in_fp32 False`: `TrainingSetup.grad_buffer_16bit`)."""


LOSS_ALONE_COMPILED = re.compile(r"\bcomponents\W{0,4}\[\s*['\"]loss['\"]\s*\]")
"""A row whose notes give torchtitan's compile components as the loss alone (`[compile]
components = ["loss"]`): the loss compiled, the blocks eager
(`TrainingSetup.loss_compiled_alone`)."""


_COMMIT = re.compile(r"\b[0-9a-f]{8,40}\b")
_COMMIT_DATES = {Framework.LITGPT: LITGPT_COMMIT_DATES,
                 Framework.TORCHTUNE: TORCHTUNE_COMMIT_DATES}


def code_date(case: Case) -> date | None:
    """The date of the model code a row ran, None (today's code) when unknown.

    litgpt and torchtune: from the commits its source names, the earliest whose date is known
    (`vramplan.presets.frameworks.litgpt.LITGPT_COMMIT_DATES`, `TORCHTUNE_COMMIT_DATES`), as a
    published run is no newer than the commit that published it. transformers' model code
    (`ModelCode.TRANSFORMERS`): the earliest date its source or notes state (`stated_date`).
    Unsloth: the release its notes name (`Unsloth 2024.5`, the banner `Unsloth: Fast Llama
    patching release 2024.5`; Unsloth numbers its releases year.month[.patch]), at the earliest
    date it can have run (`unsloth_release_date`), else as transformers'.
    torchtitan and Megatron-LM: the earliest date its source or notes state, as transformers';
    a Megatron-LM release tag the notes name first (`MEGATRON_CORE_RELEASE_DATES`). Other
    frameworks: None."""
    if case.framework in _COMMIT_DATES:
        known = _COMMIT_DATES[case.framework]
        dates = [known[commit[:8]] for commit in _COMMIT.findall(case.source)
                 if commit[:8] in known]
        return min(dates, default=None)
    if framework_defaults(case.framework).model_code not in (ModelCode.TRANSFORMERS,
                                                             ModelCode.TORCHTITAN,
                                                             ModelCode.MEGATRON):
        return None
    core = _MEGATRON_CORE_RELEASE.search(f"{case.source} {case.notes}")
    tag = (int(core.group(1)), int(core.group(2))) if core is not None else None
    if case.framework is Framework.MEGATRON and tag in MEGATRON_CORE_RELEASE_DATES:
        return MEGATRON_CORE_RELEASE_DATES[tag]
    release = _UNSLOTH_RELEASE.search(case.notes)
    if case.framework is Framework.UNSLOTH and release is not None:
        version = tuple(int(part) for part in release.groups() if part is not None)
        return unsloth_release_date(version)
    return stated_date(f"{case.source} {case.notes}")


_MEGATRON_CORE_RELEASE = re.compile(r"\bcore_r(\d+)\.(\d+)\.\d+\b")
"""A Megatron-LM release tag the row names (`core_r0.5.0`): its code is that tag's
(`MEGATRON_CORE_RELEASE_DATES`), whatever the date of the run."""


_UNSLOTH_RELEASE = re.compile(
    r"\bUnsloth:?\s+(?:[A-Za-z]+\s+){0,4}(20\d\d)\.(1[0-2]|[1-9])(?:\.(?:post)?(\d+))?"
    r"(?:\.\d+|\.post\d+)*\b")
"""A release the notes name, `Unsloth 2024.11.8` or the banner's `Unsloth: Fast Llama patching
release 2024.5` (year, month and the patch or post number when given)."""


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_ISO_DATE = re.compile(r"\b(20\d\d)-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH}(?:\s*[-/]\s*{_MONTH})?\s+(20\d\d)\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(20\d\d)\b",
                             re.IGNORECASE)
_SLASHED_DATE = re.compile(r"\b(20\d\d)/(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01])\b")
_ARXIV = re.compile(r"\barxiv[: ]*(\d\d)(0[1-9]|1[0-2])\.\d{4,5}\b", re.IGNORECASE)


def _checked_date(year: int, month: int, day: int) -> date:
    """The date, or the month's first day where the day does not exist (`Feb 30, 2024`)."""
    try:
        return date(year, month, day)
    except ValueError:
        return date(year, month, 1)


def stated_date(text: str) -> date | None:
    """The earliest date `text` states: ISO dates (`2024-03-13`, `2024-10`, `2024/03/13`), a
    month, day and year (`Mar 13, 2024`, `March 13th 2024`), a month and year (`March 2024`; a
    range `Feb-Mar 2024` reads as its first month), arXiv identifiers (`arXiv 2403.13372`:
    March 2024); a month alone reads as its first day. `12/11/2023` is left out: month first or
    day first, it does not say."""
    dates = [date(int(year), int(month), int(day or 1))
             for year, month, day in _ISO_DATE.findall(text) + _SLASHED_DATE.findall(text)]
    dates += [_checked_date(int(year), _MONTHS.index(month.lower()[:3]) + 1, int(day))
              for month, day, year in _MONTH_DAY_YEAR.findall(text)]
    dates += [date(int(year), _MONTHS.index(first.lower()) + 1, 1)
              for first, _, year in _MONTH_YEAR.findall(text)]
    dates += [date(2000 + int(year), int(month), 1) for year, month in _ARXIV.findall(text)]
    return min(dates, default=None)


LOSS_IN_FUNCTION_SOURCE = "extensions/thunder/"
"""Where a litgpt row's source names the thunder extension, its run is extensions/thunder/
pretrain.py, which computes the logits and the loss in `forward_and_loss` and returns the loss
alone (`TrainingSetup.loss_in_function`)."""


LIGHTNING_NOTE = re.compile(r"\b(?:pytorch[ -])?lightning\b(?![-_ ]ai)", re.IGNORECASE)
"""A row whose notes name PyTorch Lightning ran its loop: `training_step` computes the logits
and the loss and returns the loss alone (automatic optimization), so no loop variable holds the
logits (`TrainingSetup.loss_in_function`), whatever engine it drives (DeepSpeed, DDP). Not
`Lightning-AI`, the organization that publishes litgpt."""


OUTPUTS_DELETED_NOTE = re.compile(
    r"\b(?:deleting|deletes|del)\s+(?:the\s+)?(?:model's\s+)?(?:output|outputs|logits)\b"
    r"[^;]{0,20}\bafter the loss\b", re.IGNORECASE)
"""A row whose notes say its loop deletes the model's output once the loss is computed
(universal-llm-trainer's `del output` under `del_logits_after_forward`): nothing holds the
logits through backward."""


OUTPUTS_KEPT_NOTE = re.compile(
    r"\b(?:keeps|kept|holds|held|binds|bound)\s+(?:the\s+)?(?:model's\s+)?`?(?:output|outputs)`?"
    r"[^;]{0,30}?\bthrough (?:the )?backward\b", re.IGNORECASE)
"""A row whose notes say its loop keeps the model's output through backward (`output =
model(...); loss = output.loss; loss.backward()`): its logits stay alive there whatever the
framework's own loop does (`TrainingSetup.loop_keeps_outputs`)."""


OUTPUTS_FREED_NOTE = re.compile(
    r"\b(?:sets|set)\s+`?(?:it|them|output|outputs)`?\s+to\s+`?None`?\b[^;]{0,40}?"
    r"\bbefore the next forward\b", re.IGNORECASE)
"""A row whose notes say its loop drops the outputs it kept before the next forward (Answer.AI's
train.py `output = None`): the previous step's logits are not alive during the next forward
(`TrainingSetup.loop_frees_outputs`)."""


OUTPUTS_NOT_BOUND_NOTE = re.compile(
    r"\bloss\s*=\s*model\([^)]*\)\.loss\b|\bkeeps only the loss\b|\bloss-only reference\b",
    re.IGNORECASE)
"""A row whose notes say its loop takes the loss straight off the model's call (`loss =
model(**batch).loss`, llama-recipes' train_utils.py at e5970e2e): no variable holds the outputs,
so the logits are not alive through backward whatever the framework's own loop does."""


def loop_keeps_outputs(case: Case) -> bool | None:
    """What the row's notes say of its loop and the model's outputs: kept through backward
    (`OUTPUTS_KEPT_NOTE`), or never bound (`OUTPUTS_NOT_BOUND_NOTE`); None: its framework's
    loop."""
    if OUTPUTS_KEPT_NOTE.search(case.notes):
        return True
    if OUTPUTS_NOT_BOUND_NOTE.search(case.notes):
        return False
    return None


def loss_in_function(case: Case) -> bool:
    """The logits and the loss are computed in a function that returns the loss alone: litgpt's
    thunder extension (`LOSS_IN_FUNCTION_SOURCE`), or a PyTorch Lightning loop
    (`LIGHTNING_NOTE`) driving a framework whose own loop keeps the model's outputs; or that loop
    deletes them after the loss (`OUTPUTS_DELETED_NOTE`), to the same effect."""
    if case.framework is Framework.LITGPT:
        return LOSS_IN_FUNCTION_SOURCE in case.source
    return framework_defaults(case.framework).loop_keeps_outputs and (
        LIGHTNING_NOTE.search(case.notes) is not None
        or OUTPUTS_DELETED_NOTE.search(case.notes) is not None)


_LOSS_ON_16BIT_LOGITS = re.compile(
    r"\b(?:cross[_ ]entropy|CrossEntropyLoss)\b[^;]{0,80}?"
    r"(?:\bon the (?:bf16|fp16|16-bit) logits\b|\(model-dtype logits\b)", re.IGNORECASE)


def loss_on_16bit_logits(case: Case) -> bool:
    """The row's loop computes its cross-entropy on the model's 16-bit logits as they are, as its
    notes say ("F.cross_entropy on the bf16 logits", "nn.CrossEntropyLoss on output.logits[:, :-1]
    itself (model-dtype logits"; the format has no column for it): no fp32
    copy (`vramplan.training.setup.TrainingSetup.loss_16bit`). Not the stacks that cast first
    (Fabric's `convert_output` in litgpt's scripts, transformers' loss)."""
    return case.framework is not Framework.LITGPT \
        and _LOSS_ON_16BIT_LOGITS.search(case.notes) is not None


_LITGPT_MODEL = re.compile(r"\blitgpt(?:'s)?[ .](?:model\.)?GPT\b")
"""litgpt's model class named in a row's notes ("litgpt GPT", "litgpt.GPT", "litgpt's GPT")."""


def runs_litgpt_model(case: Case) -> bool:
    """A row of another stack whose notes say it ran litgpt's `GPT` (lightning-thunder's
    benchmark_litgpt.py): its head is never tied (`TrainingSetup.litgpt_model`)."""
    return case.framework is not Framework.LITGPT and _LITGPT_MODEL.search(case.notes) is not None


KBIT_PREPARATION_NOTE = "prepare_model_for_kbit_training"
"""How a QLoRA row's notes say that its script ran peft's `prepare_model_for_kbit_training`
and cast the embeddings and head back (TRL's trainers until 2025-12-04:
`vramplan.presets.frameworks.defaults.FrameworkDefaults.kbit_upcast_at_load`)."""

EMPTY_CACHE_NOTE = re.compile(
    r"\bempty_cache\b(?:\(\))?\s+(?:every|between|after (?:each|every))\b", re.IGNORECASE)
"""How a row's notes say that its loop called `torch.cuda.empty_cache()` between steps (the PEFT
MetaMathQA harness: `empty_cache every 10 steps`, method_comparison/MetaMathQA/run.py); the
name alone ("calls `empty_cache` only in code paths this run does not take") says nothing."""

_CUSTOM_SHARDED_EMBEDDING = re.compile(r"\bcustom_sharded_layers\b[^;]{0,40}?\btok_embeddings\b",
                                       re.IGNORECASE)
"""torchtune's `custom_sharded_layers` naming `tok_embeddings`, as its llama3 and llama3_1
`8B_full` and `70B_full` configs do (pytorch/torchtune recipes/configs @30b8519e8)."""


def embedding_sharded_apart(case: Case) -> bool:
    """A torchtune FSDP row whose notes say the input embedding was a unit of its own
    (`_CUSTOM_SHARDED_EMBEDDING`): the recipe adds `n in custom_sharded_layers` to its shard
    conditions and `training.shard_model` gives each such module its own `fully_shard`, resharded
    after forward (recipes/full_finetune_distributed.py and torchtune/training/_distributed.py
    @30b8519e8), as `vramplan.distributed.parallelism.Parallelism.embedding_apart` models. An
    `output` named beside it is a unit of its own as well, which is not modelled: the head is
    counted with the root, gathered from its forward to its backward (at most the head's bytes
    more between the two)."""
    return case.framework is Framework.TORCHTUNE and case.sharding in FSDP_SCHEMES \
        and _CUSTOM_SHARDED_EMBEDDING.search(case.notes) is not None


_NO_ACCUMULATION = re.compile(r"\b(?:no|without) (?:grad|gradient) accumulation\b",
                              re.IGNORECASE)
_ACCUMULATION = re.compile(r"\b(?:grad|gradient) accumulation\b", re.IGNORECASE)
_ACCUMULATION_STEPS = re.compile(
    r"\b(?:grad|gradient)[ _](?:accumulation(?:[ _]steps)?|accumul?ate[ _]steps?)\b['\"]?\W{0,3}"
    r"(?:of\s+)?(\d{1,6})\b",
    re.IGNORECASE)
"""A number of micro-batches per step, as command lines, configs and prose give it
(`--gradient_accumulation_steps 4`, `gradient_accumulation_steps: 1`, `gradient accumulation
(2)`, `gradient accumulation steps of 8`, universal-llm-trainer's `gradient_accumuate_step 1`)."""


_PRINTED_METRIC = re.compile(
    r"\bprints? torch\.cuda\.(max_memory_allocated|max_memory_reserved|memory_reserved)\(\)")
"""The one memory figure a row's notes say its run's own code prints (universal-llm-trainer's
progress bar: `torch.cuda.memory_reserved()`, what the caching allocator holds; it never
shrinks without `empty_cache`, so a later step's reading is the run's reserved peak)."""


def printed_metric(notes: str) -> Metric | None:
    """The metric an empty cell reads as when the notes name what the run's code prints."""
    said = _PRINTED_METRIC.search(notes)
    if said is None:
        return None
    return Metric.ALLOCATED if said.group(1) == "max_memory_allocated" else Metric.RESERVED


def accumulates(case: Case) -> bool:
    """Whether the row's run accumulated gradients over micro-batches, as its notes say (the
    format has no column for it): "no gradient accumulation" / "without gradient accumulation";
    else the number of micro-batches they give when they give one (`gradient_accumulation_steps
    1` does not accumulate); else "gradient accumulation" named; else the command its source
    prints (`TORCHTUNE_OPTIMIZATION_FLAGS_SOURCE`), the litgpt recipe its source names
    (`litgpt_recipe`), else the framework's default
    (`vramplan.presets.frameworks.defaults.default_gradient_accumulation`)."""
    if _NO_ACCUMULATION.search(case.notes):
        return False
    steps = {int(n) for n in _ACCUMULATION_STEPS.findall(case.notes)}
    if len(steps) == 1:
        return steps.pop() > 1
    if _ACCUMULATION.search(case.notes):
        return True
    if case.framework is Framework.TORCHTUNE and TORCHTUNE_OPTIMIZATION_FLAGS_SOURCE in case.source:
        return False
    recipe = litgpt_recipe(case)
    if recipe is not None:
        return recipe.accumulates
    return default_gradient_accumulation(case.framework, case.method)


TORCHTUNE_OPTIMIZATION_FLAGS_SOURCE = "pytorch/torchtune README.md 'Optimization flags' table"
"""The source of the rows of torchtune's README table of optimization flags, measured with the
command printed under it (README.md @1814feb17: `tune run lora_finetune_single_device ...
gradient_accumulation_steps=1`, the techniques "added on top of the previous one"): no row of it
accumulates gradients, whatever the LoRA recipes' default (`accumulates`)."""


def litgpt_recipe(case: Case) -> LitgptRecipe | None:
    """The litgpt finetuning recipe a row's run used, when its source is litgpt's config_hub
    (`vramplan.presets.litgpt_recipes`): an empty cell of such a row is the recipe's value."""
    if case.framework is not Framework.LITGPT or LITGPT_HUB_SOURCE not in case.source:
        return None
    return LITGPT_HUB_RECIPES.get((case.model, case.method))


def lora_rank(case: Case) -> int | None:
    """The row's LoRA rank: its `lora_r`, else its litgpt recipe's, else None (the framework's
    default)."""
    if case.lora_r is not None:
        return case.lora_r
    recipe = litgpt_recipe(case)
    return recipe.lora_r if recipe is not None else None


_LAST_BLOCKS = re.compile(r"\blast (\d{1,5}) (?:decoder |transformer )?(?:layers|blocks)\b",
                          re.IGNORECASE)


def trained_blocks(case: Case) -> int:
    """How many of the last blocks a `freeze` row trains: what its notes say ("last 3 layers
    trainable"; the format has no column for it), else the framework's default
    (`vramplan.presets.frameworks.defaults.FrameworkDefaults.freeze_layers`)."""
    said = _LAST_BLOCKS.search(case.notes)
    if said is not None and int(said.group(1)) > 0:
        return int(said.group(1))
    return framework_defaults(case.framework).freeze_layers


_FLOAT = r"(?:torch\.)?(?:bf16|fp16|fp32|bfloat16|float16|float32)"
_FLOAT_QUANT_STORAGE = re.compile(
    rf"quant[_ ]storage[ :=]*{_FLOAT}\b|\b{_FLOAT} quant[_ ]storage\b", re.IGNORECASE)


def float_quant_storage(case: Case) -> bool:
    """The row's 4-bit base is stored in a float dtype (bitsandbytes `bnb_4bit_quant_storage`,
    "quant_storage bf16" in its notes; the format has no column for it): peft's adapters then
    take that dtype (`vramplan.training.setup.adapters_in_fp32`)."""
    return _FLOAT_QUANT_STORAGE.search(case.notes) is not None


_LORA_DROPOUT = re.compile(
    r"(?<!attention )(?<!hidden )(?<!residual )(?<!embedding )(?<!attn )(?<!resid )"
    r"\b(?:lora[_ ])?dropout[ :=]*(0?\.\d+|0)(?![\d.])", re.IGNORECASE)
"""An adapter's dropout rate; the model's own ("attention dropout 0.1", "hidden_dropout 0.1")
is not the adapters'."""


def lora_dropout(case: Case) -> float | None:
    """The adapters' dropout rate of a LoRA row, as its notes give it ("dropout 0.1",
    "lora_dropout=0.05"; the format has no column for it), else None: the framework's default
    (`vramplan.training.setup.lora_dropout_active`)."""
    said = _LORA_DROPOUT.search(case.notes)
    return float(said.group(1)) if said is not None else None


_FSDP1 = re.compile(rf"{_UNDENIED}(?:(?<![\w-])FSDP1(?![\w-])|\bfsdp_version[ :=]*1\b|"
                    r"\bFullyShardedDataParallel\(|\bFSDP1-style\b)", re.IGNORECASE)
_FSDP2 = re.compile(rf"{_UNDENIED}(?:(?<![\w-])FSDP2(?![\w-])|\bfsdp_version[ :=]*2\b|"
                    r"\bfully_shard\b)", re.IGNORECASE)
"""An FSDP named in a row's notes: not inside a hyphenated name (another row's id cited in
the notes, whose "fsdp2" may count GPUs)."""


def fsdp_version(case: Case) -> FsdpVersion | None:
    """The FSDP a `fsdp` row ran, when its `sharding` cell names it (`fsdp1`, `fsdp2`) or its
    notes name it ("FSDP2", "fsdp_version: 2", "fully_shard"; else "FSDP1", "fsdp_version: 1",
    "FullyShardedDataParallel(": a `fsdp-grad-op` row has no cell for FSDP1's SHARD_GRAD_OP;
    not after "no", "not" or "without"; the format has no column for it), else None: the
    framework's default
    (`vramplan.presets.frameworks.defaults.FrameworkDefaults.fsdp_version`). The id is not read: an
    id's "fsdp2" may count GPUs."""
    if case.fsdp_named is not None:
        return case.fsdp_named
    if _FSDP2.search(case.notes) is not None:
        return FsdpVersion.FSDP2
    return FsdpVersion.FSDP1 if _FSDP1.search(case.notes) is not None else None


@dataclass(frozen=True, slots=True)
class ModelParallel:
    """Tensor, pipeline and expert parallel sizes a row's notes give (the format has no column
    for them): 1 where they say nothing."""

    tensor: int = 1
    pipeline: int = 1
    expert: int = 1

    @property
    def splits_model(self) -> bool:
        return self.tensor * self.pipeline * self.expert > 1


def _size_pattern(short: str, long: str, unit: str | None = None) -> re.Pattern[str]:
    """A parallel size as command lines, configs and prose give it: `tp=2`, `TP 2`, `TP2` (as
    in `TP2PP4`), `TP: 2`, `TP (2)`, `tp_size=2`, `TP degree 2`, `TP of 2`, `tensor parallel 2`,
    `tensor parallelism = 2`, `tensor parallelism of 2`, `tensor-parallel (TP) size 2`,
    `--tensor-model-parallel-size 2`, `tensor_model_parallel_size: 2`, torchtitan's
    `--parallelism.tensor_parallel_degree 2`, `2-way TP`, `2-way tensor parallelism`, and
    for pipelines `4 pipeline stages` (`unit`). The short name is not read inside a word
    ("step 8") nor in a hyphenated name (another row's id cited in the notes)."""
    size = r"[-_ ]?(?:size|degree)"
    said = r"\s*(?:[=:]|\bof\b)?\s*\(?(\d+)\)?(?![.\d])"
    return re.compile(
        rf"(?<![a-z-]){short}(?:{size})?{said}|"
        rf"\b{long}[-_ ](?:model[-_ ])?parallel(?:ism)?(?:\s*\({short}\))?(?:\s*{size})?{said}|"
        rf"\b(\d+)[- ]way\s+(?:{short}\b|{long}[-_ ]parallel)"
        + (rf"|\b(\d+)\s+{unit}\b" if unit else ""),
        re.IGNORECASE)


_TENSOR_PARALLEL = _size_pattern("tp", "tensor")
_PIPELINE_PARALLEL = _size_pattern("pp", "pipeline", "pipeline stages")
_EXPERT_PARALLEL = _size_pattern("ep", "expert")


def model_parallel(case: Case) -> ModelParallel:
    """The tensor, pipeline and expert parallel sizes of a training row, from its notes (Megatron-
    LM's `--tensor-model-parallel-size 2`, `tp=2`, `TP2PP2`...); 1 where they are silent. A
    size must divide the row's GPUs (checked by `vramplan.distributed.sharding
    .check_parallelism`, which refuses the row otherwise)."""
    if case.method is Method.INFERENCE:
        return ModelParallel()
    named = _id_sizes(case)

    def size(pattern: re.Pattern[str], short: str) -> int:
        found = pattern.search(case.notes)
        return int(next(g for g in found.groups() if g)) if found else named.get(short, 1)

    return ModelParallel(tensor=size(_TENSOR_PARALLEL, "tp"),
                         pipeline=size(_PIPELINE_PARALLEL, "pp"),
                         expert=size(_EXPERT_PARALLEL, "ep"))


_ID_SIZE = re.compile(r"(?:^|[-_.]|(?<=\d))(tp|pp|ep)(\d{1,4})(?=$|[-_.]|(?:tp|pp|ep)\d)",
                      re.IGNORECASE)
"""A parallel size in a row's id, as ids name them: `-tp4-`, `_pp2`, `tp2pp2`."""


def _id_sizes(case: Case) -> dict[str, int]:
    """The parallel sizes a row's own id names (`megatron-...-tp4-pp2-...`), for notes that do
    not give them; a size that cannot be the run's (above its GPUs or not dividing them, expert
    parallelism of a model without experts) is not read."""
    sizes = {short.lower(): int(digits) for short, digits in _ID_SIZE.findall(case.id)}
    if "ep" in sizes and not _has_experts(case.model):
        del sizes["ep"]
    return {short: n for short, n in sizes.items() if 1 <= n <= case.gpus and case.gpus % n == 0}


def _has_experts(model: str) -> bool:
    try:
        return architecture_of(find_model(model)).is_moe
    except UnknownName:
        return False


_DISTRIBUTED_OPTIMIZER = re.compile(
    r"(?<!no )(?<!without )(?<!without the )\b(?:--)?use[-_]distributed[-_]optimizer\b"
    r"(?!\s*[=:]?\s*false)|(?<!no )(?<!without )(?<!without the )\bdistributed optimizer\b",
    re.IGNORECASE)


def megatron_distributed_optimizer(case: Case) -> bool:
    """A Megatron-LM row whose notes say it used the distributed optimizer
    (`--use-distributed-optimizer`, "distributed optimizer"; not "no"/"without" it): its scheme
    is `zero1` (`vramplan.distributed.parallelism.Parallelism.main_grad_buffer`) when its
    `sharding` cell is empty or `ddp`."""
    return case.framework is Framework.MEGATRON \
        and _DISTRIBUTED_OPTIMIZER.search(case.notes) is not None


_MS_SWIFT_RLHF = re.compile(r"\bswift rlhf\b")
_MS_SWIFT_REPOSITORY = "modelscope/ms-swift"


def ms_swift_rlhf(case: Case) -> bool:
    """A preference or RL row that ms-swift ran: its notes give a `swift rlhf` command or its
    source is one of ms-swift's examples. Its PPO value model takes the policy's adapters
    (`vramplan.training.setup.AlignmentSetup.value_adapters`)."""
    return _MS_SWIFT_RLHF.search(case.notes) is not None or _MS_SWIFT_REPOSITORY in case.source


_MS_SWIFT_ZERO3 = re.compile(r"\bswift (?:sft|rlhf)\b.*--deepspeed zero3\b")


def zero3_config_file(case: Case) -> Zero3ConfigFile | None:
    """The ZeRO-3 config file of a row whose notes give an ms-swift command with `--deepspeed
    zero3` (`swift sft ... --deepspeed zero3`: `MS_SWIFT_ZERO3`, the file ms-swift ships; the
    format has no column for it and ms-swift is no framework of ours), with the DeepSpeed config
    keys the notes give a number (`sub_group_size 1e8`, `"stage3_max_live_parameters": 1e8`,
    `stage3_max_reuse_distance`, `stage3_prefetch_bucket_size`, `reduce_bucket_size`) over it
    or over the framework's file; None when the notes give neither: the row's framework's
    (`vramplan.distributed.defaults.ZERO3_CONFIG_FILES`). `zero3_offload` is another file and
    is not read."""
    base = MS_SWIFT_ZERO3 if _MS_SWIFT_ZERO3.search(case.notes) is not None else None
    keys = {match.group(1): int(float(match.group(2)))
            for match in _ZERO3_KEY.finditer(case.notes)}
    if not keys:
        return base
    base = base or ZERO3_CONFIG_FILES.get(case.framework) \
        or Zero3ConfigFile(buckets_from_hidden_size=False)
    return replace(
        base,
        sub_group_elements=keys.get("sub_group_size", base.sub_group_elements),
        max_live_parameters=keys.get("stage3_max_live_parameters", base.max_live_parameters),
        max_reuse_distance=keys.get("stage3_max_reuse_distance", base.max_reuse_distance),
        prefetch_bucket_elements=keys.get("stage3_prefetch_bucket_size",
                                          base.prefetch_bucket_elements),
        reduce_bucket_elements=keys.get("reduce_bucket_size", base.reduce_bucket_elements))


_ZERO3_KEY = re.compile(
    r"\b(sub_group_size|stage3_max_live_parameters|stage3_max_reuse_distance|"
    r"stage3_prefetch_bucket_size|reduce_bucket_size)\b[\"']?\s*[:=]?\s*"
    r"(\d+(?:\.\d+)?(?:[eE]\+?\d+)?)\b")
"""A DeepSpeed ZeRO config key (deepspeed/runtime/zero/config.py) given a number in a row's
notes."""


_ALLOC_CONF = re.compile(r"PYTORCH_CUDA_ALLOC_CONF\s*=\s*['\"]?([\w:.,]+)")


_EXPANDABLE_SEGMENTS = re.compile(
    r"\bexpandable[_ -]segments\W{0,4}(?:true|on|enabled)\b|"
    r"\bwith expandable[_ -]segments\b", re.IGNORECASE)
"""Expandable segments said to be on without the variable (`expandable_segments: True`,
"expandable segments on", "with expandable segments"); a bare mention says nothing."""


def alloc_conf(case: Case) -> AllocatorConfig:
    """The allocator settings the row's notes give (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:
    True` before the command; the format has no column for it), else expandable segments where
    the notes name them without the variable (`_EXPANDABLE_SEGMENTS`), else PyTorch's defaults.
    Settings the simulation does not take leave the defaults."""
    said = _ALLOC_CONF.search(case.notes)
    if said is None:
        if _EXPANDABLE_SEGMENTS.search(case.notes):
            return replace(PYTORCH_DEFAULTS, expandable_segments=True)
        return PYTORCH_DEFAULTS
    try:
        return parse_alloc_conf(said.group(1))
    except AllocConfError:
        return PYTORCH_DEFAULTS



def largest_batch_first(case: Case) -> bool:
    """The row's run processed its largest batch first (said in its notes): the peak is that of
    the run's first micro-batch, not of a steady state at `seq_len`."""
    return LARGEST_BATCH_FIRST.search(case.notes) is not None


FIRST_STEP_REPORT = re.compile(r"\(after 1 iterations?\)", re.IGNORECASE)
"""How a row's notes quote a figure that covers the run's first step only: Megatron-LM's
`report_memory` line `(after 1 iterations) memory (MB) | ... | max allocated: ...`, printed once,
at the first logging interval (megatron/training/training.py `training_log`:
`report_memory_flag`), with `log_interval` 1. The optimizer's states are made inside that step
(`torch.optim`'s and Transformer Engine's FusedAdam create them at their first `step()`), so the
micro-batches before it ran without them."""


def first_step_only(case: Case) -> bool:
    """The row's figure covers the run's first step, not a steady state (`FIRST_STEP_REPORT`)."""
    return FIRST_STEP_REPORT.search(case.notes) is not None


OVERLAP_GRAD_REDUCE_NOTE = re.compile(
    r"--overlap-grad-reduce\b|\boverlap_grad_reduce\W{0,4}(?:=\s*)?true\b", re.IGNORECASE)
"""A Megatron row whose notes say it reduced its gradients bucket by bucket
(`--overlap-grad-reduce`, `overlap_grad_reduce true`): `vramplan.distributed.sharding.
Parallelism.overlap_grad_reduce`."""


COLOSSALAI_ZERO_NOTE = re.compile(r"\bLowLevelZeroPlugin\b")
"""A `zero1`/`zero2` row that ran ColossalAI's `LowLevelZeroPlugin`: its optimizer offload keeps
the gradient partition on the GPU (`vramplan.distributed.parallelism.Parallelism.
offload_keeps_gradients`), and it reduces through `COLOSSALAI_REDUCE_BUCKET_ELEMENTS`."""
COLOSSALAI_REDUCE_BUCKET_ELEMENTS = 12 * 1024 * 1024
"""LowLevelZeroPlugin `reduce_bucket_size_in_m=12`, passed as `reduce_bucket_size_in_m * 1024 *
1024` elements (colossalai/booster/plugin/low_level_zero_plugin.py @d888c378)."""

OUTSIDE_ZERO_INIT_NOTE = re.compile(r"\boutside (?:deepspeed\.)?zero\.Init\b")
"""How a ZeRO-3 row's notes say that its script built the model outside `deepspeed.zero.Init`
(`vramplan.distributed.parallelism.Parallelism.zero3_built_outside_init`)."""


LAYER_SPLIT_NOTE = re.compile(r"\bgenerate[/_ ]sequentially\b|\bsequentially\.py\b|"
                              r"\blayer_to_device\b", re.IGNORECASE)
"""An inference row whose notes say its blocks were placed on its GPUs in consecutive chunks by one
process (litgpt's generate/sequentially.py), not split by tensor parallelism."""

_MAX_SEQ_LEN = re.compile(r"\bmax_seq_len\b\W{0,3}(\d{2,7})\b", re.IGNORECASE)


def torchtune_generate_cache(case: Case) -> tuple[int | None, bool | None]:
    """How torchtune's generate recipe of the row's date held its KV cache: (tokens it allocated
    it for, whether it held every query head), None where today's recipe does as the estimate
    does. Before `TORCHTUNE_GENERATE_CACHE_FITS_SINCE`, the model's `max_seq_len` (the notes'
    "max_seq_len N", else config.json's `max_position_embeddings`); before
    `TORCHTUNE_KV_HEADS_CACHED_SINCE`, every query head. A row without a known date runs
    today's recipe."""
    on = code_date(case)
    if case.framework is not Framework.TORCHTUNE or on is None:
        return None, None
    tokens = None
    if on < TORCHTUNE_GENERATE_CACHE_FITS_SINCE:
        said = _MAX_SEQ_LEN.search(case.notes)
        tokens = int(said.group(1)) if said is not None else \
            architecture_of(find_model(case.model)).max_position_embeddings
    return tokens, (True if on < TORCHTUNE_KV_HEADS_CACHED_SINCE else None)


ALLOCATED_PLUS_OUTSIDE_NOTE = re.compile(
    r"allocated_bytes\.all\.peak\s*\+\s*\(nvidia-smi memory\.used peak\b.{0,80}?"
    r"-\s*reserved_bytes\.all\.peak\)")
"""An `allocated` row whose figure is the allocated peak plus what the process holds outside
PyTorch's allocator, NVML's used memory less the reserved peak (optimum's
tests/benchmark/benchmark_gptq.py `benchmark_memory`): scored as the allocated estimate plus the
CUDA context the device estimate counts (`vramplan.presets.cuda.CUDA_CONTEXT_BYTES`)."""


NVML_V1_NOTE = re.compile(rf"{_UNDENIED}\bpy3nvml\b")
"""A `device` row read through NVML's first memory query, whose used memory counts the driver's
reserve (`vramplan.presets.cuda.DRIVER_RESERVE_BYTES`): py3nvml, whose
`nvmlDeviceGetMemoryInfo` fills `nvmlMemory_t` (fbcotter/py3nvml issue #25). Other readers
(nvidia-smi, W&B's system metrics, gpustat) are not read as v1: which query they made depends
on their release and the driver's."""


def nvml_v1_reserve_bytes(case: Case) -> int:
    """What a `device` row's reader counts beyond the process: the card's driver reserve when
    the notes name an NVML v1 reader (`NVML_V1_NOTE`) and the card has a published figure;
    0 otherwise."""
    if case.metric is not Metric.DEVICE or case.gpu is None \
            or NVML_V1_NOTE.search(case.notes) is None:
        return 0
    return DRIVER_RESERVE_BYTES.get(case.gpu.name, 0)


BNB_COMPUTE_16BIT_NOTE = re.compile(
    r"\bbnb_4bit_compute_dtype\s*[=:]\s*['\"]?(?:torch\.)?(?:b?float16|b?f16)\b")
"""An inference row whose notes give bitsandbytes' 4-bit compute dtype as a 16-bit one
(`InferenceInputs.bnb_compute_16bit`)."""


DEVICE_MAP_NOTE = re.compile(r"\bdevice_map\b")


VLLM_NOTE = re.compile(rf"{_UNDENIED}\bvllm\b(?!'s)(?! tables?\b)", re.IGNORECASE)
"""An inference row whose notes name vLLM ran on vLLM (the format's frameworks are training
stacks); not a denied name ("not vLLM", "without vLLM") nor a mention of another source's
figures ("vLLM's", "the vLLM table")."""
_UTILIZATION = re.compile(r"gpu[_ -]memory[_ -]utilization[\s=:]*(0?\.\d+|1(?:\.0+)?)\b",
                          re.IGNORECASE)


def vllm_memory_utilization(case: Case) -> float:
    """The share of the card a vLLM row's engine takes: `gpu_memory_utilization` as its notes
    give it (`--gpu-memory-utilization 0.8`, `gpu_memory_utilization=0.95`), else vLLM's
    default (`vramplan.presets.inference_engines.VLLM_MEMORY_UTILIZATION`)."""
    said = _UTILIZATION.search(case.notes)
    return float(said.group(1)) if said is not None else VLLM_MEMORY_UTILIZATION
