"""Every number a user can give, with its accepted range, and the reading of typed numbers.

`7.5` and `7,5` read alike; NaN, infinities and values out of range are refused with an error that
names the field. Every interface (CLI, JSON API, web form, case files, the Python API) checks
numbers through these bounds, so a value is accepted or refused the same way everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vramplan.errors import NotAnInteger, NotANumber, NotFinite, OutOfRange

NUMBER_PATTERN = r"[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)(?:[eE][+-]?[0-9]+)?"
"""The numbers users may type, as a regular expression (for API schemas): a plain decimal number
with `.` or `,` as the decimal mark and ASCII digits; no thousands separators, no `_`. Python's
float() reads exactly these once `,` becomes `.` and the text holds only these characters, which
is how `parse_decimal` checks them."""
_NUMBER_CHARACTERS = frozenset("0123456789+-.,eE")
_NON_FINITE_WORDS = frozenset({"nan", "inf", "infinity"})
MAX_DIGITS = 18
"""Digits of the largest whole number any field accepts (every range ends below 10**18)."""


@dataclass(frozen=True, slots=True)
class NumberField:
    """A numeric input and its accepted range. `name` is the field's name in every interface
    (the case format's column, the API's parameter, the CLI's option without dashes)."""

    name: str
    minimum: float
    maximum: float
    minimum_inclusive: bool = True
    integer: bool = False
    """Only whole numbers (`2`; `2.0` and `2,5` are refused)."""

    def check(self, value: float, raw: str | None = None) -> float:
        """`value` if finite and in range; otherwise an error naming the field and `raw`."""
        shown = raw if raw is not None else _show(value)
        if math.isnan(value) or math.isinf(value):
            raise NotFinite(self.name, shown)
        too_low = value < self.minimum or (value == self.minimum and not self.minimum_inclusive)
        if too_low or value > self.maximum:
            raise OutOfRange(self.name, shown)
        return value

    def parse(self, raw: str) -> float:
        """Parse text typed by a user (`7.5` or `7,5`) and check it."""
        return self.check(parse_decimal(self.name, raw), raw.strip())

    def parse_int(self, raw: str) -> int:
        """Parse a whole number (`2`; `2.0` is refused) and check it."""
        text = raw.strip()
        digits = text[1:] if text[:1] in ("+", "-") else text
        if not (digits.isascii() and digits.isdigit()):
            parse_decimal(self.name, text)  # the clearer error for text that is no number at all
            raise NotAnInteger(self.name, text)
        if len(digits.lstrip("0")) > MAX_DIGITS:  # out of every range, before int() reads it
            raise OutOfRange(self.name, text)
        return int(self.check(int(text), text))

    def check_int(self, value: int) -> int:
        return int(self.check(value))


def parse_decimal(field: str, raw: str) -> float:
    """A float from `7.5`, `7,5`, `1e3`; refuses text, NaN and infinities with a named error."""
    text = raw.strip()
    if text.lower().lstrip("+-") in _NON_FINITE_WORDS:
        raise NotFinite(field, text)
    if not text or not _NUMBER_CHARACTERS.issuperset(text):
        raise NotANumber(field, text)
    try:
        return float(text.replace(",", "."))
    except ValueError:  # the right characters in a wrong order: "1,000.5", "7.5e", "+-1"
        raise NotANumber(field, text) from None


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e16 else repr(value)


def _whole(name: str, minimum: int, maximum: int) -> NumberField:
    return NumberField(name, minimum, maximum, minimum_inclusive=True, integer=True)


# --- the seed calculator ------------------------------------------------------------------------
# The upper limits only catch typing slips: the largest published dense models are under 2,000
# billion parameters, and no format uses 1,000 bytes per parameter.
PARAMS_BILLION = NumberField("params", minimum=0, maximum=100_000, minimum_inclusive=False)
BYTES_PER_PARAM = NumberField("bytes_per_param", minimum=0.01, maximum=1_000)
"""From 0.01 (no format stores less than a bit, 0.125 bytes, per parameter) to 1,000."""
ACTIVATIONS_GB = NumberField("activations", minimum=0, maximum=1_000_000)

# --- a model's architecture (config.json files, presets) ---------------------------------------
# Typing slips and hostile files reach these limits, real models do not: the largest published
# models have 126 layers (Llama 3.1 405B), a width of 16,384 (its MLP: 53,248), 262,144 tokens of
# vocabulary (Gemma 3), 384 routed experts (Kimi K2) and a trained context of 10,485,760 tokens
# (Llama 4 Scout). Within them every loop over layers stays short and every count of parameters,
# bytes or FLOPs stays far inside a 64-bit integer.
MODEL_LAYERS = _whole("layers", 1, 10_000)
MODEL_WIDTH = _whole("width", 1, 1_000_000)
"""Hidden and MLP sizes, head and rank widths, image and patch sizes."""
MODEL_HEADS = _whole("heads", 1, 100_000)
MODEL_VOCAB = _whole("vocab_size", 1, 100_000_000)
MODEL_CONTEXT = _whole("max_position_embeddings", 1, 1_000_000_000)
MODEL_EXPERTS = _whole("experts", 1, 100_000)
MODEL_PARAMS = 100_000 * 10**9
"""At most 100,000 billion parameters in all, the seed calculator's largest N."""

# --- a training or inference run ----------------------------------------------------------------
BATCH = _whole("batch", 1, 1_000_000)
"""Sequences per micro-batch (training) or concurrent sequences (inference)."""
SEQ_LEN = _whole("seq_len", 1, 10_000_000)
"""Tokens per training sequence."""
TRAIN_LAYERS = _whole("train_layers", 1, 100_000)
"""Method `freeze`: how many of the last blocks train."""
LORA_RANK = _whole("lora_r", 1, 65_536)
GRAD_ACCUM = _whole("grad_accum", 1, 1_000_000)
COMPLETION_LEN = _whole("completion_len", 1, 10_000_000)
"""Tokens generated per sequence by an online method (GRPO, PPO), within `seq_len`."""
KL_BETA = NumberField("beta", minimum=0, maximum=1_000)
"""GRPO's KL weight (TRL `beta`): 0 drops the reference model."""
VLLM_SHARE = NumberField("vllm_share", minimum=0, maximum=1, minimum_inclusive=False)
"""A colocated vLLM engine's `gpu_memory_utilization` (a fraction of the GPU's memory)."""
CONTEXT = _whole("context", 1, 10_000_000)
"""Tokens cached per sequence in inference (prompt plus generated tokens)."""
PROMPT = _whole("prompt", 1, 10_000_000)
"""Prompt tokens processed in prefill."""
IMAGES = NumberField("images", minimum=0, maximum=10_000, integer=True)
"""Images in each sequence's prompt (inference of a vision-language model)."""

TOKENS = _whole("tokens", 1, 2**30)
"""Tokens held at once: batch x seq_len in training, batch x context in inference. Above a
billion no GPU memory is in sight, and every byte count of the estimates stays far inside a
64-bit integer (the JSON answers' range)."""

# --- GPUs ---------------------------------------------------------------------------------------
GPUS = _whole("gpus", 1, 1_000_000)
GPUS_PER_NODE = _whole("gpus_per_node", 1, 1_024)
TENSOR_PARALLEL = _whole("tensor_parallel", 1, 1_024)
LAYER_SPLIT = _whole("layer_split", 1, 1_024)
"""GPUs an inference run places its blocks on in consecutive chunks."""
PIPELINE_PARALLEL = _whole("pipeline_parallel", 1, 100_000)
EXPERT_PARALLEL = _whole("expert_parallel", 1, 1_000_000)
"""GPUs the routed experts of a mixture-of-experts layer are split over."""
USABLE_SHARE = NumberField("margin", minimum=0, maximum=100, minimum_inclusive=False)
"""The usable share of a GPU's memory, in percent (`--margin 80`; 100 = no margin)."""

# --- the server ---------------------------------------------------------------------------------
PORT = _whole("port", 1, 65_535)
"""TCP ports a server may listen on (0 would pick a random one, which nobody could find)."""
