"""A training run on one GPU, as typed, validated data: what trains, how, and the framework's
defaults that decide what it keeps in memory."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from vramplan.allocator import PYTORCH_DEFAULTS, AllocatorConfig
from vramplan.bounds import BATCH, LORA_RANK, SEQ_LEN, TRAIN_LAYERS
from vramplan.errors import ConflictingOptions, MissingValue, OutOfRange
from vramplan.presets.cuda import cuda_total_bytes, free_at_load_bytes
from vramplan.presets.frameworks.dates import has_change
from vramplan.presets.frameworks.defaults import (
    builds_transformers_adamw,
    default_optimizer_impl,
    framework_defaults,
    runs_transformers_code,
)
from vramplan.presets.frameworks.peft_bnb import (
    LLAMAFACTORY_PURE_BF16_ADAPTERS_SINCE,
    PEFT_ADAPTERS_FOLLOW_BASE_SINCE,
    PEFT_UPCASTS_ADAPTERS_SINCE,
)
from vramplan.presets.frameworks.torchtitan import torchtitan_code
from vramplan.presets.frameworks.torchtune import torchtune_loop_keeps_logits
from vramplan.presets.frameworks.transformers import (
    REMOTE_CODE,
    TransformersCode,
    transformers_code,
)
from vramplan.presets.frameworks.unsloth import UNSLOTH_SMALL_BATCH_TOKENS, unsloth_code
from vramplan.presets.gpus import Gpu
from vramplan.training.activations.spec import LITGPT_LORA_DROPOUT
from vramplan.vocab import (
    POLICY_METHODS,
    Attention,
    Checkpointing,
    Framework,
    Generation,
    LoraTarget,
    Loss,
    Method,
    Metric,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
)

GRPO_COMPLETION_LEN = 512
"""TRL `GRPOConfig.max_completion_length` (huggingface/trl trl/trainer/grpo_config.py @f2cd5771;
256 up to v1.9.0)."""
PPO_RESPONSE_LEN = 53
"""TRL `PPOConfig.response_length` (trl/experimental/ppo/ppo_config.py @f2cd5771)."""
VLLM_GPU_SHARE = 0.3
"""TRL `GRPOConfig.vllm_gpu_memory_utilization` (grpo_config.py @f2cd5771): the colocated vLLM
engine's share of the GPU's memory."""


@dataclass(frozen=True, slots=True)
class AlignmentSetup:
    """A preference or RL method around the policy, as TRL's trainers run it (huggingface/trl
    @f2cd5771). How the policy itself trains (full, LoRA, QLoRA) is `TrainingSetup.method`; the
    batch is TRL's `per_device_train_batch_size`: preference pairs for DPO, ORPO and SimPO,
    examples for KTO, prompts for PPO, completions for GRPO; `seq_len` is the whole sequence
    (prompt and completion)."""

    method: Method
    precompute_ref: bool = False
    """DPO, KTO: reference log-probabilities computed once before training
    (`precompute_ref_log_probs`), so no reference pass and no reference model during training."""
    beta: float = 0.0
    """GRPO's KL weight (`GRPOConfig.beta`, 0.0 since TRL v0.19): a reference model only when it
    is not zero."""
    completion_len: int | None = None
    """GRPO, PPO: tokens generated per sequence (None: TRL's `max_completion_length` 512, PPO's
    `response_length` 53), within `seq_len`."""
    generation: Generation = Generation.MODEL
    generation_batch: int | None = None
    """Sequences generated at once per GPU (TRL's `generation_batch_size`: the batch times
    `steps_per_generation`, which defaults to the gradient accumulation steps); None: the batch."""
    vllm_share: float = VLLM_GPU_SHARE
    """The colocated vLLM engine's `gpu_memory_utilization`."""
    vllm_sleep: bool = False
    """`vllm_enable_sleep_mode`: the engine releases its weights and KV cache after each
    generation (`llm.sleep(level=2)`) and takes them back for the next."""
    gpu_memory_bytes: int | None = None
    """The GPU's memory as CUDA reports it (`torch.cuda.mem_get_info()`'s total,
    `vramplan.presets.cuda.cuda_total_bytes`), which the colocated engine takes its share of
    (set from the GPU the request names)."""
    coati: bool = False
    """The method runs as ColossalChat's trainer runs it (hpcaitech/ColossalAI
    applications/ColossalChat coati/trainer @d888c378), not TRL's: ORPO's loss is coati's
    (`vramplan.training.activations.head.HeadSpec.coati_orpo`)."""
    value_adapters: bool = False
    """PPO: the value model trains as the policy does, LoRA adapters included (ms-swift's
    `swift rlhf` passes it through `prepare_model`, which applies the run's tuner:
    modelscope/ms-swift swift/llm/train/rlhf.py @07bd7b463, swift/pipelines/train/rlhf.py
    @3602360a). False: TRL's `PPOTrainer`, which applies PEFT to the policy only and trains the
    value model in full."""

    @property
    def completion_tokens(self) -> int:
        if self.completion_len is not None:
            return self.completion_len
        return PPO_RESPONSE_LEN if self.method is Method.PPO else GRPO_COMPLETION_LEN

    @property
    def engine_budget_bytes(self) -> int:
        """Memory the colocated vLLM engine holds on this GPU: its share of the GPU's memory
        (vLLM's `gpu_memory_utilization` is "the fraction of GPU memory to be used for the model
        executor", a per-instance limit that its KV cache fills, vllm/config.py CacheConfig)."""
        if self.generation is not Generation.VLLM_COLOCATE or self.gpu_memory_bytes is None:
            return 0
        return int(self.vllm_share * self.gpu_memory_bytes)


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
    first_step_report: bool = False
    """The figure is the run's first step's (Megatron-LM's `report_memory` "(after 1
    iterations)"): the caching allocator has held the load and one step, not a steady step after
    an earlier one (`vramplan.training.allocations.step.step_program`)."""
    compiled: bool = False
    """The model and loss run under torch.compile: the blocks save what AOTAutograd's min-cut
    partitioner keeps (`vramplan.training.activations.ops.COMPILED_SAVES`), and torchtune's
    cross-entropy is compiled as its recipes compile it."""
    liger_kernels: bool = False
    """Liger-Kernel patched the transformers model's modules (`apply_liger_kernel_to_*`, the
    Trainer's `use_liger_kernel`, ms-swift's `--use_liger_kernel`, axolotl's LigerPlugin, NeMo
    Automodel's default): its RMSNorm and SwiGLU keep less for backward
    (`vramplan.training.activations.spec.BlockSpec.liger_kernels`); its fused linear cross-entropy
    is the `chunked` loss."""
    unquantized_modules: tuple[str, ...] = ()
    """Modules a 4-bit checkpoint leaves unquantized (its config.json's `quantization_config.
    llm_int8_skip_modules`, transformers' `modules_to_not_convert`): the block linears they
    name stay in the weights' dtype (Unsloth's "dynamic 4-bit" uploads keep some MLPs and
    projections in 16 bits; `vramplan.presets.dynamic_quants`). Names outside the blocks (the
    head, a vision tower or projector) change nothing: they are not quantized anyway.
    `vramplan.training.states.unquantized_linears`."""
    checkpoints_on_host: bool = False
    """Full checkpointing keeps each block's input in host memory and brings it back into a
    fresh GPU tensor to recompute the block in backward (ArcticTraining's
    `activation_checkpoint_cpu_offload`: arctic_training/monkey_patches.py
    `CheckpointFunctionWithCPUOffload`, reentrant, which moves the first tensor argument to the
    CPU in forward and `.to(ctx.x_device)` in backward); Unsloth's own offloaded checkpointing
    is its framework's (`offloads_checkpoints`)."""
    tiled_mlp: bool = False
    """The MLP (a MoE layer's whole block) runs over tiles of tokens under `no_grad` and saves
    only its input; backward runs it again tile by tile with its gradient (Unsloth's
    `unsloth_tiled_mlp`, DeepSpeed's `TiledMLP` of Arctic Long Sequence Training, axolotl's
    `tiled_mlp`): `vramplan.training.activations.spec.BlockSpec.mlp_tile_share`, and the tile each
    stack takes, `vramplan.training.specs.mlp_tile_tokens`."""
    te_cross_entropy: bool = False
    """Megatron-LM's fused cross-entropy runs Transformer Engine's kernel
    (`cross_entropy_loss_fusion` with `cross_entropy_fusion_impl="te"`), which keeps the 16-bit
    logits alone (`vramplan.training.activations.head.HeadSpec.te_cross_entropy`)."""
    native_fused_cross_entropy: bool = False
    """Megatron-LM's fused cross-entropy runs its native implementation
    (`cross_entropy_loss_fusion` with `cross_entropy_fusion_impl="native"`, the default), whose
    compiled steps make fp32 logits-sized transients
    (`vramplan.training.activations.head.HeadSpec.native_fused_cross_entropy`); ignored beside
    `te_cross_entropy`."""
    grad_buffer_16bit: bool = False
    """Megatron's gradient buffer holds the parameters' 16-bit dtype, not fp32: Megatron core's
    `DistributedDataParallelConfig(grad_reduce_in_fp32=False)` (its default; Megatron-Bridge's
    bf16 recipes set it True unless a model's recipe turns it off), Megatron-LM's fp16 runs
    without `--accumulate-allreduce-grads-in-fp32` (arguments.py forces it on for bf16)."""
    gradient_accumulation_fusion: bool = True
    """Megatron-LM accumulates each weight gradient into its `main_grad` inside the weight-
    gradient GEMM and hands autograd a dummy gradient (`vramplan.training.dummy_wgrads`): on
    unless the run says `--no-gradient-accumulation-fusion` (megatron/training/arguments.py,
    `store_false`; Megatron-Bridge's providers turn it on when Apex's
    `fused_weight_gradient_mlp_cuda` imports, `can_enable_gradient_accumulation_fusion`;
    ms-swift's `no_gradient_accumulation_fusion` defaults to False)."""
    distributed: bool = False
    """The step is one GPU's of a multi-GPU job, run by the framework's distributed recipe
    (torchtune's `*_distributed` recipes: `torchtune_loop_keeps_logits`)."""
    loss_compiled_alone: bool = False
    """The loss runs under torch.compile while the blocks run eager (torchtitan's
    `compile.components = ["loss"]`, torchtitan/config/job_config.py `Compile.components`)."""
    reentrant_checkpointing: bool | None = None
    """Full checkpointing runs `torch.utils.checkpoint` with `use_reentrant=True` (a run's
    `gradient_checkpointing_kwargs`); None: the framework's default
    (`vramplan.presets.frameworks.transformers.TransformersCode.reentrant_checkpointing` for
    transformers' own checkpointing, as of `code_date`)."""
    input_require_grads: bool | None = None
    """Whether the embeddings' output was made to require a gradient (transformers'
    `enable_input_require_grads()`, a forward hook that calls `requires_grad_(True)` on it), so
    that the gradient passes through reentrant checkpoints whose inputs come from frozen layers.
    None: as the stack does it, which `vramplan.training.estimate` reads as asked for under
    transformers' full checkpointing (peft's `PeftModel` and `prepare_model_for_kbit_training`
    call it, and transformers calls it from `gradient_checkpointing_enable` when a peft adapter
    is loaded: modeling_utils.py v4.35 to v4.57, `_hf_peft_config_loaded`). False: adapters
    made without peft under transformers' own checkpointing, where nothing calls it (ColossalChat's
    `convert_to_lora_module`: `vramplan.validation.notes.NO_INPUT_REQUIRE_GRADS_NOTE`)."""
    checkpoint_submodules: bool = False
    """Full checkpointing wraps each sub-module of a block, its two norms, attention and MLP, in
    a checkpoint of its own rather than the block (NeMo Automodel's `FSDP2Manager(
    activation_checkpointing=True)`: nemo_automodel/components/distributed/parallelizer.py
    @b4733bdc `checkpoint_wrapper(layer.mlp)`, `self_attn`, `input_layernorm`,
    `post_attention_layernorm`): each block keeps its sub-modules' four inputs, and backward
    recomputes one sub-module at a time."""
    checkpoint_in_units: bool = False
    """Checkpointing wraps each block inside its FSDP unit (`apply_activation_checkpointing`:
    accelerate's `fsdp_activation_checkpointing`, llama-recipes, Answer.AI's train.py), not
    around the unit from the model's forward as transformers' own checkpointing does."""
    empty_cache_between_steps: bool = False
    """The loop calls `torch.cuda.empty_cache()` between steps, so the caching allocator keeps
    no free segment from one step to the next (reserved memory is then that of a steady step,
    without the first step's fragmentation)."""
    float_quant_storage: bool = False
    """QLoRA: bitsandbytes stores the 4-bit base in a float dtype (`bnb_4bit_quant_storage`,
    which FSDP and ZeRO-3 need to shard it) instead of its default uint8; peft then gives the
    adapters the base's dtype (`adapters_in_fp32`)."""
    adapters_fp32: bool | None = None
    """The LoRA adapters are held in fp32 (True) or in the model's dtype (False); None: as the
    run's stack builds them (`adapters_in_fp32`). False where something casts peft's adapters
    to the model's dtype: `vramplan trace`, which builds them with
    `get_peft_model(autocast_adapter_dtype=False)`, and DeepSpeed's engine, which casts every
    floating-point parameter when bf16 or fp16 is on (deepspeed/runtime/engine.py
    `_configure_distributed_model`, `self.module.bfloat16()` from 648f7bfa, 2021-11-01, now
    `_cast_module_mixed_precision`) while its ZeRO optimizer keeps the fp32 copies
    (`vramplan.distributed.per_gpu`)."""
    adapters_gathered_16bit: bool = False
    """FSDP gathers the fp32 adapters as 16-bit copies for the forward: accelerate's
    `FullyShardedDataParallelPlugin.set_mixed_precision` gives FSDP1 and FSDP2 a `param_dtype`
    of the run's 16-bit dtype (huggingface/accelerate src/accelerate/utils/dataclasses.py
    @16cb6eb8; `FrameworkDefaults.fsdp_casts_params`), so peft's `Linear.forward` finds its
    input already in the adapters' dtype (`peft_casts_adapter_input`). Their storage, gradients
    and states stay fp32. `vramplan.distributed.per_gpu` sets it."""
    no_autocast: bool = False
    """The loop runs its 16-bit model without `torch.autocast` (its notes say so:
    universal-llm-trainer's `amp_training False`, PEFT's MetaMathQA harness `use_amp false`,
    `vramplan.validation.notes.NO_AUTOCAST_NOTE`), or DeepSpeed runs it, where accelerate turns
    no autocast on (`vramplan.distributed.per_gpu` sets it). Otherwise `bf16-true` on a stack
    driven by accelerate is the Trainer's `bf16=True` on a bf16 model, which runs the forward
    under autocast (`autocasts_16bit_weights`)."""
    frozen_weights_need_grad: bool = False
    """The frozen weights of the trained blocks are views of a tensor that requires a gradient
    (FSDP1 flat parameters mixing frozen and trainable parameters): autograd saves what full
    fine-tuning saves and computes every weight's gradient; the optimizer still updates only the
    trainable ones. `vramplan.distributed.per_gpu` sets it for FSDP1."""
    alloc_conf: AllocatorConfig = PYTORCH_DEFAULTS
    """The run's `PYTORCH_CUDA_ALLOC_CONF` (`vramplan.allocator`), for `reserved` and `device`."""
    loss_parallel: bool = False
    """The cross-entropy runs under DTensor's `loss_parallel()` on logits sharded over the
    vocabulary: torchtitan with tensor parallelism (`parallel_dims.loss_parallel_enabled`), set
    by `vramplan.distributed.per_gpu` from the parallelism."""
    tensor_parallel: int = 1
    """torchtitan's tensor-parallel degree, under which its blocks run with sequence-parallel
    norms (`parallelize_llama`'s `apply_tp`): its per-op checkpointing then keeps tensors that
    one GPU holds whole or over its share of the sequence
    (`vramplan.training.activations.checkpointing.per_op_selective_saved`). Set by
    `vramplan.distributed.per_gpu` from the parallelism; 1 elsewhere."""
    experts_gathered: int = 1
    """Megatron-Core's expert-tensor-parallel degree, `expert_tensor_parallel_size`, which is the
    tensor-parallel degree unless set (NVIDIA/Megatron-LM core_r0.11.0 megatron/training/
    arguments.py: `if args.expert_tensor_parallel_size is None: args.expert_tensor_parallel_size =
    args.tensor_model_parallel_size`; the same at core_v0.13.0). The alltoall token dispatcher
    all-gathers the routed tokens over that group before the experts (token_dispatcher.py
    `MoEAlltoAllTokenDispatcher.token_permutation` at core_r0.11.0, `dispatch_postprocess` at
    core_v0.13.0: `gather_from_sequence_parallel_region(global_input_tokens, group=self.tp_group)`,
    the expert-tensor-parallel group), and Transformer Engine's grouped fc1 keeps its input: the
    tokens of that many GPUs, of hidden width, where the experts' later tensors are split over
    their width (`vramplan.training.activations.spec.BlockSpec.experts_gathered`). Set by
    `vramplan.distributed.per_gpu` from a Megatron-LM run's tensor parallelism; 1 elsewhere."""
    card_free_bytes: int | None = None
    """What the run's card has free when the model loads (`torch.cuda.mem_get_info`), where the
    card is known: transformers' allocator warm-up caps itself by it
    (`vramplan.presets.frameworks.transformers.TransformersCode.warmup_keeps_headroom`)."""
    cuda_capability: tuple[int, int] | None = None
    """The card's CUDA compute capability (`vramplan.presets.gpus.Gpu.cuda_capability`); None
    without a card, or on another vendor's. A framework that picks its attention kernel by it
    keeps what that kernel returns, or not (`vramplan.presets.frameworks.torchtitan.TorchtitanCode
    .saves_sdpa_output`)."""
    linears_keep_input: bool = False
    """Every `F.linear` saves its input for backward, frozen weights included: DeepSpeed's
    `zero.Init` replaces `torch.nn.functional.linear` with `zero3_linear_wrap` when
    `memory_efficient_linear` is on (its default) and leaves it replaced for training
    (deepspeed/runtime/zero/partition_parameters.py: "This will persist unless manually
    reset"); its `LinearFunctionForZeroStage3` calls `ctx.save_for_backward(input, weight,
    bias)` whatever needs a gradient (deepspeed/runtime/zero/linear.py), where PyTorch's
    linear keeps the input only for the weight's gradient. `vramplan.distributed.per_gpu` sets
    it for ZeRO-3."""
    alignment: AlignmentSetup | None = None
    """A preference or RL method (DPO, GRPO...) whose policy trains as `method` says;
    `vramplan.training.alignment` estimates it."""
    logit_len: int | None = None
    """Positions per sequence whose logits the loss computes (GRPO's completion, TRL's
    `logits_to_keep`); None: every position."""
    log_probs: bool = False
    """The loss takes per-token log-probabilities of the labels (TRL's `selective_log_softmax`)
    instead of a cross-entropy."""
    coati_orpo_loss: bool = False
    """The loss is ColossalChat's ORPO loss on the chosen and rejected rows
    (`vramplan.training.activations.head.HeadSpec.coati_orpo`); `policy_pass` sets it."""
    kbit_upcast: bool | None = None
    """QLoRA: whether the script prepares the model with peft's `prepare_model_for_kbit_training`
    and casts the embeddings and head back (`vramplan.presets.frameworks.defaults.FrameworkDefaults
    .kbit_upcast_at_load`); None: the framework's default."""
    code_date: date | None = None
    """The date of the framework's code the run used (the commit of a published run); None:
    today's. litgpt's model code changed what a block saves
    (`vramplan.presets.frameworks.litgpt.litgpt_code`), transformers' what its causal-LM loss
    holds (`vramplan.presets.frameworks.transformers.transformers_code`)."""
    params_cast_for_compute: bool = False
    """`amp` under FSDP with a mixed-precision policy whose `param_dtype` is the 16-bit compute
    dtype (accelerate's `FullyShardedDataParallelPlugin.set_mixed_precision`): FSDP gathers the
    fp32 parameters as 16-bit copies, so the blocks compute on 16-bit weights, the residual
    stream is 16-bit and autocast makes no weight casts. `vramplan.distributed.per_gpu` sets
    it."""
    loss_in_function: bool = False
    """litgpt: the script computes the logits and the loss in a function that returns the loss
    alone (extensions/thunder/pretrain.py `forward_and_loss`), so no loop variable holds the
    logits through backward, and its targets come shifted from the data (no
    `logits[..., :-1, :]` copy). False: the loops of litgpt's finetune scripts, which bind
    `logits = model(input_ids)` in the loop body and slice the last position off. Elsewhere:
    a loop that would keep the model's outputs (`FrameworkDefaults.loop_keeps_outputs`) does
    not, as PyTorch Lightning's `training_step`, which returns the loss."""
    loop_keeps_outputs: bool | None = None
    """The training loop binds the model's outputs to a variable that lives through backward
    and the optimizer step (`output = model(...); loss = output.loss; loss.backward()`), so the
    logits the model returns stay alive there (`loop_keeps_logits`); None: its framework's loop
    (`vramplan.presets.frameworks.defaults.FrameworkDefaults.loop_keeps_outputs`)."""
    loop_frees_outputs: bool = False
    """A loop that keeps the model's outputs drops them at the end of each iteration (Answer.AI's
    fsdp_qlora train.py: `output = None`, "Delete the output so more memory frees up before the
    next forward pass"), so the previous step's logits are not alive during the next forward."""
    loss_16bit: bool = False
    """The loop computes the loss itself on the model's 16-bit logits, without an fp32 copy
    (`F.cross_entropy` on bf16 logits, no autocast: `loss_in_16bit`); under `amp` autocast
    casts the cross-entropy's input to fp32 all the same."""
    quantized_experts: bool = False
    """The fused expert tensors of a transformers 5 mixture of experts are bitsandbytes 4-bit
    parametrizations (axolotl's `quantize_moe_experts`, src/axolotl/monkeypatch/moe_quant.py
    @753906cf: `replace_parameter_4bit`): every access dequantizes a whole tensor, and
    `torch._grouped_mm` saves it for its input's gradient, frozen as it is."""
    moe_hub_kernel: bool = False
    """transformers' `from_pretrained(use_kernels=True)` replaced the experts' forward with the
    Hub's MoE kernel (`kernelize`, integrations/hub_kernels.py: "MegaBlocksMoeMLP" for cuda and
    rocm only): the model was on a GPU when it loaded. Under FSDP it loads on the CPU, where the
    kernel is not applied and the model's own loop runs (`TransformersCode.gpt_oss_expert_loop`)."""
    litgpt_model: bool = False
    """The model is litgpt's `GPT` run outside litgpt's scripts, as lightning-thunder's
    benchmarks do (thunder/tests/litgpt_model.py re-exports litgpt's `GPT` and `Block`): its
    blocks save what litgpt's code saves (`vramplan.training.specs.block_spec`), and it holds
    the head apart from a tied embedding, so a tied checkpoint's matrix is stored twice
    (`vramplan.training.states.head_is_separate`). The loop and the loss stay the framework's."""

    @property
    def logit_tokens(self) -> int:
        """Positions of the micro-batch that get logits."""
        return self.batch * (self.logit_len if self.logit_len is not None else self.seq_len)


def lora_rank_of(setup: TrainingSetup) -> int:
    """The adapters' rank: the setup's, else its framework's default
    (`FrameworkDefaults.lora_rank`: 16 for Unsloth, 8 elsewhere)."""
    return setup.lora_rank or framework_defaults(setup.framework).lora_rank


def lora_targets_of(setup: TrainingSetup) -> frozenset[LoraTarget]:
    """The adapted linears: the setup's, else its framework's default
    (`FrameworkDefaults.lora_targets`: every block linear for Unsloth and LLaMA-Factory, the
    query and value projections elsewhere)."""
    return setup.lora_targets or framework_defaults(setup.framework).lora_targets


def lora_on_modules(setup: TrainingSetup) -> bool:
    """The adapters sit on the checkpoint's own `nn.Linear` modules: peft's on transformers'
    model code (`ModelCode.TRANSFORMERS`), where a fused q/k/v or gate/up projection gets one
    adapter (`vramplan.model.lora_targets.lora_breakdown`'s `fused_modules`); litgpt, torchtune,
    torchtitan and Megatron-LM adapt their own linears, and Unsloth loads its own uploads of
    fused models converted to the Llama layout (unsloth/Phi-3.5-mini-instruct: q/k/v and
    gate/up unfused, 'Fast Llama patching'; the trainable count its notebook prints,
    29,884,416, is r16 on seven projections a layer)."""
    return runs_transformers_code(setup.framework) and setup.framework is not Framework.UNSLOTH


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
    if setup.logit_len is not None and not 0 < setup.logit_len <= setup.seq_len:
        raise OutOfRange("logit_len", str(setup.logit_len))
    if setup.alignment is not None:
        _check_alignment(setup, setup.alignment)
    return setup


def _check_alignment(setup: TrainingSetup, alignment: AlignmentSetup) -> None:
    if not alignment.method.is_alignment:
        raise ConflictingOptions("method", "alignment", alignment.method.value)
    if setup.method not in POLICY_METHODS:
        raise ConflictingOptions("policy", "method", setup.method.value)
    if alignment.method.generates and not 0 < alignment.completion_tokens < setup.seq_len:
        raise OutOfRange("completion_len", str(alignment.completion_tokens))
    if not 0 < alignment.vllm_share <= 1:
        raise OutOfRange("vllm_share", str(alignment.vllm_share))
    if alignment.beta < 0 or alignment.beta != alignment.beta:
        raise OutOfRange("beta", str(alignment.beta))
    if alignment.generation_batch is not None:
        BATCH.check_int(alignment.generation_batch)


def policy_pass(setup: TrainingSetup) -> TrainingSetup:
    """The policy's forward and backward of a preference or RL step, as a supervised step of
    the same model: its rows (DPO, ORPO and SimPO concatenate chosen and rejected sequences,
    TRL `concatenated_inputs`), the positions that get logits (GRPO: the completion,
    `logits_to_keep`), and a loss on per-token log-probabilities. `setup` itself when it is not
    a preference or RL method."""
    alignment = setup.alignment
    if alignment is None:
        return setup
    paired = alignment.method in (Method.DPO, Method.ORPO, Method.SIMPO)
    # GRPO asks for the completion's logits and one more position, then drops the last
    # (`model_inputs["logits_to_keep"] = logits_to_keep + 1`, `logits[:, :-1, :]`, TRL
    # grpo_trainer.py :1502, :1514): the slice, a view, keeps all completion + 1 positions
    logit_len = alignment.completion_tokens + 1 if alignment.method is Method.GRPO else None
    return replace(setup, alignment=None, batch=setup.batch * (2 if paired else 1),
                   logit_len=logit_len, log_probs=True,
                   coati_orpo_loss=alignment.coati and alignment.method is Method.ORPO)


def weight_itemsize(precision: Precision) -> int:
    """Bytes per stored weight: fp32 under `amp` and `fp32`, 16-bit otherwise."""
    return 4 if precision in (Precision.AMP, Precision.FP32) else 2


def residual_itemsize(setup: TrainingSetup) -> int:
    """Bytes per element of the residual stream and the norms' outputs: fp32 under `fp32`, and
    under `amp` when the weights it computes with are fp32 (autocast casts only the matmuls'
    operands; a residual add of an fp32 embedding output stays fp32)."""
    if setup.precision is Precision.AMP:
        return 2 if setup.params_cast_for_compute else 4
    return 4 if setup.precision is Precision.FP32 or norms_kept_fp32(setup) else 2


def norms_kept_fp32(setup: TrainingSetup) -> bool:
    """A QLoRA run prepared for k-bit training (`upcasts_at_load`) keeps its norms' weights in
    fp32 unless its framework casts them back (axolotl does; TRL cast back only the embeddings
    and the head). An RMSNorm's `weight * x.to(input_dtype)` is then fp32 by type promotion, the
    4-bit base's outputs follow their fp32 input (`Linear4bit`: `out.to(inp_dtype)`), and from
    the first MLP's output on the residual stream is fp32: counted as fp32 throughout. Under the
    Trainer's bf16 autocast, attention's matmuls still save 16-bit casts."""
    return upcasts_at_load(setup) and setup.framework is not Framework.AXOLOTL


def upcasts_at_load(setup: TrainingSetup) -> bool:
    """A QLoRA run whose script casts the unquantized 16-bit parameters to fp32 and the
    embeddings and head back once the adapters exist (peft `prepare_model_for_kbit_training`,
    then TRL's or axolotl's cast back: `FrameworkDefaults.kbit_upcast_at_load`). What persists
    differs from the load by the norms alone, kept in fp32 (a few hidden-sized vectors, not
    counted); the copies made and freed on the way stay in the allocator's cache."""
    if setup.method is not Method.QLORA:
        return False
    if setup.kbit_upcast is not None:
        return setup.kbit_upcast
    return framework_defaults(setup.framework).kbit_upcast_at_load


def runs_autocast(setup: TrainingSetup) -> bool:
    """The forward runs under `torch.autocast`: `amp`, in a stack that autocasts
    (`vramplan.presets.frameworks.defaults.FrameworkDefaults.autocasts`; not torchtitan, whose FSDP2
    computes in bf16 copies of the parameters)."""
    return setup.precision is Precision.AMP and framework_defaults(setup.framework).autocasts


def autocast_casts_weights(setup: TrainingSetup) -> bool:
    """Autocast casts fp32 weights to 16 bits for each matmul (`amp` on fp32 weights; not
    when FSDP already gathers them as 16-bit copies)."""
    return setup.precision is Precision.AMP and not setup.params_cast_for_compute


def compute_itemsize(precision: Precision) -> int:
    """Bytes per element of matmul outputs: fp32 only in `fp32` (autocast computes in 16-bit)."""
    return 4 if precision is Precision.FP32 else 2


def optimizer_state_itemsize(precision: Precision) -> int:
    """torch optimizers keep states like the parameter they update: the fp32 master copy in
    `mixed`, the bf16 weight itself in `bf16-true` (torch.optim.AdamW `zeros_like(p)`)."""
    return 2 if precision is Precision.BF16_TRUE else 4


def autocasts_16bit_weights(setup: TrainingSetup) -> bool:
    """The forward runs under the Trainer's 16-bit autocast over 16-bit weights: `bf16-true` or
    `mixed` on a stack driven by accelerate (`FrameworkDefaults.accelerate_autocast`: the
    Trainer's `bf16=True` hands accelerate `mixed_precision="bf16"`, whose forward runs under
    `torch.autocast`; a plain loop or DeepSpeed's engine has none), unless the run has none
    (`TrainingSetup.no_autocast`: the row says so, or DeepSpeed runs it, set by
    `vramplan.distributed.per_gpu`). Autocast leaves 16-bit operands as they
    are; it casts fp32 ones, peft's fp32 copies of its adapters' inputs among them, to 16 bits
    for each matmul (`vramplan.training.activations.spec.BlockSpec.autocast_16bit_weights`)."""
    return setup.precision in (Precision.BF16_TRUE, Precision.MIXED) \
        and framework_defaults(setup.framework).accelerate_autocast and not setup.no_autocast


def peft_casts_adapter_input(setup: TrainingSetup) -> bool:
    """peft's LoRA layer copies each adapter's 16-bit input to fp32, the dtype of its fp32
    adapters (`adapters_in_fp32`), before `lora_B(lora_A(dropout(x)))`: `Linear.forward`'s
    `x = x.to(lora_A.weight.dtype)` (huggingface/peft src/peft/tuners/lora.py v0.4.0 and v0.5.0,
    src/peft/tuners/lora/layer.py v0.11.1 to v0.14.0), `x = self._cast_input_dtype(x,
    lora_A.weight.dtype)` since v0.15.0 (read to
    v0.20.0; `tuners_utils.py` returns `x` itself only when the dtypes agree), whether or not
    autocast runs. bitsandbytes' `Linear4bit` and `Linear8bitLt` cast only when
    `requires_conversion = not torch.is_autocast_enabled()` (src/peft/tuners/lora/bnb.py, the
    same versions), so a QLoRA base under autocast keeps its input as it came. Unsloth replaces
    peft's LoRA forwards with its own (`unsloth_compiled_cache/*_peft_forward.py` generated by
    unsloth_zoo, and its fused `LoRA_QKV`, `LoRA_MLP`): not counted there. Over 16-bit weights
    (`bf16-true`, `mixed`), and under `amp`, whose fp32 weights make every peft adapter fp32
    (built in torch's default dtype, or following the base): there the adapters over fp32 norm
    outputs need no copy, and those reading a 16-bit matmul output (o, down) get an fp32 copy
    that autocast casts back to 16 bits for lora_A (traced, tests/test_trace_agreement.py
    `MLP_LORA_AMP_MATRIX`)."""
    if setup.framework is Framework.UNSLOTH or setup.adapters_gathered_16bit:
        return False
    if setup.precision is Precision.AMP:
        return setup.method is Method.LORA and runs_transformers_code(setup.framework)
    if setup.precision not in (Precision.BF16_TRUE, Precision.MIXED) \
            or not adapters_in_fp32(setup):
        return False
    return not (setup.method is Method.QLORA and autocasts_16bit_weights(setup))


def adapters_in_fp32(setup: TrainingSetup) -> bool:
    """peft's LoRA adapters are fp32 over a 16-bit base in a stack that builds them with
    `get_peft_model` (a framework running transformers' model code: the Trainer's, TRL's,
    axolotl's, LLaMA-Factory's and Unsloth's calls):
    - on a bitsandbytes 4-bit base stored as uint8 (bitsandbytes' default), at every date:
      `update_layer` builds them as `nn.Linear` in torch's default dtype, then casts them to the
      base weight's dtype only when that dtype is floating point (huggingface/peft
      src/peft/tuners/lora/layer.py @v0.9.0, @v0.10.0);
    - on any 16-bit base since peft v0.12.0 (`PEFT_UPCASTS_ADAPTERS_SINCE`, and for a run
      without a date), whose `get_peft_model(autocast_adapter_dtype=True)` upcasts them; not a
      pure-bf16 LLaMA-Factory run since it turns the upcast off
      (`LLAMAFACTORY_PURE_BF16_ADAPTERS_SINCE`);
    - on any base before peft v0.6.0 (`PEFT_ADAPTERS_FOLLOW_BASE_SINCE`), whose `update_layer`
      moved them to the base's device only.
    From v0.6.0 to v0.11.x, adapters on a float storage follow the base (the precision's dtype
    here).
    A run that says otherwise is taken at its word (`TrainingSetup.adapters_fp32`).
    The adapters' storage, gradients and states follow from this, and the fp32 copy of each
    adapter's input that `Linear.forward` makes (`peft_casts_adapter_input`). litgpt,
    torchtune and Megatron build their adapters in the model's dtype."""
    if not setup.method.uses_lora:
        return False
    if setup.adapters_fp32 is not None:
        return setup.adapters_fp32
    if not runs_transformers_code(setup.framework):
        return False
    defaults = framework_defaults(setup.framework)
    if setup.method is Method.QLORA \
            and not (setup.float_quant_storage or defaults.float_quant_storage):
        return True
    on = setup.code_date
    if on is not None and PEFT_ADAPTERS_FOLLOW_BASE_SINCE <= on < PEFT_UPCASTS_ADAPTERS_SINCE:
        return False
    return not (setup.framework is Framework.LLAMAFACTORY
                and setup.precision is Precision.BF16_TRUE
                and has_change(on, LLAMAFACTORY_PURE_BF16_ADAPTERS_SINCE))


def optimizer_impl(setup: TrainingSetup) -> OptimizerImpl:
    """How the AdamW step runs: as the run says, else its framework's default as of the run's
    date (`vramplan.presets.frameworks.defaults.default_optimizer_impl`)."""
    return setup.optimizer_impl or default_optimizer_impl(setup.framework, setup.code_date)


def for_loop_tensors_at_once(setup: TrainingSetup) -> int:
    """Parameter-sized tensors a `for-loop` AdamW makes at once for one parameter: two in torch's
    `_single_tensor_adam` (`(exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`: the square
    root and the quotient), one in transformers' own AdamW, the one a run of a transformers
    stack that does not name its optimizer's implementation had before v4.32.0
    (`builds_transformers_adamw`)."""
    own = setup.optimizer_impl is None \
        and builds_transformers_adamw(setup.framework, setup.code_date)
    return 1 if own else 2


def loss_compiled(setup: TrainingSetup) -> bool:
    """The cross-entropy runs under torch.compile: torchtune's `compile_loss` whenever the
    run compiles, torchtitan's while it compiled its loss function
    (`vramplan.presets.frameworks.torchtitan.TorchtitanCode.compiles_loss`), or a run that compiles
    its loss alone (`TrainingSetup.loss_compiled_alone`)."""
    if setup.loss_compiled_alone:
        return True
    if setup.framework is Framework.TORCHTITAN:
        return setup.compiled and torchtitan_code(setup.code_date).compiles_loss
    return setup.compiled


def model_loss_code(setup: TrainingSetup, model_type: str = "") -> TransformersCode:
    """How the model's own causal-LM loss ran (`_own_loss_code`). Under autocast (`amp`) no loss
    runs in 16 bits: autocast casts `cross_entropy`'s input to fp32 (torch.amp docs, "CUDA Ops
    that can autocast to float32")."""
    code = _own_loss_code(setup, model_type)
    if setup.precision is Precision.AMP:
        return replace(code, loss_16bit=frozenset())
    return code


def _own_loss_code(setup: TrainingSetup, model_type: str) -> TransformersCode:
    """The model's own causal-LM loss code, before any autocast: transformers' as of the run's
    date (`TrainingSetup.code_date`) when transformers' model computes the loss from its labels,
    or the checkpoint's own for a remote-code `model_type` (`REMOTE_CODE`: its logits, upcast
    or not, shifted by a copy, whatever the release); today's otherwise (an alignment method's
    loss takes the logits outside the model: TRL)."""
    if not (runs_transformers_code(setup.framework)
            and setup.alignment is None and not setup.log_probs):
        return transformers_code(None)
    code = transformers_code(setup.code_date)
    remote = REMOTE_CODE.get(model_type)
    if remote is None:
        return code
    return replace(code, logits_fp32_in_model=remote.logits_fp32, shifts_logits=True,
                   loss_16bit=code.loss_16bit if remote.logits_fp32
                   else code.loss_16bit | {model_type})


def checkpoints_reentrant(setup: TrainingSetup) -> bool:
    """Full checkpointing is reentrant: as the run said (`TrainingSetup.
    reentrant_checkpointing`), else as its stack always asks (`FrameworkDefaults.
    reentrant_checkpointing`: LLaMA-Factory), else transformers' default as of the run's date
    for a framework that runs its model code (today's: non-reentrant)."""
    if setup.checkpointing is not Checkpointing.FULL:
        return False
    if setup.reentrant_checkpointing is not None:
        return setup.reentrant_checkpointing
    stack = framework_defaults(setup.framework).reentrant_checkpointing
    if stack is not None:
        return stack
    return runs_transformers_code(setup.framework) \
        and transformers_code(setup.code_date).reentrant_checkpointing


def loop_keeps_logits(setup: TrainingSetup) -> bool:
    """The training loop keeps the model's outputs, so the logits it returns stay alive through
    backward and the step: the run's loop (`TrainingSetup.loop_keeps_outputs`), else its
    framework's (`FrameworkDefaults.loop_keeps_outputs`),
    torchtitan's before it deleted `pred` (`TorchtitanCode.loop_keeps_logits`), torchtune's
    unchunked recipes before they deleted `logits` (`torchtune_loop_keeps_logits`); not for a loss
    computed apart from the model's outputs (preference methods, log-probabilities, a loss
    inside a function)."""
    if setup.loop_keeps_outputs is not None:
        keeps = setup.loop_keeps_outputs
    else:
        keeps = framework_defaults(setup.framework).loop_keeps_outputs or (
            setup.framework is Framework.TORCHTITAN
            and torchtitan_code(setup.code_date).loop_keeps_logits) or (
            setup.framework is Framework.TORCHTUNE and setup.loss is not Loss.CHUNKED
            and torchtune_loop_keeps_logits(setup.method, setup.distributed, setup.code_date))
    return keeps and setup.alignment is None and not setup.log_probs \
        and not setup.loss_in_function


def model_returns_fp32_logits(setup: TrainingSetup, model_type: str = "") -> bool:
    """The model of `model_type` upcasts its logits itself and returns them in fp32:
    transformers' code up to v4.45 (`TransformersCode.logits_fp32_in_model`; never a
    remote-code model's own, `model_loss_code`), torchtitan's before October 2024
    (`TorchtitanCode.logits_fp32_in_model`)."""
    if setup.framework is Framework.TORCHTITAN:
        return torchtitan_code(setup.code_date).logits_fp32_in_model
    if setup.coati_orpo_loss and runs_transformers_code(setup.framework):
        # coati calls the model without labels: its forward's own upcast, as of the run's date
        return transformers_code(setup.code_date).logits_fp32_in_model
    return model_loss_code(setup, model_type).logits_fp32_in_model


def autocast_casts_shifted_logits(setup: TrainingSetup, model_type: str) -> bool:
    """A 16-bit loss's code (`_own_loss_code`'s `loss_16bit`) runs under autocast (`amp`, or the
    Trainer's over 16-bit weights): it shifts the 16-bit logits by a 16-bit copy, which
    `cross_entropy`, an op autocast runs in fp32, casts to fp32 (`vramplan.training.activations.head
    ._shifted_16bit_loss_under_autocast`), where `loss_in_16bit` is False."""
    if setup.loss_16bit or not (runs_autocast(setup) or autocasts_16bit_weights(setup)):
        return False
    code = _own_loss_code(setup, model_type)
    return code.shifts_logits and model_type in code.loss_16bit


def accelerate_copies_outputs(setup: TrainingSetup) -> bool:
    """accelerate wraps the model's `forward` in `convert_outputs_to_fp32` under its mixed
    precision (accelerate/accelerator.py `prepare_model`; utils/operations.py
    `tensor.float()`): a stack driven by accelerate (`FrameworkDefaults.accelerate_autocast`)
    whose forward runs under autocast."""
    return framework_defaults(setup.framework).accelerate_autocast \
        and (runs_autocast(setup) or autocasts_16bit_weights(setup))


def loss_in_16bit(setup: TrainingSetup, model_type: str) -> bool:
    """The cross-entropy runs in the 16-bit dtype, with no fp32 copy of the logits: the model's
    own loss for a type that never upcast at the run's date (`model_loss_code`, its
    `loss_16bit`), or a loop that takes the model's 16-bit logits as they are
    (`TrainingSetup.loss_16bit`); under autocast, `amp`'s or the Trainer's over 16-bit weights
    (`autocasts_16bit_weights`), `log_softmax` and `nll_loss` run in fp32 (CUDA autocast's
    float32 list) and the input is cast to fp32 all the same."""
    if runs_autocast(setup) or autocasts_16bit_weights(setup):
        return False
    return setup.loss_16bit or model_type in model_loss_code(setup, model_type).loss_16bit


def trainable_itemsize(setup: TrainingSetup) -> int:
    """Bytes per trainable parameter as stored."""
    return 4 if adapters_in_fp32(setup) else weight_itemsize(setup.precision)


def gradient_itemsize(setup: TrainingSetup) -> int:
    """Bytes per element of a trainable parameter's gradient: the parameter's, or 4 in a
    framework's fp32 gradient buffer under `mixed` precision (Megatron-LM's `main_grad`,
    `vramplan.presets.frameworks.defaults.FrameworkDefaults.main_grad_buffer`) unless the run keeps
    it in 16 bits (`TrainingSetup.grad_buffer_16bit`)."""
    if main_grad_buffer(setup) and setup.precision is Precision.MIXED \
            and not setup.grad_buffer_16bit:
        return 4
    return trainable_itemsize(setup)


def main_grad_buffer(setup: TrainingSetup) -> bool:
    """The gradients live in one buffer allocated when the model is wrapped and never freed
    (`vramplan.presets.frameworks.defaults.FrameworkDefaults.main_grad_buffer`)."""
    return framework_defaults(setup.framework).main_grad_buffer


def trainable_state_itemsize(setup: TrainingSetup) -> int:
    """Bytes per element of a torch optimizer's state of a trainable parameter."""
    return 4 if adapters_in_fp32(setup) else optimizer_state_itemsize(setup.precision)


def lora_dropout_active(setup: TrainingSetup) -> bool:
    if setup.lora_dropout is not None:
        return setup.lora_dropout > 0
    # litgpt default 0.05; peft LoraConfig default 0.0
    return setup.framework is Framework.LITGPT and LITGPT_LORA_DROPOUT > 0


def model_dropout_active(setup: TrainingSetup) -> bool:
    """The model's own dropout layers run at config.json's rates: frameworks that train
    transformers' modules in train mode (`nn.Dropout(config.resid_pdrop)`, ...). litgpt's GPT
    (litgpt/model.py) has no dropout layer besides LoRA's; torchtune and torchtitan build their
    own modules without one; a DeepSpeed engine wraps transformers' (DeepSpeed-Chat's
    `create_hf_model`) in train mode. Megatron-LM's layers drop out attention probabilities
    and each sublayer's output at its `--attention-dropout` and `--hidden-dropout` (0.1 by
    default, megatron/training/arguments.py), which a run sets to its model's rates:
    config.json's are read for them
    (`vramplan.presets.frameworks`)."""
    return framework_defaults(block_framework(setup)).model_dropout


def block_framework(setup: TrainingSetup) -> Framework:
    """Whose model code the blocks run: litgpt's for litgpt's `GPT` under another loop
    (`TrainingSetup.litgpt_model`), else the framework's."""
    return Framework.LITGPT if setup.litgpt_model else setup.framework


def offloads_checkpoints(setup: TrainingSetup) -> bool:
    """Full checkpointing keeps the blocks' inputs in host memory (Unsloth's
    `use_gradient_checkpointing="unsloth"`, `vramplan.presets.frameworks.unsloth.UnslothCode`, or
    `TrainingSetup.checkpoints_on_host`)."""
    return setup.checkpointing is Checkpointing.FULL \
        and (setup.checkpoints_on_host or _unsloth_offloads_checkpoints(setup))


def _unsloth_offloads_checkpoints(setup: TrainingSetup) -> bool:
    return setup.framework is Framework.UNSLOTH and setup.checkpointing is Checkpointing.FULL \
        and unsloth_code(setup.code_date).offloads_checkpoints


def native_fused_cross_entropy(setup: TrainingSetup) -> bool:
    """Megatron-LM's loss is its native fused cross-entropy
    (`TrainingSetup.native_fused_cross_entropy`), not Transformer Engine's kernel."""
    return setup.framework is Framework.MEGATRON and setup.native_fused_cross_entropy \
        and not setup.te_cross_entropy


def checkpoint_reload_buffers(setup: TrainingSetup) -> int:
    """GPU buffers that Unsloth's offloaded checkpoints come back into, allocated for the run
    (`UnslothCode.smart_checkpointing`, `reload_buffers`); 0 where each comes back into a
    fresh tensor or nothing is offloaded."""
    if not _unsloth_offloads_checkpoints(setup):
        return 0
    code = unsloth_code(setup.code_date)
    return code.reload_buffers if code.smart_checkpointing else 0


def keeps_last_checkpoint_input(setup: TrainingSetup) -> bool:
    """Unsloth's offloaded checkpointing keeps the last block's input on the GPU
    (`UnslothCode.smart_checkpointing`)."""
    return _unsloth_offloads_checkpoints(setup) \
        and unsloth_code(setup.code_date).smart_checkpointing


def first_pass_keeps_inputs(setup: TrainingSetup) -> bool:
    """The run's first micro-batch keeps every checkpointed block's input on the GPU, which
    later ones offload (`UnslothCode.first_pass_kept`)."""
    return _unsloth_offloads_checkpoints(setup) and unsloth_code(setup.code_date).first_pass_kept


def unsloth_fuses_loss(setup: TrainingSetup) -> bool:
    """Unsloth's causal-LM loss takes no logits for this micro-batch
    (`vramplan.presets.frameworks.unsloth.UnslothCode.fused_loss`), unless it is small enough for
    the logits path of its date (`small_batches_keep_logits`)."""
    if setup.framework is not Framework.UNSLOTH:
        return False
    code = unsloth_code(setup.code_date)
    small = setup.batch * setup.seq_len <= UNSLOTH_SMALL_BATCH_TOKENS
    return code.fused_loss and not (code.small_batches_keep_logits and small)


def allocator_config(setup: TrainingSetup) -> AllocatorConfig:
    """The caching allocator's settings for the run: the setup's, unless its framework sets its
    own: Unsloth's `expandable_segments:True` when imported
    (`vramplan.presets.frameworks.unsloth.UnslothCode.expandable_segments`, overwriting the
    variable), torchtitan's launcher's (`TorchtitanCode.launcher_expandable_segments`)."""
    if setup.framework is Framework.UNSLOTH \
            and unsloth_code(setup.code_date).expandable_segments:
        return replace(setup.alloc_conf, expandable_segments=True)
    if setup.framework is Framework.TORCHTITAN \
            and torchtitan_code(setup.code_date).launcher_expandable_segments:
        return replace(setup.alloc_conf, expandable_segments=True)
    return setup.alloc_conf


def gradients_kept(setup: TrainingSetup) -> bool:
    """Gradients of earlier micro-batches exist when the peak micro-batch starts: with gradient
    accumulation in the steady state. When the largest batch comes first (`steady_state`
    False) it is the first micro-batch of the run, and its gradients are made by its own
    backward. A framework's gradient buffer (`main_grad_buffer`) holds them at every moment, and
    before PyTorch 2.0 `zero_grad()` kept them between steps (`zero_grad_keeps_gradients`)."""
    return ((setup.gradient_accumulation or zero_grad_keeps_gradients(setup))
            and setup.steady_state) or main_grad_buffer(setup)


PYTORCH_SET_TO_NONE_SINCE = date(2023, 3, 15)
"""PyTorch 2.0.0: `Optimizer.zero_grad` and `Module.zero_grad` default to `set_to_none=True`
(pytorch/pytorch #92731, in the 2.0 release notes' backward-incompatible changes); before it
they filled every gradient with zeros and kept the tensors."""


def zero_grad_keeps_gradients(setup: TrainingSetup) -> bool:
    """A run dated before PyTorch 2.0 whose loop zeroes its gradients through torch's
    `zero_grad()` (the transformers Trainer's `model.zero_grad()`, Lightning's and plain loops'
    `optimizer.zero_grad()`) kept every gradient tensor from one step into the next forward.
    DeepSpeed's and the other frameworks' engines manage their gradients themselves."""
    return (setup.code_date is not None and setup.code_date < PYTORCH_SET_TO_NONE_SINCE
            and runs_transformers_code(setup.framework)
            and setup.framework is not Framework.DEEPSPEED)


def optimizer_states_exist(setup: TrainingSetup) -> bool:
    """Optimizer states exist before the peak micro-batch runs: not in the run's first
    micro-batch (largest batch first), as optimizers create them at their first step
    (torch/optim/adamw.py `_init_group`: "State initialization" when `len(state) == 0`;
    bitsandbytes `Optimizer8bit.init_state` likewise)."""
    return setup.steady_state


def with_gpu_memory(training: TrainingSetup, gpu: Gpu) -> TrainingSetup:
    """`training` with the GPU's memory: what it has free when the model loads, which caps
    transformers' allocator warm-up (`TrainingSetup.card_free_bytes`), and all that CUDA hands
    out on it (`cuda_total_bytes`), which a colocated vLLM engine takes its share of; and its
    compute capability, by which torchtitan picks its attention kernel
    (`TrainingSetup.cuda_capability`)."""
    training = replace(training, card_free_bytes=free_at_load_bytes(gpu),
                       cuda_capability=gpu.cuda_capability)
    if training.alignment is None:
        return training
    return replace(training, alignment=replace(training.alignment,
                                               gpu_memory_bytes=cuda_total_bytes(gpu)))
