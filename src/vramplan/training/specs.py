"""From a training setup to what the activation model needs to know: `block_spec` (a block's
`BlockSpec`: dtypes, what trains, which kernels, what each framework's code keeps) and `head_spec`
(the head, logits and loss: `HeadSpec`), with the framework and version rules they rest on."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from vramplan.model.architecture import Architecture, MlpKind
from vramplan.model.lora_targets import expand_targets
from vramplan.presets.frameworks.dates import has_change
from vramplan.presets.frameworks.defaults import (
    AXOLOTL_TILED_MLP_SHARD_TOKENS,
    AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE,
    framework_defaults,
    runs_transformers_code,
)
from vramplan.presets.frameworks.litgpt import litgpt_code
from vramplan.presets.frameworks.megatron import (
    MEGATRON_MAX_SUBTRACTED_IN_PLACE_SINCE,
    MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE,
)
from vramplan.presets.frameworks.peft_bnb import bitsandbytes_drops_4bit_input
from vramplan.presets.frameworks.torchtitan import torchtitan_code
from vramplan.presets.frameworks.transformers import (
    QUERY_JOINED_AFTER_TRANSPOSE,
    REMOTE_CODE,
    transformers_code,
)
from vramplan.presets.frameworks.unsloth import UnslothLossChunking, unsloth_code
from vramplan.training.activations.head import HeadSpec
from vramplan.training.activations.spec import (
    FP32,
    BlockSpec,
)
from vramplan.training.allocations.program import StepShape
from vramplan.training.allocations.step import (
    reserved_at_first_loss,
)
from vramplan.training.setup import (
    TrainingSetup,
    accelerate_copies_outputs,
    allocator_config,
    autocast_casts_shifted_logits,
    autocast_casts_weights,
    autocasts_16bit_weights,
    block_framework,
    checkpoints_reentrant,
    compute_itemsize,
    loop_keeps_logits,
    lora_dropout_active,
    lora_on_modules,
    lora_rank_of,
    lora_targets_of,
    loss_compiled,
    loss_in_16bit,
    model_dropout_active,
    model_loss_code,
    model_returns_fp32_logits,
    native_fused_cross_entropy,
    peft_casts_adapter_input,
    residual_itemsize,
    runs_autocast,
    unsloth_fuses_loss,
    weight_itemsize,
)
from vramplan.training.states import (
    head_is_separate,
    stores_torchao_nf4,
    torchao_nf4_dequantize_bytes,
)
from vramplan.units import ceil_div
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    LoraTarget,
    Loss,
    Method,
    Quant,
)

UNSLOTH_LOSS_TARGET_CAP_BYTES = 4 * 2**30
"""`min(free_gb, 4.0)`: the most GiB a chunk's fp32 logits may take
(`UnslothLossChunking.HALF_FREE_CAPPED`, unsloth-zoo d9fe1f43)."""


def unsloth_loss_chunks(tokens: int, vocab: int, chunking: UnslothLossChunking,
                        free_bytes: int | None) -> int:
    """How many chunks `unsloth_fused_ce_loss` splits `tokens` rows into (unslothai/unsloth-zoo
    unsloth_zoo/fused_losses/cross_entropy_loss.py `get_chunk_size`, `_get_chunk_multiplier`
    @770de251 and @d9fe1f43): the fp32 logits' bytes over a target, `4 * vocab / 2**30 /
    target_gb` per row, n_chunks = max(4 * round(that / 4), 1) with Python's round (to even),
    or, capped, 1 when it is at most 1, else rounded up to a multiple of 4. The target is 1 GiB,
    or half of `torch.cuda.mem_get_info()`'s `free_bytes` at the first call (capped at 4 GiB
    from d9fe1f43). `free_bytes` None (no card): the 4 GiB cap, the largest target today's code
    takes; at most 0 (an estimate past the card): a chunk per row."""
    if chunking is UnslothLossChunking.ONE_GIB:
        target = Fraction(2**30)
    elif free_bytes is None:
        target = Fraction(UNSLOTH_LOSS_TARGET_CAP_BYTES)
    elif free_bytes <= 0:
        return tokens
    elif chunking is UnslothLossChunking.HALF_FREE:
        target = Fraction(free_bytes, 2)
    else:
        target = min(Fraction(free_bytes, 2), Fraction(UNSLOTH_LOSS_TARGET_CAP_BYTES))
    exact = FP32 * vocab * tokens / target
    if chunking is UnslothLossChunking.HALF_FREE_CAPPED:
        return 1 if exact <= 1 else 4 * math.ceil(exact / 4)
    return max(4 * round(exact / 4), 1)


def _unsloth_loss_rows(arch: Architecture, setup: TrainingSetup) -> int | None:
    """Rows of `unsloth_fused_ce_loss`'s first chunk (`torch.chunk`: ceil(rows / n_chunks)),
    None where the run does not call it (`UnslothCode.loss_chunking`). The free memory is the
    card's at load (`TrainingSetup.card_free_bytes`) less what the allocator holds when the
    first loss begins (`vramplan.training.allocations.step.reserved_at_first_loss`: the load and the
    first forward, which do not depend on the loss's chunks)."""
    chunking = unsloth_code(setup.code_date).loss_chunking if unsloth_fuses_loss(setup) else None
    if chunking is None:
        return None
    tokens = setup.logit_tokens
    free = None
    if chunking is not UnslothLossChunking.ONE_GIB and setup.card_free_bytes is not None:
        before_loss = StepShape(spec=block_spec(arch, setup), loss_rows=tokens)
        held = reserved_at_first_loss(arch, setup, before_loss, allocator_config(setup))
        free = setup.card_free_bytes - held
    return ceil_div(tokens, unsloth_loss_chunks(tokens, arch.vocab_size, chunking, free))


# --- model states -----------------------------------------------------------------------------

# --- activations ------------------------------------------------------------------------------

def embedding_trains(setup: TrainingSetup) -> bool:
    """The embedding's output needs a gradient: its weight trains (full fine-tuning only;
    `freeze` trains the last blocks and the head)."""
    return setup.method is Method.FULL


def embedding_output_needs_grad(setup: TrainingSetup) -> bool:
    """The embeddings' output needs a gradient: the embedding trains, or something made it
    require one (`TrainingSetup.input_require_grads`), by default transformers' full
    checkpointing (transformers 5's modeling_utils.py `activation_checkpointing_enable` calls
    `enable_input_require_grads()` for every `input_ids` model, so that frozen layers before
    the first checkpointed block let the gradient through; before v5 it did for a loaded peft
    adapter, and peft's `PeftModel` and `prepare_model_for_kbit_training` do the same)."""
    if setup.input_require_grads is not None:
        return embedding_trains(setup) or setup.input_require_grads
    transformers_checkpointing = setup.checkpointing is Checkpointing.FULL \
        and runs_transformers_code(setup.framework)
    return embedding_trains(setup) or transformers_checkpointing


def checkpoints_cut_the_graph(setup: TrainingSetup) -> bool:
    """No checkpointed block builds a graph: reentrant full checkpointing whose first input
    needs no gradient.

    torch.utils.checkpoint's reentrant `CheckpointFunction` is an autograd Function that runs
    its block under `no_grad`: its output requires a gradient only when one of its tensor
    inputs does (the block's parameters are not inputs), and autograd drops what it saved when
    none does (torch/csrc/autograd/python_function.cpp `process_outputs`: `_save_variables`
    only when `is_executable`; torch/utils/checkpoint.py warns "None of the inputs have
    requires_grad=True. Gradients will be None"). When the embeddings' output needs no gradient
    (`embedding_output_needs_grad`) the first block's output needs none, and so on through
    every block: the blocks keep nothing for backward, nothing recomputes them, and their
    adapters (or, under `freeze`, their weights) never get a gradient. Only what trains after
    the last block does, an adapter on the head. Non-reentrant checkpointing records the
    blocks' parameters through saved-tensor hooks and trains them. ColossalChat's SFT with
    `--lora_rank` runs into it (hpcaitech/ColossalAI applications/ColossalChat @d888c378
    benchmarks/benchmark_sft.py: `convert_to_lora_module`, then `gradient_checkpointing_enable()`
    under transformers 4.39.3, reentrant, with no peft adapter loaded; coati/models/lora.py
    `LoraLinear` adapts every `nn.Linear`, the head's included)."""
    return checkpoints_reentrant(setup) and not embedding_output_needs_grad(setup)


def _quantized_base_keeps_input(setup: TrainingSetup) -> bool:
    """A QLoRA base's matmul keeps its input in its autograd context when the input needs a
    gradient: bitsandbytes' `MatMul8bitLt` does, and its `MatMul4Bit` did until v0.43.2
    (`ctx.tensors = (A, B)`, then `(None, B)`: `BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`), the code of
    the run's date (None: today's), as its framework installed it (`bitsandbytes_drops_4bit_input`:
    litgpt pinned older releases). torchtune's base is torchao's NF4, whose `LinearNF4` keeps
    only the weight (torchao/dtypes/nf4tensor.py, from its first version, 66318dac)."""
    if setup.method is not Method.QLORA or setup.framework is Framework.TORCHTUNE:
        return False
    if setup.quant is Quant.INT8:
        return True
    return not bitsandbytes_drops_4bit_input(setup.framework, setup.code_date)


def _base_output_in_input_dtype(setup: TrainingSetup) -> bool:
    """A QLoRA base of bitsandbytes 4-bit linears under transformers' code, which hand their
    outputs back in their input's dtype (`BlockSpec.base_output_in_input_dtype`)."""
    return setup.method is Method.QLORA and runs_transformers_code(setup.framework) \
        and setup.quant is not Quant.INT8


def _megatron_probs_in_experts(setup: TrainingSetup) -> bool:
    """Megatron-LM's routed experts apply the routing probabilities in their activation
    (`MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE`; a row of unknown date runs today's code)."""
    return block_framework(setup) is Framework.MEGATRON and has_change(
        setup.code_date, MEGATRON_MOE_PROBS_IN_EXPERTS_SINCE)


def _norm_head_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The normalized head weight a `NormHead` makes in every training forward and `F.linear`
    keeps for backward (Baichuan 2, `RemoteCode.norm_head`): vocabulary x hidden values in the
    weights' dtype. Its gradient in full fine-tuning is not counted."""
    remote = REMOTE_CODE.get(arch.family)
    if remote is None or not remote.norm_head or not runs_transformers_code(setup.framework):
        return 0
    return weight_itemsize(setup.precision) * arch.vocab_size * arch.hidden_size


def block_spec(arch: Architecture, setup: TrainingSetup) -> BlockSpec:
    """How a trained block behaves under `setup` (the last block, for `freeze`)."""
    uses_lora = setup.method.uses_lora
    # `all` as the block linears it names (a setup built in code may carry it unexpanded)
    targets = expand_targets(lora_targets_of(setup)) if uses_lora else frozenset()
    return BlockSpec(
        framework=block_framework(setup),
        residual_bytes=residual_itemsize(setup),
        compute_bytes=compute_itemsize(setup.precision),
        autocast=runs_autocast(setup),
        weights_train=setup.method in (Method.FULL, Method.FREEZE)
        or setup.frozen_weights_need_grad,
        base_keeps_input=_quantized_base_keeps_input(setup),
        base_output_in_input_dtype=_base_output_in_input_dtype(setup),
        moe_expert_loop=runs_transformers_code(setup.framework)
        and arch.family in transformers_code(setup.code_date).moe_expert_linears,
        moe_output_weighted=not _megatron_probs_in_experts(setup),
        lora_targets=targets - {LoraTarget.HEAD},
        lora_rank=lora_rank_of(setup),
        lora_dropout=uses_lora and lora_dropout_active(setup),
        lora_on_modules=lora_on_modules(setup),
        query_joined_after_transpose=runs_transformers_code(setup.framework)
        and setup.framework is not Framework.UNSLOTH
        and arch.family in QUERY_JOINED_AFTER_TRANSPOSE,
        attention=_attention_kernel(arch, setup),
        model_dropout=model_dropout_active(setup),
        compiled=setup.compiled,
        linears_keep_input=setup.linears_keep_input,
        rmsnorm_scale_after_cast=block_framework(setup) is Framework.LITGPT
        and litgpt_code(setup.code_date).rmsnorm_scale_after_cast,
        scores_clamped=runs_transformers_code(setup.framework)
        and arch.family in transformers_code(setup.code_date).clamped_scores,
        liger_kernels=setup.liger_kernels and runs_transformers_code(setup.framework),
        autocast_16bit_weights=autocasts_16bit_weights(setup),
        adapter_input_fp32=uses_lora and peft_casts_adapter_input(setup),
        sdpa_output_saved=setup.framework is not Framework.TORCHTITAN
        or torchtitan_code(setup.code_date).saves_sdpa_output(setup.cuda_capability),
        tensor_parallel=setup.tensor_parallel,
        experts_gathered=setup.experts_gathered,
        experts_merged_per_token=_experts_merged_bytes_per_token(arch, setup, targets),
        reduce_scatter_saved=setup.framework is Framework.TORCHTITAN
        and torchtitan_code(setup.code_date).saves_reduce_scatter,
        mlp_tile_share=Fraction(mlp_tile_tokens(setup, arch.hidden_size),
                                setup.batch * setup.seq_len) if setup.tiled_mlp else None,
    )


def _experts_merged_bytes_per_token(arch: Architecture, setup: TrainingSetup,
                                    targets: frozenset[LoraTarget]) -> int:
    """peft's LoRA on transformers 5's fused routed experts (`BlockSpec.experts_merged_per_token`):
    the merged copies of one MoE layer's adapted expert parameters, `experts.gate_up_proj` for a
    gate or up target and `experts.down_proj` for down, in the weights' dtype, over the step's
    tokens. Not for transformers' per-expert loop of `nn.Linear` modules (before v5.0.0:
    `TransformersCode.moe_expert_linears`), whose adapters are peft's usual `lora_B(lora_A(x))`,
    nor for another stack's LoRA (Megatron-LM's, Unsloth's)."""
    if not (arch.is_moe and setup.method.uses_lora and lora_on_modules(setup)) \
            or arch.family in transformers_code(setup.code_date).moe_expert_linears:
        return 0
    width = arch.expert_intermediate_size
    gate_up = width * (2 if arch.mlp is MlpKind.GATED else 1)
    rows = (gate_up if {LoraTarget.GATE, LoraTarget.UP} & targets else 0) \
        + (width if LoraTarget.DOWN in targets else 0)
    merged = arch.n_experts * rows * arch.hidden_size * weight_itemsize(setup.precision)
    return ceil_div(merged, setup.batch * setup.seq_len)


def mlp_tile_tokens(setup: TrainingSetup, hidden: int) -> int:
    """Tokens of the largest tile a tiled MLP (`TrainingSetup.tiled_mlp`) runs at once, of the
    step's batch x seq_len:
    - Unsloth (unsloth-zoo unsloth_zoo/tiled_mlp.py @7209a767, `tiled_forward_arctic_size`, the
      "arctic" rule `unsloth_tiled_mlp=True` picks): tiles of `hidden` tokens of the flattened
      batch, `seq_len // hidden` of them, the rest in one last tile (`remainder = B*S -
      qlen_chunk_size * num_shards`), which holds the other sequences when the batch has more
      than one (the rule since 04ab6f11, 2025-11-25; for one sequence the same tiles as the
      first one's, c9c7693d, 2025-11-12);
    - axolotl: each sequence in `ceil(seq_len / hidden)` shards, `ceil(seq_len / 32768)` from
      2026-05-28 (`AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE`), along the sequence
      (src/axolotl/monkeypatch/tiled_mlp/base.py: `torch.chunk(x, chunks=shards, dim=1)`);
    - DeepSpeed's `TiledMLP` as its docstring's example calls it (Arctic Long Sequence
      Training: `num_shards = math.ceil(seqlen / hidden)`), whose backward chunks the
      flattened batch (deepspeed/runtime/sequence_parallel/ulysses_sp.py, 4d00b38ad)."""
    batch, seq_len = setup.batch, setup.seq_len
    tokens = batch * seq_len
    if setup.framework is Framework.UNSLOTH:
        chunk = min(hidden, tokens)
        return max(chunk, tokens - chunk * max(1, seq_len // hidden))
    if setup.framework is Framework.AXOLOTL:
        width = AXOLOTL_TILED_MLP_SHARD_TOKENS \
            if has_change(setup.code_date, AXOLOTL_TILED_MLP_SHARD_TOKENS_SINCE) else hidden
        return batch * ceil_div(seq_len, ceil_div(seq_len, width))
    return ceil_div(tokens, ceil_div(seq_len, hidden))


def _attention_kernel(arch: Architecture, setup: TrainingSetup) -> Attention:
    """The attention that runs: litgpt's code of before October 2023 gave SDPA a multi-query
    model's single key-value head unexpanded, and SDPA ran its math kernel (`LitgptCode
    .mqa_kv_expanded`), which `eager` stands for in litgpt. A transformers module without an
    SDPA or a FlashAttention path runs eager attention (`Architecture.sdpa_attention`,
    `flash_attention`: BLOOM, GPT-Neo)."""
    multi_query = arch.n_kv_heads == 1 < arch.n_heads
    if (setup.framework is Framework.LITGPT and setup.attention is Attention.SDPA
            and multi_query and not litgpt_code(setup.code_date).mqa_kv_expanded):
        return Attention.EAGER
    if runs_transformers_code(setup.framework) and (
            (setup.attention is Attention.SDPA and not arch.sdpa_attention)
            or (setup.attention is Attention.FLASH and not arch.flash_attention)):
        return Attention.EAGER
    return setup.attention


def dequantized_bytes_per_value(setup: TrainingSetup) -> int:
    """Bytes per weight value while a quantized linear dequantizes it for a matmul.

    bitsandbytes dequantizes a 4-bit weight to the dtype it was quantized from
    (functional.dequantize_4bit: `torch.empty(quant_state.shape, dtype=quant_state.dtype)`), and
    MatMul4Bit casts that to the input's dtype (`F.dequantize_4bit(B, quant_state).to(A.dtype)`),
    both alive during the cast. Lightning Fabric quantizes from float16 whatever the precision
    (Lightning-AI/pytorch-lightning src/lightning/fabric/plugins/precision/bitsandbytes.py @003e3070
    and @d9ff9f3b, `_Linear4bit.quantize` / `_quantize_weight`:
    `weight.contiguous().to(device=device, dtype=torch.half)`), so litgpt's bf16 runs hold a
    float16 and a bf16 copy; lit-gpt's own quantization before it (`LitgptCode.
    fabric_quantization`) quantized from the model's weights, fp32 under `amp`, whose
    dequantized copy autocast then casts to 16 bits inside `F.linear`; transformers quantizes
    from the checkpoint's dtype (no cast under its compute dtype). int8 (MatMul8bitLt) makes
    one 16-bit copy (`state.CB.to(ctx.dtype_A)`). torchtune's torchao NF4 dequantizes through
    int64 codes in eager mode (`vramplan.training.states.torchao_nf4_dequantize_bytes`);
    compiled, inductor fuses the dequantization into one kernel that writes the compute-dtype
    weight."""
    compute = compute_itemsize(setup.precision)
    four_bit = setup.quant not in (Quant.NONE, Quant.INT8)
    if stores_torchao_nf4(setup) and not setup.compiled:
        return torchao_nf4_dequantize_bytes(compute)
    if four_bit and setup.framework is Framework.LITGPT:
        if not litgpt_code(setup.code_date).fabric_quantization:
            weights = weight_itemsize(setup.precision)
            return weights + (compute if weights != compute else 0)
        return 2 + compute  # the float16 dequantized weight, then its cast (litgpt: bf16-true)
    return compute


TIED_SUM_OUT_OF_PLACE = 3
"""A tied embedding's gradients at its backward when the head's is a transposed view: the head's,
the embedding's and their sum (`embedding_gradients_in_flight`)."""


def tied_in_framework(arch: Architecture, setup: TrainingSetup) -> bool:
    """The head and the embedding are one tensor in the framework's model
    (`vramplan.training.states.head_is_separate`)."""
    return arch.tied_embeddings and not head_is_separate(arch, setup)


def embedding_gradients_in_flight(arch: Architecture, setup: TrainingSetup) -> int:
    """Embedding-sized gradients alive while the embedding's backward completes.

    Untied: its own, which AccumulateGrad then takes as `.grad`. Tied: autograd's engine sums
    the contributions of the head and of the embedding in the weight's input buffer before
    AccumulateGrad runs (torch/csrc/autograd/input_buffer.cpp `accumulate`). The head's
    contribution waits there from the start of backward; the sum is made in place only when
    that tensor can be stolen (`can_accumulate_inplace`: it alone holds its storage). The
    linear's weight gradient is a view (`mm_mat2_backward` returns `grad.t().mm(mat1).t()` for
    the transposed weight, then TBackward transposes it back), which shares its storage with its
    base: `old_var + var` makes a third tensor beside the head's and the embedding's. When
    autocast casts the fp32 weight (`autocast_casts_weights`) the head's contribution is the
    fp32 output of the cast's backward (`_to_copy`), a tensor of its own, and the embedding's is
    added into it: two. FSDP's 16-bit gathered copies reach autocast cast already: three again
    (rank 0's trace of Gemma 3 1B under `amp` on 2 GPUs). Traced (vramplan trace, qwen2.5-0.5b
    full bf16-true, SGD: 3 x 259.7 MiB beside every other gradient at the peak; under `amp`
    two, once the tracker undid its dispatch mode's out-of-place sum,
    `StorageTracker._input_buffer_sum`; both in tests/test_trace_agreement_real.py).
    torchtune's chunked head calls the linear once per chunk: the buffer then holds the chunks'
    out-of-place sum, a tensor of its own that the embedding's gradient is added to in place
    (`vramplan.training.activations.head._torchtune_loss`)."""
    if not tied_in_framework(arch, setup):
        return 1
    if setup.framework is Framework.TORCHTUNE and head_spec(arch, setup).chunked:
        return 2
    return 2 if autocast_casts_weights(setup) else TIED_SUM_OUT_OF_PLACE


def tied_gradient_copies(arch: Architecture, setup: TrainingSetup) -> int:
    """`ModelStates.tied_gradient_copies`: the sum's gradients when a tied embedding trains."""
    if not (tied_in_framework(arch, setup) and embedding_trains(setup)):
        return 0
    return embedding_gradients_in_flight(arch, setup)


def head_spec(arch: Architecture, setup: TrainingSetup) -> HeadSpec:
    uses_lora = setup.method.uses_lora
    head_quantized = setup.method is Method.QLORA and setup.framework is Framework.LITGPT
    # litgpt's LoRA scripts chunk the head by 128 tokens; torchtune chunks its output for its
    # CEWithChunkedOutputLoss; elsewhere `chunked` means a fused linear cross-entropy
    default_chunked = (setup.framework is Framework.LITGPT and uses_lora) or \
        framework_defaults(setup.framework).loss is Loss.CHUNKED or \
        unsloth_fuses_loss(setup)
    chunked = setup.loss is Loss.CHUNKED if setup.loss is not None else default_chunked
    keeps_outputs = loop_keeps_logits(setup)
    spec = HeadSpec(
        framework=setup.framework,
        chunked=chunked,
        head_trains=setup.method is Method.FULL,
        head_lora=uses_lora and LoraTarget.HEAD in setup.lora_targets,
        head_keeps_input=(head_quantized and _quantized_base_keeps_input(setup))
        or setup.linears_keep_input,
        head_dequant_bytes=(dequantized_bytes_per_value(setup) * arch.hidden_size
                            * arch.vocab_size if head_quantized else 0)
        + _norm_head_bytes(arch, setup),
        quantized_head_output_bytes=_quantized_head_output_bytes(setup) if head_quantized else 0,
        previous_logits=(setup.framework is Framework.LITGPT
                         or (keeps_outputs and not setup.loop_frees_outputs))
        and setup.steady_state,
        outputs_kept=keeps_outputs,
        compiled=loss_compiled(setup),
        log_probs=setup.log_probs,
        coati_orpo=setup.coati_orpo_loss,
        autocast=runs_autocast(setup),
        loss_in_function=setup.loss_in_function,
        logits_fp32_in_model=model_returns_fp32_logits(setup, arch.family),
        shifts_logits=model_loss_code(setup, arch.family).shifts_logits,
        shift_cast_by_autocast=autocast_casts_shifted_logits(setup, arch.family),
        outputs_copied_fp32=accelerate_copies_outputs(setup),
        loss_16bit=loss_in_16bit(setup, arch.family),
        loss_parallel=setup.loss_parallel,
        te_cross_entropy=setup.te_cross_entropy and setup.framework is Framework.MEGATRON,
        native_fused_cross_entropy=native_fused_cross_entropy(setup),
        megatron_max_subtracted_apart=setup.framework is Framework.MEGATRON
        and setup.code_date is not None
        and setup.code_date < MEGATRON_MAX_SUBTRACTED_IN_PLACE_SINCE,
        norm_input_needs_grad=not checkpoints_cut_the_graph(setup),
    )
    if spec.fused_linear and setup.method is Method.FULL:
        spec = replace(spec, head_grad_bytes=weight_itemsize(setup.precision)
                       * arch.vocab_size * arch.hidden_size)
    if spec.fused_linear:
        spec = replace(spec, fused_rows=_unsloth_loss_rows(arch, setup))
    return spec


def _quantized_head_output_bytes(setup: TrainingSetup) -> int:
    """The dtype litgpt's quantized head returns its logits in (`HeadSpec.
    quantized_head_output_bytes`): Fabric's layer computes in the compute dtype; lit-gpt's own
    casts its output back to its input's, the final norm's output, fp32 under `amp`."""
    if litgpt_code(setup.code_date).fabric_quantization:
        return compute_itemsize(setup.precision)
    return weight_itemsize(setup.precision)
