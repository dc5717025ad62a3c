"""transformers' causal-LM loss as it ran at a row's date: the tensors its versions keep, counted
by hand from huggingface/transformers' source (v4.45.2 models/llama/modeling_llama.py, v4.46.0
and v4.49.0 loss/loss_utils.py), and the dates a row states."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from vramplan.allocator import replay
from vramplan.model.hf_config import parse_config
from vramplan.parts import PartKind
from vramplan.presets.frameworks.transformers import TransformersCode, transformers_code
from vramplan.presets.models import architecture_of, find_model
from vramplan.training.activations.head import HeadSpec, head_and_loss
from vramplan.training.activations.spec import BlockSpec
from vramplan.training.allocations.step import step_program
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Phase, step_shape
from vramplan.training.setup import AlignmentSetup, TrainingSetup, model_loss_code
from vramplan.validation import code_date, read_cases, stated_date
from vramplan.vocab import Attention, Checkpointing, Framework, LoraTarget, Method, Precision

TINY = parse_config({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "vocab_size": 1000, "max_position_embeddings": 256,
                     "tie_word_embeddings": False})
SPEC = BlockSpec(framework=Framework.HF, residual_bytes=2, compute_bytes=2, autocast=False,
                 weights_train=False, base_keeps_input=False, lora_targets=frozenset(),
                 lora_rank=8, lora_dropout=False, attention=Attention.SDPA)
HEAD = HeadSpec(framework=Framework.HF, chunked=False, head_trains=False, head_lora=False,
                head_keeps_input=False, head_dequant_bytes=0)
# OPT, GPT-2, BLOOM, GPT-BigCode, GPT-NeoX and Falcon ran their loss on the 16-bit logits until
# v4.49.0 (v4.45.2 and v4.48.0 wheels: `shift_logits = lm_logits[..., :-1, :].contiguous()`, no
# upcast); Llama until v4.31.0
LEGACY_16BIT = frozenset({"opt", "gpt2", "bloom", "gpt_bigcode", "gpt_neox", "falcon"})
# GPT-NeoX's eager softmax ran in the scores' dtype until v4.49.0 (v4.44.2 to v4.48.0 wheels)
SOFTMAX_16BIT = frozenset({"gpt_neox"})
V4_45 = TransformersCode(logits_fp32_in_model=True, shifts_logits=True, loss_16bit=LEGACY_16BIT,
                         clamped_scores=frozenset({"opt"}), softmax_16bit=SOFTMAX_16BIT)
V4_46 = TransformersCode(logits_fp32_in_model=False, shifts_logits=True, loss_16bit=LEGACY_16BIT,
                         clamped_scores=frozenset({"opt"}), softmax_16bit=SOFTMAX_16BIT)
TODAY = TransformersCode(logits_fp32_in_model=False, shifts_logits=False,
                         warmup_keeps_headroom=True)
V4_30 = TransformersCode(logits_fp32_in_model=True, shifts_logits=True,
                         loss_16bit=LEGACY_16BIT | {"llama"}, clamped_scores=frozenset({"opt"}),
                         softmax_16bit=SOFTMAX_16BIT)




# per-layer rotary tables (`TransformersCode.rope_caches`), read in the wheels: Llama until
# v4.41.0, Mistral until v4.42.0, these seven until v4.45.0, Mixtral until v4.48.0
ROPE_UNTIL_V4_45 = frozenset({"qwen2", "qwen2_moe", "phi", "stablelm", "starcoder2", "falcon",
                              "gpt_neox", "mixtral"})
ROPE_ALL = ROPE_UNTIL_V4_45 | {"llama", "mistral"}


# the model types whose experts run as nn.Linear MLPs in a Python loop before v5.0.0 (v4.48.1 and
# v4.57.6 wheels: MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock, Qwen3MoeSparseMoeBlock,
# OlmoeSparseMoeBlock)
MOE_LOOP = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "olmoe"})

# the prompt cache holds views of the fused q/k/v projection until v4.56.0, BLOOM's from v4.44.0
# (benchmarks/hf_cache_views_cpu.py); per-layer causal-mask buffers: GPT-J until v4.45.0,
# GPT-NeoX until v4.49.0, GPT-2 until v5.2.0 (the buffers of models built in those releases)
VIEWS = frozenset({"gpt2", "gpt_neox", "gpt_bigcode", "phi3", "mpt"})
MASKS = frozenset({"gpt2", "gpt_neox", "gptj"})
BLOOM_TOO = VIEWS | {"bloom"}
NEOX_GPT2 = frozenset({"gpt2", "gpt_neox"})
GPT2 = frozenset({"gpt2"})
# the model types that took no `logits_to_keep` yet (wheels v4.45.2 to v5.0.0): Falcon until
# v4.47.0, GPT-NeoX until v4.49.0, GPT-2 until v4.53.0, these six until v5.0.0
FULL_4_53 = frozenset({"gptj", "gpt_bigcode", "opt", "bloom", "mpt", "gpt_neo"})
FULL_4_49 = FULL_4_53 | {"gpt2"}
FULL_4_47 = FULL_4_49 | {"gpt_neox"}
FULL_4_45 = FULL_4_47 | {"falcon"}


def _dated(code: TransformersCode, *, two_caches: bool = False, all_logits: bool = False,
           warmup: bool = False, tied: bool = False, headroom: bool = False,
           rope: frozenset[str] = frozenset(), reentrant: bool = True,
           around: bool = True, moe_loop: frozenset[str] = MOE_LOOP,
           mask_buffer: int = 0, views: frozenset[str] = VIEWS,
           masks: frozenset[str] = MASKS, full: frozenset[str] = frozenset(),
           clones: bool = False) -> TransformersCode:
    """`code` with the loading and generation behaviours of its date: `generate` holding the
    previous cache and the prefill's outputs before v4.42.0, and every prompt position's logits
    before v4.45.0, the allocator warm-up from v4.50.0 (counting a tied head twice until v4.54.0,
    capped at 95 % of the free memory, then from v4.52.0 at all of it but 1.2 GiB), the model
    types keeping per-layer rotary tables, reentrant checkpointing and the MoE experts' loop
    before v5.0.0, called around each decoder layer before v4.52.0, and v4.38's causal-mask
    buffer (`mask_buffer` bytes an element), the prompt cache's views (`views`), the model
    types with a causal mask per layer (`masks`), those whose prefill still returns every
    position's logits once generate asks for the last (`full`), and generate's copy of them
    (`clones`, v4.45.x and v4.46.x)."""
    return dataclasses.replace(code, generate_holds_two_caches=two_caches,
                               generate_keeps_prefill_outputs=two_caches,
                               generate_all_prompt_logits=all_logits,
                               warms_up_allocator=warmup, warmup_counts_tied=tied,
                               warmup_keeps_headroom=headroom, rope_caches=rope,
                               reentrant_checkpointing=reentrant,
                               checkpoints_around_layers=around,
                               moe_expert_linears=moe_loop,
                               causal_mask_buffer_itemsize=mask_buffer,
                               fused_qkv_cache_views=views, layer_mask_buffers=masks,
                               full_logits_types=full, generate_clones_logits=clones)


@pytest.mark.parametrize(("day", "expected"), [
    (None, TODAY),
    # v4.30.x: Llama had no `logits.float()`
    (date(2023, 7, 17), _dated(V4_30, two_caches=True, all_logits=True, rope=ROPE_ALL)),
    # v4.31.0 added it
    (date(2023, 7, 18), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL)),
    (date(2024, 2, 20), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL)),
    # v4.38.0 and v4.38.1: Llama's and Gemma's int64 causal-mask buffer; v4.38.2: bool
    (date(2024, 2, 21), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL,
                               mask_buffer=8)),
    (date(2024, 2, 29), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL,
                               mask_buffer=8)),
    (date(2024, 3, 1), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL,
                              mask_buffer=1)),
    (date(2024, 3, 19), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL,
                               mask_buffer=1)),
    # v4.39.0: the mask is built per forward
    (date(2024, 3, 20), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL)),
    (date(2024, 5, 16), _dated(V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL)),
    # v4.41.0: Llama's rotary tables are gone
    (date(2024, 5, 17), _dated(V4_45, two_caches=True, all_logits=True,
                               rope=ROPE_UNTIL_V4_45 | {"mistral"})),
    (date(2024, 6, 26), _dated(V4_45, two_caches=True, all_logits=True,
                               rope=ROPE_UNTIL_V4_45 | {"mistral"})),
    # v4.42.0: generate keeps one DynamicCache and deletes each step's outputs; Mistral's
    # rotary tables are gone
    (date(2024, 6, 27), _dated(V4_45, all_logits=True, rope=ROPE_UNTIL_V4_45)),
    (date(2024, 8, 5), _dated(V4_45, all_logits=True, rope=ROPE_UNTIL_V4_45)),
    # v4.44.0: BLOOM's cache holds views of its projection too
    (date(2024, 8, 6), _dated(V4_45, all_logits=True, rope=ROPE_UNTIL_V4_45,
                              views=BLOOM_TOO)),
    (date(2024, 9, 24), _dated(V4_45, all_logits=True, rope=ROPE_UNTIL_V4_45,
                               views=BLOOM_TOO)),
    # v4.45.0: the last position's logits only; rotary tables left in Mixtral only; GPT-J's
    # masks are gone
    (date(2024, 9, 25), _dated(V4_45, rope=frozenset({"mixtral"}), views=BLOOM_TOO,
                               masks=NEOX_GPT2, full=FULL_4_45, clones=True)),
    (date(2024, 10, 23), _dated(V4_45, rope=frozenset({"mixtral"}), views=BLOOM_TOO,
                                masks=NEOX_GPT2, full=FULL_4_45, clones=True)),
    # v4.46.0: `self.loss_function` upcasts
    (date(2024, 10, 24), _dated(V4_46, rope=frozenset({"mixtral"}), views=BLOOM_TOO,
                                masks=NEOX_GPT2, full=FULL_4_45, clones=True)),
    # v4.47.0: Falcon takes logits_to_keep; generate slices before copying
    (date(2024, 12, 5), _dated(V4_46, rope=frozenset({"mixtral"}), views=BLOOM_TOO,
                               masks=NEOX_GPT2, full=FULL_4_47)),
    (date(2025, 1, 9), _dated(V4_46, rope=frozenset({"mixtral"}), views=BLOOM_TOO,
                              masks=NEOX_GPT2, full=FULL_4_47)),
    # v4.48.0: Mixtral's are gone
    (date(2025, 1, 10), _dated(V4_46, views=BLOOM_TOO, masks=NEOX_GPT2, full=FULL_4_47)),
    (date(2025, 2, 16), _dated(V4_46, views=BLOOM_TOO, masks=NEOX_GPT2, full=FULL_4_47)),
    # v4.49.0: the labels are padded and shifted; GPT-NeoX's masks are gone, its softmax fp32
    (date(2025, 2, 17), _dated(TODAY, views=BLOOM_TOO, masks=GPT2, full=FULL_4_49)),
    # v4.50.0: the warm-up
    (date(2025, 3, 21), _dated(TODAY, warmup=True, tied=True, views=BLOOM_TOO, masks=GPT2,
                               full=FULL_4_49)),
    (date(2025, 5, 19), _dated(TODAY, warmup=True, tied=True, views=BLOOM_TOO, masks=GPT2,
                               full=FULL_4_49)),
    # v4.52.0: it leaves 1.2 GiB free; GradientCheckpointingLayer checkpoints inside the layer
    (date(2025, 5, 20), _dated(TODAY, warmup=True, tied=True, headroom=True, around=False,
                               views=BLOOM_TOO, masks=GPT2, full=FULL_4_49)),
    # v4.53.0: GPT-2 takes logits_to_keep
    (date(2025, 6, 26), _dated(TODAY, warmup=True, tied=True, headroom=True, around=False,
                               views=BLOOM_TOO, masks=GPT2, full=FULL_4_53)),
    # v4.54.0: the warm-up skips tied weights
    (date(2025, 7, 25), _dated(TODAY, warmup=True, headroom=True, around=False,
                               views=BLOOM_TOO, masks=GPT2, full=FULL_4_53)),
    # v4.56.0: the cache copies its first entry (gpt-oss's expert loop, v4.55.0 to v5.0.0, on)
    (date(2025, 8, 29), dataclasses.replace(
        _dated(TODAY, warmup=True, headroom=True, around=False, views=frozenset(), masks=GPT2,
               full=FULL_4_53),
        gpt_oss_expert_loop=True)),
    # v5.0.0: non-reentrant checkpointing
    (date(2026, 1, 26), dataclasses.replace(TODAY, layer_mask_buffers=GPT2)),
    (date(2026, 2, 16), TODAY),  # v5.2.0: GPT-2's masks are gone
])
def test_transformers_code_by_the_dates_of_its_releases(day: date | None,
                                                        expected: TransformersCode) -> None:
    assert transformers_code(day) == expected


def _loss(code: TransformersCode, compute: int = 2) -> tuple[int, int]:
    head = dataclasses.replace(HEAD, logits_fp32_in_model=code.logits_fp32_in_model,
                               shifts_logits=code.shifts_logits)
    loss = head_and_loss(TINY, dataclasses.replace(SPEC, compute_bytes=compute), head, 2, 8)
    return loss.forward_peak_bytes, loss.backward_peak_bytes


def test_the_shifted_loss_of_v4_45_counted_by_hand() -> None:
    """vocab 1000, batch 2 x 8 tokens: 16 rows, 14 shifted rows. Forward: the fp32 logits the
    model returns (16,000 x 4 B; the bf16 head output is freed by `.float()`), the contiguous
    shifted copy and its log-softmax (14,000 x 4 B each). Backward: the saved log-softmax, the
    NLL's gradient and the log-softmax's gradient (3 x 56,000 B), more than `slice_backward`'s
    zero-filled gradient beside its input (64,000 + 56,000 B)."""
    assert _loss(V4_45) == (64_000 + 56_000 + 56_000, 3 * 56_000)


def test_the_shifted_loss_of_v4_46_keeps_the_16_bit_logits_beside_the_upcast() -> None:
    # bf16 logits returned by the model (32,000 B), the loss's fp32 upcast (64,000 B), the copy
    # and the log-softmax (56,000 B each); backward as in v4.45
    assert _loss(V4_46) == (32_000 + 64_000 + 2 * 56_000, 3 * 56_000)


def test_todays_loss_takes_the_upcast_logits_whole() -> None:
    # bf16 logits, fp32 upcast, fp32 log-softmax of every row; backward: log-softmax and the
    # fp32 gradients of the log-softmax and of the logits
    assert _loss(TODAY) == (32_000 + 64_000 + 64_000, 3 * 64_000)


def test_fp32_logits_are_not_copied_by_the_upcast() -> None:
    # fp32 compute: `.float()` returns the logits themselves in both versions
    assert _loss(V4_45, compute=4) == _loss(V4_46, compute=4) == (64_000 + 2 * 56_000,
                                                                  3 * 56_000)


def _setup(day: date | None, **changes: object) -> TrainingSetup:
    setup = TrainingSetup(method=Method.LORA, precision=Precision.BF16_TRUE, batch=2, seq_len=8,
                          framework=Framework.HF, gradient_accumulation=False, lora_rank=8,
                          code_date=day)
    return dataclasses.replace(setup, **changes)  # type: ignore[arg-type]


def test_only_transformers_own_loss_follows_its_release() -> None:
    assert model_loss_code(_setup(date(2024, 3, 1))) == _dated(
        V4_45, two_caches=True, all_logits=True, rope=ROPE_ALL, mask_buffer=1)
    assert model_loss_code(_setup(None)) == TODAY
    # litgpt's scripts compute their own loss; TRL's preference losses take the logits
    assert model_loss_code(_setup(date(2024, 3, 1), framework=Framework.LITGPT)) == TODAY
    assert model_loss_code(_setup(date(2024, 3, 1),
                                  alignment=AlignmentSetup(Method.DPO))) == TODAY


def test_the_allocation_program_holds_the_shifted_loss() -> None:
    """The program's allocated peak follows the analytic one for both versions (a 32,000-word
    vocabulary over 2 x 512 tokens: the loss is the step's peak)."""
    arch = parse_config({"model_type": "llama", "hidden_size": 256, "intermediate_size": 704,
                         "num_hidden_layers": 2, "num_attention_heads": 4,
                         "num_key_value_heads": 2, "vocab_size": 32000,
                         "max_position_embeddings": 1024, "tie_word_embeddings": False})
    for day in (date(2024, 3, 1), date(2024, 12, 1), None):
        setup = dataclasses.replace(_setup(day), seq_len=512)
        shape = step_shape(arch, setup)
        replayed = replay(step_program(arch, setup, shape))
        analytic = estimate_training(arch, setup).allocated_bytes
        assert replayed.peak_allocated_bytes == pytest.approx(analytic, rel=0.03)


@pytest.mark.parametrize(("text", "expected"), [
    ("Feb-Mar 2024 runs (exact torch/bnb versions not published)", date(2024, 2, 1)),
    ("Zheng et al. 2024, LlamaFactory (arXiv 2403.13372), Table 4", date(2024, 3, 1)),
    ("text added in 6008f272, 2024-03-13; read at 0f0ecfba, 2024-10", date(2024, 3, 13)),
    ("runs in March 2025", date(2025, 3, 1)),
    ("commit not recorded", None),
    ("blog post of Mar 13, 2024", date(2024, 3, 13)),
    ("posted December 11th, 2023", date(2023, 12, 11)),
    ("logs of 2024/03/13", date(2024, 3, 13)),
    ("posted on 12/11/2023", None),  # month first or day first: not said
    ("Feb 30, 2024 (sic)", date(2024, 2, 1)),
])
def test_the_dates_a_row_states(text: str, expected: date | None) -> None:
    assert stated_date(text) == expected


HEADER = ("id,source,model,method,precision,optimizer,optimizer_impl,quant,lora_r,lora_targets,"
          "batch,seq_len,new_tokens,checkpointing,attention,loss,gpus,gpu,sharding,offload,"
          "framework,metric,measured,unit,notes")


def _row(framework: str, source: str, notes: str) -> str:
    return (f'r,"{source}",llama-2-7b,lora,bf16-true,adamw,,,8,q;v,1,512,,none,sdpa,,1,,,,'
            f'{framework},allocated,10,GB,"{notes}"')


@pytest.mark.parametrize(("framework", "source", "notes", "expected"), [
    ("hf", "a paper (arXiv 2403.13372)", "vanilla HF", date(2024, 3, 1)),
    ("llamafactory", "a README", "Feb-Mar 2024 runs", date(2024, 2, 1)),
    # Unsloth: its release (year.month) when the notes name one, else the stated date
    ("hf", "a paper (arXiv 2403.13372)", "LoRA r128, Unsloth kernels", date(2024, 3, 1)),
    ("hf", "a notebook, 2024-12-20", "Unsloth 2024.5 (banner)", date(2024, 5, 1)),
    ("hf", "a notebook", "Unsloth: Fast Llama patching release 2024.10.0", date(2024, 10, 1)),
    ("hf", "a README (commit not recorded)", "no date", None),
    ("torchtune", "a README, 2024-03-13", "", None),
])
def test_a_rows_code_date(framework: str, source: str, notes: str,
                          expected: date | None) -> None:
    (case,) = read_cases(f"{HEADER}\n{_row(framework, source, notes)}\n")
    assert code_date(case) == expected


@pytest.mark.parametrize(("day", "clamped"), [
    (date(2023, 4, 18), {"opt", "llama"}),  # v4.28/4.29: both clamp
    (date(2023, 6, 8), {"opt"}),  # v4.30.0: Llama's clamp gone
    (date(2025, 2, 16), {"opt"}),  # v4.48.x: still in OPTAttention
    (date(2025, 2, 17), set()),  # v4.49.0: OPT's eager_attention_forward
    (None, set()),
])
def test_eager_attention_clamped_its_masked_scores_until_these_releases(
        day: date | None, clamped: set[str]) -> None:
    assert transformers_code(day).clamped_scores == clamped


def test_a_clamped_eager_attention_keeps_its_masked_scores() -> None:
    """`torch.max(attn_weights, finfo.min)` saves its input: one more 16-bit tensor of
    n_heads x seq_len per token in each layer (OPT in DeepSpeed-Chat's April 2023 runs)."""
    from vramplan.presets.models import architecture_of, find_model
    from vramplan.training.activations.block import block_saved
    from vramplan.training.activations.spec import total_per_token
    from vramplan.training.setup import TrainingSetup
    from vramplan.training.specs import block_spec
    from vramplan.vocab import Attention, Framework, Precision

    opt = architecture_of(find_model("opt-1.3b"))

    def per_token(day: date | None) -> int:
        setup = TrainingSetup(precision=Precision.MIXED, framework=Framework.DEEPSPEED,
                              batch=8, seq_len=512, attention=Attention.EAGER, code_date=day)
        return total_per_token(block_saved(opt, block_spec(opt, setup), 512))

    assert per_token(date(2023, 4, 18)) - per_token(None) == 2 * opt.n_heads * 512


# --- gpt-oss's experts under transformers 4.55 to 4.57 ------------------------------------------

def _gpt_oss(method: Method, on: date | None, **changes: object) -> tuple[int, int]:
    """gpt-oss-20b at 4,096 tokens under full checkpointing: (the copies of the experts'
    weights its recomputed layer holds, the backward temporaries), at the blocks' backward."""
    arch = architecture_of(find_model("gpt-oss-20b"))
    lora = method is Method.LORA
    setup = dataclasses.replace(TrainingSetup(
        method=method, precision=Precision.BF16_TRUE, batch=1, seq_len=4096,
        checkpointing=Checkpointing.FULL, framework=Framework.HF, gradient_accumulation=False,
        lora_rank=8 if lora else None,
        lora_targets=frozenset({LoraTarget.Q, LoraTarget.V}) if lora else frozenset(),
        code_date=on), **changes)
    phase = next(p for p in estimate_training(arch, setup).phases
                 if p.phase is Phase.BACKWARD_BLOCKS)
    return (sum(p.memory_bytes for p in phase.parts if p.kind is PartKind.WEIGHT_COPIES),
            sum(p.memory_bytes for p in phase.parts if p.kind is PartKind.BACKWARD_TEMPORARIES))


def test_gpt_oss_experts_loop_from_4_55_to_4_57_and_copy_their_weights_in_4_55() -> None:
    assert not transformers_code(date(2025, 8, 4)).gpt_oss_expert_loop
    assert transformers_code(date(2025, 8, 5)).gpt_oss_expert_copies
    assert transformers_code(date(2025, 8, 29)).gpt_oss_expert_loop
    assert not transformers_code(date(2025, 8, 29)).gpt_oss_expert_copies
    assert not transformers_code(date(2026, 1, 26)).gpt_oss_expert_loop
    assert not transformers_code(None).gpt_oss_expert_loop


def test_gpt_oss_4_55_saves_a_copy_of_every_hit_experts_weights() -> None:
    """v4.55.0's `self.gate_up_proj[expert_idx]` with a one-element index copies the expert's
    2,880 x 5,760 gate_up and 2,880 x 2,880 down matrices (bf16), which the matmuls save: all 32
    experts of the recomputed layer are hit by 4,096 tokens routed to 4 each."""
    copies, _ = _gpt_oss(Method.LORA, date(2025, 8, 6))
    assert copies == 32 * 3 * 2880 * 2880 * 2
    assert _gpt_oss(Method.LORA, date(2025, 9, 1))[0] == 0  # v4.56: views
    assert _gpt_oss(Method.LORA, date(2025, 8, 6), moe_hub_kernel=True)[0] == 0


def test_gpt_oss_expert_loop_holds_the_experts_running_gradient_in_full_fine_tuning() -> None:
    """Each expert's backward hands back a zero tensor of the whole parameter: the 32 experts'
    gradient (3 x 2,880 x 2,880 values each) exists from the first expert's backward on, beside
    one more gate_up-sized zero tensor (2 x 2,880 x 2,880), in bf16."""
    _, loop = _gpt_oss(Method.FULL, date(2025, 9, 1))
    _, grouped = _gpt_oss(Method.FULL, None)
    assert loop - grouped == 32 * 5 * 2880 * 2880 * 2
