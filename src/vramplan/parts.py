"""The named parts a memory estimate is made of, shared by every mode, chart and serializer."""

from __future__ import annotations

from enum import StrEnum


class Component(StrEnum):
    """A category of GPU memory. The web chart stacks them in this order."""

    WEIGHTS = "weights"
    """Model weights as used in forward and backward (16-bit in mixed precision)."""
    GRADIENTS = "gradients"
    """Gradients of the trainable weights."""
    MASTER_WEIGHTS = "master_weights"
    """fp32 master copy of the weights kept by mixed-precision optimizers."""
    OPTIMIZER_STATES = "optimizer_states"
    """Optimizer state: Adam moments, SGD momentum, 8-bit states and their block statistics."""
    ACTIVATIONS = "activations"
    """Tensors saved in forward for backward, plus logits and temporaries."""
    PLANNING_MARGIN = "planning_margin"
    """The part of a seed preset's round figure that no physical component accounts for."""
