"""Weight storage formats: block sizes from ggml's structs, bitsandbytes/GPTQ/AWQ tensor layouts,
GGUF per-tensor mixes against published file sizes."""

from __future__ import annotations

import pytest

from vramplan.errors import UnknownName
from vramplan.model.weight_storage import (
    WeightGroup,
    awq_bytes,
    bnb_4bit_bytes,
    bnb_int8_bytes,
    gptq_bytes,
    weights_layout,
)
from vramplan.presets.models import architecture_of, find_model
from vramplan.presets.quant_formats import GGML_TYPES, FormatFamily, find_format

# "Effectively N bits per weight" / "N bpw" comments next to each struct in ggml/src/ggml-common.h.
PUBLISHED_BPW = {
    "Q2_K": 2.625, "Q3_K": 3.4375, "Q4_K": 4.5, "Q5_K": 5.5, "Q6_K": 6.5625,
    "IQ2_XXS": 2.0625, "IQ2_XS": 2.3125, "IQ2_S": 2.5625, "IQ3_XXS": 3.0625, "IQ3_S": 3.4375,
    "IQ1_S": 1.5625, "IQ1_M": 1.75,
}


@pytest.mark.parametrize(("name", "bpw"), PUBLISHED_BPW.items(), ids=list(PUBLISHED_BPW))
def test_ggml_block_sizes_match_the_published_bits_per_weight(name: str, bpw: float) -> None:
    assert GGML_TYPES[name].bits_per_weight == bpw


def test_legacy_ggml_blocks() -> None:
    # block_q8_0 = half d + 32 int8; block_q4_0 = half d + 16 bytes of nibbles (ggml-common.h).
    assert GGML_TYPES["Q8_0"].bits_per_weight == 8.5
    assert GGML_TYPES["Q4_0"].bits_per_weight == 4.5
    assert GGML_TYPES["IQ4_XS"].bits_per_weight == 4.25


def test_bnb_4bit_bytes_by_hand() -> None:
    n = 4096 * 4096
    # n/2 packed bytes + one fp32 absmax per 64 values
    assert bnb_4bit_bytes(n, double_quant=False) == n // 2 + 4 * (n // 64)
    # double quant: one uint8 absmax per 64, one fp32 per 256 absmax, one fp32 offset
    assert bnb_4bit_bytes(n, double_quant=True) == n // 2 + n // 64 + 4 * (n // 64 // 256) + 4


def test_bnb_int8_and_gptq_and_awq_bytes_by_hand() -> None:
    assert bnb_int8_bytes(4096, 11008) == 4096 * 11008 + 4 * 11008
    # AutoGPTQ 4-bit, group 128, 4096 x 4096: qweight 4096*4096/2, qzeros 32 x 512 int32,
    # scales 32 x 4096 fp16, g_idx 4096 int32.
    assert gptq_bytes(4096, 4096, 4, 128) == 8_388_608 + 65_536 + 262_144 + 16_384
    assert gptq_bytes(4096, 4096, 4, None) == 8_388_608 + 2_048 + 8_192 + 16_384
    # AutoAWQ: qweight 4096 x 512 int32, qzeros 32 x 512 int32, scales 32 x 4096 fp16.
    assert awq_bytes(4096, 4096, 4, 128) == 8_388_608 + 65_536 + 262_144


@pytest.mark.parametrize(("raw", "canonical", "family"), [
    ("nf4-dq", "nf4-dq", FormatFamily.BNB_4BIT),
    ("bnb.nf4", "nf4", FormatFamily.BNB_4BIT),
    ("BF16", "bf16", FormatFamily.FLOAT),
    ("gptq-3bit-g64", "gptq-3bit-g64", FormatFamily.GPTQ),
    ("gptq-8bit-g-1", "gptq-8bit-g-1", FormatFamily.GPTQ),
    ("gptq", "gptq-4bit-g128", FormatFamily.GPTQ),
    ("awq-4bit", "awq-4bit-g128", FormatFamily.AWQ),
    ("Q4_K_M", "gguf-q4_k_m", FormatFamily.GGUF),
    ("gguf-iq2_xxs", "gguf-iq2_xxs", FormatFamily.GGUF),
])
def test_find_format(raw: str, canonical: str, family: FormatFamily) -> None:
    fmt = find_format(raw)
    assert (fmt.name, fmt.family) == (canonical, family)


@pytest.mark.parametrize("raw", ["awq-3bit-g128", "gptq-5bit", "gptq-4bit-g100", "q9_k", "int3"])
def test_unknown_formats_are_refused_with_the_field_named(raw: str) -> None:
    with pytest.raises(UnknownName) as error:
        find_format(raw)
    assert error.value.field == "weights"


# Published sizes of llama.cpp k-quant files of Llama 2 13B (llama.cpp commit 2d43387), README of
# huggingface.co/localmodels/Llama-2-13B-ggml, "Provided files" table: q3_K_S 5.66 GB,
# q3_K_L 6.93 GB, q4_K_M 7.87 GB. Those mixes' rules are unchanged in today's llama-quant.cpp.
@pytest.mark.parametrize(("ftype", "published_gb"), [
    ("q3_k_s", 5.66), ("q3_k_l", 6.93), ("q4_k_m", 7.87),
])
def test_gguf_mix_matches_published_file_sizes(ftype: str, published_gb: float) -> None:
    layout = weights_layout(architecture_of(find_model("llama-2-13b")), find_format(ftype), 2,
                            quantize_head=False)
    total = layout.gpu_bytes + layout.host_bytes  # the file holds every tensor
    assert total / 1e9 == pytest.approx(published_gb, abs=0.006)


def test_gguf_q4_k_m_upgrades_half_the_attn_v_and_ffn_down_to_q6_k() -> None:
    arch = architecture_of(find_model("llama-2-7b"))
    layout = weights_layout(arch, find_format("q4_k_m"), 2, quantize_head=False)
    q6 = next(p for p in layout.parts if p.group is WeightGroup.LINEARS and p.storage == "Q6_K")
    # use_more_bits(i, 32): layers 0-3, 28-31 and every third in between: 16 of 32 layers
    per_layer = 4096 * 4096 + 11008 * 4096  # attn_v + ffn_down
    assert q6.params == 16 * per_layer
    head = next(p for p in layout.parts if p.group is WeightGroup.HEAD)
    assert head.storage == "Q6_K"
    embedding = next(p for p in layout.parts if p.group is WeightGroup.EMBEDDING)
    assert not embedding.on_gpu  # llama.cpp keeps the input embedding in host memory


@pytest.mark.parametrize("name", ["llama-2-7b", "mixtral-8x7b", "phi-2", "gemma-2-9b",
                                  "falcon-7b", "qwen2.5-7b"])
@pytest.mark.parametrize("fmt", ["bf16", "nf4", "nf4-dq", "int8", "gptq-4bit-g128",
                                 "awq-4bit-g128", "fp8", "q4_k_m", "q2_k", "iq2_xxs", "q8_0"])
def test_every_format_counts_every_parameter_once(name: str, fmt: str) -> None:
    arch = architecture_of(find_model(name))
    layout = weights_layout(arch, find_format(fmt), 2, quantize_head=False)
    assert layout.params == arch.params_total
    assert layout.gpu_bytes > 0


@pytest.mark.parametrize("ladder", [
    ("fp32", "bf16", "int8", "nf4", "nf4-dq"),
    ("q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k", "iq1_s"),
    ("gptq-8bit-g128", "gptq-4bit-g32", "gptq-4bit-g128", "gptq-3bit-g128", "gptq-2bit-g128"),
])
def test_fewer_bits_take_fewer_bytes(ladder: tuple[str, ...]) -> None:
    arch = architecture_of(find_model("llama-2-7b"))
    sizes = [weights_layout(arch, find_format(f), 2, quantize_head=False).gpu_bytes
             for f in ladder]
    assert sizes == sorted(sizes, reverse=True)
    assert len(set(sizes)) == len(sizes)


# --- the 2025 formats ---------------------------------------------------------------------------


def test_gpt_oss_20b_in_mxfp4_is_its_published_checkpoint() -> None:
    # openai/gpt-oss-20b model.safetensors.index.json: "total_size": 13761264768 (a copy of the
    # repository's files in a public notebook, next to its config.json, transformers 4.55.0.dev0):
    # experts in MXFP4 (17 bytes per 32 weights), everything else in bf16.
    from vramplan.model.weight_storage import weights_layout

    arch = architecture_of(find_model("gpt-oss-20b"))
    layout = weights_layout(arch, find_format("mxfp4"), 2, quantize_head=False)
    assert layout.gpu_bytes == 13_761_264_768
    assert layout.params == arch.params_total


def test_mxfp4_converts_only_the_routed_experts() -> None:
    from vramplan.model.weight_storage import WeightGroup, mxfp4_bytes, weights_layout

    assert mxfp4_bytes(2880, 5760) == 5760 * 90 * 17  # gpt-oss gate_up: 90 blocks a row
    dense = architecture_of(find_model("llama-3.1-8b"))
    bf16 = weights_layout(dense, find_format("bf16"), 2, quantize_head=False)
    mx = weights_layout(dense, find_format("mxfp4"), 2, quantize_head=False)
    assert mx.gpu_bytes == bf16.gpu_bytes  # no experts: nothing converted
    assert {part.storage for part in mx.parts if part.group is WeightGroup.LINEARS} == {
        "bf16/fp16"}


def test_fp8_block_scales_of_deepseek_v3_match_its_published_total() -> None:
    # The published parameter total of deepseek-ai/DeepSeek-V3 (684,531,386,000 safetensors
    # elements) is the transformers count, plus the MTP module and its copies, the
    # e_score_correction_bias buffers, and 40,838,232 fp32 weight_scale_inv elements for the main
    # model: one per 128 x 128 block of every block linear but the routers.
    from vramplan.model.weight_storage import fp8_block_scales

    arch = architecture_of(find_model("deepseek-v3"))
    scales = sum(layers * lin.count * fp8_block_scales(lin.in_features, lin.out_features)
                 for lin, layers in arch.model_linears() if lin.role != "router")
    assert scales == 40_838_232


def test_fp8_block128_bytes_by_hand() -> None:
    from vramplan.model.weight_storage import fp8_block_bytes

    # DeepSeek-V3 kv_b_proj [32768, 512]: scales [256, 4]
    assert fp8_block_bytes(512, 32768) == 512 * 32768 + 4 * 256 * 4
    # a ragged edge rounds up: [576, 7168] -> [5, 56]
    assert fp8_block_bytes(7168, 576) == 7168 * 576 + 4 * 5 * 56


@pytest.mark.parametrize("name", ["mxfp4", "fp8-block128"])
def test_new_formats_count_every_parameter_once(name: str) -> None:
    from vramplan.model.weight_storage import weights_layout

    for model in ("deepseek-v3", "gpt-oss-120b", "gemma-3-27b",
                  "llama-4-maverick-17b-128e-instruct"):
        arch = architecture_of(find_model(model))
        layout = weights_layout(arch, find_format(name), 2, quantize_head=False)
        assert layout.params == arch.params_total, model
