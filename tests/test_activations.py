"""Activations saved for backward: the autograd rules the model rests on, one block tallied by hand,
and invariants (more tokens never less memory, training more never saves less)."""

from __future__ import annotations

import dataclasses

import pytest

from vramplan.model.hf_config import parse_config
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.activations.backward import moe_backward_transient, recomputed_forward_peak
from vramplan.training.activations.block import (
    block_ledger,
    block_saved,
    embedding_saved_bytes,
    first_block_graphless_linears,
    quantized_base_inputs,
)
from vramplan.training.activations.checkpointing import checkpointed
from vramplan.training.activations.spec import BlockSpec, total_per_token
from vramplan.training.estimate import estimate_training
from vramplan.training.setup import TrainingSetup
from vramplan.training.specs import block_spec
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    LoraTarget,
    Method,
    Precision,
    Quant,
)

LLAMA = architecture_of(find_model("llama-2-7b"))
Q_V = frozenset({LoraTarget.Q, LoraTarget.V})


def lora_spec(**changes: object) -> BlockSpec:
    spec = BlockSpec(framework=Framework.LITGPT, residual_bytes=2, compute_bytes=2,
                     autocast=False, weights_train=False, base_keeps_input=False,
                     lora_targets=Q_V, lora_rank=8, lora_dropout=True, attention=Attention.SDPA)
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def test_litgpt_lora_block_tallied_by_hand() -> None:
    h, f, r, heads = 4096, 11008, 8, 32
    expected = (
        4 * h + 4          # norm_1: fp32 copy of the input (x.float()) and rstd
        + h + 2 * h        # LoRA dropout: bool mask, output kept by lora_A
        + 2 * r            # lora_A output kept by lora_B (conv1d)
        + 2 * (h + h)      # zero_pad's index_copy keeps its source (q and v widths)
        + 2 * h + 2 * h    # q and k after RoPE
        + 2 * 3 * h        # v is a view of the fused qkv output: all of it stays
        + 2 * h + 4 * heads  # attention output and log-sum-exp (SDPA flash)
        + 4 * h + 4        # norm_2
        + 3 * 2 * f        # silu input, silu output and up output (act * up)
    )
    assert total_per_token(block_saved(LLAMA, lora_spec(), seq_len=1304)) == expected


def test_first_block_under_lora_saves_less() -> None:
    inner = total_per_token(block_saved(LLAMA, lora_spec(), 512))
    first = total_per_token(block_saved(LLAMA, lora_spec(), 512, input_needs_grad=False))
    # no fp32 copy in norm_1 and no dropout mask: its input needs no gradient
    assert inner - first == 4 * 4096 + 4 + 4096


@pytest.mark.parametrize(("target", "kept"), [
    # grad_up = grad * act(gate): the product keeps act(gate); gate's output needs no gradient
    (LoraTarget.UP, {"act_out"}),
    # act(gate) keeps its input, and the product keeps up's output for act(gate)'s gradient
    (LoraTarget.GATE, {"gate_out", "up_out"}),
])
def test_first_block_mlp_keeps_the_factor_the_other_gradient_needs(target: LoraTarget,
                                                                    kept: set[str]) -> None:
    spec = lora_spec(framework=Framework.HF, lora_targets=frozenset({target}), lora_dropout=False)
    mlp = {"gate_out", "act_out", "up_out"}
    first = {item.name for item in block_saved(LLAMA, spec, 512, input_needs_grad=False)}
    inner = {item.name for item in block_saved(LLAMA, spec, 512)}
    assert first & mlp == kept
    assert inner & mlp == mlp


def test_first_block_plain_mlp_with_down_adapted_alone_keeps_only_its_input() -> None:
    """Phi-2's fc1, tanh GELU in Python, fc2: with fc2's adapter alone, the first block's fc1
    output needs no gradient, so the GELU's chain saves nothing and fc2's adapter keeps the
    activation's output; past the first block the chain's tensors are saved too."""
    phi = architecture_of(find_model("phi-2"))
    spec = block_spec(phi, TrainingSetup(method=Method.LORA, framework=Framework.HF, lora_rank=8,
                                         lora_targets=frozenset({LoraTarget.DOWN}),
                                         adapters_fp32=False, seq_len=512))
    first = {item.name for item in block_saved(phi, spec, 512, input_needs_grad=False)}
    inner = {item.name for item in block_saved(phi, spec, 512)}
    assert first == {"act_out", "down0_lora_a_out"}
    assert {"up_out", "act_intermediate_0"} <= inner


def test_frozen_matmul_keeps_no_input_but_trained_and_quantized_ones_do() -> None:
    frozen = total_per_token(block_saved(LLAMA, lora_spec(), 512))
    quantized = total_per_token(block_saved(LLAMA, lora_spec(base_keeps_input=True), 512))
    trained = total_per_token(block_saved(LLAMA, lora_spec(weights_train=True), 512))
    assert frozen < quantized <= trained
    # bitsandbytes keeps the inputs of qkv, o, gate/up (one tensor) and down
    assert quantized_base_inputs(LLAMA, lora_spec(base_keeps_input=True)) == (
        2 * 4096 + 2 * 4096 + 2 * 4096 + 2 * 11008)


def test_eager_attention_saves_scores_growing_with_sequence() -> None:
    eager = lora_spec(attention=Attention.EAGER, framework=Framework.HF)
    at_512 = total_per_token(block_saved(LLAMA, eager, 512))
    at_1024 = total_per_token(block_saved(LLAMA, eager, 1024))
    # fp32 softmax output plus its 16-bit cast: 6 bytes x heads x seq_len per token
    assert at_1024 - at_512 == 6 * 32 * 512
    flash = total_per_token(block_saved(LLAMA, lora_spec(framework=Framework.HF), 1024))
    assert flash < at_1024


def test_selective_checkpointing_drops_only_the_scores() -> None:
    eager = lora_spec(attention=Attention.EAGER, framework=Framework.HF)
    saved = block_saved(LLAMA, eager, 2048)
    kept = checkpointed(saved, Checkpointing.SELECTIVE)
    assert {s.name for s in saved} - {s.name for s in kept} == {"attn_probs", "attn_probs_fp32"}


@pytest.mark.parametrize("model", ["phi-2", "falcon-7b", "gemma-2b", "tinyllama-1.1b",
                                   "stablelm-base-alpha-3b", "mixtral-8x7b"])
def test_every_family_saves_something_and_full_training_saves_more(model: str) -> None:
    arch = architecture_of(find_model(model))
    lora = total_per_token(block_saved(arch, lora_spec(lora_dropout=False), 256))
    full = total_per_token(block_saved(
        arch, lora_spec(weights_train=True, lora_targets=frozenset(), lora_dropout=False), 256))
    assert lora > 0
    assert full > lora


def test_autograd_keeps_no_input_for_a_frozen_linear() -> None:
    """The rule behind `weights_train=False`: a frozen weight's matmul saves the weight only."""
    torch = pytest.importorskip("torch")
    saved: list[tuple[int, ...]] = []

    def pack(tensor: object) -> object:
        saved.append(tuple(tensor.shape))  # type: ignore[attr-defined]
        return tensor

    x = torch.randn(3, 5, requires_grad=True)
    frozen = torch.randn(7, 5)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        torch.nn.functional.linear(x, frozen)
    assert sorted(saved) == [(5, 7)]  # the weight (transposed view), never the (3, 5) input


def test_relu_keeps_its_output_which_fc2_keeps_too() -> None:
    """OPT's fc1 -> ReLU -> fc2: ReLU's backward reads its result (derivatives.yaml `relu:
    threshold_backward(grad, result, 0)`), the tensor fc2 saves as its input; GELU keeps its input
    besides. Full training: one intermediate-wide tensor less with ReLU; frozen MLP: the same."""
    opt = architecture_of(find_model("opt-6.7b"))
    gelu = dataclasses.replace(opt, activation="gelu")
    full = lora_spec(weights_train=True, lora_targets=frozenset(), lora_dropout=False)
    lora = lora_spec(lora_dropout=False)
    width = full.compute_bytes * opt.intermediate_size
    saved = {s.name for s in block_saved(opt, full, 256)}
    assert "act_out" in saved and "up_out" not in saved
    assert total_per_token(block_saved(gelu, full, 256)) - total_per_token(
        block_saved(opt, full, 256)) == width
    assert total_per_token(block_saved(gelu, lora, 256)) == total_per_token(
        block_saved(opt, lora, 256))


def test_autograd_relu_saves_its_output_and_gelu_its_input() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)  # negatives: relu(x) != x
    for module, keeps in ((torch.nn.ReLU(), "output"), (torch.nn.GELU(), "input")):
        saved: list[object] = []
        with torch.autograd.graph.saved_tensors_hooks(saved.append, lambda t: t):
            y = module(x)
        assert len(saved) == 1
        assert torch.equal(saved[0], y if keeps == "output" else x), module


# --- dropout ------------------------------------------------------------------------------------

TINY_GPT2 = {"model_type": "gpt2", "n_embd": 8, "n_layer": 2, "n_head": 2, "n_inner": 32,
             "vocab_size": 64, "n_positions": 16}
"""GPT2Config's default dropout: embd_pdrop, attn_pdrop and resid_pdrop 0.1."""
NO_DROPOUT = {"embd_pdrop": 0.0, "attn_pdrop": 0.0, "resid_pdrop": 0.0}


def hf_full_spec(**changes: object) -> BlockSpec:
    spec = BlockSpec(framework=Framework.HF, residual_bytes=2, compute_bytes=2, autocast=False,
                     weights_train=True, base_keeps_input=False, lora_targets=frozenset(),
                     lora_rank=8, lora_dropout=False, attention=Attention.EAGER,
                     model_dropout=True)
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def test_gpt2_block_with_dropout_tallied_by_hand() -> None:
    # h = 8, 2 heads of 4, f = 32, T = 4 (scores: 2 x 4 = 8 per token), bf16, every weight trains
    expected = (
        2 * 8 + 8          # ln_1 (native_layer_norm): its input, fp32 mean and rstd
        + 2 * 8            # c_attn keeps ln_1's output
        + 3 * 2 * 8        # eager: q (for dk), k (for dq), v (for d probs)
        + 2 * 8            # attention output, kept by c_proj
        + 2 * 8            # softmax in bf16 (GPT-2) saves its output
        + 1 * 8            # attn_dropout: bool mask
        + 2 * 8            # its output, kept by probs @ v
        + 1 * 8            # resid_dropout after c_proj: bool mask (the residual add keeps none)
        + 2 * 8 + 8        # ln_2
        + 2 * 8            # c_fc keeps ln_2's output
        + 2 * 32           # gelu_new's input
        + 3 * 2 * 32       # gelu_new in Python: tanh output, 0.5 * x, 1 + tanh
        + 2 * 32           # gelu output, kept by the MLP's c_proj
        + 1 * 8            # the MLP's dropout: bool mask
    )
    assert expected == 520
    saved = block_saved(parse_config(TINY_GPT2), hf_full_spec(), seq_len=4)
    assert total_per_token(saved) == expected


@pytest.mark.parametrize(("attention", "extra"), [
    (Attention.EAGER, 2 * 8 + 2 * 4 * (1 + 2)),  # two hidden masks; scores' mask and copy
    (Attention.SDPA, 2 * 8),  # the CUDA kernels regenerate the probabilities' mask
])
def test_dropout_adds_masks_only_where_the_model_trains_with_it(attention: Attention,
                                                                 extra: int) -> None:
    on, off = parse_config(TINY_GPT2), parse_config(TINY_GPT2 | NO_DROPOUT)
    spec = hf_full_spec(attention=attention)

    def per_token(arch: object, spec: BlockSpec) -> int:
        return total_per_token(block_saved(arch, spec, seq_len=4))  # type: ignore[arg-type]

    assert per_token(on, spec) - per_token(off, spec) == extra
    quiet = dataclasses.replace(spec, model_dropout=False)
    assert per_token(on, quiet) == per_token(off, quiet)


@pytest.mark.parametrize(("framework", "active"), [
    (Framework.HF, True), (Framework.GENERIC, True),
    # a DeepSpeed engine wraps transformers' modules in train mode; Megatron-LM drops out at
    # the rates a run sets, read from config.json; litgpt's GPT and torchtune's modules have
    # no dropout layers
    (Framework.DEEPSPEED, True), (Framework.MEGATRON, True),
    (Framework.LITGPT, False), (Framework.TORCHTUNE, False),
])
def test_model_dropout_where_the_framework_runs_dropout_layers(
        framework: Framework, active: bool) -> None:
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=1, seq_len=4,
                          framework=framework)
    assert block_spec(parse_config(TINY_GPT2), setup).model_dropout is active


def test_frozen_first_block_keeps_masks_only_where_a_gradient_flows() -> None:
    arch = parse_config(TINY_GPT2)
    lora = hf_full_spec(weights_train=False, lora_targets=Q_V)
    no_lora = dataclasses.replace(lora, lora_targets=frozenset())
    off = parse_config(TINY_GPT2 | NO_DROPOUT)
    # LoRA on q and v: attention output, MLP output and probabilities need a gradient
    first = total_per_token(block_saved(arch, lora, 4, input_needs_grad=False))
    first_off = total_per_token(block_saved(off, lora, 4, input_needs_grad=False))
    assert first - first_off == 2 * 8 + 2 * 4 * (1 + 2)
    # nothing trains in attention and its input needs no gradient: no attention masks
    attention_only = block_saved(arch, no_lora, 4, input_needs_grad=False)
    assert not [s for s in attention_only if s.name.startswith(("attn_probs_drop", "attn_out"))]


def test_embedding_dropout_mask_only_when_the_embedding_trains() -> None:
    arch = parse_config(TINY_GPT2)
    assert embedding_saved_bytes(arch, hf_full_spec(), needs_grad=True) == 8
    assert embedding_saved_bytes(arch, hf_full_spec(), needs_grad=False) == 0
    # a frozen embedding whose output `enable_input_require_grads` made require a gradient: the
    # leaf (8 bf16 values a token) stays beside the sum with the positions that the block reads
    assert embedding_saved_bytes(arch, hf_full_spec(), needs_grad=True, leaf=True) == 8 + 2 * 8
    tokens, layers = 2 * 4, 2
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=2,
                          seq_len=4, framework=Framework.HF, attention=Attention.EAGER)
    gained = (estimate_training(arch, setup).activations_bytes
              - estimate_training(parse_config(TINY_GPT2 | NO_DROPOUT),
                                  setup).activations_bytes)
    assert gained == tokens * (layers * (2 * 8 + 2 * 4 * 3) + 8)


def test_frozen_blocks_with_a_graph_save_what_their_input_gradient_needs() -> None:
    """`freeze` where the embeddings' output needs a gradient (`input_require_grads`): every
    frozen block builds a graph and saves what its input's gradient needs, less than a trained
    block saves (no linear keeps its input) and more than the nothing it saves otherwise."""
    freeze = TrainingSetup(method=Method.FREEZE, train_layers=2, batch=1, seq_len=512,
                           framework=Framework.HF)
    cut = estimate_training(LLAMA, dataclasses.replace(freeze, input_require_grads=False))
    through = estimate_training(LLAMA, dataclasses.replace(freeze, input_require_grads=True))
    spec = block_spec(LLAMA, freeze)
    trained = total_per_token(block_saved(LLAMA, spec, 512))
    frozen = total_per_token(block_saved(LLAMA, dataclasses.replace(spec, weights_train=False),
                                         512))
    assert 0 < frozen < trained
    frozen_blocks = LLAMA.n_layers - 2
    gained = through.activations_bytes - cut.activations_bytes
    # the frozen blocks, and what the first trained block and the embeddings' output now keep
    # for their inputs' gradients (at most a trained block's set)
    assert frozen_blocks * frozen * 512 <= gained < (frozen_blocks * frozen + trained) * 512


# --- torch.compile ------------------------------------------------------------------------------

LLAMA32_3B = architecture_of(find_model("llama-3.2-3b"))


def torchtune_full_spec(**changes: object) -> BlockSpec:
    spec = block_spec(LLAMA32_3B, TrainingSetup(framework=Framework.TORCHTUNE, batch=2,
                                                seq_len=4096, compiled=True))
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def test_compiled_torchtune_block_tallied_by_hand() -> None:
    """AOTAutograd's min-cut (torch/_functorch/partitioners.py): what a matmul or the attention
    kernel reads in backward and the norms' inverse RMS are saved; the fp32 upcasts, the
    normalized tensors and silu(gate) are recomputed from the norms' 16-bit inputs and gate."""
    h, q, f, heads = 3072, 3072, 8192, 24
    assert (LLAMA32_3B.hidden_size, LLAMA32_3B.q_dim, LLAMA32_3B.expert_intermediate_size,
            LLAMA32_3B.n_heads) == (h, q, f, heads)
    expected = (
        2 * h + 4          # norm_1: its bf16 input and rstd (not x.float(), not x_normed)
        + 2 * h            # norm_1's output, read by q/k/v's weight gradients
        + 2 * q + 2 * q + 2 * q  # q, and k and v expanded to the query heads (torchtune)
        + 2 * q + 4 * heads      # attention output (o_proj's input) and log-sum-exp
        + 2 * h + 4 + 2 * h      # norm_2: its input, rstd, its output
        + 3 * 2 * f        # gate, up, and act * up (w2's input); silu(gate) recomputed
    )
    spec = torchtune_full_spec()
    assert spec.compiled
    assert total_per_token(block_saved(LLAMA32_3B, spec, seq_len=4096)) == expected
    eager = total_per_token(block_saved(LLAMA32_3B, dataclasses.replace(spec, compiled=False),
                                        seq_len=4096))
    # eager: each norm's fp32 copy (4 h) and normalized tensor (2 h), and silu's output (2 f)
    assert eager - expected == 2 * (4 * h + 2 * h - 2 * h) + 2 * f


@pytest.mark.parametrize("method", [Method.FULL, Method.LORA, Method.QLORA, Method.FREEZE])
def test_a_compiled_block_never_saves_more_than_the_eager_one(method: Method) -> None:
    for name in ("llama-2-7b", "qwen2.5-0.5b", "gemma-2-2b", "phi-2", "gpt2"):
        arch = architecture_of(find_model(name))
        adapters = {"lora_rank": 8, "lora_targets": Q_V} if method.uses_lora else {}
        quant = {"quant": Quant.NF4} if method is Method.QLORA else {}
        for precision in (Precision.BF16_TRUE, Precision.AMP):
            setup = TrainingSetup(method=method, precision=precision, compiled=True,
                                  **adapters, **quant)  # type: ignore[arg-type]
            spec = block_spec(arch, setup)
            for first in (True, False):
                compiled = block_saved(arch, spec, 512, input_needs_grad=not first)
                eager = block_saved(arch, dataclasses.replace(spec, compiled=False), 512,
                                    input_needs_grad=not first)
                assert total_per_token(compiled) <= total_per_token(eager), (name, precision)


# --- Megatron-LM's layer: Korthikanti et al. 2022 (arXiv:2205.05198), section 4.1 ---------------
# "Activations memory per layer = sbh(34 + 5as/h)" for its GPT layer in 16-bit with dropout and
# no parallelism: attention 11sbh + 5as^2b, MLP 19sbh, the two LayerNorms' inputs 4sbh; with
# selective recomputation (section 5) "34sbh". Per token: 34 h + 5 a s bytes, beside which our
# ledger keeps each fused LayerNorm's mean and rstd (2 x 4 bytes, two norms).
@pytest.mark.parametrize("seq_len", [512, 1024, 2048])
@pytest.mark.parametrize("checkpointing", [Checkpointing.NONE, Checkpointing.SELECTIVE])
def test_megatron_gpt_layer_keeps_what_korthikanti_counts(seq_len: int,
                                                          checkpointing: Checkpointing) -> None:
    gpt = architecture_of(find_model("gpt2-medium"))  # LayerNorm, GELU 4h, dropout 0.1
    setup = TrainingSetup(precision=Precision.MIXED, framework=Framework.MEGATRON, batch=1,
                          seq_len=seq_len, attention=Attention.EAGER, checkpointing=checkpointing)
    saved = checkpointed(block_saved(gpt, block_spec(gpt, setup), seq_len), checkpointing)
    h, a = gpt.hidden_size, gpt.n_heads
    scores = 5 * a * seq_len if checkpointing is Checkpointing.NONE else 0
    assert total_per_token(saved) == 34 * h + scores + 2 * 2 * 4


def test_megatron_swiglu_and_norms_save_less_than_transformers_modules() -> None:
    """Megatron's fused SwiGLU saves linear_fc1's output only (gate and up, one tensor), not
    silu(gate); its fused RMSNorm saves its 16-bit input and rsigma, not transformers' fp32
    copy (4 h) and 16-bit normalized input (2 h) per norm, in a fully trained Llama block."""
    setup = TrainingSetup(precision=Precision.MIXED, batch=1, seq_len=1024)
    hf = total_per_token(block_saved(LLAMA, block_spec(LLAMA, setup), 1024))
    megatron_setup = dataclasses.replace(setup, framework=Framework.MEGATRON)
    megatron = total_per_token(block_saved(LLAMA, block_spec(LLAMA, megatron_setup), 1024))
    h, f = LLAMA.hidden_size, LLAMA.intermediate_size
    # per norm: fp32 copy + rstd + normalized bf16 (hf) against input + rsigma (megatron)
    norms = 2 * ((4 * h + 4 + 2 * h) - (2 * h + 4))
    assert hf - megatron == 2 * f + norms


# --- BLOOM and GPT-Neo (transformers' own attention modules, eager only) -----------------------

TINY_BLOOM = {"model_type": "bloom", "hidden_size": 64, "n_layer": 2, "n_head": 4,
              "vocab_size": 100}
TINY_GPT_NEO = {"model_type": "gpt_neo", "hidden_size": 64, "num_layers": 2, "num_heads": 4,
                "vocab_size": 100, "max_position_embeddings": 32,
                "attention_types": [[["global", "local"], 1]]}


def test_gpt_neo_eager_attention_keeps_fp32_queries_and_keys() -> None:
    # GPTNeoSelfAttention._attn: query.to(float32), key.to(float32) before matmul, which keeps
    # both (fp32 copies); scores and softmax in fp32, probabilities cast back for probs @ v
    arch = parse_config(TINY_GPT_NEO)
    saved = dict((s.name, s.bytes_per_token) for s in
                 block_saved(arch, hf_full_spec(attention=Attention.EAGER), seq_len=16))
    h, heads = 64, 4
    assert (saved["q"], saved["k"], saved["v"]) == (4 * h, 4 * h, 2 * h)
    assert (saved["attn_probs_fp32"], saved["attn_probs"]) == (4 * heads * 16, 2 * heads * 16)
    # under autocast the matmul casts them back to bf16 before saving them
    amp = dict((s.name, s.bytes_per_token) for s in block_saved(
        arch, hf_full_spec(attention=Attention.EAGER, autocast=True, residual_bytes=4), 16))
    assert (amp["q"], amp["k"]) == (2 * h, 2 * h)


def test_bloom_and_gpt_neo_run_eager_attention_when_sdpa_is_asked() -> None:
    # transformers has no SDPA (nor, for BLOOM, FlashAttention) path for them and falls back
    # to eager: the same estimate, with the score matrix
    for config in (TINY_BLOOM, TINY_GPT_NEO):
        arch = parse_config(config)
        runs = {attention: estimate_training(arch, TrainingSetup(
            method=Method.FULL, batch=2, seq_len=16, framework=Framework.HF,
            attention=attention)).allocated_bytes for attention in Attention}
        assert runs[Attention.SDPA] == runs[Attention.EAGER]
        assert (runs[Attention.FLASH] == runs[Attention.EAGER]) is (config is TINY_BLOOM)
        # with an SDPA path the same model would keep no score matrix
        sdpa = dataclasses.replace(arch, sdpa_attention=True)
        assert estimate_training(sdpa, TrainingSetup(
            method=Method.FULL, batch=2, seq_len=16, framework=Framework.HF,
            attention=Attention.SDPA)).allocated_bytes < runs[Attention.SDPA]


def test_bloom_embedding_norm_keeps_its_input_when_the_embedding_output_needs_a_gradient() -> None:
    # word_embeddings_layernorm: native_layer_norm saves its input and fp32 mean and rstd
    arch = parse_config(TINY_BLOOM)
    assert embedding_saved_bytes(arch, hf_full_spec(), needs_grad=True) == 2 * 64 + 8
    assert embedding_saved_bytes(arch, hf_full_spec(), needs_grad=False) == 0
    # LoRA: frozen embedding, nothing saved; full checkpointing asks transformers to make the
    # embeddings' output require a gradient (enable_input_require_grads), and the norm saves
    lora = TrainingSetup(method=Method.LORA, batch=2, seq_len=16, framework=Framework.HF,
                         lora_rank=8, lora_targets=Q_V, checkpointing=Checkpointing.FULL)
    plain = estimate_training(arch, lora).activations_bytes
    no_norm = estimate_training(dataclasses.replace(arch, embedding_norm=False),
                                lora).activations_bytes
    assert plain - no_norm == 2 * 16 * (2 * 64 + 8)


def test_bloom_gelu_backward_holds_six_intermediate_wide_tensors() -> None:
    # bloom_gelu_back: the incoming gradient, tanh_out, 0.5 * x, 1 - tanh_out**2, the
    # polynomial and their product, at once (traced)
    from vramplan.training.activations.backward import block_backward_transient

    bloom = parse_config(TINY_BLOOM)
    spec = hf_full_spec(attention=Attention.EAGER)
    assert block_backward_transient(bloom, spec) == 6 * 2 * 4 * 64
    gelu_new = dataclasses.replace(bloom, activation="gelu_new")
    assert block_backward_transient(gelu_new, spec) == 3 * 2 * 4 * 64


def test_gpt_neo_mask_buffers_are_held_with_the_weights() -> None:
    # one 32 x 32 bool mask per layer, whatever trains (built with the model, never sharded)
    arch = parse_config(TINY_GPT_NEO)
    assert arch.buffer_bytes == 2 * 32 * 32
    setup = TrainingSetup(method=Method.FULL, batch=1, seq_len=8, framework=Framework.HF)
    with_masks = estimate_training(arch, setup).allocated_bytes
    without = estimate_training(dataclasses.replace(arch, causal_mask_buffers=False),
                                setup).allocated_bytes
    assert with_masks - without == 2 * 32 * 32


def test_eager_softmax_backward_holds_three_score_sized_tensors() -> None:
    """Hand-tallied, a Llama block under bf16 eager attention: the softmax keeps its fp32 output
    (4 bytes per score) and `probs @ v` the bf16 cast (2); in backward, the output's fp32
    gradient and the fp32 input's gradient join the saved output, while what the ops after the
    softmax saved has been freed by their backward."""
    from vramplan.training.activations.backward import scores_backward_extra
    from vramplan.training.activations.spec import Saved

    saved = (Saved("q", 10), Saved("attn_probs_fp32", 400), Saved("attn_probs", 200),
             Saved("attn_out", 10), Saved("mlp_hidden", 30))
    assert scores_backward_extra(saved) == 2 * 400 - (200 + 10 + 30)
    # fp32 training, or GPT-2's softmax in the scores' dtype: one tensor, saved by both ops
    assert scores_backward_extra((Saved("attn_probs", 400), Saved("attn_out", 10))) == 790
    # no materialized scores (SDPA, FlashAttention): nothing
    assert scores_backward_extra((Saved("q", 10), Saved("attn_out", 10))) == 0
    # an MLP larger than the scores: its freed tensors outweigh them
    assert scores_backward_extra((Saved("attn_probs", 4), Saved("mlp_hidden", 100))) == 0


def test_eager_blocks_count_the_softmax_backward_the_4d_mask_and_the_gradients_made() -> None:
    """At 16 heads x 512 tokens (8,192 scores per token) the softmax backward is a block's
    backward peak: with it, transformers' eager mask and the MLP's gradients, the estimate of a
    full bf16 step is what tests/test_trace_agreement.py checks against the trace (within 3 %)."""
    from vramplan.training.activations.backward import scores_backward_extra

    arch = parse_config({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
                         "num_attention_heads": 16, "num_key_value_heads": 16,
                         "intermediate_size": 688, "vocab_size": 512,
                         "max_position_embeddings": 2048, "tie_word_embeddings": False})
    eager = TrainingSetup(method=Method.FULL, batch=1, seq_len=512, framework=Framework.HF,
                          attention=Attention.EAGER, checkpointing=Checkpointing.FULL,
                          gradient_accumulation=False)
    spec = block_spec(arch, eager)
    saved = block_saved(arch, spec, 512)
    # the fp32 softmax output (16 heads x 512 scores x 4 bytes) twice, less what came after it
    extra = scores_backward_extra(saved)
    assert extra > 0
    estimate = estimate_training(arch, eager)
    end = {part.kind.value: part.memory_bytes for part in next(
        p for p in estimate.phases if p.phase.value == "backward_end").parts}
    assert end["activations"] == 512 * 512 * 2  # the mask: batch x T x T in bf16
    # the recomputed block, the softmax's extra tensors, and the gradients of the output
    # projection (256 x 256) and the MLP (3 x 256 x 688), made before attention's backward
    made = (256 * 256 + 3 * 256 * 688) * 2
    assert end["backward_temporaries"] == (total_per_token(saved) + extra) * 512 + made
    # accumulated gradients persist: counted once, with the model's states
    accumulating = estimate_training(arch, dataclasses.replace(eager, gradient_accumulation=True))
    end = {part.kind.value: part.memory_bytes for part in next(
        p for p in accumulating.phases if p.phase.value == "backward_end").parts}
    assert end["backward_temporaries"] == (total_per_token(saved) + extra) * 512


def test_liger_kernels_keep_their_norms_input_and_no_activation_output() -> None:
    """Liger-Kernel's RMSNorm saves its 16-bit input and an fp32 rstd, where transformers' keeps
    an fp32 copy of the input and the 16-bit normalized input (4 bytes more per value, two norms
    per block); its SiLU-mul saves gate and up, not silu(gate). Llama-3-8B in bf16: 8 x 4,096 +
    2 x 14,336 = 61,440 bytes less per token and block."""
    llama = architecture_of(find_model("llama-3-8b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.BF16_TRUE, batch=1,
                          seq_len=2048, framework=Framework.HF)
    liger = dataclasses.replace(setup, liger_kernels=True)
    plain, kernels = (total_per_token(block_saved(llama, block_spec(llama, s), 2048))
                      for s in (setup, liger))
    assert plain - kernels == 8 * 4096 + 2 * 14336 == 61440
    # Liger patches transformers' modules only
    litgpt = dataclasses.replace(liger, framework=Framework.LITGPT)
    assert not block_spec(llama, litgpt).liger_kernels


def test_megatron_fuses_its_qk_norms_and_its_experts_swiglu() -> None:
    """Megatron-LM's Qwen3 MoE: Transformer Engine's q/k norms keep their 16-bit input and the
    inverse RMS per head, not transformers' fp32 copy and normalized input; its experts' fused
    SwiGLU keeps the fc1 output only, no act(gate), as its dense MLP does."""
    qwen3 = architecture_of(find_model("qwen3-30b-a3b"))
    setup = TrainingSetup(method=Method.FULL, precision=Precision.MIXED, batch=1,
                          seq_len=4096, framework=Framework.MEGATRON)
    saved = {s.name: s.bytes_per_token
             for s in block_saved(qwen3, block_spec(qwen3, setup), 4096)}
    assert saved["q_norm_input"] == 2 * qwen3.q_dim
    assert saved["k_norm_rstd"] == 4 * qwen3.n_kv_heads
    assert "q_norm_input_fp32" not in saved and "experts_act_out" not in saved
    hf = {s.name for s in block_saved(qwen3, block_spec(
        qwen3, dataclasses.replace(setup, framework=Framework.HF)), 4096)}
    assert {"q_norm_input_fp32", "experts_act_out"} <= hf


def test_ligers_swiglu_backward_writes_its_gradients_over_gate_and_up() -> None:
    """liger_kernel/ops/swiglu.py `swiglu_backward` stores d(gate) and d(up) into the saved gate
    and up: beside the block's saved tensors the MLP's backward holds d(act*up) alone, one
    intermediate-wide tensor where transformers' SiLU-mul makes three."""
    from vramplan.model.hf_config import parse_config
    from vramplan.training.activations.backward import block_backward_transient

    arch = parse_config({"model_type": "llama", "hidden_size": 64, "intermediate_size": 1024,
                         "num_hidden_layers": 2, "num_attention_heads": 4,
                         "num_key_value_heads": 4, "vocab_size": 100,
                         "max_position_embeddings": 256})
    plain = dataclasses.replace(hf_full_spec(), attention=Attention.SDPA)
    liger = dataclasses.replace(plain, liger_kernels=True)
    # bf16: 3 x 2 x 1024 without; with Liger the larger of 1 x 2 x 1024 and the RMSNorm's five
    # fp32 hidden-wide tensors (5 x 4 x 64)
    assert block_backward_transient(arch, plain) == 3 * 2 * 1024
    assert block_backward_transient(arch, liger) == 2 * 1024


def test_a_quantized_base_hands_its_outputs_back_in_its_inputs_dtype() -> None:
    """bitsandbytes' `Linear4bit.forward` ends with `out.to(inp_dtype)`: under `amp` the MLP reads
    the fp32 norm output, so gate and up come back in fp32, and the SiLU and the product the
    frozen down projection reads stay fp32 (not autocast's ops): gate, act(gate) and up, 11,008
    values each, at 4 bytes rather than 2."""
    amp = lora_spec(autocast=True, residual_bytes=4)
    quantized = dataclasses.replace(amp, base_output_in_input_dtype=True)
    assert total_per_token(block_saved(LLAMA, quantized, 512)) \
        - total_per_token(block_saved(LLAMA, amp, 512)) == 3 * 11008 * (4 - 2)
    # in bf16 the input is 16-bit: nothing changes
    bf16 = lora_spec()
    assert block_saved(LLAMA, dataclasses.replace(bf16, base_output_in_input_dtype=True), 512) \
        == block_saved(LLAMA, bf16, 512)



MIXTRAL = architecture_of(find_model("mixtral-8x7b"))


def _mixtral_lora_spec(**changes: object) -> BlockSpec:
    spec = dataclasses.replace(hf_full_spec(), weights_train=False, lora_targets=Q_V,
                               attention=Attention.FLASH, model_dropout=False)
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def test_transformers_expert_loop_saves_each_weighted_output_for_index_add() -> None:
    """transformers v4.48.1 `MixtralSparseMoeBlock.forward`: `final_hidden_states.index_add_(0,
    top_x, current_hidden_states.to(hidden_states.dtype))`, whose backward (torch 2.4.1
    `IndexAddBackward0`) keeps `source`: per routed copy (2 per token) the weighted output,
    4,096 values in the routing weights' dtype, the layer's input's (bf16 here), beyond what
    `grouped_mm`'s layer saves."""
    bf16 = _mixtral_lora_spec()
    assert total_per_token(block_saved(MIXTRAL, dataclasses.replace(bf16, moe_expert_loop=True),
                                       4096)) \
        - total_per_token(block_saved(MIXTRAL, bf16, 4096)) == 2 * 4096 * 2


def test_quantized_experts_in_transformers_loop_follow_their_fp32_input() -> None:
    """The same loop under QLoRA with fp32 norms (peft's `prepare_model_for_kbit_training`):
    each expert's `MixtralBlockSparseTop2MLP` (w1, w3, w2: `Linear4bit`, which hand their outputs
    back in their input's dtype) reads the fp32 norm output, so per routed copy w1's and w3's
    outputs and act(w1) (14,336 values each) and w2's output (4,096) are at 4 bytes rather than
    2, and so is the routing weight (`routing_weights.to(hidden_states.dtype)`); the weighted
    output `index_add_` keeps is fp32 (4,096 x 4)."""
    fp32_norms = _mixtral_lora_spec(residual_bytes=4, base_output_in_input_dtype=True)
    looped = dataclasses.replace(fp32_norms, moe_expert_loop=True)
    assert total_per_token(block_saved(MIXTRAL, looped, 4096)) \
        - total_per_token(block_saved(MIXTRAL, fp32_norms, 4096)) \
        == 2 * ((3 * 14336 + 4096 + 1) * (4 - 2) + 4096 * 4)


@pytest.mark.parametrize(("model", "method", "code_date", "looped"), [
    ("mixtral-8x7b", Method.QLORA, "2025-02-07", True),  # v4.48.1: a loop of nn.Linear MLPs
    ("mixtral-8x7b", Method.LORA, "2025-02-07", True),
    ("mixtral-8x7b", Method.QLORA, "2026-01-26", False),  # v5.0.0: 3-D expert parameters
    ("mixtral-8x7b", Method.QLORA, None, False),  # today's code
    ("gpt-oss-20b", Method.QLORA, "2025-10-01", False),  # 3-D expert parameters from the first
])
def test_the_expert_loop_runs_in_transformers_before_v5(
        model: str, method: Method, code_date: str | None, looped: bool) -> None:
    from datetime import date

    quant = {"quant": Quant.NF4_DQ} if method is Method.QLORA else {}
    setup = TrainingSetup(method=method, precision=Precision.BF16_TRUE, lora_targets=Q_V,
                          batch=1, seq_len=4096, framework=Framework.HF,
                          code_date=None if code_date is None else date.fromisoformat(code_date),
                          **quant)  # type: ignore[arg-type]
    assert block_spec(architecture_of(find_model(model)), setup).moe_expert_loop is looped


QWEN3_MOE = architecture_of(find_model("qwen3-30b-a3b"))


def test_megatron_experts_weighted_in_their_activation_keep_no_down_output() -> None:
    """Megatron-LM since 2659630721 (2025-04-09 on main, released in core_v0.12.1): the routing
    probabilities weight the experts'
    SwiGLU (`weighted_bias_swiglu_impl`) and `unpermute` runs without them, so nothing keeps
    the experts' fc2 output; before it `unpermute(..., probs=self.probs)` kept it, per routed
    copy (8 per token on Qwen3-30B-A3B) the hidden width (2,048) in bf16."""
    spec = dataclasses.replace(hf_full_spec(), framework=Framework.MEGATRON,
                               attention=Attention.FLASH, model_dropout=False)
    weighted_after = dataclasses.replace(spec, moe_output_weighted=True)
    weighted_in_act = dataclasses.replace(spec, moe_output_weighted=False)
    assert total_per_token(block_saved(QWEN3_MOE, weighted_after, 4096)) \
        - total_per_token(block_saved(QWEN3_MOE, weighted_in_act, 4096)) == 8 * 2048 * 2


@pytest.mark.parametrize(("framework", "code_date", "weighted"), [
    (Framework.MEGATRON, "2025-03-14", True),  # core_v0.11.0: unpermute with probs
    # 2659630721 of 2025-04-09 is not in core_r0.11.0 or core_v0.12.0 (2025-05-06)
    (Framework.MEGATRON, "2025-04-29", True),
    (Framework.MEGATRON, "2025-05-20", False),  # core_v0.12.1: probs in the experts' SwiGLU
    (Framework.MEGATRON, None, False),  # today's code
    (Framework.HF, None, True),  # transformers: proj_out * sample_weights
])
def test_megatron_weights_its_experts_in_their_activation_since_core_v0_12_1(
        framework: Framework, code_date: str | None, weighted: bool) -> None:
    from datetime import date

    setup = TrainingSetup(method=Method.FULL, precision=Precision.MIXED, batch=1, seq_len=4096,
                          framework=framework,
                          code_date=None if code_date is None else date.fromisoformat(code_date))
    assert block_spec(QWEN3_MOE, setup).moe_output_weighted is weighted


def test_megatron_experts_keep_the_tokens_gathered_over_expert_tensor_parallelism() -> None:
    """Megatron-Core's alltoall dispatcher all-gathers the routed tokens over the
    expert-tensor-parallel group (the tensor-parallel degree by default) before the grouped fc1,
    which keeps them: the routed input counts that many times one GPU's share (8 routed copies
    of 2,048 bf16 values per token on Qwen3-30B-A3B), the rest of the layer once."""
    spec = dataclasses.replace(hf_full_spec(), framework=Framework.MEGATRON,
                               attention=Attention.FLASH, model_dropout=False)
    one, two = (block_saved(QWEN3_MOE, dataclasses.replace(spec, experts_gathered=n), 4096)
                for n in (1, 2))
    assert total_per_token(two) - total_per_token(one) == 8 * 2048 * 2


def test_megatron_tensor_parallelism_gathers_the_experts_tokens_per_gpu() -> None:
    """The per-GPU step of a Megatron-LM run with tensor parallelism sets the gather; DDP alone
    or another framework does not."""
    from vramplan.distributed.defaults import default_parallelism
    from vramplan.distributed.per_gpu import estimate_per_gpu
    from vramplan.vocab import Scheme

    def gathered(framework: Framework, tensor_parallel: int) -> int:
        setup = TrainingSetup(method=Method.FULL, precision=Precision.MIXED, batch=1,
                              seq_len=4096, framework=framework)
        plan = default_parallelism(setup, Scheme.DDP, 4, tensor_parallel=tensor_parallel)
        return estimate_per_gpu(QWEN3_MOE, setup, plan).single.setup.experts_gathered

    assert gathered(Framework.MEGATRON, 2) == 2
    assert gathered(Framework.MEGATRON, 1) == 1
    assert gathered(Framework.HF, 2) == 1


def test_peft_expert_adapters_keep_each_layers_merged_experts_and_their_inputs() -> None:
    """peft's `target_parameters` LoRA on transformers 5's fused experts: every MoE layer keeps
    the merged W + B·A of each adapted expert parameter (Qwen3-30B-A3B: 128 experts x (2 x 768 +
    768) x 2,048 in bf16, 1.21 GB a layer) and the inputs of the adapted matmuls (8 routed copies
    of 2,048 and of 768 values a token); transformers' per-expert loop before v5 (Mixtral's, dated
    2024) is peft's usual adapter, not this; the attention alone adapted, nothing of it."""
    from datetime import date

    from vramplan.model.lora_targets import parse_lora_targets
    from vramplan.training.specs import block_spec

    def spec(targets: str, **changes: object) -> BlockSpec:
        setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=2,
                              seq_len=4096, framework=Framework.HF,
                              lora_targets=parse_lora_targets(targets))
        return block_spec(QWEN3_MOE, dataclasses.replace(setup, **changes))

    merged = 128 * (2 * 768 + 768) * 2048 * 2
    assert spec("all").experts_merged_per_token == -(-merged // (2 * 4096))
    assert spec("down").experts_merged_per_token == -(-(128 * 768 * 2048 * 2) // (2 * 4096))
    assert spec("q;v").experts_merged_per_token == 0
    assert spec("all", framework=Framework.MEGATRON).experts_merged_per_token == 0
    saved = {s.name: s.bytes_per_token for s in block_saved(QWEN3_MOE, spec("all"), 4096)}
    assert saved["routed_input"] == 8 * 2048 * 2 and saved["experts_down_input"] == 8 * 768 * 2
    assert "routed_input" not in {s.name for s in block_saved(QWEN3_MOE, spec("q;v"), 4096)}
    mixtral = architecture_of(find_model("mixtral-8x7b"))
    loop = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=1,
                         seq_len=4096, framework=Framework.HF, code_date=date(2024, 6, 1),
                         lora_targets=parse_lora_targets("all"))
    assert block_spec(mixtral, loop).experts_merged_per_token == 0


TINY_MIXTRAL = parse_config({
    "model_type": "mixtral", "vocab_size": 512, "hidden_size": 128, "intermediate_size": 352,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 1024,
    "sliding_window": None})


@pytest.mark.parametrize(("fp32", "measured"), [(False, 2016), (True, 5056)])
def test_peft_adapters_on_the_per_expert_loop_keep_the_experts_rows(
        fp32: bool, measured: int) -> None:
    """transformers' per-expert loop (v4) with peft's adapters on w1, w2 and w3: what a 2-layer
    Mixtral (8 experts, top-2, hidden 128, width 352, bf16, r 8, no autocast) saved in forward
    beyond q and v alone, measured on the CPU on 2026-12-06 with transformers 4.48.3 and peft
    0.14.0 (autograd's saved tensors, parameters left out, 2 x 128 tokens over 2 layers):
    1,032,192 bytes with bf16 adapters, 2,588,672 with fp32 ones, per token and layer 2,016 and
    5,056."""
    from datetime import date

    from vramplan.model.lora_targets import parse_lora_targets
    from vramplan.training.specs import block_spec

    def per_token(targets: str) -> int:
        setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=2,
                              seq_len=128, framework=Framework.GENERIC, code_date=date(2025, 2, 1),
                              lora_rank=8, lora_targets=parse_lora_targets(targets),
                              adapters_fp32=fp32, no_autocast=True, attention=Attention.SDPA)
        spec = block_spec(TINY_MIXTRAL, setup)
        assert spec.moe_expert_loop
        return total_per_token(block_saved(TINY_MIXTRAL, spec, 128))

    assert per_token("q;v;gate;up;down") - per_token("q;v") == measured


Q_V_O = frozenset({LoraTarget.Q, LoraTarget.V, LoraTarget.O})


def _peft_spec(**changes: object) -> BlockSpec:
    """A transformers LoRA block on llama-2-7b (h = q = 4096) with q, v and o adapted, rank 8."""
    return lora_spec(framework=Framework.HF, lora_targets=Q_V_O, **changes)


def test_peft_fp32_adapters_under_the_trainers_autocast_each_save_a_16bit_copy() -> None:
    """Case (a): peft copies each adapter's bf16 input to fp32 (`_cast_input_dtype`) and lora_A,
    under the Trainer's bf16 autocast, saves its own bf16 cast of that copy. q and v no longer
    share the norm's output (one more 2 h), and o keeps a copy beside SDPA's output (2 h more)."""
    h = 4096
    bf16 = total_per_token(block_saved(LLAMA, _peft_spec(lora_dropout=False), 512))
    fp32 = total_per_token(block_saved(LLAMA, _peft_spec(
        lora_dropout=False, autocast_16bit_weights=True, adapter_input_fp32=True), 512))
    assert fp32 - bf16 == 2 * h + 2 * h


def test_peft_fp32_adapters_with_dropout_under_autocast_save_what_bf16_ones_do() -> None:
    """Case (b): dropout on the fp32 copy saves its bool mask (1 byte) and lora_A a bf16 cast of
    the fp32 output (2 bytes): what a bf16 adapter's dropout saves."""
    bf16 = block_saved(LLAMA, _peft_spec(), 512)
    fp32 = block_saved(LLAMA, _peft_spec(autocast_16bit_weights=True, adapter_input_fp32=True),
                       512)
    assert fp32 == bf16


@pytest.mark.parametrize(("dropout", "extra"), [
    # each adapter: an fp32 copy (4 h) for the shared bf16 norm output (2 h, once for q and v)
    # or beside SDPA's output (o), and an fp32 lora_A output (4 r for 2 r)
    (False, (2 * 4 * 4096 - 2 * 4096) + 4 * 4096 + 3 * (4 - 2) * 8),
    # each adapter's dropout output is fp32 (4 h for 2 h), its mask unchanged
    (True, 3 * (4 - 2) * 4096 + 3 * (4 - 2) * 8),
])
def test_peft_fp32_adapters_without_autocast_save_fp32_copies(dropout: bool, extra: int) -> None:
    """Case (c): a bf16 model run without autocast; lora_A and lora_B compute in fp32."""
    bf16 = total_per_token(block_saved(LLAMA, _peft_spec(lora_dropout=dropout), 512))
    fp32 = total_per_token(block_saved(LLAMA, _peft_spec(
        lora_dropout=dropout, adapter_input_fp32=True), 512))
    assert fp32 - bf16 == extra


def test_autograd_saves_each_adapters_own_copy_of_peft_fp32_input() -> None:
    """The rules behind cases (a) and (c), replayed on the CPU with peft's three lines
    (`x = x.to(lora_A.weight.dtype)`, then `lora_B(lora_A(dropout(x)))`, dropout an
    `nn.Identity`): two fp32 adapters over one bf16 input save two distinct tensors, fp32 copies
    without autocast, bf16 casts under bf16 autocast."""
    torch = pytest.importorskip("torch")
    x = torch.randn(6, 16, dtype=torch.bfloat16, requires_grad=True)
    adapters = [(torch.nn.Linear(16, 4, bias=False), torch.nn.Linear(4, 8, bias=False))
                for _ in range(2)]

    def saved_inputs(autocast: bool) -> list[object]:
        saved: list[object] = []

        def pack(tensor: object) -> object:
            saved.append(tensor)
            return tensor

        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast), \
                torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            for lora_a, lora_b in adapters:
                lora_b(lora_a(x.to(lora_a.weight.dtype)))
        return [t for t in saved if tuple(t.shape) == (6, 16)]  # type: ignore[attr-defined]

    plain = saved_inputs(autocast=False)
    assert [t.dtype for t in plain] == [torch.float32] * 2  # type: ignore[attr-defined]
    cast = saved_inputs(autocast=True)
    assert [t.dtype for t in cast] == [torch.bfloat16] * 2  # type: ignore[attr-defined]
    assert all(t is not x for t in cast) and cast[0] is not cast[1]


@pytest.mark.parametrize(("changes", "autocast", "copies"), [
    ({}, True, True),  # the Trainer's bf16=True on a bf16 model, peft >= 0.12.0
    ({"no_autocast": True}, False, True),  # a plain loop on the bf16 model
    ({"method": Method.QLORA, "quant": Quant.NF4}, True, False),  # bnb casts only without autocast
    ({"method": Method.QLORA, "quant": Quant.NF4, "no_autocast": True}, False, True),
    ({"framework": Framework.UNSLOTH}, True, False),  # Unsloth's own LoRA forwards
    ({"adapters_gathered_16bit": True}, True, False),  # accelerate's FSDP param_dtype
    ({"adapters_fp32": False}, True, False),  # DeepSpeed's engine, the tracer
    ({"code_date": "2024-06-01"}, True, False),  # before peft v0.12.0: bf16 adapters
    # fp32 weights, fp32 adapters: a 16-bit input (o's, down's) is copied, autocast casts back
    ({"precision": Precision.AMP}, False, True),
    ({"framework": Framework.LITGPT}, False, False),  # litgpt's own adapters
])
def test_which_setups_copy_the_adapters_input_to_fp32(
        changes: dict[str, object], autocast: bool, copies: bool) -> None:
    from datetime import date

    if "code_date" in changes:
        changes = {**changes, "code_date": date.fromisoformat(str(changes["code_date"]))}
    setup = dataclasses.replace(TrainingSetup(
        method=Method.LORA, precision=Precision.BF16_TRUE, lora_targets=Q_V,
        framework=Framework.HF), **changes)  # type: ignore[arg-type]
    spec = block_spec(LLAMA, setup)
    assert (spec.autocast_16bit_weights, spec.adapter_input_fp32) == (autocast, copies)


@pytest.mark.parametrize(("targets", "graphless"), [
    (Q_V, ("q", "k", "v")),
    (frozenset({LoraTarget.O}), ("q", "k", "v", "o")),
    (frozenset({LoraTarget.GATE}), ("q", "k", "v", "o", "gate", "up", "router")),
    (frozenset({LoraTarget.DOWN}), ("q", "k", "v", "o", "gate", "up", "router", "down")),
])
def test_the_first_lora_blocks_graphless_linears_follow_its_adapters(
        targets: frozenset[LoraTarget], graphless: tuple[str, ...]) -> None:
    setup = TrainingSetup(method=Method.LORA, precision=Precision.AMP, lora_targets=targets)
    assert first_block_graphless_linears(LLAMA, block_spec(LLAMA, setup)) == graphless


def test_the_first_lora_block_reads_the_frameworks_default_targets() -> None:
    """An empty target set is the framework's default (q and v for transformers), not no
    adapter: its first block under autocast saves what q and v adapted make it save."""
    default = TrainingSetup(method=Method.LORA, precision=Precision.AMP, framework=Framework.HF)
    named = dataclasses.replace(default, lora_targets=Q_V)
    assert first_block_graphless_linears(LLAMA, block_spec(LLAMA, default)) == ("q", "k", "v")
    assert estimate_training(LLAMA, default).allocated_bytes \
        == estimate_training(LLAMA, named).allocated_bytes


TINY_LLAMA = parse_config({"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2,
                           "num_attention_heads": 4, "num_key_value_heads": 2,
                           "intermediate_size": 352, "vocab_size": 512,
                           "max_position_embeddings": 1024})


@pytest.mark.parametrize(("reentrant", "per_token"), [(False, 9368), (True, 9208)])
def test_recomputed_forward_peak_tallied_by_hand(reentrant: bool, per_token: int) -> None:
    """A 128-wide Llama block (intermediate 352), LoRA on gate, up and down with peft's fp32
    adapters over bf16 weights, recomputed under full checkpointing. Saved up to up's adapter:
    the norms' fp32 inputs (2 x 512) and rstd (2 x 4), q 256, k and v 128 each, SDPA's output
    256 and log-sum-exp 16, gate's and up's fp32 input copies (2 x 512) and lora_A outputs
    (2 x 32), gate's output and act(gate) (2 x 704): 4,312. Non-reentrant, up's adapter ends
    with its base output (704), lora_B's fp32 output and its scaled copy (2 x 1,408), the
    residual and the second norm's output (2 x 256), the incoming gradient (256) and down's
    adapter gradients, fp32 and its bf16 cast (512 + 256): 9,368 bytes a token, the traced
    live set at the peak (vramplan.tracer, 2 x 128 tokens, 2,398,208 bytes above the
    checkpoints). Reentrant, the whole forward runs again before any gradient: down's adapter
    ends last, beside every saved tensor (6,456), the product (704), its base output (256),
    lora_B's output and its scaled copy (2 x 512), the locals and the incoming gradient: 9,208."""
    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, framework=Framework.HF,
                          lora_targets=frozenset({LoraTarget.GATE, LoraTarget.UP,
                                                  LoraTarget.DOWN}),
                          lora_rank=8, adapters_fp32=True, no_autocast=True,
                          attention=Attention.SDPA, checkpointing=Checkpointing.FULL)
    spec = block_spec(TINY_LLAMA, setup)
    assert not spec.lora_dropout and spec.adapter_input_fp32
    assert recomputed_forward_peak(TINY_LLAMA, spec, 128, reentrant=reentrant) == per_token


def test_recomputed_forward_peak_only_where_a_moment_is_modelled() -> None:
    """No adapter on the MLP, or a post-norm block, whose forward is not written: no moment."""
    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, framework=Framework.HF,
                          lora_targets=Q_V, lora_rank=8, adapters_fp32=True,
                          checkpointing=Checkpointing.FULL)
    assert recomputed_forward_peak(LLAMA, block_spec(LLAMA, setup), 512, reentrant=False) == 0
    mlp = dataclasses.replace(setup, lora_targets=frozenset({LoraTarget.UP}))
    assert recomputed_forward_peak(LLAMA, block_spec(LLAMA, mlp), 512, reentrant=False) > 0
    post_norm = dataclasses.replace(LLAMA, norms_after_sublayers=True)
    assert recomputed_forward_peak(post_norm, block_spec(post_norm, mlp), 512,
                                   reentrant=False) == 0


DEEPSEEK_V3 = architecture_of(find_model("deepseek-v3")).kind_view(True)


def test_moe_weighting_backward_tallied_by_hand() -> None:
    """transformers 5's grouped experts (integrations/moe.py `grouped_mm_experts_forward`, v5.25)
    weight each routed copy's output and put the copies back in token order: backward writes
    their gradient into zeros beside the sum's (three copy-wide tensors), then the product's
    backward holds its two products, and the experts' backward three tensors of the copies'
    width. Qwen3-30B-A3B (8 copies, hidden 2048, experts 768 wide, bf16 top-k weights): three
    bf16 copy-wide tensors. DeepSeek-V3 (fp32 top-k weights): three fp32 ones and the 16-bit
    cast of one, the incoming gradient cast to fp32 by the final `.to()`, less its shared
    expert's saved tensors, freed by the shared expert's backward, which runs first; a block
    recomputed by a non-reentrant checkpoint has dropped the recomputed down projection's
    output by the time of the cast."""
    spec = dataclasses.replace(hf_full_spec(), weights_train=False, lora_targets=Q_V,
                               attention=Attention.FLASH, model_dropout=False)
    assert moe_backward_transient(QWEN3_MOE, spec) == 3 * 2 * 8 * 2048
    h, k, shared = 7168, 8, 2048
    saved = block_saved(DEEPSEEK_V3, spec, 4096)
    shared_saved = sum(item.bytes_per_token for item in saved if item.name.startswith("shared_"))
    assert shared_saved == 3 * 2 * shared  # gate's output, act(gate) and up's output
    assert moe_backward_transient(DEEPSEEK_V3, spec, saved) \
        == (3 * 4 + 2) * k * h + 4 * h - shared_saved
    assert moe_backward_transient(DEEPSEEK_V3, spec, saved, recomputed_released=True) \
        == 3 * 4 * k * h + 4 * h - shared_saved


def test_moe_experts_backward_over_every_copy() -> None:
    """Experts three times as wide as the hidden size: their backward (d(act * up), d(act),
    d(up)) over the 8 routed copies outgrows the weighting's."""
    wide = dataclasses.replace(QWEN3_MOE, moe_intermediate_size=3 * 2048)
    spec = dataclasses.replace(hf_full_spec(), weights_train=False, lora_targets=Q_V,
                               attention=Attention.FLASH, model_dropout=False)
    assert moe_backward_transient(wide, spec) == 3 * 2 * 8 * 3 * 2048


def test_recomputed_moe_layer_reaches_its_reordering_with_the_sums_gradient() -> None:
    """Under non-reentrant full checkpointing the reordering's backward unpacks the inverse
    permutation, the last tensor the layer saves, so the recomputation runs up to it: the
    gathered input (a local: LoRA's frozen experts do not save it), the weighted outputs and
    the gradient the sum's backward made are alive beside everything saved before it."""
    spec = dataclasses.replace(hf_full_spec(), weights_train=False, lora_targets=Q_V,
                               attention=Attention.FLASH, model_dropout=False)
    ledger = block_ledger(QWEN3_MOE, spec, 4096, True)
    h, k = 2048, 8
    saved_before = ledger.total() - 8 * k  # all but the inverse permutation
    assert (saved_before, 3 * 2 * k * h) in ledger.moments
