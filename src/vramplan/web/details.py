"""The numbers of the Détails section, computed by the core rather than typed into the page."""

from __future__ import annotations

from dataclasses import dataclass

from vramplan.presets.gpus import Gpu, find_gpu
from vramplan.presets.optimizers import OPTIMIZERS, OptimizerPreset, PerParamPart
from vramplan.seed import SeedEstimate, estimate_seed, seed_inputs
from vramplan.verdict import GpuVerdict
from vramplan.web.view import CONSUMER_GPU, DATACENTER_GPU

EXAMPLE_PARAMS_BILLION = 7.0
"""The seed page's worked example: a 7-billion-parameter model trained with Adam..."""
EXAMPLE_ACTIVATIONS_GB = 20.0
"""...plus 20 GB of activations (seed page)."""
FROZEN_BYTES_PER_PARAM = 2.0
"""LoRA keeps the frozen base weights in 16 bits: 2 bytes each (Hu et al. 2021, arXiv:2106.09685,
section 4: no gradient or optimizer state for the frozen weights)."""
LORA_TRAINABLE_SHARE = 0.01
"""An upper bound on LoRA's trainable share, the seed's "well under 1%" of the parameters. Hu et al.
2021 (arXiv:2106.09685, abstract) train 10,000 times fewer parameters than full fine-tuning of
GPT-3 175B, about 0.01%; the usual r = 8 to 64 on a 7B model stays well below 1%."""


@dataclass(frozen=True, slots=True)
class WorkedExample:
    adam_parts: tuple[PerParamPart, ...]
    """The 2 + 2 + 4 + 4 + 4 of Adam in mixed precision."""
    model_states: SeedEstimate
    """M = 7 × 16 = 112 GB, and V = 112 + 0 = 112 GB with no activation estimate."""
    with_activations: SeedEstimate
    """112 + 20 = 132 GB."""
    consumer: Gpu
    """The seed's "single 24 GB card"."""
    states_verdict: GpuVerdict
    """112 GB of model states against one 80 GB accelerator ("already beyond" it)."""
    total_verdict: GpuVerdict
    """132 GB against one 80 GB accelerator."""
    lora_frozen: SeedEstimate
    """7 × 2 = 14 GB of frozen 16-bit weights."""
    lora_trainable: SeedEstimate
    """1% of 7 billion at 16 bytes each."""


def worked_example() -> WorkedExample:
    adam = OptimizerPreset.ADAM_MIXED
    with_activations = estimate_seed(
        seed_inputs(EXAMPLE_PARAMS_BILLION, adam, activations_gb=EXAMPLE_ACTIVATIONS_GB)
    )
    model_states = estimate_seed(seed_inputs(EXAMPLE_PARAMS_BILLION, adam))
    accelerator = find_gpu(DATACENTER_GPU)
    return WorkedExample(
        adam_parts=OPTIMIZERS[adam].parts,
        model_states=model_states,
        with_activations=with_activations,
        consumer=find_gpu(CONSUMER_GPU),
        states_verdict=GpuVerdict(accelerator, model_states.model_states_bytes),
        total_verdict=GpuVerdict(accelerator, with_activations.total_bytes),
        lora_frozen=estimate_seed(
            seed_inputs(EXAMPLE_PARAMS_BILLION, bytes_per_param=FROZEN_BYTES_PER_PARAM)
        ),
        lora_trainable=estimate_seed(
            seed_inputs(EXAMPLE_PARAMS_BILLION * LORA_TRAINABLE_SHARE, adam)
        ),
    )
