"""Data presets (optimizers, GPUs, model architectures), each citing its source.

No file I/O at import: presets are Python data.
"""
