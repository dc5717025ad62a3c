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


class PartKind(StrEnum):
    """A named term of an estimate (seed, training, inference or a trace). Its label is the
    message `part.<value>`; its `component` is the chart category it is stacked under."""

    # the seed rule's memory per parameter (Rajbhandari et al. 2020, section 3.1)
    WEIGHTS_16BIT = "weights_16bit"
    """16-bit weights, 2 bytes per parameter."""
    GRADIENTS_16BIT = "gradients_16bit"
    """16-bit gradients, 2 bytes per parameter."""
    MASTER_FP32 = "master_fp32"
    """fp32 master copy of the weights, 4 bytes per parameter."""
    ADAM_M_FP32 = "adam_m_fp32"
    """Adam's first moment in fp32."""
    ADAM_V_FP32 = "adam_v_fp32"
    """Adam's second moment in fp32."""
    ADAM_M_8BIT = "adam_m_8bit"
    """Adam's first moment in 8 bits."""
    ADAM_V_8BIT = "adam_v_8bit"
    """Adam's second moment in 8 bits."""
    SGD_MOMENTUM_FP32 = "sgd_momentum_fp32"
    """SGD's momentum buffer in fp32."""
    PLANNING_MARGIN = "planning_margin"
    """What a seed preset's round figure adds to its physical parts."""
    # a training step (the detailed model, per GPU, and the tracer)
    TRAINABLE_WEIGHTS = "trainable_weights"
    """Weights that receive gradients."""
    FROZEN_WEIGHTS = "frozen_weights"
    """Frozen weights and buffers (quantized storage with its constants)."""
    WEIGHTS_PER_GPU = "weights_per_gpu"
    """The weights one GPU holds under sharding."""
    GRADIENTS = "gradients"
    """Gradients of the trainable weights."""
    MASTER_WEIGHTS = "master_weights"
    """fp32 master copies of 16-bit trainable weights."""
    OPTIMIZER_STATES = "optimizer_states"
    """Optimizer states on the device."""
    ACTIVATIONS = "activations"
    """Tensors saved in forward for backward."""
    AUTOCAST_COPIES = "autocast_copies"
    """16-bit copies of fp32 weights made by autocast and saved for backward."""
    WEIGHT_COPIES = "weight_copies"
    """Copies of weights that indexing made and a matmul saved for backward (transformers
    4.55's gpt-oss experts, indexed with a one-element tensor)."""
    LOGITS_LOSS = "logits_loss"
    """The logits and the loss's vocabulary-sized tensors."""
    PREVIOUS_GRAPH = "previous_graph"
    """What a training loop keeps of the previous micro-batch's graph."""
    BACKWARD_TEMPORARIES = "backward_temporaries"
    """Buffers of the backward pass through one block."""
    STEP_TEMPORARIES = "step_temporaries"
    """Buffers of the optimizer step."""
    COMM_BUFFERS = "comm_buffers"
    """Communication buffers of data parallelism (gradient buckets)."""
    SHARDING_BUFFERS = "sharding_buffers"
    """Gathered parameters and gradients in flight under sharding."""
    TEMPORARIES = "temporaries"
    """Everything else a traced step holds: the batch, outputs in flight, kernels' results."""
    # preference and RL fine-tuning
    REFERENCE_WEIGHTS = "reference_weights"
    """The frozen reference model's weights."""
    REWARD_WEIGHTS = "reward_weights"
    """The frozen reward model's weights (PPO)."""
    VALUE_MODEL = "value_model"
    """PPO's value model, trained in full: weights, gradients and optimizer states."""
    VALUE_ACTIVATIONS = "value_activations"
    """What the value model's forward saves for backward (PPO)."""
    REFERENCE_FORWARD = "reference_forward"
    """A forward without gradient (reference or old-policy log-probabilities): one block's
    working tensors, then the logits."""
    CHOSEN_NLL = "chosen_nll"
    """ORPO's and SimPO's cross-entropy on the chosen sequences: its copy of their logits and
    its log-softmax."""
    GENERATION_ENGINE = "generation_engine"
    """The colocated vLLM engine's share of the GPU: its weights and its KV cache pool."""
    GENERATION_SCORES = "generation_scores"
    """PPO's fp32 scores of every generated token, kept through the rollout (and their copy)."""
    # inference
    WEIGHTS = "weights"
    """Model weights in their storage format (the part on the GPU)."""
    KV_CACHE = "kv_cache"
    """Keys and values of every cached token."""
    PREFILL_ACTIVATIONS = "prefill_activations"
    """Live tensors of one block during prefill (and eager attention scores)."""
    LOGITS = "logits"
    """Output logits the engine keeps."""
    QUANT_TRANSIENT = "quant_transient"
    """Temporary 16-bit copy of the largest quantized matrix (bitsandbytes), beyond the
    activations."""
    ENGINE_BUFFERS = "engine_buffers"
    """Fixed engine tensors: LitGPT's causal mask and rotary tables."""

    @property
    def component(self) -> Component:
        return _COMPONENTS[self]

    @property
    def label_key(self) -> str:
        """The message key of the part's label."""
        return f"part.{self.value}"


_COMPONENTS = {
    PartKind.WEIGHTS_16BIT: Component.WEIGHTS,
    PartKind.GRADIENTS_16BIT: Component.GRADIENTS,
    PartKind.MASTER_FP32: Component.MASTER_WEIGHTS,
    PartKind.ADAM_M_FP32: Component.OPTIMIZER_STATES,
    PartKind.ADAM_V_FP32: Component.OPTIMIZER_STATES,
    PartKind.ADAM_M_8BIT: Component.OPTIMIZER_STATES,
    PartKind.ADAM_V_8BIT: Component.OPTIMIZER_STATES,
    PartKind.SGD_MOMENTUM_FP32: Component.OPTIMIZER_STATES,
    PartKind.PLANNING_MARGIN: Component.PLANNING_MARGIN,
    PartKind.TRAINABLE_WEIGHTS: Component.WEIGHTS,
    PartKind.FROZEN_WEIGHTS: Component.WEIGHTS,
    PartKind.WEIGHTS_PER_GPU: Component.WEIGHTS,
    PartKind.GRADIENTS: Component.GRADIENTS,
    PartKind.MASTER_WEIGHTS: Component.MASTER_WEIGHTS,
    PartKind.OPTIMIZER_STATES: Component.OPTIMIZER_STATES,
    PartKind.ACTIVATIONS: Component.ACTIVATIONS,
    PartKind.AUTOCAST_COPIES: Component.ACTIVATIONS,
    PartKind.WEIGHT_COPIES: Component.ACTIVATIONS,
    PartKind.LOGITS_LOSS: Component.ACTIVATIONS,
    PartKind.PREVIOUS_GRAPH: Component.ACTIVATIONS,
    PartKind.BACKWARD_TEMPORARIES: Component.ACTIVATIONS,
    PartKind.STEP_TEMPORARIES: Component.OPTIMIZER_STATES,
    PartKind.COMM_BUFFERS: Component.GRADIENTS,
    PartKind.SHARDING_BUFFERS: Component.WEIGHTS,
    PartKind.TEMPORARIES: Component.ACTIVATIONS,
    PartKind.REFERENCE_WEIGHTS: Component.WEIGHTS,
    PartKind.REWARD_WEIGHTS: Component.WEIGHTS,
    PartKind.VALUE_MODEL: Component.WEIGHTS,
    PartKind.VALUE_ACTIVATIONS: Component.ACTIVATIONS,
    PartKind.REFERENCE_FORWARD: Component.ACTIVATIONS,
    PartKind.CHOSEN_NLL: Component.ACTIVATIONS,
    PartKind.GENERATION_ENGINE: Component.WEIGHTS,
    PartKind.GENERATION_SCORES: Component.ACTIVATIONS,
    PartKind.WEIGHTS: Component.WEIGHTS,
    PartKind.KV_CACHE: Component.ACTIVATIONS,
    PartKind.PREFILL_ACTIVATIONS: Component.ACTIVATIONS,
    PartKind.LOGITS: Component.ACTIVATIONS,
    PartKind.QUANT_TRANSIENT: Component.ACTIVATIONS,
    PartKind.ENGINE_BUFFERS: Component.ACTIVATIONS,
}
