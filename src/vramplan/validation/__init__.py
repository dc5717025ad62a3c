"""Scoring estimates against measured runs: the case format of `../shared/validation/FORMAT.md`.

Pure: `read_cases` takes the CSV text (the CLI reads the file), `score_cases` returns typed scores
and a summary. The modules:

- `cases`: the case file format: its columns, units and errors, `read_case_file`,
  `shipped_cases`, `parse_cases` and `read_cases`, which read a file's rows into typed `Case`s.
- `notes`: what a row's notes and source say about how its run was made, where the format has
  no column for it (the `*_NOTE` patterns, `compiled`, `code_date`, `model_parallel`...).
- `scoring`: each row estimated by the module that owns its kind of run and compared with its
  measurement (`score_case`, `score_cases`, `ValidationReport`), with the training setup, the
  multi-GPU plan and the inference inputs a row gives (`training_setup_of`,
  `multi_gpu_estimate`, `estimate_inference_case`).

`cases` reads a row's framework and metric through `notes`; `notes` refers to `Case` for its
types only; `scoring` imports both.
"""

from vramplan.validation.cases import (
    PUBLIC_CASES,
    SHIPPED_CASE_FILES,
    Case,
    CaseFile,
    CaseFileError,
    CaseFormatError,
    CaseUnknownColumn,
    CaseValueError,
    Reading,
    UnreadRow,
    case_gpu,
    parse_cases,
    read_case_file,
    read_cases,
    shipped_cases,
)
from vramplan.validation.notes import (
    ModelParallel,
    code_date,
    compiled,
    embedding_sharded_apart,
    fsdp_version,
    lora_dropout,
    loss_in_function,
    model_parallel,
    stated_date,
    torchtune_generate_cache,
    zero3_config_file,
)
from vramplan.validation.scoring import (
    CaseScore,
    Outcome,
    ValidationReport,
    estimate_inference_case,
    metric_on_card,
    multi_gpu_estimate,
    score_case,
    score_cases,
    training_setup_of,
    warmup_reserved_bytes,
)

__all__ = [
    "PUBLIC_CASES",
    "SHIPPED_CASE_FILES",
    "Case",
    "CaseFile",
    "CaseFileError",
    "CaseFormatError",
    "CaseScore",
    "CaseUnknownColumn",
    "CaseValueError",
    "ModelParallel",
    "Outcome",
    "Reading",
    "UnreadRow",
    "ValidationReport",
    "case_gpu",
    "code_date",
    "compiled",
    "embedding_sharded_apart",
    "estimate_inference_case",
    "fsdp_version",
    "lora_dropout",
    "loss_in_function",
    "metric_on_card",
    "model_parallel",
    "multi_gpu_estimate",
    "parse_cases",
    "read_case_file",
    "read_cases",
    "score_case",
    "score_cases",
    "shipped_cases",
    "stated_date",
    "torchtune_generate_cache",
    "training_setup_of",
    "warmup_reserved_bytes",
    "zero3_config_file",
]
