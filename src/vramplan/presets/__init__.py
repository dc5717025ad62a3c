"""Data presets (optimizers, GPUs, model architectures), each citing its source. No I/O at import."""
