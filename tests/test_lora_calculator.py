"""The LoRA calculator: exact against peft on the meta device, published counts, adapter files
byte for byte, DoRA, rsLoRA."""

from __future__ import annotations

from typing import Any

import pytest

from vramplan.lora_calculator import AdapterDtype, LoraResult, estimate_lora, lora_inputs
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.presets.models import architecture_of, find_model
from vramplan.vocab import LoraTarget


def _result(model: str, rank: int, targets: str, dora: bool = False,
            rslora: bool = False) -> LoraResult:
    return estimate_lora(lora_inputs(architecture_of(find_model(model)), rank,
                                     parse_lora_targets(targets), dora=dora, rslora=rslora,
                                     model_name=model))


# Lightning-AI/litgpt tutorials/resource-tables.md, "Finetuning with LoRA on 1 GPU": the
# "Trainable parameters" column, with litgpt's default LoRA (r=8 on the query and value).
@pytest.mark.parametrize(("model", "published"), [
    ("phi-1.5", 1_572_864), ("stablelm-base-alpha-3b", 2_097_152), ("llama-2-7b", 4_194_304),
    ("llama-2-13b", 6_553_600),
])
def test_litgpt_published_trainable_parameters(model: str, published: int) -> None:
    assert _result(model, 8, "q,v").trainable_params == published


def test_dora_adds_one_magnitude_per_output_feature() -> None:
    plain, dora = _result("llama-3.1-8b", 16, "q,v"), _result("llama-3.1-8b", 16, "q,v", True)
    # q: 4096 outputs, v: 1024 outputs (8 KV heads x 128), 32 layers
    assert dora.trainable_params - plain.trainable_params == 32 * (4096 + 1024)


def test_rslora_changes_no_memory() -> None:
    plain, rs = _result("mistral-7b-v0.1", 32, "all"), _result("mistral-7b-v0.1", 32, "all",
                                                                  rslora=True)
    assert rs.trainable_params == plain.trainable_params
    assert rs.adapter_file(AdapterDtype.BF16) == plain.adapter_file(AdapterDtype.BF16)
    assert rs.training_bytes == plain.training_bytes


def test_share_file_and_training_bytes() -> None:
    result = _result("llama-2-7b", 8, "q,v")
    assert result.share_of_model == pytest.approx(4_194_304 / 6_738_415_616)
    assert result.adapter_file(AdapterDtype.FP32).tensor_bytes == 4 * 4_194_304
    assert result.adapter_file(AdapterDtype.BF16).tensor_bytes == 2 * 4_194_304
    assert result.training_bytes == 16 * 4_194_304
    assert result.training_setup() == {"model": "llama-2-7b", "method": "lora", "lora_r": 8,
                                       "lora_targets": "q;v", "dora": False}


# --- against peft itself ---------------------------------------------------------------------

_LLAMA_NAMES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj",
                "up": "up_proj", "down": "down_proj", "head": "lm_head"}
_PHI_NAMES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "dense", "up": "fc1",
              "down": "fc2", "head": "lm_head"}

PEFT_CASES = [
    ("llama-2-7b", 8, "q,v", False, _LLAMA_NAMES),
    ("llama-3.1-8b", 16, "all", False, _LLAMA_NAMES),
    ("llama-3.2-1b", 4, "q,k,v,o,head", True, _LLAMA_NAMES),
    ("mistral-7b-v0.1", 64, "all,head", False, _LLAMA_NAMES),
    ("qwen2.5-7b", 8, "k,v,down", True, _LLAMA_NAMES),
    ("gemma-2-2b", 32, "all", False, _LLAMA_NAMES),
    ("phi-2", 16, "all", False, _PHI_NAMES),
    # fused modules: one adapter on GPT-2's c_attn, on Phi-3's qkv_proj and gate_up_proj
    ("gpt2", 8, "q", False, {"q": "c_attn"}),
    ("phi-3-mini-4k", 8, "q,k,v,gate,up", False,
     {"q": "qkv_proj", "k": "qkv_proj", "v": "qkv_proj", "gate": "gate_up_proj",
      "up": "gate_up_proj"}),
]


def _peft_model(model: str, rank: int, targets: str, dora: bool,
                names: dict[str, str]) -> Any:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    config = transformers.AutoConfig.for_model(**dict(find_model(model).config))
    with torch.device("meta"):
        base = transformers.AutoModelForCausalLM.from_config(config)
    modules = sorted({names[t.value] for t in parse_lora_targets(targets) if t.value in names})
    return peft.get_peft_model(base, peft.LoraConfig(r=rank, target_modules=modules,
                                                     use_dora=dora))


@pytest.mark.parametrize(("model", "rank", "targets", "dora", "names"), PEFT_CASES,
                         ids=[f"{c[0]}-r{c[1]}-{c[2]}{'-dora' if c[3] else ''}"
                              for c in PEFT_CASES])
def test_equals_peft_trainable_parameters(model: str, rank: int, targets: str, dora: bool,
                                          names: dict[str, str]) -> None:
    peft_model = _peft_model(model, rank, targets, dora, names)
    trainable = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    assert _result(model, rank, targets, dora).trainable_params == trainable


@pytest.mark.parametrize(("model", "rank", "targets", "dora"), [
    ("llama-3.2-1b", 8, "q,v", True), ("qwen2.5-0.5b", 8, "all", False),
])
def test_adapter_file_equals_safetensors_byte_for_byte(model: str, rank: int, targets: str,
                                                       dora: bool) -> None:
    torch = pytest.importorskip("torch")
    peft = pytest.importorskip("peft")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    peft_model = _peft_model(model, rank, targets, dora, _LLAMA_NAMES)
    state = peft.get_peft_model_state_dict(peft_model)
    tensors = {name: torch.zeros(t.shape, dtype=torch.bfloat16) for name, t in state.items()}
    data = safetensors_torch.save(tensors, metadata={"format": "pt"})
    assert _result(model, rank, targets, dora).adapter_file(AdapterDtype.BF16).total_bytes == len(
        data)


_TINY_MOE = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
             "num_hidden_layers": 3, "vocab_size": 100, "max_position_embeddings": 64,
             "num_key_value_heads": 2}
MOE_PEFT_CASES = {
    # every layer sparse, no shared expert: `all` is attention by target_modules and the routed
    # experts' 3-D gate_up_proj and down_proj by target_parameters (one adapter each)
    "qwen3-moe-all": ({"model_type": "qwen3_moe", **_TINY_MOE, "num_experts": 4,
                       "num_experts_per_tok": 2, "moe_intermediate_size": 40, "head_dim": 16},
                      "all", ["q_proj", "k_proj", "v_proj", "o_proj"],
                      ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"]),
    # multi-head latent attention: q takes q_a_proj and q_b_proj, k and v share
    # kv_a_proj_with_mqa and kv_b_proj
    "deepseek-v3-attention": ({"model_type": "deepseek_v3", **_TINY_MOE,
                               "num_key_value_heads": 4, "q_lora_rank": 24, "kv_lora_rank": 16,
                               "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 12,
                               "n_routed_experts": 4, "num_experts_per_tok": 2,
                               "n_shared_experts": 1, "moe_intermediate_size": 20,
                               "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1},
                              "q,k,v,o", ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa",
                                          "kv_b_proj", "o_proj"], []),
}


@pytest.mark.parametrize("case", list(MOE_PEFT_CASES))
def test_moe_and_latent_attention_adapters_equal_peft(case: str) -> None:
    # peft's own conversion of target_modules gate_proj/up_proj/down_proj on transformers-5
    # mixtures of experts (peft/utils/transformers_weight_conversion.py) moves them to
    # target_parameters with a doubled rank and leaves dense and shared MLPs without adapters;
    # vramplan counts what target_parameters itself creates, so the MLP names are not given here
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    from vramplan.lora_calculator import lora_inputs as make_inputs
    from vramplan.model.hf_config import parse_config

    config, targets, modules, parameters = MOE_PEFT_CASES[case]
    keys = {key: value for key, value in config.items() if key != "model_type"}
    hf_config = transformers.AutoConfig.for_model(str(config["model_type"]), **keys)
    with torch.device("meta"):
        base = transformers.AutoModelForCausalLM.from_config(hf_config)
    peft_model = peft.get_peft_model(base, peft.LoraConfig(
        r=4, target_modules=modules, target_parameters=parameters or None))
    trainable = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    result = estimate_lora(make_inputs(parse_config(config), 4, parse_lora_targets(targets),
                                       model_name=case))
    assert result.trainable_params == trainable


@pytest.mark.parametrize("written", ["q;v", "q,v", "q_proj v_proj", "['q_proj', 'v_proj']",
                                     "{'v_proj', 'q_proj'}", "[q_proj, v_proj]"])
def test_targets_are_read_as_listed_or_as_peft_prints_them(written: str) -> None:
    assert parse_lora_targets(written) == {LoraTarget.Q, LoraTarget.V}


def test_all_linear_written_with_a_space_is_one_name() -> None:
    assert parse_lora_targets("all linear") == parse_lora_targets("all")


@pytest.mark.parametrize("written", ["q_proj/v_proj", "qv", "q_proj v_prog"])
def test_targets_that_do_not_name_modules_are_refused(written: str) -> None:
    from vramplan.errors import UnknownName

    with pytest.raises(UnknownName):
        parse_lora_targets(written)
