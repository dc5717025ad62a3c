"""Bytes of a model's weights in a storage format, tensor by tensor.

Pure: takes an `Architecture`, a `QuantFormat` and who loads it (which tensors the loader
quantizes), returns the bytes of every tensor group. Sources of each layout are in
`vramplan.presets.quant_formats`.

What stays in higher precision, per format:
- fp32/fp16/bf16: nothing is quantized; everything in that dtype.
- fp8 (vLLM): the block linears in fp8 with an fp32 weight scale and input scale each; embedding,
  head, norms and biases in the compute dtype (vLLM keeps `lm_head` unquantized).
- bitsandbytes int8/nf4/fp4: every `nn.Linear` of the blocks; the head too when the loader replaces
  every Linear (Lightning Fabric's `BitsandbytesPrecision`, used by litgpt), not with Hugging Face
  transformers, which keeps `lm_head` in 16 bits (`get_keys_to_not_convert`); embedding, norms and
  biases in the compute dtype.
- GPTQ/AWQ: the block linears (not MoE routers); embedding, head, norms in fp16.
- mxfp4: the routed experts only, in blocks of 32 FP4 values and one scale byte; everything else
  (attention, routers, dense and shared MLPs, expert biases, embedding, head) in the compute dtype.
- fp8-block128: every block linear (not routers) in FP8 with an fp32 scale per 128 x 128 block;
  embedding, head, norms and routers in the compute dtype.
- A vision tower stays in the compute dtype in every format (the GGUF projector file, mmproj, is
  usually F16).
- GGUF: per llama.cpp's rules (`llama_tensor_get_type_impl`): the output head usually Q6_K (Q8_0 for
  Falcon), `attn_v`/`ffn_down` upgraded on some layers in the _M mixes, norms and biases F32 (1-D
  tensors are never quantized). The token embedding is kept in host memory by llama.cpp ("there is
  very little benefit to offloading the input layer, so always keep it on the CPU",
  src/llama-model.cpp), so it costs no VRAM; with tied embeddings the output head is a GPU copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from vramplan.model.architecture import Architecture, LinearSpec
from vramplan.presets.quant_formats import (
    BNB_BLOCKSIZE,
    BNB_DQ_BLOCKSIZE,
    FP8_BLOCK,
    GGML_TYPES,
    GGUF_FILE_TYPES,
    MX_BLOCK,
    FormatFamily,
    GgmlType,
    QuantFormat,
)
from vramplan.units import ceil_div


class WeightGroup(StrEnum):
    """Where weight bytes live; the rows of the weights breakdown."""

    LINEARS = "linears"
    """The linear layers of the blocks (attention and MLP, experts included)."""
    HEAD = "head"
    """The output projection (absent when tied to the embedding, except for a GGUF GPU copy)."""
    EMBEDDING = "embedding"
    """Token (and learned position) embeddings."""
    OTHER = "other"
    """Norms, biases, routers and query/key norms."""
    VISION = "vision"
    """The vision tower and its projector (vision-language models)."""


@dataclass(frozen=True, slots=True)
class WeightPart:
    """One group of tensors and how it is stored."""

    group: WeightGroup
    storage: str
    """The stored type: `bf16`, `nf4-dq`, `gptq-4bit-g128`, `Q6_K`, ... (`host` when the tensors
    stay in CPU memory)."""
    params: int
    bytes: int
    on_gpu: bool = True


@dataclass(frozen=True, slots=True)
class WeightsLayout:
    """Every weight tensor of a model in a format, grouped."""

    parts: tuple[WeightPart, ...]
    largest_quantized_linear: int
    """Elements of the largest matrix held quantized (0 if none): bitsandbytes dequantizes one such
    matrix at a time to 16 bits in prefill and quantizes one at a time while loading."""
    quantized_head_elements: int = 0
    """Elements of the head when it is held quantized (0 otherwise; `largest_quantized_linear`
    counts it): a tensor-parallel split that keeps the head whole keeps this matrix whole."""
    largest_quantized_block_linear: int = 0
    """Elements of the blocks' largest quantized matrix (0 if none): the matrices every
    tensor-parallel split divides."""

    @property
    def gpu_bytes(self) -> int:
        return sum(part.bytes for part in self.parts if part.on_gpu)

    @property
    def host_bytes(self) -> int:
        return sum(part.bytes for part in self.parts if not part.on_gpu)

    @property
    def params(self) -> int:
        return sum(part.params for part in self.parts)

    def bytes_of(self, group: WeightGroup) -> int:
        return sum(part.bytes for part in self.parts if part.group is group and part.on_gpu)


# --- one matrix ---------------------------------------------------------------------------------

def bnb_4bit_bytes(elements: int, double_quant: bool) -> int:
    """A bitsandbytes Params4bit: packed nibbles, plus one fp32 absmax per block of 64, or with
    double quantization one uint8 absmax per block, one fp32 constant per 256 blocks and an fp32
    offset (bitsandbytes functional.quantize_4bit)."""
    blocks = ceil_div(elements, BNB_BLOCKSIZE)
    packed = (elements + 1) // 2
    if double_quant:
        return packed + blocks + 4 * ceil_div(blocks, BNB_DQ_BLOCKSIZE) + 4
    return packed + 4 * blocks


def bnb_int8_bytes(in_features: int, out_features: int) -> int:
    """LLM.int8 Int8Params: CB int8 (out x in) plus SCB, one fp32 scale per output row."""
    return in_features * out_features + 4 * out_features


def gptq_bytes(in_features: int, out_features: int, bits: int, group_size: int | None) -> int:
    """AutoGPTQ QuantLinear buffers: qweight, qzeros (int32-packed), scales (fp16), g_idx
    (int32)."""
    groups = ceil_div(in_features, group_size or in_features)
    qweight = 4 * (in_features // 32 * bits) * out_features
    qzeros = 4 * groups * (out_features // 32 * bits)
    scales = 2 * groups * out_features
    return qweight + qzeros + scales + 4 * in_features


def awq_bytes(in_features: int, out_features: int, bits: int, group_size: int | None) -> int:
    """AutoAWQ WQLinear_GEMM buffers: qweight (in, out/8) and qzeros (in/g, out/8) int32, scales
    (in/g, out) fp16."""
    groups = ceil_div(in_features, group_size or in_features)
    pack = 32 // bits
    return 4 * in_features * ceil_div(out_features, pack) + 4 * groups * ceil_div(
        out_features, pack) + 2 * groups * out_features


def ggml_bytes(ggml_type: GgmlType, in_features: int, out_features: int) -> int:
    """A ggml tensor: rows of `in_features` values in whole blocks (ggml_row_size)."""
    return out_features * ceil_div(in_features, ggml_type.block_elements) * ggml_type.block_bytes


def fp8_bytes(elements: int) -> int:
    """One byte per weight plus an fp32 weight scale and an fp32 input scale (vLLM Fp8LinearMethod,
    per-tensor scales)."""
    return elements + 8


def fp8_block_bytes(in_features: int, out_features: int) -> int:
    """FP8 e4m3 weight (one byte per value) and `weight_scale_inv`, one fp32 per 128 x 128 block
    (transformers integrations/finegrained_fp8.py `FP8Linear`: [ceil(out/128), ceil(in/128)])."""
    blocks = ceil_div(out_features, FP8_BLOCK) * ceil_div(in_features, FP8_BLOCK)
    return in_features * out_features + 4 * blocks


def fp8_block_scales(in_features: int, out_features: int) -> int:
    """The fp32 scales of one matrix in the block-scaled FP8 format."""
    return ceil_div(out_features, FP8_BLOCK) * ceil_div(in_features, FP8_BLOCK)


def mxfp4_bytes(in_features: int, out_features: int) -> int:
    """Each output row's `in_features` values in blocks of 32: 16 bytes of packed FP4 and one E8M0
    scale byte (OCP MX v1.0; gpt-oss `*_blocks` [.., rows, in/32, 16] and `*_scales` [.., rows,
    in/32], transformers integrations/mxfp4.py)."""
    return out_features * ceil_div(in_features, MX_BLOCK) * (MX_BLOCK // 2 + 1)


# --- a whole model --------------------------------------------------------------------------------

def weights_layout(arch: Architecture, fmt: QuantFormat, compute_bytes: int,
                   quantize_head: bool) -> WeightsLayout:
    """The model's weights in `fmt`. `compute_bytes` is the size of a non-quantized value (2 for
    bf16/fp16, 4 for fp32); `quantize_head` says whether a bitsandbytes loader replaces the head."""
    if fmt.family is FormatFamily.GGUF:
        return _gguf_layout(arch, fmt)
    if fmt.family is FormatFamily.FLOAT:
        return _float_layout(arch, fmt)
    if fmt.family in (FormatFamily.MXFP4, FormatFamily.FP8_BLOCK):
        return _selective_layout(arch, fmt, compute_bytes)
    return _linear_quant_layout(arch, fmt, compute_bytes, quantize_head)


def _matrices(arch: Architecture) -> list[tuple[LinearSpec, int]]:
    """The block linears of the model (MTP modules included when loaded), without routers (kept
    in 16 bits by every format), each with the number of layers it is in."""
    linears = list(arch.model_linears())
    if arch.mtp_loaded and arch.mtp_layers:
        # an MTP module's block is a MoE block (`MtpLayer`); its eh_proj counts with the others
        linears += [(lin, arch.mtp_layers) for lin in arch.block_kinds()[-1].linears]
    return [(lin, layers) for lin, layers in linears if lin.role != "router"]


def _matrix_params(arch: Architecture) -> int:
    return sum(layers * lin.count * lin.in_features * lin.out_features
               for lin, layers in _matrices(arch))


def _other_params(arch: Architecture) -> int:
    """Norms, biases, routers, qk-norms, the head's own bias, MTP projections: everything but
    weight matrices, embeddings and the vision tower."""
    head = 0 if arch.tied_embeddings else arch.hidden_size * arch.vocab_size
    return (arch.params_total - _matrix_params(arch) - head - arch.params_embedding
            - arch.params_vision)


def _vision_part(arch: Architecture, size: int, storage: str) -> list[WeightPart]:
    if not arch.params_vision:
        return []
    return [WeightPart(WeightGroup.VISION, storage, arch.params_vision, size * arch.params_vision)]


def _float_layout(arch: Architecture, fmt: QuantFormat) -> WeightsLayout:
    size = fmt.float_bytes
    matrices = _matrix_params(arch)
    head = 0 if arch.tied_embeddings else arch.hidden_size * arch.vocab_size
    other = _other_params(arch)
    parts = [WeightPart(WeightGroup.LINEARS, fmt.name, matrices, size * matrices),
             WeightPart(WeightGroup.EMBEDDING, fmt.name, arch.params_embedding,
                        size * arch.params_embedding),
             WeightPart(WeightGroup.OTHER, fmt.name, other, size * other),
             *_vision_part(arch, size, fmt.name)]
    if head:
        parts.insert(1, WeightPart(WeightGroup.HEAD, fmt.name, head, size * head))
    return WeightsLayout(tuple(parts), 0)


_MATRIX_BYTES: dict[FormatFamily, Callable[[QuantFormat, int, int], int]] = {
    FormatFamily.BNB_4BIT: lambda fmt, i, o: bnb_4bit_bytes(i * o, fmt.double_quant),
    FormatFamily.BNB_INT8: lambda fmt, i, o: bnb_int8_bytes(i, o),
    FormatFamily.GPTQ: lambda fmt, i, o: gptq_bytes(i, o, fmt.bits, fmt.group_size),
    FormatFamily.AWQ: lambda fmt, i, o: awq_bytes(i, o, fmt.bits, fmt.group_size),
    FormatFamily.FP8: lambda fmt, i, o: fp8_bytes(i * o),
    FormatFamily.FP8_BLOCK: lambda fmt, i, o: fp8_block_bytes(i, o),
    FormatFamily.MXFP4: lambda fmt, i, o: mxfp4_bytes(i, o),
}
"""Bytes of one in x out matrix, per family of per-matrix formats."""


def _quantized_matrix_bytes(fmt: QuantFormat, in_features: int, out_features: int) -> int:
    return _MATRIX_BYTES[fmt.family](fmt, in_features, out_features)


def _linear_quant_layout(arch: Architecture, fmt: QuantFormat, compute_bytes: int,
                         quantize_head: bool) -> WeightsLayout:
    matrices = _matrices(arch)
    quantized = sum(layers * lin.count * _quantized_matrix_bytes(fmt, lin.in_features,
                                                                 lin.out_features)
                    for lin, layers in matrices)
    blocks_largest = max(lin.in_features * lin.out_features for lin, _ in matrices)
    parts = [WeightPart(WeightGroup.LINEARS, fmt.name, _matrix_params(arch), quantized)]
    head_quantized = quantize_head and fmt.family in (FormatFamily.BNB_4BIT,
                                                      FormatFamily.BNB_INT8)
    head = 0
    if head_quantized:
        # A tied head is the embedding's matrix: a bitsandbytes loader quantizes the Linear, so the
        # model then holds a quantized head besides the 16-bit embedding.
        h, v = arch.hidden_size, arch.vocab_size
        head = h * v
        parts.append(WeightPart(WeightGroup.HEAD, fmt.name, 0 if arch.tied_embeddings else head,
                                _quantized_matrix_bytes(fmt, h, v)))
    else:
        parts += _float_head(arch, compute_bytes)
    parts += _float_rest(arch, compute_bytes)
    return WeightsLayout(tuple(parts), max(blocks_largest, head), quantized_head_elements=head,
                         largest_quantized_block_linear=blocks_largest)


def _float_head(arch: Architecture, compute_bytes: int) -> list[WeightPart]:
    if arch.tied_embeddings:
        return []
    head = arch.hidden_size * arch.vocab_size
    return [WeightPart(WeightGroup.HEAD, _float_name(compute_bytes), head, compute_bytes * head)]


def _float_rest(arch: Architecture, compute_bytes: int) -> list[WeightPart]:
    """Embedding, norms and biases, and the vision tower, in the compute dtype."""
    other = _other_params(arch)
    name = _float_name(compute_bytes)
    return [WeightPart(WeightGroup.EMBEDDING, name, arch.params_embedding,
                       compute_bytes * arch.params_embedding),
            WeightPart(WeightGroup.OTHER, name, other, compute_bytes * other),
            *_vision_part(arch, compute_bytes, name)]


def _selective_layout(arch: Architecture, fmt: QuantFormat, compute_bytes: int) -> WeightsLayout:
    """mxfp4 (routed experts only) and fp8-block128 (every block linear): the matrices the format
    converts, and the others in the compute dtype."""
    converted: list[tuple[LinearSpec, int]] = []
    kept: list[tuple[LinearSpec, int]] = []
    for lin, layers in _matrices(arch):
        takes = lin.routed if fmt.family is FormatFamily.MXFP4 else True
        (converted if takes else kept).append((lin, layers))
    parts = []
    if converted:
        parts.append(WeightPart(
            WeightGroup.LINEARS, fmt.name,
            sum(layers * lin.count * lin.in_features * lin.out_features
                for lin, layers in converted),
            sum(layers * lin.count * _quantized_matrix_bytes(fmt, lin.in_features,
                                                            lin.out_features)
                for lin, layers in converted)))
    if kept:
        params = sum(layers * lin.count * lin.in_features * lin.out_features
                     for lin, layers in kept)
        parts.append(WeightPart(WeightGroup.LINEARS, _float_name(compute_bytes), params,
                                compute_bytes * params))
    parts += _float_head(arch, compute_bytes) + _float_rest(arch, compute_bytes)
    return WeightsLayout(tuple(parts), 0)


def _float_name(n_bytes: int) -> str:
    return "fp32" if n_bytes == 4 else "bf16/fp16"


# --- GGUF: llama.cpp's per-tensor choice ----------------------------------------------------

_IQ_LOW = frozenset({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})
"""File types whose mix is handled by the first branch of llama_tensor_get_type_impl."""

_FALLBACK = {  # tensor_type_fallback: a row length that is no multiple of the block size
    "IQ1_S": "IQ4_NL", "IQ1_M": "IQ4_NL", "IQ2_XXS": "IQ4_NL", "IQ2_XS": "IQ4_NL",
    "IQ2_S": "IQ4_NL", "IQ3_XXS": "IQ4_NL", "IQ3_S": "IQ4_NL", "IQ4_XS": "IQ4_NL",
    "Q2_K": "Q4_0", "Q3_K": "Q4_0", "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0",
}


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp `use_more_bits`: the first and last eighth of the layers, every third between."""
    return (i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8
            or (i_layer - n_layers // 8) % 3 == 2)


@dataclass(frozen=True, slots=True)
class _GgufModel:
    """What llama.cpp's rules read from the model."""

    family: str
    n_layers: int
    n_gqa: int
    n_experts: int
    is_70b: bool
    """llama.cpp LLM_TYPE_70B: a Llama with 80 layers and grouped-query attention."""


def gguf_tensor_type(ftype: str, category: str, i_layer: int, model: _GgufModel,
                     in_features: int) -> str:
    """The ggml type llama.cpp picks for one tensor of a `ftype` file (no imatrix, no overrides).

    `category` is one of token_embd, output, attn_q, attn_k, attn_v, attn_qkv, attn_output,
    ffn_gate, ffn_up, ffn_down (llama-quant.cpp tensor_get_category)."""
    default = GGUF_FILE_TYPES[ftype]
    if default in ("F16", "BF16", "F32"):
        return default
    if category == "output":
        chosen = _gguf_output(ftype, default, model, in_features)
    elif category == "token_embd":
        chosen = _gguf_token_embd(ftype, default)
    elif ftype in _IQ_LOW:
        chosen = _gguf_iq_low(ftype, default, category, i_layer, model)
    else:
        rule = _CATEGORY_RULES.get(category)
        chosen = rule(ftype, default, i_layer, model) if rule else default
    if in_features % GGML_TYPES[chosen].block_elements:
        chosen = _FALLBACK.get(chosen, chosen)
        if in_features % GGML_TYPES[chosen].block_elements:
            chosen = "F16"
    return chosen


def _gguf_output(ftype: str, default: str, m: _GgufModel, nx: int) -> str:
    if m.family == "falcon" or nx % GGML_TYPES[default].block_elements:
        return "Q8_0"
    if ftype in _IQ_LOW or ftype == "IQ3_XXS":
        return "Q5_K"
    return default if default == "Q8_0" else "Q6_K"


def _gguf_token_embd(ftype: str, default: str) -> str:
    if ftype in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
        return "Q2_K"
    if ftype in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
        return "IQ3_S"
    return default


def _gguf_iq_low(ftype: str, default: str, category: str, i: int, m: _GgufModel) -> str:
    s_or_m = ftype in ("IQ2_S", "IQ2_M")
    new = default
    if category in ("attn_v", "attn_qkv"):
        new = "Q4_K" if m.n_gqa >= 4 or m.n_experts >= 4 else "IQ3_S" if s_or_m else "Q2_K"
    elif category == "attn_k" and m.n_experts == 8:
        new = "Q4_K"
    elif category == "ffn_down" and i < m.n_layers // 8:
        new = "IQ3_S" if s_or_m else "Q2_K"
    elif category == "attn_output" and m.n_experts == 8:
        new = "Q5_K"
    elif category == "attn_output" and ftype in ("IQ1_S", "IQ1_M"):
        new = "IQ2_XXS"
    elif category == "attn_output" and s_or_m:
        new = "IQ3_S"
    return new


def _gguf_attn_v(ftype: str, default: str, i: int, m: _GgufModel) -> str:
    new = default
    if ftype == "Q2_K":
        new = "Q4_K" if m.n_gqa >= 4 else "Q3_K"
    elif ftype == "IQ3_XXS":
        new = "Q4_K" if m.n_gqa >= 4 else "IQ3_S"  # no imatrix
    elif (ftype in ("Q2_K_S", "IQ3_XS", "IQ3_S") and m.n_gqa >= 4) or ftype == "IQ3_M":
        new = "Q4_K"
    elif ftype == "Q3_K_M":
        new = "Q5_K" if i < 2 else "Q4_K"
    elif ftype == "Q3_K_L" or (ftype in ("IQ4_NL", "IQ4_XS") and m.n_gqa >= 4):
        new = "Q5_K"
    elif ftype in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i, m.n_layers):
        new = "Q6_K"
    elif ftype == "Q4_K_S" and i < 4:
        new = "Q5_K"
    if m.is_70b and new in ("Q3_K", "Q4_K"):
        new = "Q5_K"
    return "Q8_0" if m.n_experts == 8 else new


def _gguf_attn_k(ftype: str, default: str, i: int, m: _GgufModel) -> str:
    if m.n_experts == 8:
        return "Q8_0"
    return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(ftype, default)


def _gguf_attn_q(ftype: str, default: str, i: int, m: _GgufModel) -> str:
    return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(ftype, default)


def _gguf_ffn_down(ftype: str, default: str, i: int, m: _GgufModel) -> str:
    n = m.n_layers
    falcon = m.family == "falcon"
    new = default
    if ftype == "Q2_K":
        new = "Q3_K"
    elif ftype == "Q2_K_S" and i < n // 8:
        new = "Q4_K"
    elif ftype == "IQ3_XXS":
        new = "Q4_K" if i < n // 8 else "Q3_K"  # no imatrix
    elif ftype == "Q3_K_M":
        new = ("Q5_K" if i < n // 16 else
               "Q4_K" if not falcon or _use_more_bits(i, n) else "Q3_K")
    elif ftype == "IQ3_M" and (i < n // 8 or (m.n_experts == 8 and _use_more_bits(i, n))):
        new = "Q4_K"
    elif ftype == "Q3_K_L":
        new = "Q4_K" if falcon else "Q5_K"
    elif ftype == "Q4_K_M" and falcon:
        new = "Q6_K" if i < n // 16 else "Q5_K" if _use_more_bits(i, n) else "Q4_K"
    elif ftype in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i, n):
        new = "Q6_K"
    elif ftype in ("IQ4_NL", "IQ4_XS") and i < n // 8:
        new = "Q5_K"  # no imatrix
    elif ftype == "Q4_K_S" and not falcon and i < n // 8:
        new = "Q5_K"
    return new


def _gguf_attn_output(ftype: str, default: str, i: int, m: _GgufModel) -> str:
    if m.family == "falcon":
        return "Q4_K" if ftype == "Q3_K_L" else default
    if m.n_experts == 8:
        eight = {"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M",
                 "IQ3_S", "IQ3_M", "IQ4_XS"}
        return "Q5_K" if ftype in eight else default
    return {"Q2_K": "Q3_K", "IQ3_XXS": "IQ3_S", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K",
            "IQ3_M": "Q4_K"}.get(ftype, default)


def _gguf_gate_up(ftype: str, default: str, i: int, m: _GgufModel) -> str:
    n = m.n_layers
    return "IQ3_XXS" if ftype == "IQ3_XS" and n // 8 <= i < 7 * n // 8 else default


_CATEGORY_RULES: dict[str, Callable[[str, str, int, _GgufModel], str]] = {
    "attn_v": _gguf_attn_v, "attn_qkv": _gguf_attn_v, "attn_k": _gguf_attn_k,
    "attn_q": _gguf_attn_q, "ffn_down": _gguf_ffn_down, "attn_output": _gguf_attn_output,
    "ffn_gate": _gguf_gate_up, "ffn_up": _gguf_gate_up,
}
"""llama_tensor_get_type_impl, one function per tensor category (categories not listed keep the
file type's default)."""


_GGUF_CATEGORY = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
                  "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}
"""llama.cpp's tensor categories by role. Multi-head latent attention's tensors (`attn_q_a`,
`attn_q_b`, `attn_kv_a_mqa`, `attn_kv_b`) have no rule of their own: they keep the file type's
default; expert tensors (`ffn_*_exps`) and shared experts (`ffn_*_shexp`) fall in the ffn
categories (llama-quant.cpp matches the name's `ffn_down` and so on)."""


def _gguf_block_tensors(arch: Architecture, linears: tuple[LinearSpec, ...]
                        ) -> list[tuple[str, int, int, int]]:
    """(category, in_features, out_features, count) of one block as llama.cpp names them: fused
    q/k/v is one `attn_qkv`, fused gate/up one `ffn_up`."""
    tensors: list[tuple[str, int, int, int]] = []
    matrices = [lin for lin in linears if lin.role != "router"]
    if arch.fused_qkv:
        qkv_out = sum(lin.out_features for lin in matrices if lin.role in ("q", "k", "v"))
        tensors.append(("attn_qkv", arch.hidden_size, qkv_out, 1))
        matrices = [lin for lin in matrices if lin.role not in ("q", "k", "v")]
    if arch.fused_gate_up:
        gate = next(lin for lin in matrices if lin.role == "gate")
        tensors.append(("ffn_up", gate.in_features, 2 * gate.out_features, gate.count))
        matrices = [lin for lin in matrices if lin.role not in ("gate", "up")]
    tensors += [(_GGUF_CATEGORY.get(lin.role, "other"), lin.in_features, lin.out_features,
                 lin.count) for lin in matrices]
    return tensors


def _gguf_layout(arch: Architecture, fmt: QuantFormat) -> WeightsLayout:
    ftype = fmt.gguf_file_type
    model = _GgufModel(
        family=arch.family, n_layers=arch.n_layers, n_gqa=arch.n_heads // arch.n_kv_heads,
        n_experts=arch.n_experts,
        is_70b=arch.family == "llama" and arch.n_layers == 80 and arch.n_kv_heads < arch.n_heads)
    by_type: dict[str, list[int]] = {}
    kinds = {kind.moe: _gguf_block_tensors(arch, kind.linears) for kind in arch.block_kinds()}
    for i in range(arch.n_layers):
        for category, d_in, d_out, count in kinds[arch.layer_is_moe(i)]:
            ggml = gguf_tensor_type(ftype, category, i, model, d_in)
            entry = by_type.setdefault(ggml, [0, 0])
            entry[0] += count * d_in * d_out
            entry[1] += count * ggml_bytes(GGML_TYPES[ggml], d_in, d_out)
    parts = [WeightPart(WeightGroup.LINEARS, name, params, n_bytes)
             for name, (params, n_bytes) in sorted(by_type.items())]
    h, v = arch.hidden_size, arch.vocab_size
    out_type = gguf_tensor_type(ftype, "output", 0, model, h)
    # With tied embeddings there is no output.weight: the embedding takes the output's type
    # (has_tied_embeddings) and llama.cpp loads a GPU duplicate of it for the output.
    embd_type = (out_type if arch.tied_embeddings
                 else gguf_tensor_type(ftype, "token_embd", 0, model, h))
    parts.append(WeightPart(WeightGroup.HEAD, out_type, 0 if arch.tied_embeddings else h * v,
                            ggml_bytes(GGML_TYPES[out_type], h, v)))
    parts.append(WeightPart(WeightGroup.EMBEDDING, f"{embd_type} (host)", arch.params_embedding,
                            ggml_bytes(GGML_TYPES[embd_type], h, v)
                            + 4 * arch.params_position_embedding, on_gpu=False))
    other = _other_params(arch)
    parts.append(WeightPart(WeightGroup.OTHER, "F32", other, 4 * other))
    parts += _vision_part(arch, 2, "F16 (mmproj)")
    return WeightsLayout(tuple(parts), 0)
