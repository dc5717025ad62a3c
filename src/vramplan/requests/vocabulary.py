"""Every field of every calculator, described once, and the forms that group them.

The CLI's options, the JSON API's query and body models, the web forms, the case files' columns
and the Python API's keywords are all built from these descriptions: a field has one name, one
default and one set of accepted values wherever it appears. Names are the measured-case format's
(`../shared/validation/FORMAT.md`): `lora_r`, `seq_len`, `tensor_parallel`.

Defaults that depend on other fields (the quantization of QLoRA, the sharding on several GPUs,
the GPU count under model parallelism) are None here and decided by the request builders in
`vramplan.requests`, which say so in their docstrings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vramplan import bounds
from vramplan.i18n import Lang, has_message, translate
from vramplan.requests.fields import (
    ChoiceField,
    DecimalField,
    Field,
    FlagField,
    IntField,
    ListField,
    NameField,
)
from vramplan.vocab import (
    PEFT_LORA_RANK,
    PEFT_LORA_TARGETS,
    POLICY_METHODS,
    Attention,
    Checkpointing,
    ComputeDtype,
    Device,
    Engine,
    Framework,
    FsdpVersion,
    Generation,
    KvDtype,
    LoraTarget,
    Loss,
    Method,
    Metric,
    Offload,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
    Scheme,
)

# --- the model and the GPU ------------------------------------------------------------------------

MODEL = NameField("model", metavar="NAME", hint_key="accepted.model")
"""A registry preset, one of its aliases, or its Hugging Face repo id."""
CONFIG = NameField("config", metavar="PATH", hint_key="accepted.config")
"""A local config.json (or the folder holding one): the CLI and the Python API only, since a
server must not read paths its clients name."""
GPU = NameField("gpu", metavar="NAME", hint_key="accepted.gpu")
"""A GPU of the catalogue (`vramplan gpus`), by name or alias."""

# --- the seed rule: M = N·B, V = M + A ------------------------------------------------------------

PARAMS = DecimalField("params", metavar="N", bounds=bounds.PARAMS_BILLION, examples=("7", "7.5"))
OPTIMIZER = ChoiceField(
    "optimizer", default=Optimizer.ADAMW, metavar="NAME", enum=Optimizer,
    excluded=frozenset({Optimizer.NONE}))
"""The seed page's preset names (`adam-mixed`, `adam-8bit`) are other spellings of its values
(`vramplan.vocab.OTHER_SPELLINGS`)."""
BYTES_PER_PARAM = DecimalField("bytes_per_param", metavar="B", bounds=bounds.BYTES_PER_PARAM,
                               examples=("16",))
ACTIVATIONS = DecimalField("activations", default=0.0, metavar="A", bounds=bounds.ACTIVATIONS_GB,
                           examples=("20",))

# --- a training run -----------------------------------------------------------------------------

METHOD = ChoiceField("method", default=Method.FULL, metavar="METHOD", enum=Method,
                     excluded=frozenset({Method.INFERENCE}))
PRECISION = ChoiceField("precision", metavar="PRECISION", enum=Precision)
"""Default: the framework's (`bf16-true`; `mixed` for megatron, deepspeed and torchtitan:
`vramplan.presets.frameworks.defaults.FrameworkDefaults.precision`); `amp` for the preference and RL
methods (TRL)."""
OPTIMIZER_IMPL = ChoiceField("optimizer_impl", metavar="IMPL", enum=OptimizerImpl)
"""Default: the framework's (torch's foreach on CUDA)."""
QUANT = ChoiceField("quant", metavar="QUANT", enum=Quant)
"""Default: nf4 for QLoRA (bitsandbytes' 4-bit type, as the case format's empty cell), none
otherwise."""
LORA_R = IntField("lora_r", default=PEFT_LORA_RANK, metavar="R", bounds=bounds.LORA_RANK)
"""The LoRA calculator's rank: peft's and litgpt's default."""
# peft's module names (`q_proj`, `all-linear`) are other spellings: `vramplan.vocab.OTHER_SPELLINGS`
_LORA_TARGET = ChoiceField("lora_targets", metavar="NAME", enum=LoraTarget)
LORA_TARGETS = ListField("lora_targets", default=PEFT_LORA_TARGETS, metavar="LIST",
                         item=_LORA_TARGET)
"""The LoRA calculator's modules: peft's default for Llama-style models, and litgpt's."""
TRAINING_LORA_R = IntField("lora_r", metavar="R", bounds=bounds.LORA_RANK,
                           help_name="training_lora_r")
"""A training run's rank. Default: the framework's (`FrameworkDefaults.lora_rank`: 16 for
Unsloth, 8 elsewhere)."""
TRAINING_LORA_TARGETS = ListField("lora_targets", metavar="LIST", item=_LORA_TARGET,
                                  help_name="training_lora_targets")
"""A training run's adapted modules. Default: the framework's (`FrameworkDefaults.lora_targets`:
every block linear for Unsloth and LLaMA-Factory, q and v elsewhere)."""
TRAIN_LAYERS = IntField("train_layers", metavar="N", bounds=bounds.TRAIN_LAYERS)
"""Default: the framework's (the last 2 blocks for LLaMA-Factory, the last one elsewhere)."""
BATCH = IntField("batch", default=1, metavar="N", bounds=bounds.BATCH)
SEQ_LEN = IntField("seq_len", default=2048, metavar="TOKENS", bounds=bounds.SEQ_LEN)
CHECKPOINTING = ChoiceField("checkpointing", metavar="MODE",
                            enum=Checkpointing)
"""Default: the framework's (none; every layer for torchtune, Unsloth, LLaMA-Factory and for
litgpt under FSDP; torchtitan's per-op selective policy)."""
ATTENTION = ChoiceField("attention", default=Attention.SDPA, metavar="KERNEL", enum=Attention)
LOSS = ChoiceField("loss", metavar="LOSS", enum=Loss)
"""Default: the framework's (litgpt's LoRA scripts chunk the head; standard elsewhere)."""
FRAMEWORK = ChoiceField("framework", default=Framework.HF, metavar="NAME", enum=Framework)
METRIC = ChoiceField("metric", default=Metric.DEVICE, metavar="METRIC", enum=Metric)
"""`device`: what the card must hold (reserved memory plus the CUDA context)."""
GRAD_ACCUM = IntField("grad_accum", metavar="STEPS", bounds=bounds.GRAD_ACCUM)
"""Default: the framework's (`vramplan.presets.frameworks`: litgpt's recipes always accumulate)."""
COMPILE = FlagField("compile", default=False)
"""The model runs under `torch.compile` (torchtune's `compile`, torchtitan's `compile`)."""
EMPTY_CACHE = FlagField("empty_cache", default=False)
"""`torch.cuda.empty_cache()` between steps (the allocator returns its whole free segments)."""
TILED_MLP = FlagField("tiled_mlp", default=False)
"""The MLP runs over tiles of tokens and saves only its input (Unsloth's `unsloth_tiled_mlp`,
axolotl's `tiled_mlp`, DeepSpeed's `TiledMLP`):
`vramplan.training.setup.TrainingSetup.tiled_mlp`."""

# --- preference and RL fine-tuning (TRL's trainers) ---------------------------------------------

POLICY = ChoiceField("policy", default=Method.FULL, metavar="METHOD", enum=Method,
                     excluded=frozenset(Method) - POLICY_METHODS)
"""How the policy of a preference or RL method trains: every weight, LoRA or QLoRA (with PEFT
the reference pass is the policy with its adapter disabled: no reference copy)."""
PRECOMPUTE_REF = FlagField("precompute_ref", default=False)
"""DPO, KTO: reference log-probabilities computed before training (TRL
`precompute_ref_log_probs`): no reference model while training."""
BETA = DecimalField("beta", default=0.0, metavar="BETA", bounds=bounds.KL_BETA,
                    examples=("0", "0.04"))
"""GRPO's KL weight (TRL `GRPOConfig.beta`, 0.0 since v0.19): a reference model only when it is
not 0."""
COMPLETION_LEN = IntField("completion_len", metavar="TOKENS", bounds=bounds.COMPLETION_LEN)
"""GRPO, PPO: tokens generated per sequence, part of `seq_len`. Default: TRL's (GRPO
`max_completion_length` 512, PPO `response_length` 53)."""
GENERATION = ChoiceField("generation", default=Generation.MODEL, metavar="ENGINE",
                         enum=Generation)
"""GRPO, PPO: who generates (TRL `use_vllm`, `vllm_mode`)."""
VLLM_SHARE = DecimalField("vllm_share", default=0.3, metavar="FRACTION",
                          bounds=bounds.VLLM_SHARE, examples=("0.3",))
"""`vllm-colocate`: the engine's `gpu_memory_utilization` (TRL's default 0.3)."""
VLLM_SLEEP = FlagField("vllm_sleep", default=False)
"""`vllm-colocate`: the engine sleeps between generations (TRL `vllm_enable_sleep_mode`)."""
VALUE_ADAPTERS = FlagField("value_adapters", default=False)
"""PPO: the value model takes the policy's adapters and trains only them (ms-swift's `swift
rlhf`); without it, TRL's `PPOTrainer` trains the value model in full."""

# --- GPUs ---------------------------------------------------------------------------------------

GPUS = IntField("gpus", metavar="N", bounds=bounds.GPUS)
"""Default: tensor_parallel x pipeline_parallel (one GPU without model parallelism)."""
GPUS_PER_NODE = IntField("gpus_per_node", default=8, metavar="N", bounds=bounds.GPUS_PER_NODE)
SHARDING = ChoiceField("sharding", metavar="SCHEME", enum=Scheme)
"""Default: none without data parallelism, ddp with it; zero2 with `offload optimizer`, zero3
with `offload params-optimizer`."""
OFFLOAD = ChoiceField("offload", default=Offload.NONE, metavar="WHAT", enum=Offload)
TENSOR_PARALLEL = IntField("tensor_parallel", default=1, aliases=("tp",), metavar="N",
                           bounds=bounds.TENSOR_PARALLEL)
PIPELINE_PARALLEL = IntField("pipeline_parallel", default=1, aliases=("pp",), metavar="N",
                             bounds=bounds.PIPELINE_PARALLEL)
EXPERT_PARALLEL = IntField("expert_parallel", default=1, aliases=("ep",), metavar="N",
                           bounds=bounds.EXPERT_PARALLEL)
"""A mixture of experts' experts split over this many of the data-parallel GPUs."""
MARGIN = DecimalField("margin", default=80.0, metavar="PERCENT", bounds=bounds.USABLE_SHARE,
                      examples=("80",))
"""Plan to use 80 % of a GPU's memory (`vramplan.planner.verdict.DEFAULT_USABLE_SHARE`)."""

# --- inference ----------------------------------------------------------------------------------

WEIGHTS = NameField("weights", default="bf16", metavar="FORMAT", hint_key="accepted.weights")
CONTEXT = IntField("context", default=4096, metavar="TOKENS", bounds=bounds.CONTEXT)
PROMPT = IntField("prompt", metavar="TOKENS", bounds=bounds.PROMPT)
"""Default: the whole context (the worst case)."""
KV_DTYPE = ChoiceField("kv_dtype", default=KvDtype.FP16, metavar="DTYPE", enum=KvDtype)
DTYPE = ChoiceField("dtype", default=ComputeDtype.BF16, metavar="DTYPE", enum=ComputeDtype)
ENGINE = ChoiceField("engine", metavar="ENGINE", enum=Engine)
"""Default: generic, or llama.cpp for GGUF weights."""
LIMITS = FlagField("limits", default=False)
IMAGES = IntField("images", default=0, metavar="N", bounds=bounds.IMAGES)
"""Images in each sequence's prompt (a model with a vision tower)."""
MTP = FlagField("mtp", default=False)
"""Also load the model's multi-token-prediction modules (DeepSeek-V3, GLM-4.5...)."""

# --- LoRA calculator, trace ---------------------------------------------------------------------

DORA = FlagField("dora", default=False)
RSLORA = FlagField("rslora", default=False)
DEVICE = ChoiceField("device", default=Device.CPU, metavar="DEVICE", enum=Device)
FSDP_VERSION = ChoiceField("fsdp_version", default=FsdpVersion.FSDP2, metavar="VERSION",
                           enum=FsdpVersion)
"""Which FSDP a traced `sharding fsdp` runs: FSDP2 (`fully_shard`) or FSDP1."""
PEFT_WRAP = FlagField("peft_wrap", default=True)
"""FSDP1 with LoRA: peft's `fsdp_auto_wrap_policy` (adapters in units of their own); false: the
blocks as units mixing frozen and trainable weights (litgpt's policy)."""
ADAPTERS_FP32 = FlagField("adapters_fp32", default=False)
"""LoRA's adapters in fp32, as peft's `get_peft_model` makes them by default over a 16-bit model
(`vramplan.tracer.setup.TraceSetup.adapters_fp32`); false: in the model's dtype."""
ALLOC_CONF = NameField("alloc_conf", default="", metavar="CONF", hint_key="accepted.alloc_conf")
"""`PYTORCH_CUDA_ALLOC_CONF` of the simulated caching allocator (empty: PyTorch's defaults)."""


# --- forms -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    """The fields of one calculator, in the order interfaces list them."""

    name: str
    fields: tuple[Field[Any], ...]

    def field(self, name: str) -> Field[Any] | None:
        """The field called `name` (or one of its aliases)."""
        return next((f for f in self.fields if name in f.names), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def without(self, *excluded: Field[Any]) -> Form:
        return Form(self.name, tuple(f for f in self.fields if f not in excluded))


TRAINING_FIELDS: tuple[Field[Any], ...] = (
    METHOD, PRECISION, OPTIMIZER, OPTIMIZER_IMPL, QUANT, TRAINING_LORA_R, TRAINING_LORA_TARGETS,
    TRAIN_LAYERS,
    BATCH, SEQ_LEN, CHECKPOINTING, ATTENTION, LOSS, FRAMEWORK, METRIC, GRAD_ACCUM, COMPILE,
    EMPTY_CACHE, TILED_MLP)
"""What trains and how: the single-GPU part of a training run."""
ALIGNMENT_FIELDS: tuple[Field[Any], ...] = (
    POLICY, PRECOMPUTE_REF, BETA, COMPLETION_LEN, GENERATION, VLLM_SHARE, VLLM_SLEEP,
    VALUE_ADAPTERS)
"""Preference and RL methods (`method` dpo, orpo, simpo, kto, ppo, grpo)."""
PARALLELISM_FIELDS: tuple[Field[Any], ...] = (
    GPUS, GPUS_PER_NODE, SHARDING, OFFLOAD, TENSOR_PARALLEL, PIPELINE_PARALLEL, EXPERT_PARALLEL)

SEED = Form("estimate", (PARAMS, MODEL, CONFIG, OPTIMIZER, BYTES_PER_PARAM, ACTIVATIONS, BATCH,
                         SEQ_LEN, GPU))
"""The seed calculator: N (or a model), B (an optimizer or a custom figure), A (as a figure, or
from a model's batch and sequence length), and the GPU to compare with."""
FIT = Form("fit", (MODEL, CONFIG, GPU, *PARALLELISM_FIELDS, MARGIN, *TRAINING_FIELDS,
                   *ALIGNMENT_FIELDS))
INFERENCE = Form("infer", (MODEL, CONFIG, WEIGHTS, CONTEXT, PROMPT, BATCH, KV_DTYPE, DTYPE,
                           ENGINE, TENSOR_PARALLEL, ATTENTION, IMAGES, MTP, GPU, LIMITS))
LORA = Form("lora", (MODEL, CONFIG, LORA_R, LORA_TARGETS, DORA, RSLORA))
TRACE = Form("trace", (MODEL, CONFIG, *(f for f in TRAINING_FIELDS
                                         if f not in (LOSS, FRAMEWORK, METRIC, GRAD_ACCUM,
                                                      COMPILE, EMPTY_CACHE)),
                       POLICY, PRECOMPUTE_REF, BETA, COMPLETION_LEN,
                       GPUS, SHARDING, FSDP_VERSION, PEFT_WRAP, ADAPTERS_FP32, ALLOC_CONF, DEVICE))
"""A trace runs transformers' model as transformers trains it: no framework, loss or metric;
DPO and GRPO as TRL computes their training step (no generation)."""
ACTIVATIONS_FORM = Form("activations", (MODEL, BATCH, SEQ_LEN))
"""The web page's and API's activation estimate for the seed rule's A."""

FORMS = (SEED, FIT, INFERENCE, LORA, TRACE, ACTIVATIONS_FORM)
LOCAL_ONLY = frozenset({CONFIG.name})
"""Fields the web API and pages do not take (a path on the server's disk)."""


def all_fields() -> tuple[Field[Any], ...]:
    """Every distinct field of every form."""
    seen: dict[str, Field[Any]] = {}
    for form in FORMS:
        for field in form.fields:
            seen.setdefault(field.name, field)
    return tuple(seen.values())


def find_field(name: str, forms: Iterable[Form] = FORMS) -> Field[Any] | None:
    for form in forms:
        found = form.field(name)
        if found is not None:
            return found
    return None


def hint(name: str, lang: Lang) -> str:
    """What field `name` accepts, in `lang`: the field's generated hint, else the catalogue's
    `accepted.<name>`, else a pointer to the help (never empty)."""
    field = find_field(name)
    if field is not None:
        return field.accepted(lang)
    key = f"accepted.{name}"
    return translate(key if has_message(key) else "accepted.see_help", lang)
