"""peft's, bitsandbytes' and LLaMA-Factory's dated changes that move memory: the cache emptied
after the k-bit upcast, the adapters' dtype, the 4-bit layer's input kept for backward."""

from __future__ import annotations

from datetime import date

from vramplan.vocab import Framework

PEFT_EMPTY_CACHE_AFTER_UPCAST_SINCE = date(2026, 7, 7)
"""huggingface/peft 537805209 (v0.20.0): `prepare_model_for_kbit_training(...,
auto_clear_cache=True)` calls `torch.cuda.empty_cache()` after the fp32 casts."""

PEFT_ADAPTERS_FOLLOW_BASE_SINCE = date(2023, 11, 2)
"""huggingface/peft v0.6.0 (tagged 2023-11-02; b786b884f of 2023-09-12 on main): `update_layer`
ends with `self.to(weight.device, dtype=weight.dtype)` on a floating-point base, so the adapters
take the base layer's 16-bit dtype; up to v0.5.0 (tagged 2023-08-22) it ends with
`self.to(self.weight.device)`, so the `nn.Linear` adapters stay in torch's default fp32 on any
base, and `forward` copies their input to it (`x = x.to(self.lora_A[...].weight.dtype)`,
src/peft/tuners/lora.py @v0.4.0 and @v0.5.0)."""

PEFT_UPCASTS_ADAPTERS_SINCE = date(2024, 7, 24)
"""huggingface/peft v0.12.0 (e6cd24c9, tagged 2024-07-24): `get_peft_model(...,
autocast_adapter_dtype=True)`, the default, casts float16 and bfloat16 adapter weights to float32
(tuners_utils.py `_cast_adapter_dtype`: "Currently, this only upcasts float16 and bfloat16 to
float32"); v0.11.1 had no such argument, and adapters took the base layer's dtype."""

LLAMAFACTORY_PURE_BF16_ADAPTERS_SINCE = date(2026, 8, 13)
"""hiyouga/LLaMA-Factory bc4b42ce: `get_peft_model(model, peft_config,
autocast_adapter_dtype=cast_trainable_params_to_fp32)`, False under `pure_bf16`
(src/llamafactory/model/adapter.py): a pure-bf16 run's adapters stay bf16. Before, peft's default
upcast them."""

BITSANDBYTES_4BIT_DROPS_INPUT_SINCE = date(2024, 7, 23)
"""bitsandbytes v0.43.2 (tagged 2024-07-23), with 9e753741 ("fix QLoRA mem bug: delete useless
buffered activation", #1270, 2024-07-16): `MatMul4Bit.forward` stores `ctx.tensors = (None, B)`,
no longer the input `A`, which its backward never read (autograd/_functions.py; the same at
95f9af30)."""

LITGPT_BITSANDBYTES_DROPS_4BIT_INPUT_SINCE = date(2024, 12, 28)
"""Lightning-AI/litgpt d2ed13c3 ("Bump PyTorch, PyTorch-Lightning and BnB versions", #1893,
2024-12-28): pyproject.toml requires `bitsandbytes >=0.44.0,<0.44.2` on Linux. Before it litgpt
pinned `bitsandbytes==0.42.0` (929f9c79, 2024-03-15) and `==0.41.0` before that (2bcb2c3e), so a
litgpt install kept the 4-bit base's input (`BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`) until then,
whatever bitsandbytes had released."""


def bitsandbytes_drops_4bit_input(framework: Framework, on: date | None) -> bool:
    """`MatMul4Bit` of the bitsandbytes that `framework` installed on `on`'s date (None:
    today's) no longer keeps its input: the release itself (`BITSANDBYTES_4BIT_DROPS_INPUT_SINCE`),
    or litgpt's pin of it (`LITGPT_BITSANDBYTES_DROPS_4BIT_INPUT_SINCE`)."""
    since = LITGPT_BITSANDBYTES_DROPS_4BIT_INPUT_SINCE if framework is Framework.LITGPT \
        else BITSANDBYTES_4BIT_DROPS_INPUT_SINCE
    return on is None or on >= since
