"""The one serializer: typed results to JSON-ready dicts, for `--json`, the API and the page.

Field names carry their units (`_bytes`, `_gb` = 10**9 bytes, `_gib` = 2**30 bytes). The shape is
documented in docs/json.md and checked by tests; add fields, never rename or drop them.
"""

from __future__ import annotations

from vramplan.fit import GpuVerdict
from vramplan.presets.gpus import Gpu
from vramplan.seed import SeedEstimate
from vramplan.units import bytes_to_gb, bytes_to_gib

TYPE_CHECKING = False  # as typing.TYPE_CHECKING; importing typing costs ~2 ms of CLI start-up
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1

JSON = dict[str, "Any"]


def memory(prefix: str, n_bytes: int) -> JSON:
    """`{prefix}_bytes`, `{prefix}_gb` and `{prefix}_gib` for one quantity."""
    return {
        f"{prefix}_bytes": n_bytes,
        f"{prefix}_gb": bytes_to_gb(n_bytes),
        f"{prefix}_gib": bytes_to_gib(n_bytes),
    }


def gpu_to_json(gpu: Gpu) -> JSON:
    return {
        "name": gpu.name,
        "display_name": gpu.display_name,
        "vendor": gpu.vendor,
        "memory_gib": gpu.memory_gib,
        "capacity_bytes": gpu.capacity_bytes,
        "aliases": list(gpu.aliases),
        "source": gpu.source,
    }


def verdict_to_json(verdict: GpuVerdict) -> JSON:
    return {
        "gpu": verdict.gpu.name,
        "display_name": verdict.gpu.display_name,
        "capacity_bytes": verdict.gpu.capacity_bytes,
        "capacity_gib": verdict.gpu.memory_gib,
        "fits": verdict.fits,
        **memory("headroom", verdict.headroom_bytes),
        "usage_share": verdict.usage_share,
        "min_gpus_lower_bound": verdict.min_gpus_lower_bound,
    }


def seed_to_json(estimate: SeedEstimate, verdicts: tuple[GpuVerdict, ...]) -> JSON:
    """The `vramplan estimate --json` object (simple mode)."""
    inputs = estimate.inputs
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": "simple",
        "params_billion": float(inputs.params_billion),
        "params": estimate.params,
        "optimizer": inputs.optimizer.value if inputs.optimizer else None,
        "bytes_per_param": float(estimate.bytes_per_param),
        "breakdown": [
            {
                "part": item.key.removeprefix("part."),
                "component": item.component.value,
                "bytes_per_param": float(item.bytes_per_param),
                **memory("memory", item.memory_bytes),
            }
            for item in estimate.breakdown
        ],
        **memory("model_states", estimate.model_states_bytes),
        **memory("activations", estimate.activations_bytes),
        **memory("total", estimate.total_bytes),
        "verdicts": [verdict_to_json(v) for v in verdicts],
    }
