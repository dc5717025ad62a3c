"""Model states: weights (trained and frozen, quantized storage counted exactly), gradients,
fp32 master copies and optimizer states, from the trainable tensors of a setup."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from vramplan.model.architecture import Architecture, LinearSpec, PositionKind
from vramplan.model.lora_targets import lora_breakdown
from vramplan.model.weight_storage import bnb_4bit_bytes, bnb_int8_bytes
from vramplan.presets.frameworks.defaults import runs_transformers_code
from vramplan.presets.frameworks.torchtune import (
    TORCHTUNE_CHUNKED_NF4_SINCE,
    torchtune_rope_cache_bytes,
    torchtune_rope_modules,
)
from vramplan.presets.frameworks.transformers import transformers_code
from vramplan.presets.frameworks.unsloth import UNSLOTH_ROPE_ROWS, unsloth_code
from vramplan.presets.quant_formats import BNB_BLOCKSIZE
from vramplan.training.activations.spec import FP32
from vramplan.training.setup import (
    TrainingSetup,
    adapters_in_fp32,
    block_framework,
    gradient_itemsize,
    lora_on_modules,
    lora_rank_of,
    lora_targets_of,
    trainable_itemsize,
    trainable_state_itemsize,
    weight_itemsize,
)
from vramplan.units import ceil_div
from vramplan.vocab import Framework, LoraTarget, Method, Optimizer, Precision, Quant

BNB_8BIT_BLOCK = 256
"""bitsandbytes 8-bit optimizers: one fp32 absmax per 256 values (`Optimizer8bit`, blockwise
state, bitsandbytes/optim/optimizer.py `init_state`, `blocksize=256`)."""
BNB_PAGED_MIN_ELEMENTS = 100_000
"""bitsandbytes `Optimizer8bit.get_state_buffer`: `if not self.is_paged or p.numel() < 1e5`, the
state is a plain `torch.zeros_like(p)` on the device; only larger ones are paged."""
BNB_MIN_8BIT_SIZE = 4096
"""bitsandbytes keeps 32-bit states for tensors under `min_8bit_size=4096` elements (same file)."""
ADAFACTOR_ITEMSIZE = 4
"""transformers' Adafactor works in fp32 whatever the parameter's dtype: `grad = grad.float()`
for a 16-bit gradient, its states made `.to(grad)`, `p_data_fp32 = p.float()` for a 16-bit
parameter (transformers optimization.py `Adafactor.step`, the class the HF Trainer's
`optim="adafactor"` builds)."""


@dataclass(frozen=True, slots=True)
class ModelStates:
    """The model states of one replica: what one GPU holds without sharding. Bytes are integers.

    The bytes are what sharding splits; the parameter counts of the units (blocks, the root)
    size the transient buffers of sharded training (`vramplan.distributed.sharding`).
    """

    trainable_params: int
    frozen_params: int
    trainable_weight_bytes: int
    frozen_weight_bytes: int
    """Frozen weights as stored (quantized storage counts its real bytes)."""
    gradient_bytes: int
    master_weight_bytes: int
    optimizer_state_bytes: int
    """Optimizer states on the device, in PyTorch's allocator."""
    weight_itemsize: int
    """Bytes per element of the weights as computed with (2 for bf16/fp16, 4 for fp32)."""
    gradient_itemsize: int
    """Bytes per element of the gradients."""
    largest_layer_params: int
    """Parameters of the largest single module (DeepSpeed's `largest_layer_params`): usually
    the embedding table or the head."""
    block_params: int
    """Parameters of one wrapped unit (a transformer block, the FSDP auto-wrap unit)."""
    root_params: int
    """Parameters outside the wrapped units (embeddings, head, final norm): FSDP's root unit."""
    root_trains: bool | None = None
    """The root unit holds a trainable parameter (full fine-tuning, an adapter on the head).
    None: when nothing is frozen."""
    head_params: int = 0
    """Parameters of the output head (the embedding's, when tied): its gradient is the first
    of the root unit's, made at the start of backward."""
    tied_gradient_copies: int = 0
    """Head-sized gradients alive at once when a trained tied embedding's backward sums the
    head's contribution and its own (`embedding_gradients_in_flight`: 3 when the head's is a
    transposed view, 2 under autocast); 0 when untied or frozen. Set by
    `vramplan.training.estimate.estimate_training` (`specs.tied_gradient_copies`)."""
    flat_gradient_params: int | None = None
    """Parameters of the wrapped units (blocks and root) that hold at least one trainable
    parameter: an FSDP1 flat parameter gets a gradient for every one of its elements when any of
    them trains, and none when none does. None: every unit holds a trainable parameter."""

    managed_optimizer_bytes: int = 0
    """Paged optimizers' states, in CUDA unified memory: outside PyTorch's allocator, so outside
    `allocated` and `reserved` (bitsandbytes paged optimizers, cudaMallocManaged)."""
    largest_trainable_params: int = 0
    """Values of the largest trainable tensor (the step's and the gradient's largest unit)."""
    embedding_params: int = 0
    """Parameters of the input embeddings when they are a tensor of their own (not tied to the
    head): an FSDP unit apart under torchtitan's and accelerate's FSDP2 wrapping."""
    buffer_bytes: int = 0
    """The device buffers the model's code keeps (`model_buffer_bytes`: GPT-Neo's causal masks,
    older code's rotary tables): not parameters, so no sharding scheme splits them (FSDP and
    ZeRO-3 shard parameters; a module's buffers stay whole on every rank)."""
    float_buffer_bytes: int = 0
    """The part of `buffer_bytes` held in floating-point module buffers in the weights' dtype
    (the rotary tables), which an FSDP1 mixed-precision policy casts (`buffer_dtype`)."""
    flat_optimizer_state_bytes: int | None = None
    """The optimizer states when the optimizer steps flat 1-D partitions of the parameters
    (DeepSpeed's ZeRO: one fp32 partition per parameter group), where they differ: Adafactor
    factors the second moment of a tensor of two dimensions or more only (transformers
    `Adafactor._get_options`: `factored = len(param_shape) >= 2`), so it keeps a whole fp32
    moment of a partition. None: `optimizer_state_bytes`."""

    @property
    def params(self) -> int:
        return self.trainable_params + self.frozen_params

    @property
    def weight_bytes(self) -> int:
        return self.trainable_weight_bytes + self.frozen_weight_bytes

    @property
    def flattened_optimizer_state_bytes(self) -> int:
        """`flat_optimizer_state_bytes`, or `optimizer_state_bytes` where they are the same."""
        if self.flat_optimizer_state_bytes is None:
            return self.optimizer_state_bytes
        return self.flat_optimizer_state_bytes

    @property
    def total_bytes(self) -> int:
        return (self.weight_bytes + self.gradient_bytes + self.master_weight_bytes
                + self.optimizer_state_bytes)

    @property
    def master_itemsize(self) -> int:
        """Bytes per trainable parameter of the master copy (4 for fp32, 0 without one)."""
        return self.master_weight_bytes // self.trainable_params if self.trainable_params else 0


@dataclass(frozen=True, slots=True)
class TensorGroup:
    """`count` trainable tensors of `rows` x `cols` (cols = 1 for vectors)."""

    rows: int
    cols: int
    count: int

    @property
    def elements(self) -> int:
        return self.rows * self.cols


def trainable_tensors(arch: Architecture, setup: TrainingSetup) -> tuple[TensorGroup, ...]:
    """Every trainable tensor: what optimizers allocate state for."""
    if setup.method.uses_lora:
        rank = lora_rank_of(setup)
        targets = lora_targets_of(setup)
        groups: list[TensorGroup] = []
        for matrix in lora_breakdown(arch, rank, targets,
                                     fused_modules=lora_on_modules(setup)):
            groups += [TensorGroup(rank, matrix.in_features, matrix.copies),
                       TensorGroup(matrix.out_features, rank, matrix.copies)]
        return tuple(groups)
    block = tuple(TensorGroup(g.rows, g.cols, g.count * layers)
                  for linears, layers in _trained_block_kinds(arch, setup)
                  for g in _block_tensors(arch, linears))
    if setup.method is Method.FREEZE:
        return block
    h, vocab = arch.hidden_size, arch.vocab_size
    outside = [TensorGroup(vocab, h, 1)]
    if arch.params_embedding_norm:
        outside.append(TensorGroup(arch.params_embedding_norm, 1, 1))
    if arch.final_norm and arch.norm_params:
        outside.append(TensorGroup(arch.norm_params, 1, 1))
    if arch.params_position_embedding:
        outside.append(TensorGroup(arch.position_table_rows, h, 1))
    if head_is_separate(arch, setup):
        outside.append(TensorGroup(vocab, h, 1))
    if arch.head_bias:
        outside.append(TensorGroup(vocab, 1, 1))
    return block + tuple(outside)


def _trained_block_kinds(arch: Architecture, setup: TrainingSetup
                         ) -> list[tuple[tuple[LinearSpec, ...], int]]:
    """The linears of each kind of block whose weights train, with how many such blocks: all of
    them, or the last `train_layers` under `freeze` (dense and MoE blocks of a mixed model
    counted apart)."""
    trained = trained_layers(arch, setup)
    return [(kind.linears, layers) for kind in arch.block_kinds()
            if (layers := sum(1 for layer in trained if arch.layer_is_moe(layer) is kind.moe))]


def trained_layers(arch: Architecture, setup: TrainingSetup) -> range:
    """The blocks whose weights train: every block, or the last `train_layers` (`freeze`)."""
    if setup.method is Method.FREEZE:
        return range(max(arch.n_layers - setup.train_layers, 0), arch.n_layers)
    return range(arch.n_layers)


def _block_tensors(arch: Architecture, linears: tuple[LinearSpec, ...]) -> list[TensorGroup]:
    tensors = []
    for linear in linears:
        tensors.append(TensorGroup(linear.out_features, linear.in_features, linear.count))
        if linear.bias:
            tensors.append(TensorGroup(linear.out_features, 1, linear.count))
    if arch.norm_params:
        per_norm = int(arch.norm_weight) + int(arch.norm_bias)
        tensors.append(TensorGroup(arch.hidden_size, 1, arch.norms_per_block * per_norm))
    if arch.params_qk_norm:
        tensors.append(TensorGroup(arch.params_qk_norm, 1, 1))
    vectors = (arch.params_attention_per_block - arch.params_qk_norm
               - sum(lin.params for lin in arch.attention_linears()))
    if vectors:  # latent attention's q_a/kv_a norms, attention sinks
        tensors.append(TensorGroup(vectors, 1, 1))
    return tensors


def head_is_separate(arch: Architecture, setup: TrainingSetup) -> bool:
    """litgpt's GPT holds `lm_head` and `transformer.wte` as two modules and never ties them
    (litgpt/model.py GPT.__init__): a tied checkpoint is loaded into both, so the head's weight
    is stored twice. transformers ties them (one tensor). `TrainingSetup.litgpt_model`: litgpt's
    GPT under another loop."""
    return not arch.tied_embeddings or block_framework(setup) is Framework.LITGPT


def total_params(arch: Architecture, setup: TrainingSetup) -> int:
    """Parameters as the framework stores them (litgpt duplicates a tied head)."""
    extra = arch.hidden_size * arch.vocab_size if (
        arch.tied_embeddings and head_is_separate(arch, setup)) else 0
    return arch.params_total + extra


def model_states(arch: Architecture, setup: TrainingSetup) -> ModelStates:
    """Weights (trainable and frozen, quantized storage counted exactly), gradients, master
    copies and optimizer states."""
    tensors = trainable_tensors(arch, setup)
    trainable = sum(g.elements * g.count for g in tensors)
    w = weight_itemsize(setup.precision)
    t = trainable_itemsize(setup)
    g = gradient_itemsize(setup)
    base = total_params(arch, setup)
    if setup.method.uses_lora:
        frozen_params = base
        frozen_bytes = _frozen_base_bytes(arch, setup)
    else:
        frozen_params = base - trainable
        frozen_bytes = frozen_params * w
    # fp32 adapters are their own master copy
    master = (4 * trainable if setup.precision is Precision.MIXED and not adapters_in_fp32(setup)
              else 0)
    state = optimizer_state_bytes(tensors, setup)
    paged = setup.optimizer in (Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT)
    managed = 0
    if paged:
        # bitsandbytes pages only buffers of 1e5 values or more: smaller ones (most LoRA
        # matrices) stay ordinary device tensors (optimizer.py `get_state_buffer`)
        large = tuple(g for g in tensors if g.elements >= BNB_PAGED_MIN_ELEMENTS)
        managed = _paged_state_bytes(large, setup)
    return ModelStates(
        trainable_params=trainable,
        frozen_params=frozen_params,
        trainable_weight_bytes=trainable * t,
        frozen_weight_bytes=frozen_bytes,
        gradient_bytes=trainable * g,
        master_weight_bytes=master,
        optimizer_state_bytes=state - managed,
        managed_optimizer_bytes=managed,
        flat_optimizer_state_bytes=ADAFACTOR_ITEMSIZE * trainable
        if setup.optimizer is Optimizer.ADAFACTOR else None,
        weight_itemsize=w,
        gradient_itemsize=g,
        largest_layer_params=max(arch.params_token_embedding, arch.head_linear().params,
                                 *(lin.params_each for lin, _ in arch.model_linears())),
        block_params=arch.params_per_block,
        root_params=max(base - arch.params_blocks, 0),
        root_trains=root_trains(setup),
        head_params=arch.head_linear().params,
        flat_gradient_params=_flat_gradient_params(arch, setup, trainable),
        embedding_params=arch.params_embedding if head_is_separate(arch, setup) else 0,
        largest_trainable_params=max((g.elements for g in tensors), default=0),
        buffer_bytes=model_buffer_bytes(arch, setup),
        float_buffer_bytes=_rope_table_bytes(arch, setup),
    )


def model_buffer_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The device buffers the model's code keeps for the whole run: `Architecture.buffer_bytes`,
    the per-layer rotary tables of the run's date (`_rope_table_bytes`), transformers v4.38's
    causal-mask buffer (`causal_mask_buffer_bytes`), Unsloth's global dequantization buffer
    (`_unsloth_dequant_buffer_bytes`) and torchtune's rotary caches (`torchtune_rope_bytes`)."""
    return arch.buffer_bytes + _rope_table_bytes(arch, setup) \
        + causal_mask_buffer_bytes(arch, setup) + _unsloth_dequant_buffer_bytes(arch, setup) \
        + torchtune_rope_bytes(arch, setup)


def torchtune_rope_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """torchtune's rotary caches (`vramplan.presets.frameworks.torchtune.torchtune_rope_modules`,
    each `torchtune_rope_cache_bytes`); 0 for the other stacks."""
    if setup.framework is not Framework.TORCHTUNE:
        return 0
    return torchtune_rope_modules(arch.n_layers, setup.code_date) \
        * torchtune_rope_cache_bytes(arch)


def causal_mask_buffer_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The causal masks transformers' model registers at construction as of the run's date
    (`TransformersCode.causal_mask_buffer_bytes`). Unsloth builds its models with
    transformers' `from_pretrained` and only replaces their forwards, so its runs keep them too."""
    return sum(causal_mask_buffers(arch, setup))


def causal_mask_buffers(arch: Architecture, setup: TrainingSetup) -> tuple[int, ...]:
    """The bytes of each of those masks: one a layer (`TransformersCode.layer_mask_buffers`)
    or one for the model; none where the run's code makes none."""
    if not runs_transformers_code(setup.framework):
        return ()
    code = transformers_code(setup.code_date)
    total = code.causal_mask_buffer_bytes(arch.family, arch.max_position_embeddings,
                                          arch.n_layers)
    if not total:
        return ()
    if arch.family in code.layer_mask_buffers:
        return (total // arch.n_layers,) * arch.n_layers
    return (total,)


def _rope_table_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """Per-layer rotary tables, in the weights' dtype (from_pretrained constructs the model
    under its `torch_dtype`; Unsloth casts its tables to the model's): Unsloth's own rotary
    module's (`UnslothCode.rope_tables_per_layer`, at most `UNSLOTH_ROPE_ROWS` rows once
    `rope_rows_capped`), or transformers' (`TransformersCode.rope_caches`)."""
    w = weight_itemsize(setup.precision)
    if setup.framework is Framework.UNSLOTH:
        code = unsloth_code(setup.code_date)
        if not code.rope_tables_per_layer or arch.position is not PositionKind.ROPE:
            return 0
        rows = arch.max_position_embeddings
        if arch.longrope_positions is not None:
            # its LongRoPE module builds the short-context tables only (llama.py
            # `LongRopeRotaryEmbedding`: `original_max_position_embeddings` rows; the long
            # ones wait for a longer sequence)
            rows = min(rows, arch.longrope_positions)
        elif code.rope_rows_capped:
            rows = min(rows, UNSLOTH_ROPE_ROWS)
        return arch.rope_table_bytes(w, rows)
    if (runs_transformers_code(setup.framework)
            and arch.family in transformers_code(setup.code_date).rope_caches):
        return arch.rope_table_bytes(w)
    return 0


def _unsloth_dequant_buffer_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """Unsloth's QLoRA kernels' global buffers (`UnslothCode.global_dequant_buffer`): the
    largest block linear dequantized in the weights' dtype, and its absmax in fp32, one value
    per `BNB_BLOCKSIZE` weights."""
    if (setup.framework is not Framework.UNSLOTH or setup.method is not Method.QLORA
            or not unsloth_code(setup.code_date).global_dequant_buffer):
        return 0
    largest = arch.largest_block_linear()
    return largest * weight_itemsize(setup.precision) + ceil_div(largest, BNB_BLOCKSIZE) * FP32


def lora_in_blocks(setup: TrainingSetup) -> bool:
    """An adapter sits inside the blocks (not only on the head)."""
    targets = lora_targets_of(setup)
    return bool(targets - {LoraTarget.HEAD})


def root_trains(setup: TrainingSetup) -> bool:
    """The root unit (embeddings, final norm, head) holds a trainable parameter."""
    if setup.method is Method.FULL:
        return True
    return setup.method.uses_lora and LoraTarget.HEAD in setup.lora_targets


def _flat_gradient_params(arch: Architecture, setup: TrainingSetup, trainable: int) -> int:
    """Parameters of the FSDP units (each block, and the root: embeddings, final norm, head)
    that hold a trainable parameter."""
    root = max(total_params(arch, setup) - arch.params_blocks, 0)
    if setup.method is Method.FULL:
        return total_params(arch, setup)
    if setup.method is Method.FREEZE:
        return sum(arch.params_of_layer(layer) for layer in trained_layers(arch, setup))
    blocks = arch.params_blocks if lora_in_blocks(setup) else 0
    return blocks + (root if root_trains(setup) else 0) + trainable


def stores_torchao_nf4(setup: TrainingSetup) -> bool:
    """torchtune holds a QLoRA base as torchao's `NF4Tensor` (its `FrozenNF4Linear`, `to_nf4`):
    its double quantization (`stored_quant`), its dequantization (`torchao_nf4_dequantize_bytes`)
    and its FSDP2 split, which shards the scalers with the codes."""
    return setup.framework is Framework.TORCHTUNE and setup.quant not in (Quant.NONE, Quant.INT8)


def torchao_v01_nf4(setup: TrainingSetup) -> bool:
    """torchtune's QLoRA with the torchao it pinned from April to June 2024 (v0.1:
    `vramplan.presets.frameworks.torchtune.TORCHTUNE_CHUNKED_NF4_SINCE`), which quantized each
    weight in one piece, kept its quantization factor's whole storage (`TORCHAO_V01_FACTOR_BYTES`)
    and was built as `vramplan.training.allocations.torchao_nf4.torchtune_nf4_build` says; the run's
    code date must say so (None: today's code)."""
    return (setup.framework is Framework.TORCHTUNE and setup.method is Method.QLORA
            and setup.code_date is not None and setup.code_date < TORCHTUNE_CHUNKED_NF4_SINCE)


TORCHAO_V01_FACTOR_BYTES = Fraction(1, 32)
"""Bytes per quantized value that torchao v0.1's `NF4Tensor` keeps beyond the double-quantized
layout: its `quantization_factor` is `quantization_factor[:, 0].view(...)`, a strided view of
the (scaler blocks, 256) bf16 tensor `double_quantize_scalers` made, which it keeps whole (one
bf16 value per 64 weights); torchao 9dbc5542 (2024-05-31, "return contiguous
`quantization_factor`") made it a copy."""


def stored_quant(setup: TrainingSetup) -> Quant:
    """The 4-bit storage a QLoRA run really holds. torchtune stores its base as torchao's
    `NF4Tensor`, whose `from_tensor` always quantizes the per-block scalers (int8 per 64 values,
    one bf16 factor per 256 of them: `double_quantize_scalers`, pytorch/ao
    torchao/dtypes/nf4tensor.py @99c8d52c, v0.6.1): there `nf4` is bitsandbytes' `nf4-dq`
    layout, to the byte but for the factor's dtype (bf16 there, fp32 in bitsandbytes: 2 bytes
    per 16,384 values)."""
    if setup.framework is Framework.TORCHTUNE and setup.quant is Quant.NF4:
        return Quant.NF4_DQ
    return setup.quant


TORCHAO_NF4_UNPACKED_BYTES = 8
"""torchao `NF4Tensor.get_original_weight` unpacks each 4-bit code to int64
(`(self.quantized_data >> 4).to(torch.long)`, and the low nibble likewise), so eager
dequantization holds 8 bytes per value of indices (torchao/dtypes/nf4tensor.py @99c8d52c)."""


def torchao_nf4_dequantize_bytes(compute_itemsize: int) -> int:
    """Bytes per weight value at the peak of torchao's eager NF4 dequantization (`linear_nf4`:
    `weight.to(input.dtype)` -> `get_original_weight`): the int64 codes of both nibbles
    (`TORCHAO_NF4_UNPACKED_BYTES`), both halves looked up in the NF4 table, both halves scaled,
    and their `torch.stack`, each in the compute dtype; the locals live until it returns."""
    return TORCHAO_NF4_UNPACKED_BYTES + 3 * compute_itemsize


def _frozen_base_bytes(arch: Architecture, setup: TrainingSetup) -> int:
    """The frozen base: in the weight dtype, or with its linear layers quantized (bitsandbytes
    keeps biases, embeddings and norms in the dtype the model loads in: 16-bit, or fp32 under
    `amp` and `fp32`, as `from_pretrained`'s `torch_dtype` float32 leaves them). litgpt (Fabric
    BitsandbytesPrecision) replaces every nn.Linear, the head included; transformers skips the
    head (`llm_int8_skip_modules`, `get_keys_to_not_convert`)."""
    w = weight_itemsize(setup.precision)
    base = total_params(arch, setup)
    quant = stored_quant(setup)
    if quant is Quant.NONE:
        return base * w
    matrices = [(lin.in_features, lin.out_features, lin.count * layers)
                for lin, layers in arch.model_linears()]
    if setup.framework is Framework.LITGPT:
        matrices.append((arch.hidden_size, arch.vocab_size, 1))
    kept = unquantized_linears(arch, setup.unquantized_modules)
    matrices.extend((lin.in_features, lin.out_features, -lin.count) for lin in kept)
    quantized_params = sum(i * o * n for i, o, n in matrices)
    stored = sum(_quantized_matrix_bytes(quant, i, o) * n for i, o, n in matrices)
    if torchao_v01_nf4(setup):
        stored += int(quantized_params * TORCHAO_V01_FACTOR_BYTES)
    return stored + (base - quantized_params) * w


_MODULE_OF_ROLE: dict[str, str] = {
    "q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj",
    "o": "self_attn.o_proj", "q_a": "self_attn.q_a_proj", "q_b": "self_attn.q_b_proj",
    "kv_a": "self_attn.kv_a_proj_with_mqa", "kv_b": "self_attn.kv_b_proj",
    "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj",
}
"""transformers' module name of a block linear under `model.layers.N.` (Llama's layout, which
the dynamic 4-bit uploads use)."""


def unquantized_linears(arch: Architecture, modules: tuple[str, ...]) -> tuple[LinearSpec, ...]:
    """The block linears that `modules` (a checkpoint's `llm_int8_skip_modules`) keep out of
    quantization, one entry per layer that holds one. transformers leaves a linear unconverted
    when an entry equals its last name or its dotted name, or when the entry followed by a dot
    occurs in that name (integrations/bitsandbytes.py `_replace_with_bnb_linear`, the same test
    in v4.47.1 to v4.56.2): `model.layers.1.mlp` keeps layer 1's gate, up and down projections
    and not layer 11's. An entry is read from its `layers.` on, so a multimodal checkpoint's
    `language_model.model.layers.N...` names the same linears. Routed experts (3-D parameters,
    or Unsloth's per-expert linears) are left as `model_linears` stores them."""
    names = tuple(name[name.find("layers."):] if "layers." in name else name
                  for name in modules)
    kept: list[LinearSpec] = []
    for layer in range(arch.n_layers):
        for linear in arch.kind_view(arch.layer_is_moe(layer)).block_linears():
            module = _MODULE_OF_ROLE.get(linear.role)
            if module is None or linear.routed:
                continue
            full = f"layers.{layer}.{module}"
            last = module.rsplit(".", 1)[-1]
            if any(name in (full, last) or f"{name}." in full for name in names):
                kept.append(linear)
    return tuple(kept)


def _quantized_matrix_bytes(quant: Quant, in_features: int, out_features: int) -> int:
    if quant is Quant.INT8:
        return bnb_int8_bytes(in_features, out_features)
    double = quant in (Quant.NF4_DQ, Quant.FP4_DQ)
    return bnb_4bit_bytes(in_features * out_features, double)


def optimizer_state_bytes(tensors: tuple[TensorGroup, ...], setup: TrainingSetup) -> int:
    """Optimizer states for the trainable tensors."""
    s = trainable_state_itemsize(setup)
    kind = setup.optimizer
    if kind is Optimizer.ADAMW:
        return sum(2 * s * g.elements * g.count for g in tensors)
    if kind is Optimizer.PAGED_ADAMW:
        # bitsandbytes 32-bit optimizers keep fp32 states whatever the parameter's dtype
        # (Optimizer2State.init_state: `dtype = torch.float32` when optim_bits == 32)
        return sum(2 * 4 * g.elements * g.count for g in tensors)
    if kind in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT):
        return sum(2 * _bnb_8bit_state(g.elements) * g.count for g in tensors)
    if kind is Optimizer.SGD_MOMENTUM:
        return sum(s * g.elements * g.count for g in tensors)
    if kind is Optimizer.ADAFACTOR:
        # factored second moment only (beta1=None): row and column statistics of a matrix, the
        # full vector for 1-D tensors (Shazeer & Stern 2018, section 3; transformers Adafactor
        # `exp_avg_sq_row`, `exp_avg_sq_col`), in fp32
        return sum(ADAFACTOR_ITEMSIZE * _adafactor_elements(g) * g.count for g in tensors)
    return 0


def _paged_state_bytes(tensors: tuple[TensorGroup, ...], setup: TrainingSetup) -> int:
    """What a bitsandbytes paged optimizer pages of these tensors' states: the buffers
    `get_state_buffer` makes (`state1`, `state2`); an 8-bit state's fp32 `absmax1`/`absmax2`
    are plain `torch.zeros(..., device=p.device)` (bitsandbytes optim/optimizer.py
    `Optimizer2State.init_state`). Paged tensors hold 1e5 values or more, past
    `BNB_MIN_8BIT_SIZE`: their 8-bit states are one byte a value."""
    if setup.optimizer is Optimizer.PAGED_ADAMW_8BIT:
        return sum(2 * g.elements * g.count for g in tensors)
    return optimizer_state_bytes(tensors, setup)


def _bnb_8bit_state(elements: int) -> int:
    if elements < BNB_MIN_8BIT_SIZE:
        return 4 * elements
    return elements + 4 * ceil_div(elements, BNB_8BIT_BLOCK)


def _adafactor_elements(group: TensorGroup) -> int:
    return group.rows + group.cols if group.cols > 1 else group.rows
