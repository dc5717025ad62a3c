"""Presets added in 2026-12 for models people fine-tune and serve that the registry lacked.

As in `vramplan.presets.models`: each preset keeps the architecture keys of the published
config.json (tokenizer ids, dropout, initialization and cache keys left out), `source` is the
official file on the Hub, and `read_from` names the copy the values were read from, with its
commit. No value here was written from memory. Counts are checked against transformers on the meta
device (tests/test_param_counts_meta.py).

Data only: no file I/O at import.
"""

from __future__ import annotations

from vramplan.presets.model_preset import ModelPreset

MODELS_2026: tuple[ModelPreset, ...] = ()
"""The presets of this module, in display order."""
