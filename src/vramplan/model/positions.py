"""A learned position table bounds the tokens a sequence may hold."""

from __future__ import annotations

from vramplan.errors import ConflictingOptions
from vramplan.model.architecture import Architecture, PositionKind


def check_within_positions(arch: Architecture, field: str, tokens: int) -> None:
    """Refuse `tokens` past a learned position table. GPT-2, OPT, GPT-Neo and StarCoder embed
    each position from a table of `max_position_embeddings` rows (OPT's two offset rows aside):
    a longer sequence indexes past it (`nn.Embedding` raises an IndexError on the CPU, a
    device-side assert on CUDA), so the run fails whatever the memory. Rotary and ALiBi models
    run past their trained context; the inference estimate warns there
    (`vramplan.requests.inference.InferenceRequest.beyond_context`). Checked where a request
    is read (`vramplan.requests`), not by the estimates themselves: a published row that ran
    such a sequence had a longer table than its preset's, and is still estimated
    (`vramplan validate`)."""
    if arch.position is PositionKind.LEARNED and tokens > arch.max_position_embeddings:
        raise ConflictingOptions(field, "model", str(tokens), "learned_positions",
                                 positions=arch.max_position_embeddings)


def tokens_within_positions(arch: Architecture, field: str, tokens: int, *, given: bool) -> int:
    """`tokens` for `field` on `arch`: as given, refused past a learned position table
    (`check_within_positions`); left to the field's default, that default cut to the table (GPT-2
    at its 1,024 positions where the default is 2,048), since the user asked for nothing longer
    and every answer states the tokens it counted."""
    if not given and arch.position is PositionKind.LEARNED:
        return min(tokens, arch.max_position_embeddings)
    check_within_positions(arch, field, tokens)
    return tokens
