"""torchtune's QLoRA model built with torchao's NF4 tensors (before June 2024): each weight
quantized on the GPU, with the transients torchao v0.1 makes."""

from __future__ import annotations

from vramplan.model.architecture import Architecture
from vramplan.presets.quant_formats import BNB_BLOCKSIZE
from vramplan.training.allocations.program import StepProgram
from vramplan.training.allocations.tensors import ParamTensor, linear_weight
from vramplan.training.setup import TrainingSetup
from vramplan.training.states import TORCHAO_V01_FACTOR_BYTES


def torchtune_nf4_build(program: StepProgram, params: tuple[ParamTensor, ...],
                        arch: Architecture, setup: TrainingSetup) -> None:
    """torchtune's QLoRA model as its recipe built it with torchao v0.1 (recipes/
    lora_finetune_single_device.py @ff594c231, `with self._device: config.instantiate(...)`, then
    `load_state_dict`), on the GPU:
    - the builder makes one template layer, whose `LoRALinear`s quantize their new bf16 weights
      at once (`to_nf4`), then the embeddings and the head;
    - `TransformerDecoder` deep-copies the template for every layer (torchtune/modules/
      transformer.py `_get_clones`: `copy.deepcopy`); an NF4 weight's `__deepcopy__` calls
      `clone`, which torchtune overrides as `to_nf4(get_original_weight())` (torchtune/utils/
      _register_nf4_dispatch_ops.py): a dequantization and a quantization per weight, then
      the copies of the clone's tensors, the clone's own freed;
    - the template goes;
    - `load_state_dict` copies each checkpoint tensor in: torchtune's `copy_` override moves it
      to the GPU and quantizes it there (`to_nf4(src.to(dest.device))`), and the new codes
      replace the old.
    Traced with torchao v0.1's and torchtune's code on the meta device and replayed through the
    simulated allocator: 9.133 GB reserved after the build, where the QLoRA tutorial published
    9.13 GB "after model init" (docs/source/tutorials/qlora_finetune.rst @0914d5cf). The
    tensors outside the quantized linears (norms, adapters, embeddings, head) are allocated as
    `params` lists them."""
    linears = [lin.in_features * lin.out_features
               for lin in arch.block_linears() for _ in range(lin.count)]
    stored_linears = sum(piece.n_bytes for n in linears
                         for piece in linear_weight(setup, n, False, 0, quantized=True))
    per_block = sum(t.n_bytes for t in params if t.block == 0)
    others = per_block - stored_linears
    template: list[int] = []
    for n in linears:
        weight = program.alloc(2 * n)
        template += _torchao_v01_to_nf4(program, weight, n)
        program.free(weight)
    template.append(program.alloc(others))
    for tensor in params:
        if tensor.block is None:
            program.alloc(tensor.n_bytes)
    layers: list[list[list[int]]] = []
    for _ in range(arch.n_layers):
        layer: list[list[int]] = []
        for n in linears:
            weight = _torchao_v01_dequantize(program, n)
            clone = _torchao_v01_to_nf4(program, weight, n)
            program.free(weight)
            # `__deepcopy__` copies the clone's tensors and drops the clone's own
            layer.append(_torchao_v01_alloc_kept(program, n))
            _torchao_v01_free_kept(program, clone)
        program.alloc(others)
        layers.append(layer)
    program.free_all(template)
    for layer in layers:
        for index, n in enumerate(linears):
            weight = program.alloc(2 * n)
            new = _torchao_v01_to_nf4(program, weight, n)
            program.free(weight)
            _torchao_v01_free_kept(program, layer[index])
            layer[index] = new


def _torchao_v01_alloc_kept(program: StepProgram, n: int) -> list[int]:
    """A copy of what torchao v0.1's `NF4Tensor` of n values keeps (torchao/dtypes/nf4tensor.py
    `from_tensor`), as `copy.deepcopy` of its `__dict__` allocates them: the int8 scalers (one
    per 64 values), the quantization factor's storage (`TORCHAO_V01_FACTOR_BYTES`: a strided
    view that keeps its whole bf16 tensor), the scalers' mean (a bf16 scalar) and the packed
    codes (two per byte). Returned in `_torchao_v01_to_nf4`'s order: mean, factor, scalers,
    codes."""
    scalers = program.alloc(n // BNB_BLOCKSIZE)
    factor = program.alloc(int(n * TORCHAO_V01_FACTOR_BYTES))
    mean = program.alloc(2)
    return [mean, factor, scalers, program.alloc(n // 2)]


def _torchao_v01_free_kept(program: StepProgram, kept: list[int]) -> None:
    """Frees an `NF4Tensor`'s tensors (`_torchao_v01_to_nf4`'s order) in the order traced when
    the tensor goes: scalers, factor, mean, codes."""
    mean, factor, scalers, codes = kept
    program.free_all([scalers, factor, mean, codes])


def _torchao_v01_to_nf4(program: StepProgram, weight: int, n: int) -> list[int]:
    """torchao v0.1 `to_nf4` on a bf16 weight of n values (`NF4Tensor.from_tensor`), its
    allocations and frees in order as traced on the meta device: the per-block absolute maxima
    (`max(dim=-1)`'s bf16 values and int64 indices over `abs()`), the scalers' double
    quantization (`double_quantize_scalers`: mean, centring, their own maxima per 256, the
    factor, `round`, `clamp`, the int8 cast), then the codes: the blocks scaled, `value - nf4`
    and its `abs()` (16 bf16 entries per value: 32n bytes each), `min(dim=-1)`'s values and
    int64 indices, the packing's int64 shift and or, and the uint8 codes. `weight` stays the
    caller's. Returns what the tensor keeps: mean, factor, scalers, codes
    (`_torchao_v01_alloc_kept`)."""
    blocks = n // BNB_BLOCKSIZE
    maxima = _absolute_maxima(program, 2 * n, blocks)
    mean = program.alloc(2)
    centred = program.alloc(2 * blocks)
    program.free(maxima)
    group_max = _absolute_maxima(program, 2 * blocks, blocks // 256)
    scaled = program.alloc(2 * blocks)
    inverse = program.alloc(2 * blocks)
    factor = program.alloc(2 * blocks)
    program.free(inverse)
    program.free(scaled)
    product = program.alloc(2 * blocks)
    rounded = program.alloc(2 * blocks)
    program.free(product)
    clamped = program.alloc(2 * blocks)
    program.free(rounded)
    scalers = program.alloc(blocks)
    program.free_all([centred, group_max, clamped])
    maxima = _absolute_maxima(program, 2 * n, blocks)
    normalized = program.alloc(2 * n)
    difference = program.alloc(32 * n)
    distance = program.alloc(32 * n)
    program.free(difference)
    values, nearest = program.alloc(2 * n), program.alloc(8 * n)
    program.free(values)
    program.free(distance)
    shifted = program.alloc(4 * n)
    packed = program.alloc(4 * n)
    program.free(shifted)
    codes = program.alloc(n // 2)
    program.free_all([maxima, normalized, nearest, packed])
    return [mean, factor, scalers, codes]


def _absolute_maxima(program: StepProgram, n_bytes: int, groups: int) -> int:
    """`values.abs().max(dim=-1)` over `groups` groups of bf16 values (`n_bytes` of them): the
    absolute values, then the maxima and their int64 indices, of which the maxima stay."""
    absolute = program.alloc(n_bytes)
    maxima, indices = program.alloc(2 * groups), program.alloc(8 * groups)
    program.free(absolute)
    program.free(indices)
    return maxima


def _torchao_v01_dequantize(program: StepProgram, n: int) -> int:
    """torchao v0.1 `get_original_weight` of n values (`NF4Tensor.dequantize` in its order): each
    nibble as int64 codes (`(codes >> 4).to(torch.long)`, `(codes & 0b1111)`), each half looked
    up in the NF4 table, the scalers dequantized, both halves scaled, and their `torch.stack`:
    the bf16 weight returned, the rest freed."""
    blocks = n // BNB_BLOCKSIZE
    high = program.alloc(n // 2)
    high_codes = program.alloc(4 * n)
    program.free(high)
    low = program.alloc(n // 2)
    low_codes = program.alloc(4 * n)
    program.free(low)
    high_values, low_values = program.alloc(n), program.alloc(n)
    divided = program.alloc(2 * blocks)
    scalers = program.alloc(2 * blocks)
    program.free(divided)
    temporaries = [high_codes, low_codes, high_values, low_values, scalers]
    for _ in range(2):
        flat = program.alloc(n)
        temporaries.append(program.alloc(n))
        program.free(flat)
    weight = program.alloc(2 * n)
    program.free_all(temporaries)
    return weight
