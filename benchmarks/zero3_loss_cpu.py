"""Does DeepSpeed ZeRO-3 keep more of the logits alive than a plain training step? Measured on
the CPU: one step of a small Llama whose logits dwarf everything else (vocabulary 32,000, hidden
size 64, 512 tokens), every storage an ATen op makes tracked until it is freed by the project's
tracer (`vramplan.tracer.tracker.StorageTracker`), the peak printed in bytes per logit with the
phase it falls in.

The question comes from two sets of rows that sit under the estimate by about a 16-bit copy of
the logits per sequence (docs/open-leads.md: gpjt's Llama-3-8B ZeRO-3 sweep, ArcticTraining's
single-H200 baselines). ZeRO-3 hooks every module (deepspeed/runtime/zero/parameter_offload.py
`_register_hooks_recursively`): a forward hook runs `PreBackwardFunctionForModule` on each output
tensor and a forward pre-hook `PostBackwardFunctionModule` on each input, both returning
`tensor.detach()`; the model's own output dict gets the same treatment in place
(`apply_to_tensors_only`). If those autograd nodes held the head's 16-bit output or the
returned fp32 logits into the backward, the peak would grow by 2 or 4 bytes a logit.

Two loss paths: transformers' current `ForCausalLMLoss` (the model returns the 16-bit logits, the
loss upcasts them inside), and, with `--old-loss`, v4.40's `LlamaForCausalLM.forward` (upcast in
the model, shifted `contiguous()` copy, `CrossEntropyLoss`). The loop drops the output before the
backward as the HF Trainer's `compute_loss` does.

Measured on 2026-12-05 (torch 2.13.0+cpu, transformers 5.25.0, DeepSpeed 0.19.8, one rank over
gloo, bf16; DeepSpeed refuses fp16 on the CPU): 12.18 bytes per logit plain and under ZeRO-3
with the current loss, 12.16 with v4.40's; both in backward, at the log-softmax's backward: three
fp32 logits-sized tensors (its output, its incoming gradient, its result; a listing of the live
tensors showed them): the hooks keep no copy. Never part of the tests (DeepSpeed is not a
dependency).
Run: `python -m venv /tmp/ds && /tmp/ds/bin/pip install torch==2.13.0 transformers==5.25.0
deepspeed==0.19.8 && PYTHONPATH=src /tmp/ds/bin/python benchmarks/zero3_loss_cpu.py [--zero3]
[--old-loss]`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import torch
from torch.nn import CrossEntropyLoss
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.modeling_outputs import CausalLMOutputWithPast

from vramplan.tracer.result import Phase
from vramplan.tracer.tracker import StorageTracker

TOKENS, VOCAB, HIDDEN = 512, 32_000, 64
LOGITS = TOKENS * VOCAB


class LlamaV440Loss(LlamaForCausalLM):
    """transformers v4.40's `LlamaForCausalLM.forward` loss path: the head's output upcast in
    the model and returned, a shifted `contiguous()` copy, `CrossEntropyLoss`."""

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor,
                **_: Any) -> CausalLMOutputWithPast:
        hidden = self.model(input_ids=input_ids)[0]
        logits = self.lm_head(hidden).float()
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        loss = CrossEntropyLoss()(shift_logits.view(-1, VOCAB), shift_labels.view(-1))
        return CausalLMOutputWithPast(loss=loss, logits=logits)


def small_llama(old_loss: bool) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, vocab_size=VOCAB,
                         max_position_embeddings=TOKENS, tie_word_embeddings=False)
    config._attn_implementation = "sdpa"
    return (LlamaV440Loss if old_loss else LlamaForCausalLM)(config)


def counting(tensors: Any) -> StorageTracker:
    """The project's storage tracker (`vramplan.tracer.tracker`), recording, with `tensors`
    (what existed before the step) left out of its count."""
    tracker = StorageTracker()
    for tensor in tensors:
        if isinstance(tensor, torch.Tensor):
            tracker.exclude(tensor)
    tracker.start_recording()
    return tracker


def _step(tracker: StorageTracker, forward: Any, backward: Any) -> None:
    with tracker:
        tracker.start_phase(Phase.FORWARD)
        loss = forward()
        tracker.start_phase(Phase.BACKWARD)
        backward(loss)


def plain_step(old_loss: bool, ids: torch.Tensor) -> StorageTracker:
    model = small_llama(old_loss).to(torch.bfloat16)
    tracker = counting([*model.parameters(), *model.buffers()])
    _step(tracker, lambda: model(ids, labels=ids).loss, lambda loss: loss.backward())
    return tracker


def zero3_step(old_loss: bool, ids: torch.Tensor) -> StorageTracker:
    """A second ZeRO-3 step (the first builds the optimizer's state and the partitions)."""
    import gc

    import deepspeed

    for name, value in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29512"), ("RANK", "0"),
                        ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0")):
        os.environ.setdefault(name, value)
    deepspeed.init_distributed(dist_backend="gloo")
    model = small_llama(old_loss)
    config = {"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
              "zero_optimization": {"stage": 3}, "zero_allow_untested_optimizer": True,
              "zero_force_ds_cpu_optimizer": False}
    engine, *_ = deepspeed.initialize(model=model, config=config,
                                      optimizer=torch.optim.AdamW(model.parameters()))
    engine.backward(engine(ids, labels=ids).loss)
    engine.step()
    gc.collect()
    tracker = counting(gc.get_objects())
    _step(tracker, lambda: engine(ids, labels=ids).loss, engine.backward)
    return tracker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zero3", action="store_true", help="run under DeepSpeed ZeRO-3")
    parser.add_argument("--old-loss", action="store_true", help="transformers v4.40's loss path")
    args = parser.parse_args()
    ids = torch.randint(0, VOCAB, (1, TOKENS))
    tracker = (zero3_step if args.zero3 else plain_step)(args.old_loss, ids)
    print(f"{'ZeRO-3' if args.zero3 else 'plain'}: peak {tracker.peak / LOGITS:.2f} bytes "
          f"a logit, in {tracker.recorded_peak_phase().value}")


if __name__ == "__main__":
    main()
