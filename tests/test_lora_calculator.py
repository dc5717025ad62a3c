"""The LoRA calculator: exact against peft on the meta device, published counts, adapter files
byte for byte, DoRA, rsLoRA."""

from __future__ import annotations

from typing import Any

import pytest

from vramplan.lora_calculator import AdapterDtype, LoraResult, estimate_lora, lora_inputs
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.presets.models import architecture_of, find_model


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
