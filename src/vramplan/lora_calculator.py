"""The LoRA parameter calculator: trainable parameters, their share of the model, the adapter file,
DoRA and rsLoRA, and what the adapter adds to training memory.

Built on `vramplan.model.lora_targets`, which counts r x (d_in + d_out) per adapted matrix
from the architecture's real shapes (GQA-sized k and v). Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from vramplan.bounds import LORA_RANK
from vramplan.model.architecture import Architecture
from vramplan.model.lora_targets import LoraMatrix, lora_breakdown
from vramplan.units import ceil_div
from vramplan.vocab import LoraTarget

if TYPE_CHECKING:
    from vramplan.shapes import TrainingSetupOut


class AdapterDtype(StrEnum):
    """Dtype the adapter is saved in."""

    FP32 = "fp32"
    """4 bytes: peft's default (adapter weights are upcast to fp32, `autocast_adapter_dtype`)."""
    BF16 = "bf16"
    """2 bytes."""
    FP16 = "fp16"
    """2 bytes."""

    @property
    def bytes(self) -> int:
        return 4 if self is AdapterDtype.FP32 else 2

    @property
    def safetensors_name(self) -> str:
        return {"fp32": "F32", "bf16": "BF16", "fp16": "F16"}[self.value]


@dataclass(frozen=True, slots=True)
class LoraInputs:
    arch: Architecture
    rank: int
    targets: frozenset[LoraTarget]
    dora: bool = False
    """DoRA (Liu et al. 2024, arXiv:2402.09353): a trainable magnitude vector per adapted matrix."""
    rslora: bool = False
    """Rank-stabilized scaling alpha/sqrt(r) (Kalajdzievski 2023, arXiv:2312.03732): a different
    constant, the same tensors, so no change in parameters or memory."""
    model_name: str = ""


def lora_inputs(arch: Architecture, rank: int, targets: frozenset[LoraTarget], *,
                dora: bool = False, rslora: bool = False, model_name: str = "") -> LoraInputs:
    """Validated inputs: a rank in range and at least one target."""
    from vramplan.errors import MissingValue

    LORA_RANK.check_int(rank)
    if not targets:
        raise MissingValue("lora_targets")
    return LoraInputs(arch, rank, targets, dora, rslora, model_name)


@dataclass(frozen=True, slots=True)
class AdapterFile:
    """A `adapter_model.safetensors` in one dtype."""

    dtype: AdapterDtype
    tensor_bytes: int
    header_bytes: int
    """The 8-byte length prefix plus the JSON header, padded to 8 bytes as safetensors writes it."""

    @property
    def total_bytes(self) -> int:
        return self.tensor_bytes + self.header_bytes


ADAM_TRAINING_BYTES_PER_PARAM = 16
"""Per trainable adapter parameter with AdamW: the fp32 weight (4; peft upcasts adapters to fp32,
`autocast_adapter_dtype=True`), its fp32 gradient (4) and Adam's two fp32 moments (8)
(Kingma & Ba 2014, arXiv:1412.6980)."""


@dataclass(frozen=True, slots=True)
class LoraResult:
    inputs: LoraInputs
    matrices: tuple[LoraMatrix, ...]
    """One entry per adapted kind of matrix (from `vramplan.model.lora_targets`)."""

    @property
    def lora_params(self) -> int:
        """A and B of every adapted matrix: sum of r x (d_in + d_out)."""
        return sum(matrix.params for matrix in self.matrices)

    @property
    def dora_params(self) -> int:
        """DoRA's magnitude vectors: one value per output feature of each adapted matrix (peft
        `lora_magnitude_vector`, shape (out_features,))."""
        if not self.inputs.dora:
            return 0
        return sum(matrix.copies * matrix.out_features for matrix in self.matrices)

    @property
    def trainable_params(self) -> int:
        return self.lora_params + self.dora_params

    @property
    def model_params(self) -> int:
        return self.inputs.arch.params_total

    @property
    def share_of_model(self) -> float:
        """Trainable parameters over the base model's parameters."""
        return self.trainable_params / self.model_params

    @property
    def training_bytes(self) -> int:
        """What the adapter adds to training memory with AdamW (weights, gradients, moments);
        activations and the frozen base model are the main calculator's job."""
        return ADAM_TRAINING_BYTES_PER_PARAM * self.trainable_params

    def adapter_file(self, dtype: AdapterDtype) -> AdapterFile:
        tensor_bytes = dtype.bytes * self.trainable_params
        return AdapterFile(dtype, tensor_bytes, _safetensors_header_bytes(self, dtype))

    def training_setup(self) -> TrainingSetupOut:
        """The setup to fill in the main (training) calculator, in the case-file vocabulary."""
        targets = [t.value for t in LoraTarget if t in self.inputs.targets]
        return {"model": self.inputs.model_name or None, "method": "lora",
                "lora_r": self.inputs.rank, "lora_targets": ";".join(targets),
                "dora": self.inputs.dora}


def estimate_lora(inputs: LoraInputs) -> LoraResult:
    """peft's adapters on the model's transformers modules: one on a fused q/k/v or gate/up
    projection (`lora_breakdown`'s `fused_modules`)."""
    return LoraResult(inputs, lora_breakdown(inputs.arch, inputs.rank, inputs.targets,
                                             fused_modules=True))


# --- the safetensors header -------------------------------------------------------------------

_PEFT_MODULES = {
    "q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj",
    "o": "self_attn.o_proj", "gate": "mlp.gate_proj", "up": "mlp.up_proj",
    "down": "mlp.down_proj",
}
"""Module paths of a Llama-style transformers model; other families' names differ by a few
characters per tensor, so the header is exact for Llama/Mistral/Qwen2 and within a fraction of a
percent of the file elsewhere."""


def _tensor_entries(result: LoraResult) -> list[tuple[str, tuple[int, int] | tuple[int]]]:
    """(name, shape) of every saved tensor, as peft names them in adapter_model.safetensors."""
    entries: list[tuple[str, tuple[int, int] | tuple[int]]] = []
    r = result.inputs.rank
    for matrix in result.matrices:
        if matrix.target is LoraTarget.HEAD:
            prefixes = ["base_model.model.lm_head"]
        else:
            per_layer = matrix.copies // result.inputs.arch.n_layers
            prefixes = [
                f"base_model.model.model.layers.{i}.{_PEFT_MODULES[matrix.target.value]}"
                + (f".experts.{e}" if per_layer > 1 else "")
                for i in range(result.inputs.arch.n_layers) for e in range(per_layer)]
        for prefix in prefixes:
            entries.append((f"{prefix}.lora_A.weight", (r, matrix.in_features)))
            entries.append((f"{prefix}.lora_B.weight", (matrix.out_features, r)))
            if result.inputs.dora:
                entries.append((f"{prefix}.lora_magnitude_vector", (matrix.out_features,)))
    return entries


def _safetensors_header_bytes(result: LoraResult, dtype: AdapterDtype) -> int:
    """8 bytes of header length, then the JSON header (tensor names, dtypes, shapes, offsets and
    `__metadata__`), padded with spaces to a multiple of 8 (safetensors format, README "Format")."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in sorted(_tensor_entries(result)):
        size = dtype.bytes
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype.safetensors_name, "shape": list(shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":"))
    return 8 + ceil_div(len(text.encode()), 8) * 8
