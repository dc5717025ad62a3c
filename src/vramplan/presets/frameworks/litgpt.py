"""litgpt's code by date (`LitgptCode`), and the dates of the Lightning-AI/litgpt commits that
published measured runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from vramplan.presets.frameworks.dates import during


@dataclass(frozen=True, slots=True)
class LitgptCode:
    """What litgpt's model code did at some date, where it changed what a block saves for
    backward (Lightning-AI/litgpt, `lit_gpt/model.py` then `litgpt/model.py`)."""

    mqa_kv_expanded: bool
    """A multi-query model's single key-value head is expanded to every query head before SDPA
    in training (50b1974b, 2023-10-24: `if self.config.n_query_groups != self.config.n_head and
    (input_pos is None or ...)`, "training: flash attention requires it"). Before, `if
    self.config.n_query_groups != 1` left it unexpanded, and torch's SDPA, whose fused kernels
    need as many key and value heads as query heads (aten/src/ATen/native/transformers/
    sdp_utils_cpp.h `check_batch_size_and_num_heads`), ran its math kernel."""
    rmsnorm_scale_after_cast: bool
    """RMSNorm casts the normalized input back to the input's dtype before the scale
    (`x_normed = x_normed.to(dtype=dtype)`, then `x_normed * self.weight`), so the scale's
    gradient keeps a 16-bit copy: from 7c157492 (2024-02-23) to 916a84ca (2024-07-23). Before
    it the scale multiplied in fp32 (`(self.weight * x_normed).to(dtype=dtype)`, 6178c7cc), and
    since then again (`(x_normed * weight.float()).to(dtype=dtype)`). Before 6178c7cc
    (2023-10-24) the whole norm ran in the input's dtype, which is not modelled."""
    fabric_quantization: bool
    """`--quantize bnb.*` goes through Lightning Fabric's `BitsandbytesPrecision` (982abcbc,
    2023-10-05, PR #596 "Use Fabric's quantization"), which quantizes each weight from float16
    and computes in the plugin's dtype, so a quantized linear returns the compute dtype. Before
    it (from 064fd523, 2023-08-21) lit-gpt's own `quantize/bnb.py` subclassed bitsandbytes'
    `Linear4bit` with no compute dtype: each weight was quantized from the model's own dtype
    when moved to the GPU (fp32 under `bf16-mixed`), the compute dtype became the first input's
    (`set_compute_type`), and the output was cast back to the input's dtype (`out =
    out.to(inp_dtype)`, bitsandbytes 0.41.1 nn/modules.py `Linear4bit.forward`)."""

LITGPT_MQA_EXPANDED_SINCE = date(2023, 10, 24)
LITGPT_RMSNORM_CAST_BEFORE_SCALE = (date(2024, 2, 23), date(2024, 7, 23))
LITGPT_FABRIC_QUANTIZATION_SINCE = date(2023, 10, 5)
"""The dates of the commits named in `LitgptCode` (the window is half-open)."""


LITGPT_COMMIT_DATES: dict[str, date] = {
    # the Lightning-AI/litgpt commits that published measured runs of the case files, by their
    # first eight hex digits, and their dates (git log)
    "064fd523": date(2023, 8, 21),  # tutorials/finetune_lora.md (QLoRA tables)
    "29de2828": date(2023, 9, 27),  # tutorials/prepare_dataset.md
    "982abcbc": date(2023, 10, 5),  # tutorials/finetune_lora.md (Fabric's quantization)
    "0cc02afa": date(2023, 10, 27),  # tutorials/resource-tables.md
    "4a9b7e62": date(2024, 3, 14),  # config_hub/finetune/README.md (TinyLlama)
    "41dece20": date(2024, 3, 15),  # config_hub/finetune/README.md (Llama 2 7B)
    "84a73fd0": date(2024, 3, 27),  # config_hub/finetune/README.md (Gemma 7B)
    "58c5b188": date(2024, 4, 19),  # config_hub/finetune/README.md (Llama 3 8B)
    "5895df10": date(2024, 4, 26),  # config_hub/finetune/README.md
    "101e31d2": date(2024, 5, 6),  # extensions/thunder/README.md
    "e5493986": date(2024, 7, 22),  # config_hub/finetune/README.md
    "916a84ca": date(2024, 7, 23),  # config_hub/finetune/README.md
    "fd71063c": date(2024, 7, 24),  # config_hub/finetune/README.md
    "2b195c7f": date(2024, 8, 2),  # config_hub/finetune/README.md (Gemma 2 2B)
    "00af8b0d": date(2024, 9, 27),  # config_hub/finetune/README.md (Llama 3.2)
}


def litgpt_code(on: date | None) -> LitgptCode:
    """litgpt's model code as of `on`; None: today's."""
    if on is None:
        return LitgptCode(mqa_kv_expanded=True, rmsnorm_scale_after_cast=False,
                          fabric_quantization=True)
    return LitgptCode(mqa_kv_expanded=on >= LITGPT_MQA_EXPANDED_SINCE,
                      rmsnorm_scale_after_cast=during(on, LITGPT_RMSNORM_CAST_BEFORE_SCALE),
                      fabric_quantization=on >= LITGPT_FABRIC_QUANTIZATION_SINCE)
