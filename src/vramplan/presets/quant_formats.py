"""Weight storage formats for inference: floats, bitsandbytes, GPTQ, AWQ and GGUF, with sources.

Data only: how each format stores a weight matrix (bits, block or group sizes, the scale and zero
tensors it adds) and which tensors it leaves in higher precision. `vramplan.model.weight_storage`
turns this into bytes per tensor.

Sources (read in the public repositories):
- bitsandbytes `functional.py`, `quantize_4bit`: packed uint8 holding 2 values, one fp32 absmax per
  block of 64 values; with `compress_statistics` (double quantization) the absmax are stored as
  uint8 plus one fp32 absmax per 256 of them (`quantize_blockwise(absmax, blocksize=256)`) and
  an fp32 offset. `int8_double_quant` / LLM.int8: one int8 per weight plus one fp32 scale per
  output row.
- AutoGPTQ `auto_gptq/nn_modules/qlinear/qlinear_cuda.py`, `QuantLinear.__init__`: qweight int32
  (in/32*bits, out), qzeros int32 (ceil(in/g), out/32*bits), scales fp16 (ceil(in/g), out), g_idx
  int32 (in), bias fp16 (out).
- AutoAWQ `awq/modules/linear/gemm.py`, `WQLinear_GEMM.__init__`: qweight int32 (in, out/8), qzeros
  int32 (in/g, out/8), scales fp16 (in/g, out); 4 bits only.
- MXFP4 (OCP "Microscaling Formats (MX) v1.0": blocks of 32 FP4 E2M1 values sharing one E8M0
  scale byte, 17 bytes per 32 weights); transformers `integrations/mxfp4.py` and
  `quantizers/quantizer_mxfp4.py` (gpt-oss: `{gate_up,down}_proj_blocks` of 16 bytes per 32 values
  and `_scales` of one byte each; only the experts are converted, `modules_to_not_convert` keeps
  self_attn, the router, the embedding and lm_head).
- Block-scaled FP8 (DeepSeek-V3, arXiv:2412.19437 section 3.3.2; its config's `quantization_config`
  {`quant_method` fp8, `fmt` e4m3, `weight_block_size` [128, 128]}): transformers
  `integrations/finegrained_fp8.py` `FP8Linear` keeps `weight` in float8_e4m3fn and
  `weight_scale_inv` in float32, one per 128 x 128 block (`ceil(out/128) x ceil(in/128)`); the
  embedding, lm_head, norms and routers are not converted.
- ggml `ggml/src/ggml-common.h` block structs (bytes per block of 32 or 256 values) and llama.cpp
  `src/llama-quant.cpp` (`llama_ftype_get_default_type`, `llama_tensor_get_type_impl`) for the
  per-tensor types of each GGUF file type ("Q4_K_M" is a mix, not one type).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FormatFamily(StrEnum):
    """How a format stores the weight matrices of the linear layers."""

    FLOAT = "float"
    """Every tensor in one floating-point dtype (fp32, fp16, bf16)."""
    FP8 = "fp8"
    """Linear weights in 8-bit floats with a per-tensor scale; embeddings, head and norms in the
    compute dtype (vLLM `quantization="fp8"`, docs.vllm.ai "FP8 W8A8")."""
    BNB_INT8 = "bnb-int8"
    """bitsandbytes LLM.int8(): int8 weights, one fp32 scale per output row (Dettmers et al. 2022,
    arXiv:2208.07339)."""
    BNB_4BIT = "bnb-4bit"
    """bitsandbytes NF4/FP4 with blocks of 64 (QLoRA, Dettmers et al. 2023, arXiv:2305.14314)."""
    GPTQ = "gptq"
    """GPTQ (Frantar et al. 2022, arXiv:2210.17323) as packed by AutoGPTQ."""
    AWQ = "awq"
    """AWQ (Lin et al. 2023, arXiv:2306.00978) as packed by AutoAWQ (GEMM layout)."""
    GGUF = "gguf"
    """A llama.cpp GGUF file type: a mix of ggml block types chosen per tensor."""
    MXFP4 = "mxfp4"
    """OCP microscaling FP4 on the routed experts only (gpt-oss's published format): 4.25 bits
    per expert weight; attention, routers, embedding and head in the compute dtype."""
    FP8_BLOCK = "fp8-block"
    """FP8 e4m3 weights with one fp32 scale per 128 x 128 block on every block linear (DeepSeek-V3,
    Kimi K2 and Qwen3's FP8 releases); embedding, head, norms and routers in the compute
    dtype."""


@dataclass(frozen=True, slots=True)
class GgmlType:
    """One ggml block type: `block_bytes` bytes hold `block_elements` weights."""

    name: str
    block_elements: int
    block_bytes: int
    layout: str
    """The struct's fields, as in ggml-common.h."""

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.block_bytes / self.block_elements


_QK_K = 256
"""ggml super-block size (`#define QK_K 256`)."""

GGML_TYPES: dict[str, GgmlType] = {t.name: t for t in (
    GgmlType("F32", 1, 4, "float"),
    GgmlType("F16", 1, 2, "ggml_half"),
    GgmlType("BF16", 1, 2, "bfloat16"),
    GgmlType("Q8_0", 32, 34, "half d; int8 qs[32]"),
    GgmlType("Q6_K", _QK_K, 210, "uint8 ql[128], qh[64]; int8 scales[16]; half d"),
    GgmlType("Q5_K", _QK_K, 176, "half d, dmin; uint8 scales[12], qh[32], qs[128]"),
    GgmlType("Q5_1", 32, 24, "half d, m; uint8 qh[4], qs[16]"),
    GgmlType("Q5_0", 32, 22, "half d; uint8 qh[4], qs[16]"),
    GgmlType("Q4_K", _QK_K, 144, "half d, dmin; uint8 scales[12], qs[128]"),
    GgmlType("Q4_1", 32, 20, "half d, m; uint8 qs[16]"),
    GgmlType("Q4_0", 32, 18, "half d; uint8 qs[16]"),
    GgmlType("IQ4_NL", 32, 18, "half d; uint8 qs[16]"),
    GgmlType("IQ4_XS", _QK_K, 136, "half d; uint16 scales_h; uint8 scales_l[4], qs[128]"),
    GgmlType("Q3_K", _QK_K, 110, "uint8 hmask[32], qs[64], scales[12]; half d"),
    GgmlType("IQ3_S", _QK_K, 110, "half d; uint8 qs[64], qh[8], signs[32], scales[4]"),
    GgmlType("IQ3_XXS", _QK_K, 98, "half d; uint8 qs[96]"),
    GgmlType("Q2_K", _QK_K, 84, "uint8 scales[16], qs[64]; half d, dmin"),
    GgmlType("IQ2_S", _QK_K, 82, "half d; uint8 qs[64], qh[8], scales[8]"),
    GgmlType("IQ2_XS", _QK_K, 74, "half d; uint16 qs[32]; uint8 scales[8]"),
    GgmlType("IQ2_XXS", _QK_K, 66, "half d; uint16 qs[32]"),
    GgmlType("IQ1_M", _QK_K, 56, "uint8 qs[32], qh[16], scales[8]"),
    GgmlType("IQ1_S", _QK_K, 50, "half d; uint8 qs[32]; uint16 qh[8]"),
)}
"""Block sizes from the `block_*` structs and their static_asserts in ggml/src/ggml-common.h."""

GGUF_FILE_TYPES: dict[str, str] = {
    # file type -> default tensor type (llama.cpp src/llama-quant.cpp, llama_ftype_get_default_type)
    "F16": "F16", "BF16": "BF16", "Q8_0": "Q8_0", "Q6_K": "Q6_K",
    "Q5_K_M": "Q5_K", "Q5_K_S": "Q5_K", "Q5_1": "Q5_1", "Q5_0": "Q5_0",
    "Q4_K_M": "Q4_K", "Q4_K_S": "Q4_K", "Q4_1": "Q4_1", "Q4_0": "Q4_0",
    "IQ4_XS": "IQ4_XS", "IQ4_NL": "IQ4_NL",
    "Q3_K_L": "Q3_K", "Q3_K_M": "Q3_K", "Q3_K_S": "Q3_K",
    "IQ3_M": "IQ3_S", "IQ3_S": "IQ3_S", "IQ3_XS": "IQ3_S", "IQ3_XXS": "IQ3_XXS",
    "Q2_K": "Q2_K", "Q2_K_S": "Q2_K",
    "IQ2_M": "IQ2_S", "IQ2_S": "IQ2_XS", "IQ2_XS": "IQ2_XS", "IQ2_XXS": "IQ2_XXS",
    "IQ1_M": "IQ1_M", "IQ1_S": "IQ1_S",
}


@dataclass(frozen=True, slots=True)
class QuantFormat:
    """A way to store a model's weights. Build one with `find_format`."""

    name: str
    """Canonical name: `bf16`, `nf4-dq`, `int8`, `gptq-4bit-g128`, `awq-4bit-g128`,
    `gguf-q4_k_m`."""
    family: FormatFamily
    float_bytes: int = 2
    """FLOAT: bytes per weight (4 fp32, 2 fp16/bf16)."""
    bits: int = 16
    """GPTQ/AWQ: bits per quantized weight."""
    group_size: int | None = None
    """GPTQ/AWQ: input features sharing one scale and zero (None: the whole column, `-1`)."""
    quant_type: str = ""
    """bitsandbytes 4-bit code: `nf4` or `fp4`."""
    double_quant: bool = False
    """bitsandbytes `compress_statistics`: the absmax themselves quantized to 8 bits."""
    gguf_file_type: str = ""
    """GGUF: the llama.cpp file type (`Q4_K_M`)."""


BNB_BLOCKSIZE = 64
"""Values per absmax in bitsandbytes 4-bit (`quantize_4bit(..., blocksize=64)` default, as used by
`bnb.nn.Params4bit`)."""
BNB_DQ_BLOCKSIZE = 256
"""Absmax values per second-level fp32 constant with double quantization
(`quantize_blockwise(absmax, blocksize=256)` in `quantize_4bit`)."""
MX_BLOCK = 32
"""Values per shared E8M0 scale in MXFP4 (OCP MX v1.0, block size k = 32; transformers
`integrations/mxfp4.py`: blocks of 16 bytes, two FP4 values per byte)."""
FP8_BLOCK = 128
"""Side of the square weight block sharing one fp32 scale (`weight_block_size` [128, 128])."""

_FIXED: dict[str, QuantFormat] = {f.name: f for f in (
    QuantFormat("fp32", FormatFamily.FLOAT, float_bytes=4),
    QuantFormat("fp16", FormatFamily.FLOAT, float_bytes=2),
    QuantFormat("bf16", FormatFamily.FLOAT, float_bytes=2),
    QuantFormat("fp8", FormatFamily.FP8, bits=8),
    QuantFormat("fp8-block128", FormatFamily.FP8_BLOCK, bits=8, group_size=FP8_BLOCK),
    QuantFormat("mxfp4", FormatFamily.MXFP4, bits=4, group_size=MX_BLOCK),
    QuantFormat("int8", FormatFamily.BNB_INT8, bits=8),
    QuantFormat("nf4", FormatFamily.BNB_4BIT, bits=4, quant_type="nf4"),
    QuantFormat("nf4-dq", FormatFamily.BNB_4BIT, bits=4, quant_type="nf4", double_quant=True),
    QuantFormat("fp4", FormatFamily.BNB_4BIT, bits=4, quant_type="fp4"),
    QuantFormat("fp4-dq", FormatFamily.BNB_4BIT, bits=4, quant_type="fp4", double_quant=True),
)}

GPTQ_BITS = (2, 3, 4, 8)
"""Bit widths AutoGPTQ's QuantLinear packs ("Only 2,3,4,8 bits are supported")."""
AWQ_BITS = (4,)
"""AutoAWQ's GEMM/GEMV kernels pack 4-bit weights only."""
GROUP_SIZES = (32, 64, 128, 256, 1024)
"""Group sizes offered; `-1` (one group per column) is accepted too."""
DEFAULT_GROUP_SIZE = 128
"""The group size of most published GPTQ/AWQ checkpoints (AutoGPTQ and AutoAWQ examples)."""

ALIASES: dict[str, str] = {
    "float32": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
    "bnb.int8": "int8", "llm.int8": "int8", "bnb.nf4": "nf4", "bnb.nf4-dq": "nf4-dq",
    "bnb.fp4": "fp4", "bnb.fp4-dq": "fp4-dq", "nf4dq": "nf4-dq", "fp4dq": "fp4-dq",
    "gptq": "gptq-4bit-g128", "awq": "awq-4bit-g128",
    "fp8-block": "fp8-block128", "fp8-128x128": "fp8-block128", "mx-fp4": "mxfp4",
}


def format_names() -> tuple[str, ...]:
    """Names shown to users (the parametrized families by their usual forms)."""
    gguf = tuple(f"gguf-{name.lower()}" for name in GGUF_FILE_TYPES)
    return (*_FIXED, "gptq-{2,3,4,8}bit-g{32,64,128,-1}", "awq-4bit-g{32,64,128}", *gguf)


def find_format(name: str) -> QuantFormat:
    """The format called `name` (`nf4-dq`, `gptq-3bit-g64`, `awq-4bit-g128`, `gguf-q4_k_m`,
    `q4_k_m`), or an `UnknownName` error listing the accepted names."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key in _FIXED:
        return _FIXED[key]
    parsed = _parse_grouped(key) or _parse_gguf(key)
    if parsed is None:
        from vramplan.errors import UnknownName

        raise UnknownName("weights", name, format_names())
    return parsed


def _parse_grouped(key: str) -> QuantFormat | None:
    """`gptq-4bit-g128`, `gptq-4bit` (group 128), `awq-4bit-g-1`, `gptq-8bit-g-1`."""
    parts = key.split("-", 2)
    if len(parts) < 2 or parts[0] not in ("gptq", "awq") or not parts[1].endswith("bit"):
        return None
    family = FormatFamily.GPTQ if parts[0] == "gptq" else FormatFamily.AWQ
    try:
        bits = int(parts[1].removesuffix("bit"))
        group = int(parts[2].removeprefix("g")) if len(parts) == 3 else DEFAULT_GROUP_SIZE
    except ValueError:
        return None
    allowed_bits = GPTQ_BITS if family is FormatFamily.GPTQ else AWQ_BITS
    if bits not in allowed_bits or (group != -1 and group not in GROUP_SIZES):
        return None
    group_size = None if group == -1 else group
    canonical = f"{parts[0]}-{bits}bit-g{group}"
    return QuantFormat(canonical, family, bits=bits, group_size=group_size)


def _parse_gguf(key: str) -> QuantFormat | None:
    file_type = key.removeprefix("gguf-").removeprefix("gguf:").upper()
    if file_type not in GGUF_FILE_TYPES:
        return None
    default = GGML_TYPES[GGUF_FILE_TYPES[file_type]]
    return QuantFormat(f"gguf-{file_type.lower()}", FormatFamily.GGUF,
                       bits=round(default.bits_per_weight), gguf_file_type=file_type)
