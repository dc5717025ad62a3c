"""DeepSpeed's own memory estimators, transcribed so that ours can be compared with theirs.

They live here, not in the core: they are DeepSpeed's first-order formulas (no buffers, no
activations), used by `benchmarks/sharding_parity.py` and by the tests that check the
transcription against the figures DeepSpeed's docs print (docs/code-docs/source/memory.rst).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DeepSpeedReference:
    """What DeepSpeed's estimator prints for one option set: bytes per GPU and per node's CPU."""

    gpu_bytes: int
    cpu_bytes: int
    options: str


def deepspeed_reference_zero2(total_params: int, *, gpus_per_node: int = 1, nodes: int = 1,
                              cpu_offload: bool = True,
                              additional_buffer_factor: float = 1.5) -> DeepSpeedReference:
    """DeepSpeed's `estimate_zero2_model_states_mem_needs` (deepspeed/runtime/zero/
    stage_1_and_2.py), transcribed: GPU = 2P with offload, else 4P + 16P/N; CPU = P x max(4N, 16)
    x 1.5 with offload, else P x 4 x gpus_per_node x 1.5. It counts full 16-bit gradients on
    every GPU and no buffer, and ignores activations."""
    total_gpus = nodes * gpus_per_node
    if cpu_offload:
        gpu = 2 * total_params
        cpu = total_params * max(4 * total_gpus, 16) * additional_buffer_factor
    else:
        gpu = 4 * total_params + int(16 * total_params / total_gpus)
        cpu = total_params * 4 * gpus_per_node * additional_buffer_factor
    options = f"offload_optimizer={'cpu' if cpu_offload else 'none'}"
    return DeepSpeedReference(int(gpu), int(cpu), options)


def deepspeed_reference_zero3(total_params: int, largest_layer_params: int, *,
                              gpus_per_node: int = 1, nodes: int = 1, cpu_offload: bool = True,
                              cpu_offload_params: bool = True, zero_init: bool = True,
                              additional_buffer_factor: float = 1.5) -> DeepSpeedReference:
    """DeepSpeed's `estimate_zero3_model_states_mem_needs` (deepspeed/runtime/zero/stage3.py),
    transcribed: GPU = 4 x largest layer (+ 2P/N with optimizer offload, + 18P/N without); CPU
    from 18 (or 16) bytes/param per node, x 1.5."""
    total_gpus = nodes * gpus_per_node
    gpus_factor = 1 / nodes
    largest_layer_memory = 4 * largest_layer_params
    if cpu_offload:
        per_param = 18 if cpu_offload_params else 16
        gpu = largest_layer_memory + (0 if cpu_offload_params
                                      else int(2 * total_params / total_gpus))
        factor = per_param * gpus_factor if zero_init else max(4 * gpus_per_node,
                                                               per_param * gpus_factor)
        cpu = total_params * factor * additional_buffer_factor
    else:
        gpu = largest_layer_memory + int(18 * total_params / total_gpus)
        cpu_params = largest_layer_params if zero_init else total_params
        cpu = cpu_params * 4 * gpus_per_node * additional_buffer_factor
    options = (f"offload_param={'cpu' if cpu_offload_params else 'none'}, "
               f"offload_optimizer={'cpu' if cpu_offload else 'none'}, zero_init={int(zero_init)}")
    return DeepSpeedReference(int(gpu), int(cpu), options)
