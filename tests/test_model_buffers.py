"""The model's own device buffers that older code kept: per-layer rotary cos and sin tables, counted
by hand from the code that built them (transformers' wheels v4.32.0 to v4.48.0,
models/llama/modeling_llama.py `LlamaRotaryEmbedding._set_cos_sin_cache`; unslothai/unsloth
unsloth/models/llama.py `LlamaRotaryEmbedding`, `LongRopeRotaryEmbedding`), and v4.38's one
causal mask of `max_position_embeddings`^2 elements (the v4.38.0 to v4.38.2 wheels,
`LlamaModel.__init__` and `GemmaModel.__init__`)."""

from __future__ import annotations

from datetime import date

import pytest

from vramplan.distributed.parallelism import Parallelism
from vramplan.distributed.sharding import shard_model_states
from vramplan.model.hf_config import parse_config
from vramplan.parts import PartKind
from vramplan.presets.frameworks.unsloth import unsloth_code, unsloth_release_date
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.setup import TrainingSetup
from vramplan.training.states import model_states
from vramplan.validation import estimate_inference_case
from vramplan.vocab import Framework, FsdpVersion, Method, Precision, Scheme

LLAMA_2_7B_TABLES = 32 * 2 * 4096 * 128 * 2
"""32 layers x (cos, sin) x 4096 positions x 128 rotary dims x 2 bytes (bf16)."""


def _buffers(model: str, framework: Framework, day: date | None,
             precision: Precision = Precision.BF16_TRUE) -> int:
    setup = TrainingSetup(method=Method.LORA, precision=precision, framework=framework,
                          code_date=day)
    return model_states(architecture_of(find_model(model)), setup).buffer_bytes


@pytest.mark.parametrize(("framework", "day", "expected"), [
    (Framework.HF, date(2024, 5, 16), LLAMA_2_7B_TABLES),
    (Framework.HF, date(2024, 5, 17), 0),  # v4.41.0: computed per forward
    (Framework.HF, None, 0),  # today's code
    (Framework.AXOLOTL, date(2024, 1, 10), LLAMA_2_7B_TABLES),  # transformers' model code
    (Framework.LITGPT, date(2024, 1, 10), 0),  # litgpt's own model: one table for the model
    # torchtune: its own fp32 caches of [4096, 64, 2], one per layer then (below), no tables
    (Framework.TORCHTUNE, date(2024, 1, 10), 32 * 4096 * 64 * 2 * 4),
])
def test_llama_layers_kept_rotary_tables_until_v4_41(framework: Framework, day: date | None,
                                                     expected: int) -> None:
    assert _buffers("llama-2-7b", framework, day) == expected


def test_the_tables_take_the_dtype_the_model_was_built_in() -> None:
    # `torch.get_default_dtype()` at construction: fp32 without a torch_dtype (fp32 weights)
    assert _buffers("llama-2-7b", Framework.HF, date(2024, 1, 10),
                    Precision.AMP) == 2 * LLAMA_2_7B_TABLES


@pytest.mark.parametrize(("model", "day", "expected"), [
    ("mistral-7b", date(2024, 6, 26), 32 * 2 * 32768 * 128 * 2),  # until v4.42.0
    ("mistral-7b", date(2024, 6, 27), 0),
    ("qwen2-7b", date(2024, 9, 24), 28 * 2 * 131072 * 128 * 2),  # until v4.45.0
    ("qwen2-7b", date(2024, 9, 25), 0),
    ("mixtral-8x7b", date(2025, 1, 9), 32 * 2 * 32768 * 128 * 2),  # until v4.48.0
    ("mixtral-8x7b", date(2025, 1, 10), 0),
    ("gemma-2b", date(2024, 3, 20), 0),  # GemmaRotaryEmbedding kept no tables
])
def test_each_family_kept_its_tables_until_its_release(model: str, day: date,
                                                       expected: int) -> None:
    assert _buffers(model, Framework.HF, day) == expected


@pytest.mark.parametrize(("model", "day", "expected"), [
    # Unsloth's own module, one per layer, max_position_embeddings rows before 54dd81de
    ("mistral-7b", date(2024, 5, 1), 32 * 2 * 32768 * 128 * 2),
    ("gemma-2b", date(2024, 3, 20), 18 * 2 * 8192 * 256 * 2),  # gemma.py points Gemma's at it
    # at most 4 x 8192 rows from 2024-07-18 (Llama 3.2: 131072 positions)
    ("llama-3.2-3b", date(2024, 10, 1), 28 * 2 * 32768 * 128 * 2),
    # LongRoPE: the short-context tables of original_max_position_embeddings rows only
    ("phi-3.5-mini", date(2024, 8, 1), 32 * 2 * 4096 * 96 * 2),
    # 63782ea3 (2025-01-07): every layer uses the model's one module
    ("llama-3.2-3b", date(2025, 1, 7), 0),
])
def test_unsloths_rotary_tables(model: str, day: date, expected: int) -> None:
    assert _buffers(model, Framework.UNSLOTH, day) == expected


def test_unsloth_2025_1_5_is_the_first_release_with_shared_tables() -> None:
    assert unsloth_code(unsloth_release_date((2025, 1, 4))).rope_tables_per_layer
    assert not unsloth_code(unsloth_release_date((2025, 1, 5))).rope_tables_per_layer


def test_longrope_reads_the_original_context() -> None:
    config = {"model_type": "phi3", "hidden_size": 64, "intermediate_size": 128,
              "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
              "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
              "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 8,
                               "long_factor": [2.0] * 8}}
    assert parse_config(config).longrope_positions == 4096
    assert parse_config(config | {"rope_scaling": None}).longrope_positions is None


def test_an_inference_with_rotary_tables_holds_them_among_its_buffers() -> None:
    def buffers(**kwargs: bool) -> int:
        estimate = estimate_inference_case("llama-2-7b", "fp16-true", "none", batch=1,
                                           seq_len=512, new_tokens=1, framework="hf", **kwargs)
        return sum(item.bytes for item in estimate.items if item.part is PartKind.ENGINE_BUFFERS)

    assert buffers(rope_tables=True) - buffers() == LLAMA_2_7B_TABLES


@pytest.mark.parametrize(("method", "day", "expected"), [
    # Llama-2-7B's largest block linear, 11008 x 4096: bf16 values and one fp32 absmax per
    # 64-value block
    (Method.QLORA, date(2025, 2, 6), 11008 * 4096 * 2 + 11008 * 4096 // 64 * 4),
    (Method.QLORA, date(2025, 2, 5), 0),  # before 144190bd (and after the shared tables)
    (Method.LORA, date(2025, 2, 6), 0),  # nothing to dequantize
])
def test_unsloths_global_dequantization_buffer(method: Method, day: date, expected: int) -> None:
    setup = TrainingSetup(method=method, precision=Precision.BF16_TRUE,
                          framework=Framework.UNSLOTH, code_date=day)
    assert model_states(architecture_of(find_model("llama-2-7b")), setup).buffer_bytes == expected


@pytest.mark.parametrize(("version", "expected"), [
    # accelerate's policy: MixedPrecision(param_dtype=bf16, reduce_dtype=bf16, buffer_dtype=bf16);
    # FSDP1 replaces each floating buffer by its cast in the first forward
    (FsdpVersion.FSDP1, LLAMA_2_7B_TABLES),
    # fully_shard's MixedPrecisionPolicy has no buffer dtype: the fp32 tables stay
    (FsdpVersion.FSDP2, 2 * LLAMA_2_7B_TABLES),
])
def test_fsdp1s_mixed_precision_policy_casts_the_tables(version: FsdpVersion,
                                                        expected: int) -> None:
    setup = TrainingSetup(method=Method.FULL, precision=Precision.AMP, framework=Framework.HF,
                          code_date=date(2024, 1, 10))
    states = model_states(architecture_of(find_model("llama-2-7b")), setup)
    assert states.buffer_bytes == states.float_buffer_bytes == 2 * LLAMA_2_7B_TABLES
    plan = Parallelism(scheme=Scheme.FSDP, gpus=2, fsdp_version=version,
                       params_cast_for_compute=True)
    assert shard_model_states(states, plan).module_buffers_bytes == expected


@pytest.mark.parametrize(("model", "framework", "day", "expected"), [
    # v4.38.0/v4.38.1: int64, 8192^2 x 8 bytes = 512 MiB for Gemma's 8192 positions
    ("gemma-2b", Framework.HF, date(2024, 2, 21), 8192 ** 2 * 8),
    ("gemma-2b", Framework.HF, date(2024, 3, 1), 8192 ** 2),  # v4.38.2: bool
    ("gemma-2b", Framework.HF, date(2024, 3, 20), 0),  # v4.39.0: built per forward
    ("gemma-2b", Framework.UNSLOTH, date(2024, 3, 1), 8192 ** 2  # built by from_pretrained
     + 18 * 2 * 8192 * 256 * 2),  # beside Unsloth's own rotary tables
    ("mistral-7b", Framework.HF, date(2024, 3, 1), 32 * 2 * 32768 * 128 * 2),  # tables, no mask
    ("gemma-2b", Framework.LITGPT, date(2024, 3, 1), 0),  # litgpt's own model
])
def test_v4_38_kept_one_causal_mask_of_every_position(model: str, framework: Framework,
                                                      day: date, expected: int) -> None:
    assert _buffers(model, framework, day) == expected


def test_llama_keeps_its_mask_beside_its_rotary_tables() -> None:
    assert _buffers("llama-2-7b", Framework.HF, date(2024, 3, 1)) \
        == LLAMA_2_7B_TABLES + 4096 ** 2


# torchtune's RotaryPositionalEmbeddings: an fp32 cache of [max_seq_len, head_dim / 2, 2]
# (torchtune/modules/position_embeddings.py `build_rope_cache`), one per layer while the builders
# deep-copied a template layer (before b0895a798, 2024-09-12), one shared since
LLAMA_2_7B_TT_CACHE = 4096 * 64 * 2 * 4
"""4,096 positions x 64 frequencies x (cos, sin) x 4 bytes: 2 MiB."""


@pytest.mark.parametrize(("model", "day", "expected"), [
    ("llama-2-7b", date(2024, 4, 15), 32 * LLAMA_2_7B_TT_CACHE),  # ff594c231: per layer
    ("llama-2-7b", date(2024, 9, 12), LLAMA_2_7B_TT_CACHE),  # one module for every layer
    ("llama-2-7b", None, LLAMA_2_7B_TT_CACHE),
    ("llama-3.2-3b", date(2024, 11, 18), 131072 * 64 * 2 * 4),  # 64 MiB at Llama 3.2's context
    # Phi-3's module caches cos and sin over the whole head: [4096, 2 x 96]
    ("phi-3-mini-4k", date(2024, 6, 1), 32 * 4096 * 2 * 96 * 4),
])
def test_torchtunes_rotary_caches(model: str, day: date | None, expected: int) -> None:
    assert _buffers(model, Framework.TORCHTUNE, day) == expected


def test_torchtunes_rotary_caches_in_a_generate_rows_buffers() -> None:
    """tt-e2e-llama-2-7b-generate-bf16-kv4096-new300 (2024-04-04): 32 caches of 2 MiB."""
    def estimate(modules: int) -> int:
        return estimate_inference_case("llama-2-7b", "bf16-true", "none", batch=1, seq_len=8,
                                       new_tokens=300, framework="torchtune",
                                       torchtune_rope_modules=modules).allocated_bytes
    assert estimate(32) - estimate(0) == 32 * LLAMA_2_7B_TT_CACHE
