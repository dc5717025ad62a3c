"""QLoRA's preparation for k-bit training at load: peft's `prepare_model_for_kbit_training` gives
the unquantized 16-bit parameters fp32 copies, TRL (until 2025-12-04) and axolotl cast the
embeddings and head back, and the caching allocator keeps what was freed on the way
(`vramplan.training.allocations.load._upcast_and_back`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from vramplan.allocator import EventKind, replay
from vramplan.model.hf_config import parse_config
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.presets.frameworks.defaults import framework_defaults
from vramplan.training.allocations.load import allocator_warmup_bytes
from vramplan.training.allocations.program import Sharding
from vramplan.training.allocations.step import step_program
from vramplan.training.result import step_shape
from vramplan.training.setup import TrainingSetup, upcasts_at_load
from vramplan.validation import read_cases, training_setup_of
from vramplan.vocab import Framework, Method, Quant

MID: dict[str, Any] = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816,
                       "num_hidden_layers": 4, "num_attention_heads": 16,
                       "num_key_value_heads": 4, "vocab_size": 32000,
                       "max_position_embeddings": 4096, "tie_word_embeddings": False}
"""Embedding and head of 32,000 x 1,024 values each: 65,536,000 bytes in bf16, 131,072,000 in
fp32, both over the allocator's 10 MiB large-allocation threshold."""

TWO_MIB = 2 * 1024 * 1024
BF16_SEGMENT = 32 * TWO_MIB  # 65,536,000 bytes rounded up to 2 MiB: 67,108,864
FP32_SEGMENT = 63 * TWO_MIB  # 131,072,000 bytes rounded up to 2 MiB: 132,120,576


def _setup(framework: Framework = Framework.HF, **extra: Any) -> TrainingSetup:
    return TrainingSetup(method=Method.QLORA, quant=Quant.NF4, lora_rank=8,
                         lora_targets=parse_lora_targets("q;v"), batch=1, seq_len=128,
                         framework=framework, gradient_accumulation=False, **extra)


def _load(setup: TrainingSetup, sharding: Sharding | None = None) -> list[Any]:
    arch = parse_config(MID)
    shape = step_shape(arch, setup)
    if sharding is None:
        return step_program(arch, setup, shape, steps=0)
    return step_program(arch, setup, shape, sharding, steps=0)


def _alloc_sizes(events: list[Any]) -> list[int]:
    return [e.n_bytes for e in events if e.kind is EventKind.ALLOC]


def test_the_embedding_and_head_get_fp32_copies_then_16_bit_ones() -> None:
    events = _load(_setup(kbit_upcast=True))
    sizes = _alloc_sizes(events)
    # the load (2 x 65,536,000), the fp32 copies (2 x 131,072,000), the casts back (2 x ...)
    assert sizes.count(131_072_000) == 2
    assert sizes.count(65_536_000) == 4
    plain = _alloc_sizes(_load(_setup(kbit_upcast=False)))
    assert plain.count(131_072_000) == 0 and plain.count(65_536_000) == 2


def test_todays_peft_empties_the_cache_after_the_upcast() -> None:
    plain = replay(_load(_setup(kbit_upcast=False)))
    upcast = replay(_load(_setup(kbit_upcast=True)))
    # peak: both 16-bit originals, freed but cached, and both fp32 copies
    assert upcast.peak_reserved_bytes - plain.peak_reserved_bytes == 2 * FP32_SEGMENT
    # empty_cache releases the two 16-bit segments; the embedding's 16-bit copy takes a new
    # one, the head's is carved from the freed fp32 embedding; both fp32 segments stay
    assert upcast.reserved_bytes - plain.reserved_bytes == 2 * FP32_SEGMENT - BF16_SEGMENT
    # requested at the head's cast: the embedding in fp32 only, the head in both dtypes, the
    # final norm (1,024 values) in fp32 only
    assert upcast.peak_requested_bytes - plain.peak_requested_bytes == \
        131_072_000 - 65_536_000 + 131_072_000 + 1024 * (4 - 2)


def test_older_peft_keeps_the_16_bit_originals_cached() -> None:
    before = _setup(kbit_upcast=True, code_date=date(2025, 10, 20))
    plain = replay(_load(_setup(kbit_upcast=False)))
    upcast = replay(_load(before))
    # the casts back reuse the cached 16-bit segments: nothing is released
    assert upcast.reserved_bytes - plain.reserved_bytes == 2 * FP32_SEGMENT


def test_sharded_weights_are_not_prepared() -> None:
    # TRL's `is_sharded_qlora`, axolotl under FSDP or ZeRO-3: no fp32 copy
    sizes = _alloc_sizes(_load(_setup(kbit_upcast=True), Sharding(weights=2, gradients=2,
                                                                    states=2)))
    assert 32_768_000 in sizes  # the embedding's and the head's 16-bit shards
    assert 65_536_000 not in sizes and 131_072_000 not in sizes


@pytest.mark.parametrize(("framework", "prepares"), [
    (Framework.HF, False), (Framework.ACCELERATE, False), (Framework.AXOLOTL, True),
    (Framework.LLAMAFACTORY, False), (Framework.TORCHTUNE, False), (Framework.LITGPT, False)])
def test_which_frameworks_prepare_by_default(framework: Framework, prepares: bool) -> None:
    assert framework_defaults(framework).kbit_upcast_at_load is prepares
    assert upcasts_at_load(_setup(framework)) is prepares


def test_only_qlora_is_prepared_and_a_run_can_say_otherwise() -> None:
    assert upcasts_at_load(_setup(Framework.HF, kbit_upcast=True))
    assert not upcasts_at_load(_setup(Framework.AXOLOTL, kbit_upcast=False))
    lora = replace(_setup(Framework.AXOLOTL), method=Method.LORA, quant=Quant.NONE)
    assert not upcasts_at_load(lora)


HEADER = ("id,source,model,method,precision,optimizer,optimizer_impl,quant,lora_r,lora_targets,"
          "batch,seq_len,new_tokens,checkpointing,attention,loss,gpus,gpu,sharding,offload,"
          "framework,metric,measured,unit,notes")
ROW = ("x,src,llama-2-7b,qlora,bf16-true,adamw,,nf4,8,q;v,1,512,,full,sdpa,,1,a100-40gb,none,"
       "none,hf,reserved,10,GB,")


def test_a_row_whose_notes_name_the_preparation_is_prepared() -> None:
    named_row = ROW + '"SFTTrainer -> prepare_model_for_kbit_training"'
    (named,) = read_cases("\n".join((HEADER, named_row)))
    (silent,) = read_cases("\n".join((HEADER, ROW + '"SFTTrainer"')))
    assert training_setup_of(named).kbit_upcast is True
    assert training_setup_of(silent).kbit_upcast is None


def test_transformers_warms_the_allocator_up_before_loading_a_4_bit_base() -> None:
    """`caching_allocator_warmup` (transformers v4.50.0 on): one fp16 `torch.empty` of half the
    meta model's bytes (its linears at full shape in bf16: factor 4 for a quantizer), freed at
    once, before the weights load into its cached segment."""
    arch = parse_config(MID)
    events = _load(_setup(kbit_upcast=False))
    first, then = events[0], events[1]
    assert first.kind is EventKind.ALLOC and first.n_bytes == arch.params_total
    assert then.kind is EventKind.FREE and then.tensor == first.tensor
    assert allocator_warmup_bytes(arch, _setup()) == arch.params_total
    # before v4.50.0, for a 16-bit LoRA base, and for torchtune's own loader: none
    assert allocator_warmup_bytes(arch, _setup(code_date=date(2025, 3, 20))) == 0
    assert allocator_warmup_bytes(arch, replace(_setup(), method=Method.LORA,
                                                quant=Quant.NONE)) == 0
    assert allocator_warmup_bytes(arch, _setup(Framework.TORCHTUNE)) == 0


HEADROOM = round(1.2 * 2**30)


@pytest.mark.parametrize(("day", "cap", "headroom"), [
    (date(2025, 5, 19), lambda free: int(0.95 * free), 0),  # v4.50.0 to v4.51.x
    (date(2025, 5, 20), lambda free: free - HEADROOM, HEADROOM),  # v4.52.0 on
])
def test_the_warm_up_is_capped_by_what_the_card_has_free(
        day: date, cap: Callable[[int], int], headroom: int) -> None:
    """transformers caps the warm-up's byte count by `torch.cuda.mem_get_info`'s free memory
    before dividing it by the factor (4 for bitsandbytes), then allocates that many fp16
    elements: 2 x (min(bytes, cap) // 4) bytes."""
    arch = parse_config(MID)
    setup = _setup(code_date=day)
    whole = 2 * arch.params_total  # the meta model in bf16
    assert allocator_warmup_bytes(arch, setup) == 2 * (whole // 4)
    free = whole // 2 + headroom  # a card with less free than the 16-bit model
    assert cap(free) < whole
    capped = replace(setup, card_free_bytes=free)
    assert allocator_warmup_bytes(arch, capped) == 2 * (cap(free) // 4)


def test_an_fp32_load_keeps_the_unquantized_parameters_in_fp32() -> None:
    """bitsandbytes quantizes the blocks' linears only: with `torch_dtype` float32 (axolotl's
    default without bf16 or fp16, `amp` and `fp32` here) the embeddings, norms and head stay
    fp32, twice their 16-bit bytes."""
    from vramplan.training.states import model_states
    from vramplan.vocab import Precision

    arch = parse_config(MID)
    bf16 = model_states(arch, _setup()).frozen_weight_bytes
    fp32 = model_states(arch, replace(_setup(), precision=Precision.FP32)).frozen_weight_bytes
    linears = sum(lin.in_features * lin.out_features * lin.count * layers
                  for lin, layers in arch.model_linears())
    assert fp32 - bf16 == 2 * (arch.params_total - linears)
