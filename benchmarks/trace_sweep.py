"""The analytic peak against `vramplan trace` on real-size registry models, where the
vocabulary-sized tensors and the weights' casts weigh what they weigh in practice (the agreement
matrix of tests/test_trace_agreement.py runs tiny configs, hidden 128 and vocabulary 512, where
they are negligible).

Each configuration traces one transformers + peft step on fake tensors (about 15 s for a 0.5B
model on one core) and asks `estimate_training` for the same step (framework HF, no gradient
accumulation, metric allocated), as the agreement tests build both sides.

Run: `PYTHONPATH=src .venv/bin/python benchmarks/trace_sweep.py [--models qwen2.5-0.5b,...]
[--only SUBSTRING] [--details N]`, or `--moe` for five mixtures of experts at real size
(`MOE_MODELS`, bf16-true: about 10 s a configuration), or `--draw N [--seed S]` for N
configurations drawn at random over `DRAW_MODELS` (families of 1 to 8 B: method with QLoRA,
precision, optimizer, checkpointing, attention, LoRA targets, rank, adapter dtype and shape; about
6 s a configuration). Drawing 400 on 2026-12-06 found five mechanisms under the tiny matrix's
3 % (tests/test_trace_agreement.py `REAL_SIZE_MATRIX`) and that gemma-3-4b did not trace (fixed);
MPT past its 2,048 positions and SDPA where a family has none are refused or fail, and are
listed as such.

Prints one line per configuration (model, method, precision, checkpointing, attention,
batch x seq_len): the analytic and traced peaks in MiB, the difference in % of the trace, the
phase of each peak, and the difference within each traced phase (loss, backward, optimizer step:
the analytic phases of the same moment against the traced phase's own peak, so that a gap hidden
under the step's peak still shows); then, for the `--details` worst configurations, both sides'
phases with their parts (the analytic phases' parts; the traced phases' parts as the tracker
classifies storage).
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from vramplan.errors import VramplanError
from vramplan.model.hf_config import parse_config
from vramplan.model.lora_targets import parse_lora_targets
from vramplan.presets.models import find_model
from vramplan.tracer import make_setup
from vramplan.tracer.result import Phase as TracedPhase
from vramplan.tracer.result import TraceResult
from vramplan.tracer.run import run_trace
from vramplan.tracer.setup import TRACED_ADAPTERS_FP32
from vramplan.training.estimate import estimate_training
from vramplan.training.result import Phase, TrainingEstimate
from vramplan.training.setup import TrainingSetup
from vramplan.vocab import (
    Attention,
    Checkpointing,
    Framework,
    Method,
    Optimizer,
    OptimizerImpl,
    Precision,
    Quant,
)

MIB = 2**20
SAME_MOMENT = {
    TracedPhase.LOSS: (Phase.LOSS_FORWARD,),
    TracedPhase.BACKWARD: (Phase.BACKWARD_START, Phase.BACKWARD_BLOCKS, Phase.BACKWARD_END,
                           Phase.EMBEDDING_BACKWARD),
    TracedPhase.OPTIMIZER_STEP: (Phase.OPTIMIZER_STEP,),
}
"""The analytic phases that fall within each traced phase: a gap hidden under the step's peak
shows in its own phase."""
MODELS = ("qwen2.5-0.5b", "llama-3.2-1b", "smollm2-360m", "gemma-3-1b", "qwen3-0.6b")
"""Five families at real size: Qwen2 (tied, q/k/v biases, vocabulary 151,936), Llama 3.2 (tied,
128,256), SmolLM2 (Llama with a 49,152 vocabulary), Gemma 3 (262,144, fp32-scaled norms, sliding
layers), Qwen3 (q/k norms)."""

COMBOS = (  # method, precision, checkpointing, attention[, optimizer, implementation]
    ("full", "bf16-true", "none", "sdpa"),
    ("full", "mixed", "none", "sdpa"),
    ("full", "fp32", "none", "sdpa"),
    ("full", "amp", "none", "sdpa"),
    ("full", "bf16-true", "full", "sdpa"),
    ("full", "amp", "full", "sdpa"),
    ("full", "bf16-true", "none", "eager"),
    ("lora", "bf16-true", "none", "sdpa"),
    ("lora", "amp", "none", "sdpa"),
    ("lora", "fp32", "none", "sdpa"),
    ("lora", "bf16-true", "full", "sdpa"),
    ("lora", "amp", "full", "sdpa"),
    ("lora", "bf16-true", "none", "eager"),
    ("freeze", "bf16-true", "none", "sdpa"),
    ("freeze", "amp", "none", "sdpa"),
    # transformers' checkpointing lets the gradient through the frozen blocks
    ("freeze", "bf16-true", "full", "sdpa"),
    ("freeze", "amp", "full", "sdpa"),
    # optimizers without a state-sized temporary at their step: what backward holds shows
    ("full", "bf16-true", "none", "sdpa", "adamw", "fused"),
    ("full", "mixed", "none", "sdpa", "adamw", "fused"),
    ("full", "fp32", "full", "sdpa", "sgd", "foreach"),
)
"""Sampled, not crossed: every method under bf16-true and amp, each regime of precision under
full fine-tuning, both checkpointing settings and both attention kernels."""
MOE_MODELS = ("olmoe-1b-7b-0924-instruct", "qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v2-lite",
              "qwen1.5-moe-a2.7b")
"""`--moe`: mixtures of experts at real size (OLMoE and Qwen3-MoE route 8 copies of each token,
gpt-oss 4 of 32 with biases, DeepSeek-V2-Lite a dense first layer and fp32 routing weights,
Qwen1.5-MoE a gated shared expert run first)."""
MOE_COMBOS = (("full", "bf16-true", "none", "sdpa"), ("full", "bf16-true", "full", "sdpa"),
              ("lora", "bf16-true", "none", "sdpa"), ("lora", "bf16-true", "full", "sdpa"),
              ("freeze", "bf16-true", "full", "sdpa"))
"""bf16-true alone: the experts' `torch._grouped_mm` runs on the fake CPU tensors in bfloat16
only; gpt-oss under eager attention, transformers' only path with its sinks."""
SHAPES = ((2, 512), (1, 256))
"""batch x seq_len; each combination takes one, alternating along COMBOS (shifted per model),
so both shapes meet every combination over the models."""


DRAW_MODELS = ("llama-3.2-1b", "llama-3.2-3b", "qwen2.5-1.5b", "qwen3-1.7b", "gemma-3-1b",
               "phi-3.5-mini", "phi-2", "smollm2-1.7b", "mistral-7b-v0.3", "olmo-2-7b",
               "granite-3.3-8b", "starcoder2-3b", "stablelm-2-1.6b", "opt-1.3b", "gpt2-large",
               "pythia-1.4b", "qwen2.5-7b", "llama-3.1-8b", "c4ai-command-r7b-12-2024",
               "phi-4-mini", "smollm3-3b", "gpt-j-6b", "olmo-1b", "qwen3-4b", "gemma-3-4b",
               "falcon-7b", "bloom-1b1", "mpt-7b")
"""`--draw`: dense families at real size, each with its own attention, norms and fused
linears."""
DRAW_SHAPES = ((1, 1024), (2, 2048), (4, 512), (1, 4096), (8, 256), (2, 1024))


@dataclass(frozen=True)
class Run:
    model: str
    method: str
    precision: str
    checkpointing: str
    attention: str
    batch: int
    seq_len: int
    optimizer: str = "adamw"
    optimizer_impl: str = "foreach"
    targets: str = "q;v"
    rank: int = 8
    adapters_fp32: bool = False
    """peft's fp32 adapters run without autocast (`--draw`); QLoRA's are fp32 whatever this says
    (`vramplan.tracer.setup.TRACED_ADAPTERS_FP32`)."""

    @property
    def label(self) -> str:
        optimizer = "" if self.optimizer_impl == "foreach" and self.optimizer == "adamw" \
            else f" {self.optimizer}-{self.optimizer_impl}"
        adapters = "" if not self.uses_lora or (self.targets, self.rank) == ("q;v", 8) \
            else f" {self.targets} r{self.rank}"
        fp32 = " fp32-adapters" if self.uses_lora and self.adapters_fp32 else ""
        return (f"{self.model} {self.method} {self.precision} ckpt={self.checkpointing} "
                f"{self.attention} {self.batch}x{self.seq_len}{optimizer}{adapters}{fp32}")

    @property
    def uses_lora(self) -> bool:
        return self.method in ("lora", "qlora")


@dataclass(frozen=True)
class Row:
    label: str
    analytic: TrainingEstimate
    traced: TraceResult
    seconds: float

    @property
    def diff(self) -> float:
        return self.analytic.allocated_bytes / self.traced.peak_bytes - 1

    def phase_diff(self, traced: TracedPhase) -> float:
        """The analytic phases' peak against the traced phase's, where the traced phase ran."""
        analytic = max(p.total_bytes for p in self.analytic.phases
                       if p.phase in SAME_MOMENT[traced])
        peaks = {p.phase: p.peak_bytes for p in self.traced.phases}
        return analytic / peaks[traced] - 1 if traced in peaks else float("nan")


def configurations(models: tuple[str, ...],
                   combos: tuple[tuple[str, ...], ...] = COMBOS) -> list[Run]:
    runs = []
    for shift, model in enumerate(models):
        eager_only = find_model(model).config.get("model_type") == "gpt_oss"
        for i, (method, precision, checkpointing, attention, *optimizer) in enumerate(combos):
            batch, seq_len = SHAPES[(i + shift) % len(SHAPES)]
            runs.append(Run(model, method, precision, checkpointing,
                            "eager" if eager_only else attention, batch, seq_len, *optimizer))
    return runs


def draw(rng: random.Random) -> Run:
    """One `--draw` configuration."""
    method = rng.choice(("full", "lora", "lora", "qlora", "freeze"))
    lora = method in ("lora", "qlora")
    batch, seq_len = rng.choice(DRAW_SHAPES)
    return Run(
        model=rng.choice(DRAW_MODELS), method=method,
        precision=rng.choice(("bf16-true", "amp") if method == "qlora"
                             else ("bf16-true", "bf16-true", "mixed", "amp", "fp32")),
        checkpointing=rng.choice(("none", "full")),
        attention=rng.choice(("sdpa", "sdpa", "eager")), batch=batch, seq_len=seq_len,
        optimizer=rng.choice(("adamw", "adamw", "sgd")),
        targets=rng.choice(("q;v", "all", "q;k;v;o")) if lora else "q;v",
        rank=rng.choice((8, 16, 64)) if lora else 8,
        adapters_fp32=lora and rng.random() < 0.3)


def run_one(run: Run) -> Row:
    config = dict(find_model(run.model).config)
    lora, qlora = run.uses_lora, run.method == "qlora"
    # peft leaves QLoRA's adapters in fp32; fp32 adapters run without autocast but under `amp`
    adapters_fp32 = lora and (run.adapters_fp32 or qlora)
    start = time.perf_counter()
    traced = run_trace(make_setup(
        run.model, config, method=run.method, precision=run.precision, batch=run.batch,
        seq_len=run.seq_len, optimizer=run.optimizer, optimizer_impl=run.optimizer_impl,
        quant="nf4" if qlora else None, lora_r=run.rank if lora else None,
        lora_targets=run.targets if lora else None, checkpointing=run.checkpointing,
        attention=run.attention, adapters_fp32=lora and run.adapters_fp32))
    seconds = time.perf_counter() - start
    analytic = estimate_training(parse_config(config), TrainingSetup(
        method=Method(run.method), precision=Precision(run.precision), batch=run.batch,
        seq_len=run.seq_len, optimizer=Optimizer(run.optimizer),
        optimizer_impl=OptimizerImpl(run.optimizer_impl), framework=Framework.HF,
        gradient_accumulation=False, quant=Quant.NF4 if qlora else Quant.NONE,
        lora_rank=run.rank if lora else None,
        lora_targets=parse_lora_targets(run.targets) if lora else frozenset(),
        adapters_fp32=(adapters_fp32 or TRACED_ADAPTERS_FP32) if lora else None,
        no_autocast=adapters_fp32 and run.precision != "amp",
        checkpointing=Checkpointing(run.checkpointing), attention=Attention(run.attention)))
    return Row(run.label, analytic, traced, seconds)


def print_row(row: Row) -> None:
    print(f"{row.label:72} {row.analytic.allocated_bytes / MIB:9.1f} "
          f"{row.traced.peak_bytes / MIB:9.1f} {100 * row.diff:+7.2f} % "
          f"{row.analytic.peak.phase.value:16} {row.traced.peak_phase.value:14} "
          + " ".join(f"{100 * row.phase_diff(phase):+7.2f}" for phase in SAME_MOMENT)
          + f" {row.seconds:5.1f}", flush=True)


def print_details(row: Row) -> None:
    print(f"\n== {row.label}: analytic {row.analytic.allocated_bytes / MIB:.1f} MiB, "
          f"traced {row.traced.peak_bytes / MIB:.1f} MiB ({100 * row.diff:+.2f} %)")
    print("  analytic phases (MiB):")
    for phase in row.analytic.phases:
        parts = ", ".join(f"{p.kind.value} {p.memory_bytes / MIB:.1f}" for p in phase.parts
                          if p.memory_bytes)
        print(f"    {phase.phase.value:16} {phase.total_bytes / MIB:9.1f}: {parts}")
    print("  traced phases (MiB):")
    for peak in row.traced.phases:
        parts = ", ".join(f"{kind.value} {n / MIB:.1f}"
                          for kind, n in peak.breakdown.bytes_by_part if n)
        print(f"    {peak.phase.value:16} {peak.peak_bytes / MIB:9.1f}: {parts}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="registry names, comma-separated")
    parser.add_argument("--only", default="",
                        help="run only configurations whose label contains this text")
    parser.add_argument("--details", type=int, default=5,
                        help="phase breakdowns of this many worst configurations")
    parser.add_argument("--moe", action="store_true",
                        help="the mixtures of experts (MOE_MODELS) over MOE_COMBOS instead")
    parser.add_argument("--draw", type=int, default=0,
                        help="this many configurations drawn at random over DRAW_MODELS instead")
    parser.add_argument("--seed", type=int, default=1, help="--draw's seed")
    args = parser.parse_args()
    models, combos = (MOE_MODELS, MOE_COMBOS) if args.moe \
        else (tuple(args.models.split(",")), COMBOS)
    rng = random.Random(args.seed)
    runs = [draw(rng) for _ in range(args.draw)] if args.draw else configurations(models, combos)
    rows, failed = [], 0
    print(f"{'configuration':72} {'analytic':>9} {'traced':>9} {'diff':>9} "
          f"{'analytic peak':16} {'traced peak':14} {'loss %':>7} {'bwd %':>7} "
          f"{'step %':>7} {'s':>5}")
    for run in runs:
        if args.only and args.only not in run.label:
            continue
        try:
            row = run_one(run)
        except (VramplanError, RuntimeError) as error:
            # a drawn combination the tracer refuses (SDPA where a family has none), or that
            # fails in the model's code (MPT past its ALiBi table's 2,048 positions)
            failed += 1
            print(f"{run.label:72} refused or failed: {str(error)[:120]}", flush=True)
            continue
        rows.append(row)
        print_row(row)
    if failed:
        print(f"\n{failed} configurations refused or failed")
    worst = sorted(rows, key=lambda row: -abs(row.diff))
    beyond = [row for row in worst if abs(row.diff) > 0.03]
    print(f"\n{len(beyond)} of {len(rows)} configurations beyond 3 %")
    for row in worst[:args.details]:
        print_details(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
