"""The planner's safety margin: plan to use only a share of a GPU's memory."""

from __future__ import annotations

from vramplan.bounds import USABLE_SHARE

DEFAULT_USABLE_SHARE = 0.80
"""Plan to use at most 80% of a GPU's memory: over 454 training runs on A100 and H100, "when the
estimated memory usage is below 80% of the available GPU memory, the training never encounters
out-of-memory errors" (Fujii, Watanabe & Yokota 2024, "Accelerating Large Language Model Training
with 4D Parallelism and Memory Consumption Estimator", arXiv:2411.06465, abstract)."""



def usable_share_from_percent(percent: float) -> float:
    """A checked percentage (`--margin 80`) as a share (0.8)."""
    return USABLE_SHARE.check(percent) / 100
