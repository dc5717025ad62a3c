"""Families whose code is the checkpoint's own (`vramplan.model.hf_remote_code`): transformers
cannot build them on the meta device, so each count is checked by hand and against the size its
checkpoint publishes."""

from __future__ import annotations

from datetime import date

import pytest

from vramplan.model.architecture import MlpKind
from vramplan.model.hf_common import InvalidConfigValue
from vramplan.model.hf_config import parse_config
from vramplan.model.hf_remote_code import REMOTE_CODE_TYPES
from vramplan.presets.models import MODELS, architecture_of, find_model

# `metadata.total_size` of the checkpoint's index, 2 bytes a parameter: Qwen-7B
# (model.safetensors.index.json, bf16) from the Hub repository's mirror
# github.com/zhangningboo/Qwen-7B @abcb6d6, Qwen-72B from the
# ModelScope repository's mirror github.com/mapengAdam/qianwen-72B @3334bfe; Baichuan2-13B-Chat
# (pytorch_model.bin.index.json, bf16) from the Hub repository's mirror
# github.com/jrd77/Baichuan2-13B-Chat @99fe8c0f
PUBLISHED_BYTES = {"qwen-7b": 15_442_649_088, "qwen-72b": 144_575_840_256,
                   "baichuan2-13b-chat": 27_793_336_320}


@pytest.mark.parametrize(("name", "size"), PUBLISHED_BYTES.items())
def test_count_equals_the_published_checkpoint(name: str, size: int) -> None:
    assert architecture_of(find_model(name)).params_total * 2 == size


@pytest.mark.parametrize("name", ["chatglm2-6b", "chatglm3-6b"])
def test_chatglm_count_is_the_checkpoint_less_its_persistent_rotary_buffer(name: str) -> None:
    # pytorch_model.bin.index.json (fp16) of both repositories' mirrors: 12,487,168,064 bytes,
    # which include `rotary_pos_emb.inv_freq`, registered persistent: 32 fp16 values, no parameter
    assert architecture_of(find_model(name)).params_total * 2 + 32 * 2 == 12_487_168_064


def test_internlm2_5_count_is_the_hubs() -> None:
    # HfApi().get_safetensors_metadata("internlm/internlm2_5-7b-chat").parameter_count["BF16"],
    # printed in a third-party model list and, as 7737708544, in a tool's README
    assert architecture_of(find_model("internlm2.5-7b-chat")).params_total == 7_737_708_544


def _qwen_by_hand(vocab: int, hidden: int, layers: int, ffn: int) -> int:
    """modeling_qwen.py: c_attn (h x 3h and its bias), c_proj (h x h), w1 and w2 (h x ffn/2),
    the MLP's c_proj (ffn/2 x h), ln_1 and ln_2; wte, lm_head and ln_f."""
    half = ffn // 2
    block = hidden * 3 * hidden + 3 * hidden + hidden * hidden + 3 * hidden * half + 2 * hidden
    return layers * block + 2 * vocab * hidden + hidden


@pytest.mark.parametrize(("name", "shape"), [
    ("qwen-1.8b", (151_936, 2048, 24, 11_008)),
    ("qwen-7b", (151_936, 4096, 32, 22_016)),
    ("qwen-72b", (152_064, 8192, 80, 49_152)),
])
def test_qwen_count_by_hand(name: str, shape: tuple[int, int, int, int]) -> None:
    assert architecture_of(find_model(name)).params_total == _qwen_by_hand(*shape)


def test_qwen_layout() -> None:
    arch = architecture_of(find_model("qwen-7b"))
    assert arch.intermediate_size == 11_008  # w1, w2: intermediate_size // 2
    assert arch.mlp is MlpKind.GATED and arch.fused_qkv and arch.qkv_bias
    assert not (arch.attn_out_bias or arch.mlp_bias or arch.tied_embeddings)
    assert arch.n_kv_heads == arch.n_heads == 32


_TINY_QWEN = {"model_type": "qwen", "hidden_size": 64, "num_attention_heads": 4,
              "kv_channels": 16, "num_hidden_layers": 2, "intermediate_size": 96,
              "vocab_size": 100, "max_position_embeddings": 32}


def test_qwen_biases_follow_no_bias_but_c_attn_always_has_one() -> None:
    plain = parse_config(_TINY_QWEN)
    biased = parse_config({**_TINY_QWEN, "no_bias": False})
    assert plain.qkv_bias and not plain.attn_out_bias
    # c_proj of the attention (64) and w1, w2, c_proj of the MLP (48 + 48 + 64)
    assert biased.params_total - plain.params_total == 2 * (64 + 48 + 48 + 64)


def test_qwen_refuses_a_projection_wider_than_the_hidden_size() -> None:
    # QWenAttention splits c_attn's output at hidden_size: kv_channels x heads must equal it
    with pytest.raises(InvalidConfigValue):
        parse_config({**_TINY_QWEN, "kv_channels": 32})


def test_chatglm_by_hand() -> None:
    arch = architecture_of(find_model("chatglm3-6b"))
    # query_key_value 4096 -> 4096 + 2 x 2 x 128 with its bias, dense 4096 -> 4096,
    # dense_h_to_4h 4096 -> 2 x 13696, dense_4h_to_h 13696 -> 4096, two RMSNorms
    block = 4096 * 4608 + 4608 + 4096 * 4096 + 4096 * 27392 + 13696 * 4096 + 2 * 4096
    assert block == 203_960_832
    assert arch.params_total == 28 * block + 2 * 65024 * 4096 + 4096
    assert (arch.n_kv_heads, arch.rotary_dim, arch.fused_gate_up) == (2, 64, True)


def test_chatglm_refuses_a_residual_it_does_not_model() -> None:
    config = {"model_type": "chatglm", "num_layers": 2, "hidden_size": 64,
              "num_attention_heads": 4, "ffn_hidden_size": 96, "padded_vocab_size": 100,
              "seq_length": 32, "apply_residual_connection_post_layernorm": True}
    with pytest.raises(InvalidConfigValue):
        parse_config(config)


def test_baichuan_positions_follow_the_file_its_config_belongs_to() -> None:
    from vramplan.model.architecture import PositionKind

    tiny = {"model_type": "baichuan", "hidden_size": 64, "num_attention_heads": 4,
            "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 100}
    # the 13B file: ALiBi over `model_max_length`; the 7B file: RoPE, `max_position_embeddings`
    assert parse_config({**tiny, "model_max_length": 32}).position is PositionKind.ALIBI
    assert parse_config({**tiny, "model_max_length": 32,
                         "max_position_embeddings": 64}).position is PositionKind.ROPE


def test_every_remote_code_preset_is_listed_here() -> None:
    remote = {preset.name for preset in MODELS if preset.family in REMOTE_CODE_TYPES}
    assert remote == {"qwen-1.8b", "qwen-7b", "qwen-72b", "chatglm2-6b", "chatglm3-6b",
                      "baichuan2-13b-chat", "internlm2.5-7b-chat"}


# --- the checkpoint's own code at run time ------------------------------------------------------


def test_qwens_own_loss_shifts_its_16_bit_logits_whatever_the_release() -> None:
    from datetime import date

    from vramplan.training.setup import TrainingSetup, model_loss_code
    from vramplan.vocab import Framework, Method, Precision

    for on in (date(2023, 10, 11), None):
        setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                              seq_len=256, framework=Framework.HF, code_date=on)
        qwen, llama = model_loss_code(setup, "qwen"), model_loss_code(setup, "llama")
        # modeling_qwen.py: `shift_logits = lm_logits[..., :-1, :].contiguous()`, no `.float()`
        assert qwen.shifts_logits and "qwen" in qwen.loss_16bit
        assert not qwen.logits_fp32_in_model
        assert "llama" not in llama.loss_16bit


@pytest.mark.parametrize(("model_type", "upcasts"), [("chatglm", True), ("internlm2", True),
                                                     ("baichuan", False)])
def test_each_remote_codes_own_loss(model_type: str, upcasts: bool) -> None:
    from vramplan.training.setup import TrainingSetup, model_loss_code
    from vramplan.vocab import Framework, Method, Precision

    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=256, framework=Framework.HF)
    code = model_loss_code(setup, model_type)
    assert code.shifts_logits and code.logits_fp32_in_model is upcasts
    assert (model_type in code.loss_16bit) is not upcasts


def test_baichuans_norm_head_keeps_a_normalized_copy_of_the_head() -> None:
    # NormHead: `norm_weight = nn.functional.normalize(self.weight)` in every training forward,
    # kept by F.linear for backward: 125,696 x 5,120 bf16 values beside the logits
    from dataclasses import replace

    from vramplan.training.setup import TrainingSetup
    from vramplan.training.specs import head_spec
    from vramplan.vocab import Framework, Method, Precision

    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=256, framework=Framework.HF)
    baichuan = architecture_of(find_model("baichuan2-13b-chat"))
    assert head_spec(baichuan, setup).head_dequant_bytes == 2 * 125_696 * 5_120
    # litgpt builds its own head; Qwen's is a plain nn.Linear
    assert head_spec(baichuan, replace(setup, framework=Framework.LITGPT)) \
        .head_dequant_bytes == 0
    assert head_spec(architecture_of(find_model("qwen-7b")), setup).head_dequant_bytes == 0


def test_qwens_generate_keeps_two_caches_of_views_and_every_16_bit_logit() -> None:
    from vramplan.inference.setup import transformers_generate_settings
    from vramplan.presets.frameworks.transformers import transformers_code
    from vramplan.vocab import ComputeDtype

    arch = architecture_of(find_model("qwen-7b"))
    for on in (None,):  # today's transformers: no legacy cache, no full logits of its own
        settings = transformers_generate_settings(arch, transformers_code(on), ComputeDtype.BF16)
        assert settings.previous_cache_alive and settings.fused_qkv_cache_views
        assert settings.prompt_logits_bytes == 2


def test_qwen_7b_generate_peaks_as_the_qwen_readme_measured() -> None:
    # QwenLM/Qwen README.md @235aa8f (2023-10-16), Qwen-7B-Chat BF16 on one A100, the peak of
    # torch.cuda.max_memory_allocated (GiB): 16.99 encoding 2048 tokens and generating one,
    # 22.53 generating 8192 from one token (rows qwen-readme-7b-chat-bf16-* of
    # cases_vramplan.csv); the legacy tuple cache is held twice during a decode step
    from vramplan.validation import SHIPPED_CASE_FILES, parse_cases, score_cases, shipped_cases

    cases = [case for name in SHIPPED_CASE_FILES for case in parse_cases(shipped_cases(name)).cases
             if case.id.startswith("qwen-readme-7b-chat-bf16-")]
    errors = [score.error_pct for score in score_cases(cases, ()).scores]
    assert len(errors) == 2
    assert all(error is not None and abs(error) < 2 for error in errors)


def test_every_remote_code_reader_says_how_its_code_runs() -> None:
    from vramplan.presets.frameworks.transformers import REMOTE_CODE

    assert set(REMOTE_CODE) == REMOTE_CODE_TYPES


@pytest.mark.parametrize(("model_type", "on", "casts"), [
    ("qwen", date(2023, 12, 14), True),  # Qwen's own 16-bit loss, under the Trainer's bf16
    ("baichuan", None, True),  # the remote file's loss, whatever the release
    ("opt", date(2024, 1, 1), True),  # OPT's 16-bit loss before v4.49
    ("opt", date(2025, 3, 1), False),  # ForCausalLMLoss since v4.49: labels shifted, upcast
    ("llama", date(2024, 1, 1), False),  # upcast in the model since v4.31
    ("chatglm", None, False),  # ChatGLM upcasts its logits itself
])
def test_autocast_casts_a_16_bit_loss_after_its_shift(model_type: str, on: date | None,
                                                      casts: bool) -> None:
    from vramplan.training.setup import TrainingSetup, autocast_casts_shifted_logits
    from vramplan.vocab import Framework, Method, Precision

    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=256, framework=Framework.HF, code_date=on)
    assert autocast_casts_shifted_logits(setup, model_type) is casts
    # a loop without autocast runs the 16-bit loss as it is
    plain = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=256, framework=Framework.HF, code_date=on, no_autocast=True)
    assert not autocast_casts_shifted_logits(plain, model_type)


def test_the_shifted_16_bit_loss_under_autocast_by_hand() -> None:
    # 16-bit logits E, their shifted 16-bit copy S, its fp32 cast, the fp32 log-softmax; then
    # accelerate's fp32 copy of the returned logits beside the 16-bit ones and the log-softmax
    from vramplan.training.setup import TrainingSetup
    from vramplan.training.specs import head_spec
    from vramplan.vocab import Framework, Method, Precision

    arch = architecture_of(find_model("qwen-1.8b"))
    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=1024, framework=Framework.HF, code_date=date(2023, 12, 14))
    head = head_spec(arch, setup)
    assert head.shift_cast_by_autocast and head.outputs_copied_fp32
    from vramplan.training.activations.head import _shifted_16bit_loss_under_autocast

    every, shifted = 151_936 * 1024, 151_936 * 1023
    loss = _shifted_16bit_loss_under_autocast(head, saved=0, every=every, shifted=shifted,
                                              compute=2, softcap=0)
    assert loss.forward_peak_bytes == max(2 * every + 2 * shifted + 4 * shifted + 4 * shifted,
                                          2 * every + 4 * every + 4 * shifted)
    assert loss.backward_peak_bytes == max(3 * 4 * shifted, 4 * shifted + 2 * shifted,
                                           2 * (shifted + every))
