"""`vramplan trace` on tiny models: fake steps count what real steps allocate, byte for byte.

Every expected number below is computed from the tiny configs defined here (parameter shapes times
bytes per value, each allocation rounded up to 512 bytes as the CUDA caching allocator does:
c10/cuda/CUDACachingAllocator.cpp, kMinBlockSize = 512).
"""

from __future__ import annotations

import functools
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from vramplan.cli.main import main  # noqa: E402
from vramplan.errors import ConflictingOptions, OutOfRange, UnknownName  # noqa: E402
from vramplan.parts import PartKind  # noqa: E402
from vramplan.tracer import Phase, TraceResult, make_setup  # noqa: E402
from vramplan.tracer.run import run_trace  # noqa: E402
from vramplan.tracer.tracker import allocation_bytes  # noqa: E402

pytestmark = pytest.mark.trace

HIDDEN, INTER, LAYERS, HEADS, KV_HEADS, VOCAB = 128, 256, 2, 4, 2, 256
HEAD_DIM = HIDDEN // HEADS
LLAMA = {"model_type": "llama", "hidden_size": HIDDEN, "intermediate_size": INTER,
         "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
         "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB, "max_position_embeddings": 256,
         "tie_word_embeddings": False}
"""A 2-layer Llama whose every tensor holds a multiple of 128 values (fp32: of 512 bytes)."""
GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 256,
        "n_positions": 64, "bos_token_id": 0, "eos_token_id": 0}
FALCON = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "vocab_size": 256, "new_decoder_architecture": True,
          "num_kv_heads": 2, "bos_token_id": 0, "eos_token_id": 0}
CONFIGS = {"llama": LLAMA, "gpt2": GPT2, "falcon": FALCON}
ROPE_BUFFERS = 2 * allocation_bytes(4 * HEAD_DIM // 2)
"""LlamaRotaryEmbedding's fp32 `inv_freq` and `original_inv_freq` buffers (head_dim / 2 each)."""


def llama_shapes() -> dict[str, int]:
    """Values per parameter tensor of LLAMA, by role (from LlamaForCausalLM's modules)."""
    kv = KV_HEADS * HEAD_DIM
    per_layer = {"q": HIDDEN * HIDDEN, "k": HIDDEN * kv, "v": HIDDEN * kv, "o": HIDDEN * HIDDEN,
                 "gate": HIDDEN * INTER, "up": HIDDEN * INTER, "down": INTER * HIDDEN,
                 "norm1": HIDDEN, "norm2": HIDDEN}
    shapes = {f"{layer}.{name}": n for layer in range(LAYERS) for name, n in per_layer.items()}
    return {**shapes, "embed": VOCAB * HIDDEN, "final_norm": HIDDEN, "head": VOCAB * HIDDEN}


def trace(config: dict[str, Any] = LLAMA, *, real: bool = False, **options: Any) -> TraceResult:
    options = {"batch": 2, "seq_len": 16, **options}
    return run_trace(make_setup("tiny", config, **options), real=real)


# --- fake and real steps agree ----------------------------------------------------------------

AGREEMENT_CASES = {
    "llama-full-fp32-foreach": ("llama", {"precision": "fp32"}),
    "llama-full-mixed-fused": ("llama", {"precision": "mixed", "optimizer_impl": "fused"}),
    "llama-lora-bf16-checkpointing": ("llama", {"method": "lora", "lora_targets": "q,v,head",
                                                "checkpointing": "full"}),
    "llama-qlora-nf4dq-paged8bit": ("llama", {"method": "qlora", "quant": "nf4-dq",
                                              "optimizer": "paged-adamw-8bit"}),
    "llama-freeze-amp-eager-sgd": ("llama", {"method": "freeze", "precision": "amp",
                                             "attention": "eager",
                                             "optimizer": "sgd-momentum"}),
    "gpt2-lora-all-adafactor": ("gpt2", {"method": "lora", "lora_targets": "all",
                                         "optimizer": "adafactor"}),
    "falcon-full-for-loop": ("falcon", {"optimizer_impl": "for-loop"}),
}


@functools.cache
def fake_case(name: str) -> TraceResult:
    model, options = AGREEMENT_CASES[name]
    return trace(CONFIGS[model], **options)


@pytest.mark.parametrize("name", list(AGREEMENT_CASES), ids=list(AGREEMENT_CASES))
def test_fake_and_real_cpu_steps_count_the_same_bytes(name: str) -> None:
    model, options = AGREEMENT_CASES[name]
    fake = fake_case(name)
    real = trace(CONFIGS[model], real=True, **options)
    assert (fake.real, real.real) == (False, True)
    assert fake.peak_bytes == real.peak_bytes
    assert fake.peak_phase is real.peak_phase
    assert fake.breakdown == real.breakdown
    assert fake.phases == real.phases
    assert fake.paged_bytes == real.paged_bytes


@pytest.mark.parametrize("name", list(AGREEMENT_CASES), ids=list(AGREEMENT_CASES))
def test_breakdown_sums_to_the_peak(name: str) -> None:
    result = fake_case(name)
    assert result.breakdown.total_bytes == result.peak_bytes
    assert [p.phase for p in result.phases] == [Phase.FORWARD, Phase.LOSS, Phase.BACKWARD,
                                                Phase.OPTIMIZER_STEP, Phase.ZERO_GRAD]
    for phase in result.phases:
        assert phase.breakdown.total_bytes == phase.peak_bytes <= result.peak_bytes
    assert result.phase(result.peak_phase).peak_bytes == result.peak_bytes
    assert sum(result.breakdown.by_component().values()) == result.peak_bytes


@pytest.mark.parametrize("model", list(CONFIGS))
def test_parameter_count_equals_the_config_readers(model: str) -> None:
    """The model transformers builds has the parameters vramplan counts from config.json (a tied
    head, as GPT-2's, counts once)."""
    from vramplan.model.hf_config import parse_config

    result = trace(CONFIGS[model], seq_len=8)
    expected = parse_config(CONFIGS[model]).params_total
    assert result.params_total == result.params_trainable == expected


# --- exact model states -----------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["foreach", "fused", "for-loop"])
def test_full_fp32_adamw_holds_4n_weights_4n_grads_8n_states_at_the_step(impl: str) -> None:
    result = trace(precision="fp32", optimizer="adamw", optimizer_impl=impl)
    shapes = llama_shapes()
    n = sum(shapes.values())
    assert result.params_total == result.params_trainable == n
    at_step = result.phase(Phase.OPTIMIZER_STEP).breakdown
    assert at_step[PartKind.TRAINABLE_WEIGHTS] == 4 * n
    assert at_step[PartKind.FROZEN_WEIGHTS] == ROPE_BUFFERS
    assert at_step[PartKind.GRADIENTS] == 4 * n
    step_counters = len(shapes) * allocation_bytes(4)  # one fp32 scalar `step` per tensor
    assert at_step[PartKind.OPTIMIZER_STATES] == 8 * n + step_counters
    assert at_step[PartKind.MASTER_WEIGHTS] == 0


def test_mixed_precision_keeps_bf16_weights_and_fp32_masters() -> None:
    result = trace(precision="mixed", optimizer="adamw")
    n = sum(llama_shapes().values())
    at_step = result.phase(Phase.OPTIMIZER_STEP).breakdown
    bf16 = sum(allocation_bytes(2 * values) for values in llama_shapes().values())
    assert at_step[PartKind.TRAINABLE_WEIGHTS] == bf16  # norms: 256 bytes, rounded to 512
    assert at_step[PartKind.MASTER_WEIGHTS] == 4 * n
    assert at_step[PartKind.GRADIENTS] == 4 * n  # bf16 grads became the masters' fp32 grads
    assert at_step[PartKind.OPTIMIZER_STATES] == 8 * n + len(llama_shapes()) * 512


def test_lora_holds_gradients_only_for_adapters() -> None:
    rank = 4
    result = trace(method="lora", lora_r=rank, lora_targets="q,v")
    kv = KV_HEADS * HEAD_DIM
    adapters = LAYERS * (rank * HIDDEN + HIDDEN * rank + rank * HIDDEN + kv * rank)
    assert result.params_trainable == adapters
    assert result.params_total == sum(llama_shapes().values()) + adapters
    adapter_values = (rank * HIDDEN, HIDDEN * rank, rank * HIDDEN, kv * rank)  # q: A, B; v: A, B
    adapter_bytes = LAYERS * sum(allocation_bytes(2 * values) for values in adapter_values)
    at_step = result.phase(Phase.OPTIMIZER_STEP).breakdown
    assert at_step[PartKind.GRADIENTS] == adapter_bytes
    assert at_step[PartKind.TRAINABLE_WEIGHTS] == adapter_bytes
    assert at_step[PartKind.OPTIMIZER_STATES] == 2 * adapter_bytes + 4 * LAYERS * 512


def test_fp32_adapters_hold_4_bytes_a_value_and_keep_fp32_copies_of_their_inputs() -> None:
    """peft's default upcast (`adapters_fp32`): the adapters, their gradients and Adam's states
    in fp32; each adapted q or v copies the bf16 normalized input to fp32 for its lora_A."""
    rank = 4
    bf16, fp32 = (trace(method="lora", lora_r=rank, lora_targets="q,v", adapters_fp32=flag)
                  for flag in (False, True))
    kv = KV_HEADS * HEAD_DIM
    adapter_values = (rank * HIDDEN, HIDDEN * rank, rank * HIDDEN, kv * rank)  # q: A, B; v: A, B
    at_step = fp32.phase(Phase.OPTIMIZER_STEP).breakdown
    assert at_step[PartKind.TRAINABLE_WEIGHTS] == LAYERS * sum(
        allocation_bytes(4 * values) for values in adapter_values)
    assert fp32.params_trainable == bf16.params_trainable
    tokens = 2 * 16  # trace()'s batch and length
    saved = (fp32.phase(Phase.FORWARD).breakdown[PartKind.ACTIVATIONS]
             - bf16.phase(Phase.FORWARD).breakdown[PartKind.ACTIVATIONS])
    # two fp32 copies of the normalized input where bf16 adapters shared the bf16 one
    copies = 2 * allocation_bytes(4 * tokens * HIDDEN) - allocation_bytes(2 * tokens * HIDDEN)
    assert saved >= LAYERS * copies


def test_freeze_trains_only_the_last_block() -> None:
    result = trace(method="freeze", train_layers=1)
    block = sum(n for name, n in llama_shapes().items() if name.startswith(f"{LAYERS - 1}."))
    assert result.params_trainable == block


def test_qlora_stores_packed_4bit_weights_with_their_constants() -> None:
    result = trace(method="qlora", quant="nf4", lora_r=4, lora_targets="q")
    shapes = llama_shapes()
    linears = [n for name, n in shapes.items() if name.split(".")[-1] in
               ("q", "k", "v", "o", "gate", "up", "down")]
    packed = sum(allocation_bytes(n // 2) + allocation_bytes(4 * -(-n // 64)) + 512
                 for n in linears)  # uint8 pairs, fp32 absmax per 64, 16-entry fp32 code
    kept = sum(allocation_bytes(2 * n) for name, n in shapes.items()
               if name in ("embed", "head", "final_norm") or "norm" in name)
    at_step = result.phase(Phase.OPTIMIZER_STEP).breakdown
    assert at_step[PartKind.FROZEN_WEIGHTS] == packed + kept + ROPE_BUFFERS
    assert result.params_total == sum(shapes.values()) + result.params_trainable
    assert "bitsandbytes 4-bit" in result.emulated[0]


def test_8bit_adam_states_are_uint8_with_fp32_block_statistics() -> None:
    result = trace(precision="bf16-true", optimizer="adamw-8bit")
    expected = 2 * allocation_bytes(4 * 256)  # the shared signed and unsigned maps
    for n in llama_shapes().values():
        if n >= 4096:  # bitsandbytes min_8bit_size
            expected += 2 * allocation_bytes(n) + 2 * allocation_bytes(4 * -(-n // 256))
        else:
            expected += 2 * allocation_bytes(4 * n)
    assert result.phase(Phase.OPTIMIZER_STEP).breakdown[PartKind.OPTIMIZER_STATES] == expected


def test_paged_optimizers_page_the_states_of_tensors_of_1e5_values_or_more() -> None:
    # bitsandbytes optim/optimizer.py `get_state_buffer`: `if not self.is_paged or p.numel() <
    # 1e5`, a plain device tensor; larger ones go to managed memory, reported apart
    wide = {**LLAMA, "intermediate_size": 1024}  # MLP matrices of 131,072 values, all else less
    mlp = 3 * LAYERS * HIDDEN * 1024
    paged = trace(wide, optimizer="paged-adamw")
    assert paged.paged_bytes == 2 * 4 * mlp  # two fp32 moments
    states = paged.phase(Phase.OPTIMIZER_STEP).breakdown[PartKind.OPTIMIZER_STATES]
    others = sum(llama_shapes().values()) - 3 * LAYERS * HIDDEN * INTER
    assert states >= 2 * 4 * others
    eight = trace(wide, optimizer="paged-adamw-8bit")
    assert eight.paged_bytes == 2 * mlp  # two uint8 moments; their fp32 absmax stay
    lora = trace(method="lora", optimizer="paged-adamw")  # adapters of 8 x 128 values
    assert lora.paged_bytes == 0
    assert lora.phase(Phase.OPTIMIZER_STEP).breakdown[PartKind.OPTIMIZER_STATES] > 0
    assert trace(wide, optimizer="adamw", precision="fp32").paged_bytes == 0


# --- the physics moves the right way ----------------------------------------------------------


def test_checkpointing_saves_fewer_activations() -> None:
    plain = trace(seq_len=64, method="lora")
    checkpointed = trace(seq_len=64, method="lora", checkpointing="full")
    saved = PartKind.ACTIVATIONS
    assert (checkpointed.phase(Phase.LOSS).breakdown[saved]
            < plain.phase(Phase.LOSS).breakdown[saved])


def test_eager_attention_saves_the_score_matrix_sdpa_does_not() -> None:
    eager = trace(seq_len=128, method="lora", attention="eager")
    sdpa = trace(seq_len=128, method="lora", attention="sdpa")
    saved = PartKind.ACTIVATIONS
    difference = (eager.phase(Phase.LOSS).breakdown[saved]
                  - sdpa.phase(Phase.LOSS).breakdown[saved])
    scores = 2 * HEADS * 128 * 128 * 2  # batch 2, bf16 probabilities of one layer
    assert difference >= LAYERS * scores


def test_dropout_saves_cuda_s_one_byte_mask_and_says_so() -> None:
    # GPT-2 trains with dropout 0.1 (embeddings, attention output, MLP output); the trace runs
    # it as CUDA does (native_dropout: a bool mask), not as CPU would (a bf16 noise tensor)
    from vramplan.tracer.run import LABEL_DROPOUT

    no_dropout = {**GPT2, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "resid_pdrop": 0.0}
    plain = trace(no_dropout, seq_len=64, precision="bf16-true", attention="sdpa")
    dropped = trace({**GPT2, "attn_pdrop": 0.0}, seq_len=64, precision="bf16-true",
                    attention="sdpa")
    assert LABEL_DROPOUT in dropped.emulated and LABEL_DROPOUT not in plain.emulated
    saved = PartKind.ACTIVATIONS
    extra = (dropped.phase(Phase.LOSS).breakdown[saved]
             - plain.phase(Phase.LOSS).breakdown[saved])
    masks = 2 * 64 * 64 * (1 + 2 * GPT2["n_layer"])  # batch x tokens x hidden, one byte each
    assert masks <= extra <= masks + 4 * 512  # each mask an allocation rounded up to 512 bytes


def test_sdpa_s_attention_dropout_keeps_what_cuda_s_kernels_keep_and_says_so() -> None:
    # on the CPU, SDPA with dropout_p > 0 runs the math fallback, which keeps each layer's
    # probabilities and their dropout; CUDA's fused kernels keep neither (they draw the mask
    # again from a seed), so the trace runs the call without the dropout and says so
    from vramplan.tracer.run import LABEL_SDPA_DROPOUT

    kept = {**GPT2, "attn_pdrop": 0.0}
    plain = trace(kept, seq_len=64, precision="bf16-true", attention="sdpa")
    dropped = trace(GPT2, seq_len=64, precision="bf16-true", attention="sdpa")
    assert LABEL_SDPA_DROPOUT in dropped.emulated and LABEL_SDPA_DROPOUT not in plain.emulated
    assert dropped.peak_bytes == plain.peak_bytes
    eager = trace(GPT2, seq_len=64, precision="bf16-true", attention="eager")
    assert LABEL_SDPA_DROPOUT not in eager.emulated  # eager attention's own dropout stays


GEMMA3_VLM = {"model_type": "gemma3", "mm_tokens_per_image": 4,
              "text_config": {"model_type": "gemma3_text", "hidden_size": 64,
                              "intermediate_size": 128, "num_hidden_layers": 2,
                              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                              "vocab_size": 256, "sliding_window": 32},
              "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32,
                                "intermediate_size": 64, "num_hidden_layers": 1,
                                "num_attention_heads": 2, "image_size": 32, "patch_size": 16}}
"""Gemma 3's vision-language checkpoint in small: a SigLIP tower beside the language model."""


def test_a_vision_language_checkpoint_traces_its_language_model_s_step() -> None:
    # Gemma 3 4B and larger: SigLIP's weight init asked a fake tensor for values
    # (trunc_normal_'s `mask.any()`), and the vocabulary is the text config's
    result = trace(GEMMA3_VLM, method="lora", seq_len=64)
    text_only = trace(GEMMA3_VLM["text_config"], method="lora", seq_len=64)
    patch_embedding = 32 * 3 * 16 * 16 + 32
    assert result.params_total - text_only.params_total > patch_embedding  # the tower is built
    assert result.phase(Phase.BACKWARD).peak_bytes > result.phase(Phase.OPTIMIZER_STEP).peak_bytes
    # full fine-tuning trains the language model, the tower frozen (as the model counts it)
    full = trace(GEMMA3_VLM, seq_len=64)
    assert full.params_trainable == trace(GEMMA3_VLM["text_config"], seq_len=64).params_trainable


def test_all_adapts_falcon_s_own_linear_class() -> None:
    # FalconLinear subclasses nn.Linear (its bias added apart): "all" adapts its four linears
    # a block, as `vramplan lora` counts them; only a router subclass is left out
    every = trace(FALCON, method="lora", lora_targets="all", lora_r=8)
    width = FALCON["hidden_size"]
    heads, kv_heads = FALCON["num_attention_heads"], FALCON["num_kv_heads"]
    qkv_out = width + 2 * kv_heads * width // heads
    per_block = 8 * ((width + qkv_out) + 2 * width + 2 * (width + 4 * width))
    assert every.params_trainable == FALCON["num_hidden_layers"] * per_block


def test_every_tracer_label_has_its_french_text() -> None:
    # the result and its JSON keep the English labels; the CLI prints them in the user's
    # language (vramplan.i18n.catalogue.trace `trace_label_key`)
    from vramplan.i18n import Lang, translate
    from vramplan.i18n.catalogue.trace import trace_label_key
    from vramplan.tracer import bnb_emulation, run

    labels = [value for module in (run, bnb_emulation) for name, value in vars(module).items()
              if name.startswith("LABEL_")]
    assert len(labels) >= 8
    for label in labels:
        key = trace_label_key(label)
        assert key is not None, label
        assert translate(key, Lang.EN) == label
        assert translate(key, Lang.FR) != label


def test_a_larger_batch_never_needs_less_memory() -> None:
    peaks = [trace(batch=batch, method="lora").peak_bytes for batch in (1, 2, 4)]
    assert peaks == sorted(peaks)
    assert peaks[0] < peaks[2]


# --- bad setups say what is accepted ----------------------------------------------------------


def test_bad_setups_raise_named_errors() -> None:
    with pytest.raises(ConflictingOptions):
        make_setup("tiny", LLAMA, method="lora", quant="nf4")
    with pytest.raises(ConflictingOptions):
        make_setup("tiny", LLAMA, method="full", lora_r=8)
    with pytest.raises(UnknownName) as unknown:
        make_setup("tiny", LLAMA, attention="ring")
    assert "sdpa" in str(unknown.value)
    with pytest.raises(UnknownName):
        make_setup("tiny", LLAMA, method="lora", lora_targets="q,x")
    with pytest.raises(OutOfRange):
        trace(method="freeze", train_layers=LAYERS + 1)
    with pytest.raises(UnknownName) as falcon:
        trace(FALCON, method="lora", lora_targets="gate")
    assert "query_key_value" in str(falcon.value)


# --- the command line ---------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), out, io.StringIO())
    return status, out.getvalue()


def test_cli_json_from_a_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA), encoding="utf-8")
    status, out = run_cli("trace", "--config", str(config), "--method", "lora", "--lora-r", "4",
                          "--lora-targets", "q,v", "--batch", "2", "--seq-len", "16", "--json")
    assert status == 0
    payload = json.loads(out)
    assert payload["mode"] == "trace"
    assert payload["setup"]["lora_targets"] == ["q", "v"]
    assert payload["peak_bytes"] == sum(p["memory_bytes"] for p in payload["breakdown"])
    assert payload["peak_phase"] in [phase.value for phase in Phase]
    assert "step 2 of 2" in capsys.readouterr().err


def test_cli_text_report_in_french(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(GPT2), encoding="utf-8")
    status, out = run_cli("trace", "--config", str(config), "--seq-len", "16", "--lang", "fr")
    assert status == 0
    assert "Pic :" in out
    assert "activations gardées pour la rétropropagation" in out


def test_cli_bad_values_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA), encoding="utf-8")
    assert run_cli("trace", "--config", str(config), "--batch", "0")[0] == 2
    assert run_cli("trace", "--config", str(config), "--method", "lora",
                   "--lora-targets", "q,zz")[0] == 2
    assert run_cli("trace", "--config", str(config), "--precision", "fp8")[0] == 2


def test_cli_adapters_fp32_flag_and_its_method(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA), encoding="utf-8")
    status, out = run_cli("trace", "--config", str(config), "--method", "lora", "--seq-len", "16",
                          "--adapters-fp32", "--json")
    assert status == 0
    assert json.loads(out)["setup"]["adapters_fp32"] is True
    assert "adapters_fp32=true" in run_cli("trace", "--config", str(config), "--method", "lora",
                                            "--seq-len", "16", "--adapters-fp32")[1]
    status, out = run_cli("trace", "--config", str(config), "--method", "lora", "--seq-len", "16")
    assert "adapters_fp32=" not in out  # the setup line names it only when asked
    assert run_cli("trace", "--config", str(config), "--adapters-fp32", "--seq-len", "16")[0] == 2


def test_cli_says_in_one_line_when_the_traced_code_fails(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """transformers, peft or torch raising inside the step: exit 1, the error named, no
    traceback (bad input keeps exit 2)."""
    import vramplan.tracer.run as tracer_run

    def fails(*args: Any, **kwargs: Any) -> TraceResult:
        raise AttributeError("'tuple' object has no attribute 'dtype'")

    monkeypatch.setattr(tracer_run, "run_trace", fails)
    status, out = run_cli("trace", "--model", "gpt2", "--seq-len", "16", "--lang", "en")
    err = capsys.readouterr().err
    assert status == 1 and out == ""
    assert "tracing gpt2 failed inside the model's own code" in err
    assert "AttributeError: 'tuple' object has no attribute 'dtype'" in err
    assert "Traceback" not in err


def test_cli_traces_a_registry_model(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_cli("trace", "--model", "gpt2", "--method", "lora", "--lora-targets", "all",
                          "--seq-len", "32", "--json")
    assert status == 0
    payload = json.loads(out)
    assert payload["model"] == "gpt2"
    assert payload["params_total"] - payload["params_trainable"] == 124_439_808  # GPT-2 small
    assert "building gpt2" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is present")
def test_cli_device_cuda_without_a_gpu_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("trace", "--model", "gpt2", "--device", "cuda") == (2, "")
    assert "no CUDA GPU" in capsys.readouterr().err


def test_cli_without_the_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import vramplan.cli.trace as command

    monkeypatch.setattr(command, "missing_packages", lambda names: ["torch", "peft"])
    out, err = io.StringIO(), io.StringIO()
    status = main(["trace", "--model", "llama-3.1-8b", "--lang", "en"], out, err)
    assert (status, out.getvalue()) == (2, "")
    assert err.getvalue() == ("vramplan: error: this command needs the [trace] extra (torch, "
                              "peft missing): pip install '.[trace]' in vramplan's folder\n")


def test_python_api_and_light_imports() -> None:
    code = ("import sys, vramplan, vramplan.cli.main, vramplan.tracer;"
            "assert 'torch' not in sys.modules, 'torch imported at start';"
            "r = vramplan.trace(config=" + repr(GPT2) + ", seq_len=8);"
            "r2 = vramplan.trace(config=" + repr(GPT2) + ", seq_len=8);"
            "assert r.value.peak_bytes == r2.value.peak_bytes > 0;"
            "print(r.value.peak_phase.value)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("field", "value"), [
    ("checkpointing", "selective"), ("quant", "int8"),
    ("method", "inference"),
])
def test_values_of_the_shared_vocabulary_a_trace_cannot_run_are_refused(field: str,
                                                                         value: str) -> None:
    from vramplan.errors import UnknownName
    from vramplan.tracer.setup import make_setup

    with pytest.raises(UnknownName) as caught:
        make_setup("tiny", {}, **{field: value})
    assert caught.value.field == field
    assert value not in str(caught.value.params["choices"]).split(", ")


def test_a_remote_code_model_is_refused_with_a_reason() -> None:
    # chatglm's modeling file is its checkpoint's own: transformers has no class to build
    out, err = io.StringIO(), io.StringIO()
    status = main(["trace", "--model", "chatglm3-6b", "--method", "lora", "--lang", "en"],
                  out, err)
    assert status == 2
    assert "unknown name 'chatglm'" in err.getvalue()
    assert "remote code is not traced" in err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_the_readme_s_trace_example_is_what_the_command_prints() -> None:
    """README.md shows `vramplan trace` on Llama-3.1-8B LoRA: its output, line for line (in
    English, the README's language), as this tracer prints it."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ vramplan trace ", 1)[1].split("```", 1)[0]
    command, printed = block.split("\n", 1)
    status, out = run_cli("trace", *command.split(), "--lang", "en")
    assert status == 0
    assert out.strip() == printed.strip()
