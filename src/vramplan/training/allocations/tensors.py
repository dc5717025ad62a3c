"""The tensors of a training step's model, as the program allocates them: each parameter tensor
(or the merged tensors of a block), with the bytes its storage and its optimizer's states take."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.model.architecture import Architecture
from vramplan.model.lora_targets import lora_breakdown
from vramplan.presets.quant_formats import BNB_BLOCKSIZE, BNB_DQ_BLOCKSIZE
from vramplan.training.activations.spec import FP32
from vramplan.training.setup import (
    TrainingSetup,
    lora_on_modules,
    lora_rank_of,
    lora_targets_of,
    trainable_itemsize,
    trainable_state_itemsize,
    weight_itemsize,
)
from vramplan.training.states import (
    ADAFACTOR_ITEMSIZE,
    BNB_MIN_8BIT_SIZE,
    BNB_PAGED_MIN_ELEMENTS,
    head_is_separate,
    stored_quant,
)
from vramplan.units import ceil_div
from vramplan.vocab import Framework, LoraTarget, Method, Optimizer, Quant

TOKEN_ID_BYTES = 8
"""Token ids and labels are int64."""


@dataclass(frozen=True, slots=True)
class ParamTensor:
    """One stored parameter tensor (or one piece of a quantized one)."""

    elements: int
    n_bytes: int
    trainable: bool
    block: int | None
    """The block it belongs to (None: embeddings, final norm, head)."""
    rows: int = 0
    """A matrix's rows (`elements // rows` columns); 0: a vector, a quantized piece or tensors
    merged into one. Adafactor keeps a row and a column statistic of a matrix."""

    def in_block(self, block: int) -> ParamTensor:
        """The same tensor in `block` (a MoE model lists tens of thousands: built directly,
        `dataclasses.replace` costs several times more)."""
        return ParamTensor(self.elements, self.n_bytes, self.trainable, block, self.rows)


def parameter_tensors(arch: Architecture, setup: TrainingSetup) -> tuple[ParamTensor, ...]:
    """Every parameter tensor as the framework stores it, in module order: the embeddings, each
    block's linears (quantized pieces under QLoRA), biases, norms and adapters, the final norm
    and the head."""
    before, after = outer_tensors(arch, setup)
    kinds = block_kinds(arch, setup)
    blocks = [tensor.in_block(block)
              for block, trains in enumerate(trained_blocks(arch, setup))
              for tensor in kinds[trains, arch.layer_is_moe(block)]]
    return (*before, *blocks, *after)


def stored_unit_bytes(arch: Architecture, setup: TrainingSetup) -> tuple[int, int]:
    """The bytes of the largest block and of everything outside the blocks, as
    `parameter_tensors` stores them; blocks of one kind (trained or frozen) hold the same
    tensors, so each kind is summed once."""
    before, after = outer_tensors(arch, setup)
    block = max((sum(t.n_bytes for t in tensors)
                 for tensors in block_kinds(arch, setup).values()), default=0)
    return block, sum(t.n_bytes for t in (*before, *after))


def trained_blocks(arch: Architecture, setup: TrainingSetup) -> list[bool]:
    """Whether each block's own weights train: all of them (full), the last `train_layers`
    (freeze) or none (the adapters of LoRA train, the weights stay frozen)."""
    first_trained = arch.n_layers - min(setup.train_layers, arch.n_layers)
    full = setup.method is Method.FULL
    return [full or (setup.method is Method.FREEZE and block >= first_trained)
            for block in range(arch.n_layers)]


def block_kinds(arch: Architecture,
                setup: TrainingSetup) -> dict[tuple[bool, bool], list[ParamTensor]]:
    """One block's tensors (block 0), keyed by whether its weights train and whether it is a
    MoE block (a model with dense and MoE layers has both: `Architecture.kind_view`): the
    blocks of one key are alike but for their index, so a model's tensors are listed from these
    rather than block by block."""
    return {(trains, moe): _block_tensors(arch.kind_view(moe), setup, 0, trains)
            for trains in set(trained_blocks(arch, setup))
            for moe in {arch.layer_is_moe(block) for block in range(arch.n_layers)}}


def outer_tensors(arch: Architecture,
                  setup: TrainingSetup) -> tuple[list[ParamTensor], list[ParamTensor]]:
    """The tensors before the blocks (embeddings) and after them (final norm, head, the head's
    adapters)."""
    w = weight_itemsize(setup.precision)
    full = setup.method is Method.FULL
    before = [ParamTensor(arch.params_token_embedding, w * arch.params_token_embedding,
                          full, None, rows=arch.params_token_embedding // arch.hidden_size)]
    if arch.params_position_embedding:
        before.append(ParamTensor(arch.params_position_embedding,
                                  w * arch.params_position_embedding, full, None))
    if arch.params_embedding_norm:
        before.append(ParamTensor(arch.params_embedding_norm,
                                  w * arch.params_embedding_norm, full, None))
    after: list[ParamTensor] = []
    if arch.final_norm and arch.norm_params:
        after.append(ParamTensor(arch.norm_params, w * arch.norm_params, full, None))
    head = arch.head_linear()
    if head_is_separate(arch, setup):
        elements = head.in_features * head.out_features
        after += linear_weight(setup, elements, full, None, rows=head.out_features,
                               quantized=setup.method is Method.QLORA
                               and setup.framework is Framework.LITGPT)
    if head.bias:
        after.append(ParamTensor(head.out_features, w * head.out_features, full, None))
    if setup.method.uses_lora and LoraTarget.HEAD in (setup.lora_targets or frozenset()):
        rank = lora_rank_of(setup)
        a = trainable_itemsize(setup)
        after += [ParamTensor(rank * head.in_features, a * rank * head.in_features, True, None,
                              rows=rank),
                  ParamTensor(head.out_features * rank, a * head.out_features * rank, True,
                              None, rows=head.out_features)]
    return before, after


def _block_tensors(arch: Architecture, setup: TrainingSetup, block: int,
                   trains: bool) -> list[ParamTensor]:
    w = weight_itemsize(setup.precision)
    quantized = setup.method is Method.QLORA
    tensors: list[ParamTensor] = []
    for linear in arch.block_linears():
        for _ in range(linear.count):
            tensors += linear_weight(setup, linear.in_features * linear.out_features, trains,
                                     block, rows=linear.out_features, quantized=quantized)
            if linear.bias:
                tensors.append(ParamTensor(linear.out_features, w * linear.out_features,
                                           trains, block))
    per_norm = arch.hidden_size
    for _ in range(arch.norms_per_block * (int(arch.norm_weight) + int(arch.norm_bias))):
        tensors.append(ParamTensor(per_norm, w * per_norm, trains, block))
    if arch.params_qk_norm:
        tensors.append(ParamTensor(arch.params_qk_norm, w * arch.params_qk_norm, trains, block))
    if setup.method.uses_lora:
        rank = lora_rank_of(setup)
        targets = lora_targets_of(setup) - {LoraTarget.HEAD}
        a = trainable_itemsize(setup)
        for matrix in lora_breakdown(arch, rank, targets, fused_modules=lora_on_modules(setup)):
            copies = max(matrix.copies // arch.n_layers, 1)
            for _ in range(copies):
                tensors += [ParamTensor(rank * matrix.in_features,
                                        a * rank * matrix.in_features, True, block, rows=rank),
                            ParamTensor(matrix.out_features * rank,
                                        a * matrix.out_features * rank, True, block,
                                        rows=matrix.out_features)]
    return tensors


def linear_weight(setup: TrainingSetup, elements: int, trains: bool, block: int | None, *,
                  quantized: bool, rows: int = 0) -> list[ParamTensor]:
    """A linear weight, or the pieces bitsandbytes stores for a quantized one (packed codes,
    absmax, and with double quantization its own absmax; `functional.quantize_4bit`)."""
    if not quantized:
        return [ParamTensor(elements, weight_itemsize(setup.precision) * elements, trains,
                            block, rows)]
    quant = stored_quant(setup)
    if quant is Quant.INT8:
        return [ParamTensor(elements, elements, False, block)]
    blocks = ceil_div(elements, BNB_BLOCKSIZE)
    pieces = [ParamTensor(elements, (elements + 1) // 2, False, block)]
    if quant in (Quant.NF4_DQ, Quant.FP4_DQ):
        pieces += [ParamTensor(blocks, blocks, False, block),
                   ParamTensor(ceil_div(blocks, BNB_DQ_BLOCKSIZE),
                               FP32 * ceil_div(blocks, BNB_DQ_BLOCKSIZE), False, block),
                   ParamTensor(1, FP32, False, block)]  # the nested quantization's offset
    else:
        pieces.append(ParamTensor(blocks, FP32 * blocks, False, block))
    return pieces


def state_tensors(tensor: ParamTensor, setup: TrainingSetup) -> list[int]:
    """The optimizer's device tensors for one trainable parameter, in bytes (paged states live
    outside the allocator: bitsandbytes `get_state_buffer` pages tensors of 1e5 values or more)."""
    n, s = tensor.elements, trainable_state_itemsize(setup)
    kind = setup.optimizer
    paged = kind in (Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT) \
        and n >= BNB_PAGED_MIN_ELEMENTS
    eight_bit = kind in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT)
    if eight_bit and n >= BNB_MIN_8BIT_SIZE:
        absmax = FP32 * ceil_div(n, 256)
        return [absmax, absmax] if paged else [n, n, absmax, absmax]
    if kind is Optimizer.ADAFACTOR:
        # a matrix's row and column statistics, a vector's whole (`optimizer_state_bytes`)
        rows = tensor.rows
        return [ADAFACTOR_ITEMSIZE * rows, ADAFACTOR_ITEMSIZE * (n // rows)] if rows \
            else [ADAFACTOR_ITEMSIZE * n]
    per_state = {Optimizer.ADAMW: (s, 2), Optimizer.PAGED_ADAMW: (FP32, 2),
                 Optimizer.ADAMW_8BIT: (FP32, 2), Optimizer.PAGED_ADAMW_8BIT: (FP32, 2),
                 Optimizer.SGD_MOMENTUM: (s, 1)}
    itemsize, count = per_state.get(kind, (0, 0))
    return [] if paged else [itemsize * n] * count
