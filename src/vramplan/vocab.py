"""The vocabulary of a training or inference setup: one string enum per choice.

Names and values are those of the measured-case format (`../shared/validation/FORMAT.md`), so that a
case row, a CLI flag, a JSON field and a web form value are the same word. The detailed model
(`vramplan.training.estimate`), sharding (`vramplan.distributed.sharding`, which owns
`Scheme` and `Offload`) and inference import them from here.
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction
from typing import TypeVar

from vramplan.errors import UnknownName


class Method(StrEnum):
    """What is trained."""

    FULL = "full"
    """Every weight trains."""
    FREEZE = "freeze"
    """Only the last blocks (and the head) train; the rest is frozen."""
    LORA = "lora"
    """Low-rank adapters on a frozen base (Hu et al. 2021, arXiv:2106.09685)."""
    QLORA = "qlora"
    """LoRA on a quantized frozen base (Dettmers et al. 2023, arXiv:2305.14314)."""
    INFERENCE = "inference"
    """No training: generation with a KV cache."""
    # preference and RL fine-tuning, as huggingface/trl's trainers run it; the policy trains as
    # the `policy` field says (full, LoRA or QLoRA)
    DPO = "dpo"
    """Direct preference optimization (Rafailov et al. 2023, arXiv:2305.18290): chosen and
    rejected sequences in one forward, against a frozen reference."""
    ORPO = "orpo"
    """Odds-ratio preference optimization (Hong et al. 2024, arXiv:2403.07691): no reference,
    an NLL term on the chosen half."""
    SIMPO = "simpo"
    """SimPO (Meng et al. 2024, arXiv:2405.14734), run by TRL's CPOTrainer: no reference."""
    KTO = "kto"
    """Kahneman-Tversky optimization (Ethayarajh et al. 2024, arXiv:2402.01306): unpaired
    examples and a KL batch, against a frozen reference."""
    PPO = "ppo"
    """Proximal policy optimization for language models (Ouyang et al. 2022, arXiv:2203.02155):
    policy and value model trained, reference and reward model frozen, generation then training."""
    GRPO = "grpo"
    """Group relative policy optimization (Shao et al. 2024, arXiv:2402.03300): a group of
    generated completions per prompt, no value model."""

    @property
    def uses_lora(self) -> bool:
        """Adapters train on a frozen base (LoRA and QLoRA)."""
        return self in (Method.LORA, Method.QLORA)

    @property
    def is_alignment(self) -> bool:
        """Preference or RL fine-tuning of a policy (DPO, ORPO, SimPO, KTO, PPO, GRPO)."""
        return self in ALIGNMENT_METHODS

    @property
    def has_reference(self) -> bool:
        """The method compares the policy with a frozen reference model (GRPO only when its KL
        weight is not zero)."""
        return self in (Method.DPO, Method.KTO, Method.PPO, Method.GRPO)

    @property
    def generates(self) -> bool:
        """The method generates its training sequences online (PPO, GRPO)."""
        return self in (Method.PPO, Method.GRPO)


ALIGNMENT_METHODS = frozenset({Method.DPO, Method.ORPO, Method.SIMPO, Method.KTO, Method.PPO,
                               Method.GRPO})
POLICY_METHODS = frozenset({Method.FULL, Method.LORA, Method.QLORA})
"""How the policy of a preference or RL method trains."""


class Generation(StrEnum):
    """Who generates the completions of an online method (PPO, GRPO)."""

    MODEL = "model"
    """The training model itself, with transformers' `generate` and its KV cache (TRL's
    `use_vllm=False`, the default)."""
    VLLM_COLOCATE = "vllm-colocate"
    """A vLLM engine in the training process, on the same GPU, with its share of the GPU's
    memory (TRL `vllm_mode="colocate"`, `vllm_gpu_memory_utilization`)."""
    VLLM_SERVER = "vllm-server"
    """A vLLM server on other GPUs (TRL `vllm_mode="server"`, `trl vllm-serve`): nothing on the
    training GPUs."""


class Precision(StrEnum):
    """How weights, gradients and master copies are held."""

    MIXED = "mixed"
    """16-bit weights and gradients, fp32 master copy of the trainable weights."""
    AMP = "amp"
    """fp32 weights, gradients and optimizer; 16-bit autocast for the matmuls."""
    BF16_TRUE = "bf16-true"
    """Everything in bf16, no master copy."""
    FP32 = "fp32"
    """Everything in fp32."""


class Optimizer(StrEnum):
    """The optimizer."""

    ADAMW = "adamw"
    """torch.optim.AdamW: two moments in the parameter's dtype."""
    ADAMW_8BIT = "adamw-8bit"
    """bitsandbytes AdamW8bit: two uint8 moments plus one fp32 absmax per 256 values."""
    PAGED_ADAMW = "paged-adamw"
    """bitsandbytes PagedAdamW: 32-bit moments in CUDA unified (managed) memory."""
    PAGED_ADAMW_8BIT = "paged-adamw-8bit"
    """bitsandbytes PagedAdamW8bit: 8-bit moments in unified memory."""
    SGD_MOMENTUM = "sgd-momentum"
    """torch.optim.SGD with momentum: one buffer like the parameter."""
    SGD = "sgd"
    """Plain SGD: no state."""
    ADAFACTOR = "adafactor"
    """Adafactor (Shazeer & Stern 2018, arXiv:1804.04235): factored second moment, no first."""
    NONE = "none"
    """No optimizer (inference)."""


class OptimizerImpl(StrEnum):
    """How the optimizer step runs; empty in a case means the framework's default."""

    FOREACH = "foreach"
    """Multi-tensor kernels over all parameters at once (torch's default on CUDA)."""
    FUSED = "fused"
    """One fused kernel: no temporaries."""
    FOR_LOOP = "for-loop"
    """One parameter at a time: temporaries of the largest tensor only."""
    IN_BACKWARD = "in-backward"
    """The step runs inside backward, per parameter, so gradients never all coexist."""


class Quant(StrEnum):
    """Storage of the frozen base weights."""

    NONE = "none"
    """In the compute dtype."""
    NF4 = "nf4"
    """bitsandbytes 4-bit NormalFloat, one fp32 absmax per 64 weights."""
    NF4_DQ = "nf4-dq"
    """NF4 with double quantization: absmax as uint8, one fp32 constant per 256 of them."""
    FP4 = "fp4"
    """bitsandbytes 4-bit float, same storage as NF4."""
    FP4_DQ = "fp4-dq"
    """FP4 with double quantization."""
    INT8 = "int8"
    """bitsandbytes LLM.int8(): int8 weights, one fp32 scale per output row."""


class Checkpointing(StrEnum):
    """Activation checkpointing."""

    NONE = "none"
    """Every tensor saved for backward stays until backward."""
    FULL = "full"
    """Every block recomputed in backward: only block inputs stay."""
    SELECTIVE = "selective"
    """Only the attention core is recomputed (Korthikanti et al. 2022, section 4.2)."""


class Attention(StrEnum):
    """Attention kernel."""

    EAGER = "eager"
    """Matmul, softmax, matmul: the score matrix is saved."""
    SDPA = "sdpa"
    """torch scaled_dot_product_attention (flash or memory-efficient kernel on CUDA)."""
    FLASH = "flash"
    """FlashAttention (Dao et al. 2022): saves only the log-sum-exp per row."""


class Loss(StrEnum):
    """How the cross-entropy is computed."""

    STANDARD = "standard"
    """Logits for every token at once, softmax over the vocabulary."""
    CHUNKED = "chunked"
    """Chunked (or fused) cross-entropy."""


class Scheme(StrEnum):
    """How data-parallel GPUs share the model states (case column `sharding`)."""

    NONE = "none"
    """One GPU, nothing shared."""
    DDP = "ddp"
    """PyTorch DistributedDataParallel: every GPU holds everything, plus gradient buckets."""
    ZERO1 = "zero1"
    """DeepSpeed ZeRO stage 1: optimizer states (and fp32 master weights) sharded."""
    ZERO2 = "zero2"
    """DeepSpeed ZeRO stage 2: optimizer states and gradients sharded."""
    ZERO3 = "zero3"
    """DeepSpeed ZeRO stage 3: optimizer states, gradients and parameters sharded."""
    FSDP = "fsdp"
    """PyTorch FSDP, FULL_SHARD (FSDP1) or fully_shard (FSDP2): everything sharded."""
    FSDP_GRAD_OP = "fsdp-grad-op"
    """PyTorch FSDP, SHARD_GRAD_OP: parameters stay gathered from forward to backward."""
    HSDP = "hsdp"
    """PyTorch FSDP, HYBRID_SHARD: full shard within a node, replicated across nodes."""


class Offload(StrEnum):
    """What lives in host (CPU) memory instead of GPU memory (cases.csv `offload`)."""

    NONE = "none"
    """Nothing offloaded."""
    OPTIMIZER = "optimizer"
    """Optimizer states, fp32 master weights and fp32 gradients on the host; the step runs on the
    CPU (DeepSpeed ZeRO-Offload, `offload_optimizer`)."""
    PARAMS_OPTIMIZER = "params-optimizer"
    """Parameters too (DeepSpeed `offload_param` with ZeRO-3; FSDP `CPUOffload(offload_params)`)."""
    ACTIVATIONS = "activations"
    """Activations saved for backward go to host memory (activation offloading)."""


class Framework(StrEnum):
    """Training stack, for its known defaults."""

    HF = "hf"
    """transformers (+ peft for LoRA)."""
    LITGPT = "litgpt"
    """Lightning-AI/litgpt on Lightning Fabric."""
    TORCHTUNE = "torchtune"
    """torchtune recipes."""
    DEEPSPEED = "deepspeed"
    """DeepSpeed engine."""
    MEGATRON = "megatron"
    """Megatron-LM."""
    GENERIC = "generic"
    """A plain PyTorch loop; modelled like transformers."""
    TORCHTITAN = "torchtitan"
    """pytorch/torchtitan: its own model code, FSDP2 with fp32 sharded parameters."""
    AXOLOTL = "axolotl"
    """axolotl-ai-cloud/axolotl: the transformers Trainer with axolotl's defaults."""
    LLAMAFACTORY = "llamafactory"
    """hiyouga/LLaMA-Factory: the transformers Trainer with LLaMA-Factory's defaults."""
    UNSLOTH = "unsloth"
    """unslothai/unsloth: TRL's trainers on transformers' models patched with Unsloth's kernels
    (its norms, LoRA layers and cross-entropy) and its offloaded checkpointing."""
    ACCELERATE = "accelerate"
    """A loop on huggingface/accelerate's `Accelerator` (transformers models)."""


class FsdpVersion(StrEnum):
    """Which PyTorch FSDP implementation."""

    FSDP1 = "fsdp1"
    """`FullyShardedDataParallel`: one flat parameter per wrapped unit."""
    FSDP2 = "fsdp2"
    """`fully_shard`: per-parameter sharding (DTensor)."""


class Metric(StrEnum):
    """Which peak was (or should be) read."""

    ALLOCATED = "allocated"
    """torch.cuda.max_memory_allocated: tensors only."""
    RESERVED = "reserved"
    """torch.cuda.max_memory_reserved: what the caching allocator holds."""
    DEVICE = "device"
    """nvidia-smi / NVML: reserved plus the CUDA context."""


class Device(StrEnum):
    """Where a traced training step runs."""

    CPU = "cpu"
    """Fake tensors on the CPU: no memory is allocated, every allocation is counted."""
    CUDA = "cuda"
    """A real step on a CUDA GPU with random weights, beside the fake count."""


class LoraTarget(StrEnum):
    """A module that can get an adapter (the case format's `lora_targets` names)."""

    Q = "q"
    """Query projection."""
    K = "k"
    """Key projection."""
    V = "v"
    """Value projection."""
    O = "o"  # noqa: E741 - the attention output projection is called `o` everywhere
    """Attention output projection."""
    GATE = "gate"
    """MLP gate projection (gated MLPs only)."""
    UP = "up"
    """MLP up projection."""
    DOWN = "down"
    """MLP down projection."""
    HEAD = "head"
    """The output head (vocabulary projection)."""
    ALL = "all"
    """Every linear layer of the blocks (not the head, not MoE routers)."""


BLOCK_TARGETS = frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O,
                           LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN})
"""What `all` stands for: litgpt's lora_query/key/value/projection/mlp, peft's `all-linear`
without the head."""
LORA_TARGET_GROUPS: dict[str, frozenset[LoraTarget]] = {
    # fused projections, which one adapter covers: the query, key and value of Falcon, GPT-NeoX
    # and BLOOM (`query_key_value`), GPT-2 and GPT-BigCode (`c_attn`), Phi-3 (`qkv_proj`), MPT
    # (`Wqkv`) and Baichuan (`W_pack`); Phi-3's gate and up (`gate_up_proj`)
    "query-key-value": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V}),
    "c-attn": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V}),
    "qkv-proj": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V}),
    "wqkv": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V}),
    "w-pack": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V}),
    "gate-up-proj": frozenset({LoraTarget.GATE, LoraTarget.UP}),
    # GPT-2's `c_proj`, which peft matches in the attention and in the MLP
    "c-proj": frozenset({LoraTarget.O, LoraTarget.DOWN}),
    # litgpt's `lora_mlp` (every linear of the MLP) and torchtune's `apply_lora_to_mlp`
    "lora-mlp": frozenset({LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN}),
    "apply-lora-to-mlp": frozenset({LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN}),
    # the blocks' parts by their modules' names: every linear of the attention or of the MLP
    "attention": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O}),
    "self-attn": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O}),
    "attn": frozenset({LoraTarget.Q, LoraTarget.K, LoraTarget.V, LoraTarget.O}),
    "mlp": frozenset({LoraTarget.GATE, LoraTarget.UP, LoraTarget.DOWN}),
}
"""Names of `lora_targets` that stand for several targets, in `spelling` form: a fused linear
adapts its parts, a module its linears (a part the architecture lacks, an ungated MLP's gate,
adapts nothing)."""
PEFT_LORA_RANK = 8
"""peft's `LoraConfig.r` and litgpt's `lora_r` default."""
PEFT_LORA_TARGETS = (LoraTarget.Q, LoraTarget.V)
"""peft's default modules for Llama-style models (`TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_
MAPPING`: q_proj, v_proj) and litgpt's (lora_query, lora_value)."""


class Engine(StrEnum):
    """The program that runs the model."""

    GENERIC = "generic"
    """A plain PyTorch decode loop: static KV cache for the whole context, last-token logits."""
    HF = "hf"
    """Hugging Face transformers `generate`."""
    LITGPT = "litgpt"
    """Lightning-AI litgpt `generate/base.py` (bitsandbytes through Lightning Fabric)."""
    VLLM = "vllm"
    """vLLM: pre-allocates `gpu_memory_utilization` of the card, paged KV cache."""
    LLAMA_CPP = "llama.cpp"
    """llama.cpp with GGUF weights, fully offloaded to the GPU."""


class ComputeDtype(StrEnum):
    """Dtype of activations and of the tensors a format leaves unquantized."""

    BF16 = "bf16"
    """bfloat16 (2 bytes)."""
    FP16 = "fp16"
    """float16 (2 bytes)."""
    FP32 = "fp32"
    """float32 (4 bytes)."""

    @property
    def bytes(self) -> int:
        return 4 if self is ComputeDtype.FP32 else 2


class KvDtype(StrEnum):
    """Storage of the KV cache."""

    FP32 = "fp32"
    """4 bytes per value."""
    FP16 = "fp16"
    """2 bytes per value (the default of every engine)."""
    BF16 = "bf16"
    """2 bytes per value."""
    FP8 = "fp8"
    """1 byte per value (vLLM `kv_cache_dtype="fp8"`, e4m3/e5m2; per-tensor scales only)."""
    INT8 = "int8"
    """1 byte per value; per-group scales not counted (under 2% at group 64 in fp16)."""
    INT4 = "int4"
    """Half a byte per value; per-group scales not counted (HF QuantizedCache, quanto/HQQ)."""
    Q8_0 = "q8_0"
    """llama.cpp `--cache-type-k q8_0`: blocks of 32 int8 plus an fp16 scale, 34 bytes per 32."""
    Q4_0 = "q4_0"
    """llama.cpp `--cache-type-k q4_0`: 18 bytes per 32 values."""

    @property
    def bytes_per_value(self) -> Fraction:
        return _KV_BYTES[self]


_KV_BYTES = {
    KvDtype.FP32: Fraction(4), KvDtype.FP16: Fraction(2), KvDtype.BF16: Fraction(2),
    KvDtype.FP8: Fraction(1), KvDtype.INT8: Fraction(1), KvDtype.INT4: Fraction(1, 2),
    KvDtype.Q8_0: Fraction(34, 32), KvDtype.Q4_0: Fraction(18, 32),  # ggml-common.h block_q8_0/q4_0
}


E = TypeVar("E", bound=StrEnum)


def spelling(text: str) -> str:
    """`text` in the form names are compared in: any case, `_` and spaces written `-`
    (`Paged_AdamW_8bit` is `paged-adamw-8bit`)."""
    return "-".join(text.strip().lower().replace("_", " ").split())


# Other names that the stacks themselves give to a member, in `spelling` form. Each is the
# same thing under its framework's name, never a guess between two members (`bf16` alone could
# be `amp` or `bf16-true`, `4bit` nf4 or fp4: they are not here).
OTHER_SPELLINGS: dict[type[StrEnum], dict[str, StrEnum]] = {
    # every parameter trains, as in pre-training; a generation is an inference run
    Method: {"full-fine-tuning": Method.FULL, "full-finetuning": Method.FULL,
             "full-finetune": Method.FULL, "full-ft": Method.FULL, "fft": Method.FULL,
             "pretraining": Method.FULL, "pretrain": Method.FULL,
             "generation": Method.INFERENCE, "generate": Method.INFERENCE},
    # Lightning Fabric's precision strings (lightning/fabric/connector.py `_PRECISION_INPUT`):
    # "16-mixed" and "bf16-mixed" keep fp32 weights and autocast (the `MixedPrecision` plugin)
    Precision: {"16-mixed": Precision.AMP, "bf16-mixed": Precision.AMP,
                "32-true": Precision.FP32, "float32": Precision.FP32,
                # the same written with the 16-bit type first; "16-true" (fp16 weights and
                # compute, no master copy) is the format's all-16-bit precision
                "fp16-mixed": Precision.AMP, "16-true": Precision.BF16_TRUE,
                "fp16-true": Precision.BF16_TRUE, "pure-bf16": Precision.BF16_TRUE,
                # autocast named as such: fp32 weights, 16-bit matmuls
                "bf16-amp": Precision.AMP, "fp16-amp": Precision.AMP,
                "amp-bf16": Precision.AMP, "amp-fp16": Precision.AMP,
                # the format's own description of `mixed`; TF32 keeps fp32 tensors (its
                # matmuls round their inputs)
                "mixed-precision": Precision.MIXED, "tf32": Precision.FP32},
    # transformers' `TrainingArguments.optim` names (training_args.py `OptimizerNames`);
    # torch.optim.Adam keeps AdamW's two moments (torch/optim/adam.py `_init_group`); the seed
    # page's presets, "Adam in mixed precision" and 8-bit Adam
    Optimizer: {"adam-mixed": Optimizer.ADAMW, "adam-8bit": Optimizer.ADAMW_8BIT,
                "adam8bit": Optimizer.ADAMW_8BIT,
                "adam": Optimizer.ADAMW, "adamw-torch": Optimizer.ADAMW,
                "adamw-torch-fused": Optimizer.ADAMW, "adamw-hf": Optimizer.ADAMW,
                "adamw-bnb-8bit": Optimizer.ADAMW_8BIT, "adamw8bit": Optimizer.ADAMW_8BIT,
                "paged-adamw-32bit": Optimizer.PAGED_ADAMW,
                # bitsandbytes' class names (bitsandbytes/optim/adamw.py)
                "pagedadamw32bit": Optimizer.PAGED_ADAMW, "pagedadamw": Optimizer.PAGED_ADAMW,
                "pagedadamw8bit": Optimizer.PAGED_ADAMW_8BIT,
                # the fused kernels of the same AdamW: transformers' "adamw_apex_fused",
                # DeepSpeed's FusedAdam (deepspeed/ops/adam/fused_adam.py, adam_w_mode)
                "adamw-apex-fused": Optimizer.ADAMW, "fusedadam": Optimizer.ADAMW,
                # the same written in words; DeepSpeed's CPU Adam is AdamW on the host
                # (deepspeed/ops/adam/cpu_adam.py `DeepSpeedCPUAdam`, adamw_mode=True)
                "adam-w": Optimizer.ADAMW, "adam-8-bit": Optimizer.ADAMW_8BIT,
                "adamw-8-bit": Optimizer.ADAMW_8BIT, "8-bit-adam": Optimizer.ADAMW_8BIT,
                "8-bit-adamw": Optimizer.ADAMW_8BIT, "deepspeedcpuadam": Optimizer.ADAMW,
                "cpu-adam": Optimizer.ADAMW, "cpuadam": Optimizer.ADAMW},
    # torchtune's `optimizer_in_bwd` flag steps each parameter inside backward; torch.optim's
    # own words for its implementations (`_single_tensor_adamw`, `_multi_tensor_adamw`)
    OptimizerImpl: {"forloop": OptimizerImpl.FOR_LOOP,
                    "single-tensor": OptimizerImpl.FOR_LOOP,
                    "multi-tensor": OptimizerImpl.FOREACH,
                    "optimizer-in-bwd": OptimizerImpl.IN_BACKWARD,
                    "in-bwd": OptimizerImpl.IN_BACKWARD},
    # bitsandbytes' 8-bit storage is LLM.int8() (transformers `load_in_8bit`)
    Quant: {"8bit": Quant.INT8, "bnb-8bit": Quant.INT8, "llm.int8": Quant.INT8,
            "llm-int8": Quant.INT8, "load-in-8bit": Quant.INT8, "bnb-nf4": Quant.NF4,
            # NF4 with bitsandbytes' double quantization (`bnb_4bit_use_double_quant`)
            "nf4+dq": Quant.NF4_DQ, "nf4-double-quant": Quant.NF4_DQ,
            "nf4-double-quantization": Quant.NF4_DQ,
            # the same written in words
            "8-bit": Quant.INT8, "bnb-8-bit": Quant.INT8, "4-bit-nf4": Quant.NF4,
            "nf4-4-bit": Quant.NF4, "nf4-4bit": Quant.NF4, "bnb-4-bit-nf4": Quant.NF4,
            "bnb-4bit-nf4": Quant.NF4, "bitsandbytes-nf4": Quant.NF4, "nf4-+-dq": Quant.NF4_DQ,
            "nf4+double-quant": Quant.NF4_DQ, "nf4-+-double-quant": Quant.NF4_DQ,
            "nf4-dq-4-bit": Quant.NF4_DQ},
    # transformers' `gradient_checkpointing=True` checkpoints every decoder layer
    # torchtitan's per-op selective activation checkpointing ("sac", `mode = "selective"`,
    # `selective_ac_option = "op"`)
    Checkpointing: {"sac": Checkpointing.SELECTIVE, "per-op": Checkpointing.SELECTIVE,
                    "true": Checkpointing.FULL, "yes": Checkpointing.FULL, "on": Checkpointing.FULL,
                    "1": Checkpointing.FULL, "gradient-checkpointing": Checkpointing.FULL,
                    "false": Checkpointing.NONE, "no": Checkpointing.NONE,
                    "off": Checkpointing.NONE, "0": Checkpointing.NONE,
                    "enabled": Checkpointing.FULL, "disabled": Checkpointing.NONE,
                    # Megatron-LM's word for it (`--recompute-granularity full|selective`) and
                    # the setting's other names; Unsloth's `use_gradient_checkpointing=
                    # "unsloth"` and axolotl's `gradient_checkpointing: offload` checkpoint
                    # every layer (and move the checkpoints to the host)
                    "activation-checkpointing": Checkpointing.FULL,
                    "recompute": Checkpointing.FULL, "full-recompute": Checkpointing.FULL,
                    "activation-recomputation": Checkpointing.FULL,
                    "selective-recompute": Checkpointing.SELECTIVE,
                    "unsloth": Checkpointing.FULL, "offload": Checkpointing.FULL},
    # transformers' `attn_implementation` names and the flash-attn package
    Attention: {"flash-attention-2": Attention.FLASH, "flash-attention-3": Attention.FLASH,
                "flash-attn": Attention.FLASH, "fa2": Attention.FLASH, "fa3": Attention.FLASH,
                # FlexAttention keeps what flash does (the output and the log-sum-exp), no
                # score matrix; SDPA's cuDNN backend is one of SDPA's fused kernels
                "flex-attention": Attention.FLASH, "flex": Attention.FLASH,
                "cudnn": Attention.SDPA,
                # xformers' memory_efficient_attention: the kernel SDPA's memory-efficient
                # backend was taken from (no score matrix kept)
                "xformers": Attention.SDPA, "memory-efficient": Attention.SDPA,
                "mem-efficient": Attention.SDPA,
                # flash-attn by its project's name
                "flash-attention": Attention.FLASH, "flashattention": Attention.FLASH,
                "flashattention-2": Attention.FLASH,
                # SDPA's math backend is eager's arithmetic: the score matrix is made and kept
                # (torch/nn/functional.py `scaled_dot_product_attention`, "math" reference)
                "math": Attention.EAGER, "sdpa-math": Attention.EAGER,
                # PyTorch's function by its name, and transformers' Hub kernels of flash-attn 3
                # (`kernels-community/vllm-flash-attn3`, read by its last part)
                "scaled-dot-product-attention": Attention.SDPA, "torch-sdpa": Attention.SDPA,
                "sdp": Attention.SDPA, "flash-attn-2": Attention.FLASH,
                "flash-attn2": Attention.FLASH, "flash-attn-3": Attention.FLASH,
                "flash-attn3": Attention.FLASH, "vllm-flash-attn3": Attention.FLASH},
    # FORMAT.md: "chunked / fused cross-entropy": Liger-Kernel's fused linear cross-entropy,
    # Apple's Cut Cross-Entropy (axolotl's `cut_cross_entropy`), torchtune's chunked loss
    Loss: {"fused": Loss.CHUNKED, "liger": Loss.CHUNKED, "liger-kernel": Loss.CHUNKED,
           "fused-linear-cross-entropy": Loss.CHUNKED, "cce": Loss.CHUNKED,
           "cut-cross-entropy": Loss.CHUNKED, "chunked-ce": Loss.CHUNKED,
           "chunked-cross-entropy": Loss.CHUNKED,
           # the plain loss under its own names
           "cross-entropy": Loss.STANDARD, "ce": Loss.STANDARD,
           # the classes and functions by their names: Liger-Kernel's
           # `LigerFusedLinearCrossEntropyLoss`, Cut Cross-Entropy's `linear_cross_entropy`,
           # torch.nn's `CrossEntropyLoss`
           "fusedlinearcrossentropy": Loss.CHUNKED,
           "ligerfusedlinearcrossentropyloss": Loss.CHUNKED,
           "liger-fused-linear-cross-entropy": Loss.CHUNKED,
           "linear-cross-entropy": Loss.CHUNKED, "crossentropyloss": Loss.STANDARD,
           "standard-ce": Loss.STANDARD, "cross-entropy-loss": Loss.STANDARD},
    # PyTorch FSDP's `ShardingStrategy` names; DeepSpeed's stages written with a dash
    Scheme: {"full-shard": Scheme.FSDP, "shard-grad-op": Scheme.FSDP_GRAD_OP,
             "hybrid-shard": Scheme.HSDP, "fsdp1": Scheme.FSDP, "fsdp2": Scheme.FSDP,
             "zero-1": Scheme.ZERO1, "zero-2": Scheme.ZERO2, "zero-3": Scheme.ZERO3,
             "deepspeed-zero1": Scheme.ZERO1, "deepspeed-zero2": Scheme.ZERO2,
             "deepspeed-zero3": Scheme.ZERO3, "zero-stage-1": Scheme.ZERO1,
             "zero-stage-2": Scheme.ZERO2, "zero-stage-3": Scheme.ZERO3,
             # FSDP2's API
             "fully-shard": Scheme.FSDP,
             # FSDP's NO_SHARD ("similar to DistributedDataParallel", torch/distributed/fsdp/
             # api.py `ShardingStrategy`) and DeepSpeed's stage 0 (plain data parallelism)
             "no-shard": Scheme.DDP, "zero0": Scheme.DDP, "zero-0": Scheme.DDP,
             "zero-stage-0": Scheme.DDP,
             # the same with the stack's name or in words: torch.nn.parallel's class, DeepSpeed's
             # stages, FSDP with its strategy
             "distributeddataparallel": Scheme.DDP, "distributed-data-parallel": Scheme.DDP,
             "deepspeed-zero-1": Scheme.ZERO1, "deepspeed-zero-2": Scheme.ZERO2,
             "deepspeed-zero-3": Scheme.ZERO3, "stage-1": Scheme.ZERO1, "stage-2": Scheme.ZERO2,
             "stage-3": Scheme.ZERO3, "fsdp-full-shard": Scheme.FSDP,
             "fsdp-shard-grad-op": Scheme.FSDP_GRAD_OP, "fsdp-grad-op": Scheme.FSDP_GRAD_OP,
             "no": Scheme.NONE},
    Offload: {"optimizer-states": Offload.OPTIMIZER,
              "optimizer+params": Offload.PARAMS_OPTIMIZER,
              "params+optimizer": Offload.PARAMS_OPTIMIZER,
              "optimizer-params": Offload.PARAMS_OPTIMIZER,
              "optimizer+param": Offload.PARAMS_OPTIMIZER,
              "param+optimizer": Offload.PARAMS_OPTIMIZER,
              "activation-offloading": Offload.ACTIVATIONS,
              "offload-activations": Offload.ACTIVATIONS,
              # DeepSpeed's config keys and its papers' names: ZeRO-Offload moves the optimizer
              # (Ren et al. 2021), ZeRO-Infinity the parameters too (Rajbhandari et al. 2021)
              "offload-optimizer": Offload.OPTIMIZER, "optimizer-offload": Offload.OPTIMIZER,
              "zero-offload": Offload.OPTIMIZER, "zero-infinity": Offload.PARAMS_OPTIMIZER,
              "no": Offload.NONE},
    # the project's name without its dot
    Engine: {"llamacpp": Engine.LLAMA_CPP, "llama-cpp": Engine.LLAMA_CPP},
    # peft's module names for Llama-style models, and its `all-linear`
    LoraTarget: {"q-proj": LoraTarget.Q, "k-proj": LoraTarget.K, "v-proj": LoraTarget.V,
                 "o-proj": LoraTarget.O, "gate-proj": LoraTarget.GATE, "up-proj": LoraTarget.UP,
                 "down-proj": LoraTarget.DOWN, "lm-head": LoraTarget.HEAD,
                 "all-linear": LoraTarget.ALL,
                 # torchtune's names (torchtune/modules/peft/_utils.py `LORA_ATTN_MODULES`:
                 # q_proj, k_proj, v_proj, output_proj; modules/feed_forward.py: `self.w1 =
                 # gate_proj`, `self.w2 = down_proj`, `self.w3 = up_proj`, as Mixtral's experts
                 # in transformers' MixtralBlockSparseTop2MLP) and its `apply_lora_to_output`
                 "output-proj": LoraTarget.O, "w1": LoraTarget.GATE, "w2": LoraTarget.DOWN,
                 "w3": LoraTarget.UP, "apply-lora-to-output": LoraTarget.HEAD,
                 # litgpt's flags (litgpt/finetune/lora.py `lora_query` ... `lora_head`)
                 "lora-query": LoraTarget.Q, "lora-key": LoraTarget.K,
                 "lora-value": LoraTarget.V, "lora-projection": LoraTarget.O,
                 "lora-head": LoraTarget.HEAD,
                 # transformers' modules of the architectures without Llama's names: the
                 # attention's output (OPT, GPT-J and CLIP `out_proj`; Falcon, GPT-NeoX, Phi-2
                 # `dense`), the first and second linear of an ungated MLP (OPT and Phi-2 `fc1`,
                 # `fc2`; GPT-J `fc_in`, `fc_out`; GPT-2 and GPT-BigCode `c_fc`; Falcon,
                 # GPT-NeoX and BLOOM `dense_h_to_4h`, `dense_4h_to_h`)
                 "out-proj": LoraTarget.O, "dense": LoraTarget.O, "fc1": LoraTarget.UP,
                 "fc-in": LoraTarget.UP, "c-fc": LoraTarget.UP,
                 "dense-h-to-4h": LoraTarget.UP, "fc2": LoraTarget.DOWN,
                 "fc-out": LoraTarget.DOWN, "dense-4h-to-h": LoraTarget.DOWN},
    # the torch.cuda functions and the tools that read the device
    Metric: {"max-memory-allocated": Metric.ALLOCATED, "memory-allocated": Metric.ALLOCATED,
             "max-memory-reserved": Metric.RESERVED, "memory-reserved": Metric.RESERVED,
             "nvidia-smi": Metric.DEVICE, "nvml": Metric.DEVICE,
             # tools that read NVML's used memory: W&B's system metrics, gpustat, pynvml and
             # py3nvml; the driver's free memory (`torch.cuda.mem_get_info`); AMD's rocm-smi
             "wandb": Metric.DEVICE, "w&b": Metric.DEVICE, "gpustat": Metric.DEVICE,
             "pynvml": Metric.DEVICE, "py3nvml": Metric.DEVICE, "mem-get-info": Metric.DEVICE,
             "rocm-smi": Metric.DEVICE,
             # PyTorch's names for the reserved counters before 1.4 (`max_memory_cached`)
             "max-memory-cached": Metric.RESERVED, "memory-cached": Metric.RESERVED,
             # torch.cuda.memory_stats()["active_bytes.all.peak"], torchtune's "Peak Memory
             # Active": the allocated blocks plus the freed ones still awaiting other streams
             "active": Metric.ALLOCATED, "peak-memory-active": Metric.ALLOCATED,
             # the counters under the names the stacks log them: memory_stats()'s keys;
             # torchtune's `peak_memory_alloc` / `peak_memory_reserved` (torchtune/training/
             # memory.py `get_memory_stats`); torchtitan's `max_active_gib` /
             # `max_reserved_gib` (torchtitan/components/metrics.py, read from
             # "active_bytes.all.peak" and "reserved_bytes.all.peak"); DeepSpeed's
             # `see_memory_usage` "Max_MA" / "Max_CA" (deepspeed/runtime/utils.py); nvidia-smi's
             # query field `memory.used`
             "allocated-bytes.all.peak": Metric.ALLOCATED,
             "active-bytes.all.peak": Metric.ALLOCATED,
             "reserved-bytes.all.peak": Metric.RESERVED,
             "peak-memory-alloc": Metric.ALLOCATED, "peak-memory-reserved": Metric.RESERVED,
             "max-active": Metric.ALLOCATED, "max-active-gib": Metric.ALLOCATED,
             "max-reserved": Metric.RESERVED, "max-reserved-gib": Metric.RESERVED,
             "max-ma": Metric.ALLOCATED, "max-ca": Metric.RESERVED,
             "max-allocated": Metric.ALLOCATED, "peak-allocated": Metric.ALLOCATED,
             "peak-reserved": Metric.RESERVED, "memory.used": Metric.DEVICE,
             # the same in words
             "peak-allocated-memory": Metric.ALLOCATED, "max-allocated-memory": Metric.ALLOCATED,
             "peak-reserved-memory": Metric.RESERVED, "max-reserved-memory": Metric.RESERVED,
             "peak-active": Metric.ALLOCATED, "nvml-used": Metric.DEVICE,
             "nvidia-smi-used": Metric.DEVICE},
    # stacks that run one of these: TRL's and ms-swift's trainers subclass transformers'
    # `Trainer` (trl/trainer/sft_trainer.py, swift/trainers/trainers.py); NeMo trains through
    # Megatron Core (as Megatron-Bridge does); DeepSpeed-Chat on the DeepSpeed engine
    Framework: {"transformers": Framework.HF, "trl": Framework.HF, "peft": Framework.HF,
                "hf-trainer": Framework.HF, "ms-swift": Framework.HF, "swift": Framework.HF,
                "huggingface": Framework.HF, "hugging-face": Framework.HF,
                "hugging-face-transformers": Framework.HF,
                "huggingface-transformers": Framework.HF, "hf-transformers": Framework.HF,
                "llama-factory": Framework.LLAMAFACTORY, "lit-gpt": Framework.LITGPT,
                "megatron-lm": Framework.MEGATRON, "megatron-core": Framework.MEGATRON,
                "mcore": Framework.MEGATRON, "megatron-bridge": Framework.MEGATRON,
                "nemo": Framework.MEGATRON, "deepspeed-chat": Framework.DEEPSPEED,
                "pytorch": Framework.GENERIC,
                # stacks built on one of these: OpenRLHF trains on the DeepSpeed engine
                # (openrlhf/utils/deepspeed/deepspeed.py `DeepspeedStrategy`); fms-hf-tuning
                # (TRL's `SFTTrainer`), FastChat's fastchat/train/train.py, alpaca-lora's
                # finetune.py and optimum-benchmark's PyTorch backend run transformers' models
                # and `Trainer`
                "openrlhf": Framework.DEEPSPEED, "fms-hf-tuning": Framework.HF,
                "fastchat": Framework.HF, "alpaca-lora": Framework.HF,
                # LMFlow's finetuner trains with transformers' `Trainer`
                # (src/lmflow/pipeline/finetuner.py)
                "lmflow": Framework.HF,
                "optimum-benchmark": Framework.HF, "sfttrainer": Framework.HF,
                "hf-accelerate": Framework.ACCELERATE,
                # Firefly's trainer subclasses transformers' `Trainer` (component/trainer.py);
                # oumi's default trainer is TRL's `SFTTrainer` (TrainingParams.trainer_type
                # TRL_SFT, oumi/core/configs/params/training_params.py)
                "firefly": Framework.HF, "oumi": Framework.HF,
                # Megatron-SWIFT (`megatron sft`, swift/megatron) trains through Megatron Core;
                # ArcticTraining on the DeepSpeed engine (`deepspeed.initialize` in its
                # trainer; docs/open-leads.md, its rows)
                "megatron-swift": Framework.MEGATRON, "ms-swift-megatron": Framework.MEGATRON,
                "swift-megatron": Framework.MEGATRON, "arctictraining": Framework.DEEPSPEED,
                "arctic-training": Framework.DEEPSPEED},
}


def member_named(enum: type[E], text: str) -> E | None:
    """The member of `enum` that `text` names (its value or another name of it in
    `OTHER_SPELLINGS`, compared in `spelling` form), or None."""
    key = spelling(text).removesuffix("()")  # a function named with its call
    found = _named(enum, key)
    if found is None and "." in key:  # a name with its module path: torch.optim.AdamW
        found = _named(enum, key.rsplit(".", 1)[1])
    if found is None and "/" in key and _named(enum, key.split("/", 1)[0]) is None:
        # a Hub kernel by its repository (kernels-community/vllm-flash-attn3), not two values
        found = _named(enum, key.rsplit("/", 1)[1])
    return found


def _named(enum: type[E], key: str) -> E | None:
    for member in enum:
        if spelling(member.value) == key:
            return member
    other = OTHER_SPELLINGS.get(enum, {}).get(key)
    return None if other is None else enum(other.value)


def choice(enum: type[E], field: str, value: str | None, default: E) -> E:
    """The member of `enum` named `value` (`default` when empty), or an error listing the names."""
    if value is None or not value.strip():
        return default
    member = member_named(enum, value)
    if member is None:
        raise UnknownName(field, value, [member.value for member in enum])
    return member
