"""Building the real transformers model for a setup: dtype, attention, freezing, LoRA, 4-bit base.

Called inside the fake (or real) tensor context by `vramplan.tracer.run`; the model's own code runs,
so its parameter shapes, buffers and forward are those of transformers itself.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from typing import Any
from unittest import mock

import torch
from torch import nn

from vramplan.errors import OutOfRange, UnknownName
from vramplan.model.hf_config import parse_config
from vramplan.tracer.bnb_emulation import adapters_as_on_bitsandbytes, quantize_linears
from vramplan.tracer.setup import TraceSetup, UnsupportedAttention
from vramplan.tracer.tiled_mlp import tile_mlps
from vramplan.training.setup import TrainingSetup
from vramplan.training.specs import mlp_tile_tokens
from vramplan.vocab import Checkpointing, Framework, Method, Precision

_LLAMA_NAMES = {"q": ("q_proj",), "k": ("k_proj",), "v": ("v_proj",), "o": ("o_proj",),
                "gate": ("gate_proj",), "up": ("up_proj",), "down": ("down_proj",)}
_GPT2_NAMES = {"q": ("attn.c_attn",), "k": ("attn.c_attn",), "v": ("attn.c_attn",),
               "o": ("attn.c_proj",), "up": ("mlp.c_fc",), "down": ("mlp.c_proj",)}
_FUSED_QKV_NAMES = {"q": ("query_key_value",), "k": ("query_key_value",),
                    "v": ("query_key_value",), "o": ("attention.dense", "self_attention.dense"),
                    "up": ("dense_h_to_4h",), "down": ("dense_4h_to_h",)}
# multi-head latent attention (modeling_deepseek_v2.py, modeling_deepseek_v3.py): the query path
# is q_a_proj/q_b_proj with a `q_lora_rank`, one q_proj without; keys and values share
# kv_a_proj_with_mqa and kv_b_proj. The dense MLP and the shared experts are Llama's
# gate/up/down_proj linears; the routed experts are 3-D parameters, no linear.
_MLA_NAMES = {**_LLAMA_NAMES, "q": ("q_a_proj", "q_b_proj", "q_proj"),
              "k": ("kv_a_proj_with_mqa", "kv_b_proj"), "v": ("kv_a_proj_with_mqa", "kv_b_proj")}
LORA_MODULE_NAMES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "gpt2": _GPT2_NAMES,
    "gpt_bigcode": _GPT2_NAMES,
    "falcon": _FUSED_QKV_NAMES,
    "gpt_neox": _FUSED_QKV_NAMES,
    "phi": {**_LLAMA_NAMES, "o": ("self_attn.dense",), "up": ("fc1",), "down": ("fc2",)},
    "gptj": {**_LLAMA_NAMES, "o": ("out_proj",), "up": ("fc_in",), "down": ("fc_out",)},
    "opt": {**_LLAMA_NAMES, "o": ("out_proj",), "up": ("fc1",), "down": ("fc2",)},
    "bloom": _FUSED_QKV_NAMES,
    "gpt_neo": {**_LLAMA_NAMES, "o": ("out_proj",), "up": ("c_fc",), "down": ("c_proj",)},
    "mpt": {"q": ("Wqkv",), "k": ("Wqkv",), "v": ("Wqkv",), "o": ("out_proj",),
            "up": ("up_proj",), "down": ("down_proj",)},
    "phi3": {"q": ("qkv_proj",), "k": ("qkv_proj",), "v": ("qkv_proj",), "o": ("o_proj",),
             "gate": ("gate_up_proj",), "up": ("gate_up_proj",), "down": ("down_proj",)},
    "deepseek_v2": _MLA_NAMES,
    "deepseek_v3": _MLA_NAMES,
    "starcoder2": {**_LLAMA_NAMES, "up": ("c_fc",), "down": ("c_proj",)},
}
"""Module-name suffixes of each case-format LoRA target, per `model_type` whose names differ from
Llama's (read from each family's modeling file in transformers). A fused projection (GPT-2's c_attn,
Falcon's query_key_value, Phi-3's qkv_proj) gets one adapter when any of its parts is targeted."""


@contextlib.contextmanager
def _values_free_init() -> Iterator[None]:
    """On fake tensors, `trunc_normal_` as an in-place normal draw: torch's redraws the values
    outside the bounds (torch/nn/init.py `_no_grad_trunc_normal_`: `if not mask.any()`), a
    question a fake tensor cannot answer (SigLIP's `lecun_normal_` in the vision tower of
    Gemma 3 4B and larger raised `DataDependentOutputException`). A real tensor keeps torch's
    own; either writes in place, and no value decides what a step allocates."""
    from torch._subclasses.fake_tensor import FakeTensor
    from transformers import initialization

    if not isinstance(torch.empty(0), FakeTensor):
        yield
        return

    def trunc_normal_(tensor: torch.Tensor, *, mean: float = 0.0, std: float = 1.0,
                      a: float = -2.0, b: float = 2.0, generator: Any = None) -> torch.Tensor:
        # transformers' initialization.trunc_normal_ passes all but the tensor by keyword
        with torch.no_grad():
            return tensor.normal_(mean, std, generator=generator).clamp_(a, b)

    with mock.patch.dict(initialization.TORCH_INIT_FUNCTIONS, {"trunc_normal_": trunc_normal_}):
        yield


def build_model(setup: TraceSetup) -> nn.Module:
    """The transformers causal LM of `setup.model_config` in the setup's dtype, training-ready."""
    from transformers import AutoConfig, AutoModelForCausalLM

    config_keys = dict(setup.model_config)
    model_type = config_keys.pop("model_type", None)
    if not isinstance(model_type, str):
        raise UnknownName("model_type", str(model_type), ["a transformers model_type"])
    from vramplan.model.hf_moe_families import TRANSFORMERS_MODEL_TYPE
    from vramplan.model.hf_remote_code import REMOTE_CODE_TYPES

    if model_type in REMOTE_CODE_TYPES:  # its code is the checkpoint's own, not transformers'
        raise UnknownName("model_type", model_type,
                          ["a model_type known to transformers (remote code is not traced: "
                           "`vramplan fit --model NAME` estimates it without a trace)"])
    model_type = TRANSFORMERS_MODEL_TYPE.get(model_type, model_type)  # kimi_k2: deepseek_v3
    config_keys.pop("quantization_config", None)  # the logical model, in the setup's dtype
    for key in ("torch_dtype", "dtype", "architectures", "transformers_version"):
        config_keys.pop(key, None)
    try:
        config = AutoConfig.for_model(model_type, **config_keys)
    except ValueError:
        raise UnknownName("model_type", model_type,
                          ["a model_type known to transformers"]) from None
    config.use_cache = False  # a training step keeps no KV cache
    dtype = weights_dtype(setup.precision)
    with default_dtype(dtype), _values_free_init():
        try:
            model: nn.Module = AutoModelForCausalLM.from_config(  # type: ignore[no-untyped-call]
                config, attn_implementation=setup.attn_implementation, dtype=dtype)
        except ValueError as error:
            if "does not support an attention implementation" not in str(error):
                raise
            raise UnsupportedAttention(setup.attention.value,
                                       str(error).split(" ", 1)[0]) from None
    model.train()
    return model


def weights_dtype(precision: Precision) -> torch.dtype:
    """fp32 weights for fp32 and amp; bf16 for bf16-true and mixed (masters are made apart)."""
    return torch.float32 if precision in (Precision.FP32, Precision.AMP) else torch.bfloat16


@contextlib.contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@contextlib.contextmanager
def moves_that_change_nothing_skipped() -> Iterator[None]:
    """`Module.to()` swaps parameters, which fails on fake tensors (the fake mode holds weak
    references to them). peft moves new adapters to the base layer's device and dtype, which
    they already have: such calls return the module unchanged; real moves still run."""
    original = nn.Module.to

    def to(self: nn.Module, *args: Any, **kwargs: Any) -> nn.Module:
        device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        tensors = [*self.parameters(), *self.buffers()]
        if all((device is None or t.device == torch.device(device))
               and (dtype is None or not t.is_floating_point() or t.dtype == dtype)
               for t in tensors):
            return self
        return original(self, *args, **kwargs)

    nn.Module.to = to  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        nn.Module.to = original  # type: ignore[method-assign]


def transformer_blocks(model: nn.Module) -> nn.ModuleList:
    """The list of transformer blocks: the ModuleList holding the most parameters."""
    lists = [m for m in model.modules() if isinstance(m, nn.ModuleList) and len(m) > 0]
    return max(lists, key=lambda m: sum(p.numel() for p in m.parameters()))


def apply_method(model: nn.Module, setup: TraceSetup) -> nn.Module:
    """Freeze, wrap with LoRA and quantize as the method says; returns the model to train."""
    if setup.method is Method.FULL:
        model.requires_grad_(True)
        _freeze_vision(model)
    elif setup.method is Method.FREEZE:
        _freeze_all_but_last(model, setup.train_layers)
    else:
        model = _with_lora(model, setup)
    if setup.method is Method.QLORA:
        compute = weights_dtype(setup.precision)
        compute = torch.bfloat16 if setup.precision is Precision.AMP else compute
        quantize_linears(transformer_blocks(model), setup.quant, compute)
        adapters_as_on_bitsandbytes(model)
    if setup.checkpointing is Checkpointing.FULL:
        _enable_checkpointing(model, reentrant=setup.reentrant_checkpointing)
    if setup.tiled_mlp:
        hidden = parse_config(setup.model_config).hidden_size
        tile_mlps(transformer_blocks(model), mlp_tile_tokens(TrainingSetup(
            batch=setup.batch, seq_len=setup.seq_len, framework=Framework.HF, tiled_mlp=True),
            hidden))
    return model


_VISION_MODULES = ("vision_tower", "vision_model", "multi_modal_projector")
"""A vision-language checkpoint's vision tower and projector (Gemma 3's `vision_tower` and
`multi_modal_projector`, Llama 4's `vision_model`)."""


def _freeze_vision(model: nn.Module) -> None:
    """Full fine-tuning trains the language model: a vision-language checkpoint's tower and
    projector stay frozen, as the model counts them (`Architecture.vision`, frozen weights)."""
    for name, module in model.named_modules():
        if name.rsplit(".", 1)[-1] in _VISION_MODULES:
            module.requires_grad_(False)


def _freeze_all_but_last(model: nn.Module, train_layers: int) -> None:
    blocks = transformer_blocks(model)
    if train_layers > len(blocks):
        raise OutOfRange("train_layers", str(train_layers))
    model.requires_grad_(False)
    for block in list(blocks)[-train_layers:]:
        block.requires_grad_(True)


_EXPERT_PARAMETERS = {"gate": "gate_up_proj", "up": "gate_up_proj", "down": "down_proj"}
"""The targets that adapt transformers 5's fused routed experts, by the 3-D parameter each
adapts (`experts.gate_up_proj`, `experts.down_proj` of every MoE family read)."""


def lora_target_parameters(model: nn.Module, targets: tuple[str, ...]) -> list[str]:
    """Full names of the routed experts' 3-D parameters that get adapters: transformers 5 holds
    each layer's experts as `experts.gate_up_proj` and `experts.down_proj`, no `nn.Linear`, and
    peft adapts them through `target_parameters` (`ParamWrapper`, peft/tuners/lora/layer.py:
    lora_A of (r x experts, in), lora_B of (out, r x experts)), as vramplan counts them
    (`vramplan.model.lora_targets`); a gate or an up target adapts the fused gate_up once."""
    wanted = set(_EXPERT_PARAMETERS) if "all" in targets else set(targets)
    suffixes = {_EXPERT_PARAMETERS[target] for target in wanted if target in _EXPERT_PARAMETERS}
    return [name for name, param in model.named_parameters()
            if param.dim() == 3 and ".experts." in name and name.rsplit(".", 1)[-1] in suffixes]


def lora_target_modules(model: nn.Module, model_type: str, targets: tuple[str, ...]) -> list[str]:
    """Full names of the modules that get adapters (a target that only the routed experts'
    parameters answer, `lora_target_parameters`, adds none)."""
    hf_model: Any = model  # a transformers model: get_output_embeddings
    blocks = transformer_blocks(model)
    block_prefix = next(name for name, module in model.named_modules() if module is blocks)
    linears = [name for name, module in model.named_modules()
               if name.startswith(block_prefix + ".") and _is_linear(module)]
    from vramplan.model.hf_moe_families import TRANSFORMERS_MODEL_TYPE

    family = TRANSFORMERS_MODEL_TYPE.get(model_type, model_type)
    names = LORA_MODULE_NAMES.get(family, _LLAMA_NAMES)
    chosen: list[str] = []
    for target in targets:
        if target == "all":
            # not a router that subclasses nn.Linear (Llama 4's `Llama4Router` returns scores
            # and logits, which peft's LoRA layer cannot take): the blocks' linears alone, as
            # vramplan counts "all"
            found = [name for name in linears if not _is_router(model.get_submodule(name))]
        elif target == "head":
            head = hf_model.get_output_embeddings()
            found = [name for name, module in model.named_modules() if module is head]
        else:
            suffixes = names.get(target, ())
            found = [name for name in linears
                     if any(re.search(r"(^|\.)" + re.escape(s) + "$", name) for s in suffixes)]
        if not found and not lora_target_parameters(model, (target,)):
            available = sorted({name.rsplit(".", 1)[-1] for name in linears})
            raise UnknownName("lora_targets", target, available)
        chosen += [name for name in found if name not in chosen]
    return chosen


def _is_router(module: nn.Module) -> bool:
    """A module that subclasses nn.Linear to route tokens: Llama 4's `Llama4Router`, not
    Falcon's `FalconLinear` (a linear whose bias is added apart), which "all" adapts."""
    return isinstance(module, nn.Linear) and type(module).__name__.endswith("Router")


def _is_linear(module: nn.Module) -> bool:
    return isinstance(module, nn.Linear) or type(module).__name__ == "Conv1D"


def _with_lora(model: nn.Module, setup: TraceSetup) -> nn.Module:
    from peft import LoraConfig, get_peft_model

    model_type = str(setup.model_config.get("model_type", ""))
    targets = lora_target_modules(model, model_type, setup.lora_targets)
    parameters = lora_target_parameters(model, setup.lora_targets)
    rank = setup.lora_r or 8
    config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, bias="none",
                        target_modules=targets, target_parameters=parameters or None,
                        task_type="CAUSAL_LM")
    with moves_that_change_nothing_skipped(), default_dtype(weights_dtype(setup.precision)):
        # adapters in the model's dtype unless the setup asks for peft's default fp32 upcast
        return get_peft_model(model, config, autocast_adapter_dtype=setup.adapters_fp32)


def _enable_checkpointing(model: nn.Module, *, reentrant: bool = False) -> None:
    """Transformers' own checkpointing (non-reentrant by default in transformers 5; reentrant,
    the default of its releases before v5.0.0, when asked)."""
    hf_model: Any = model
    base = hf_model.get_base_model() if hasattr(model, "get_base_model") else hf_model
    kwargs = {"use_reentrant": reentrant}
    enable = getattr(base, "activation_checkpointing_enable", None)
    with warnings_silenced():
        if enable is not None:
            enable(activation_checkpointing_kwargs=kwargs)
        else:
            base.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


@contextlib.contextmanager
def warnings_silenced() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
