"""Activation memory: the tensors each operation saves for backward, and the logits and loss.

The starting point is Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models" (arXiv:2205.05198), section 4.1: per layer, s·b·h·(34 + 5·a·s/h) bytes in
16-bit with every weight trained and eager attention. We do not use that closed form: we list what
autograd really keeps, operation by operation, because what a layer saves depends on what trains.

Rules of autograd used throughout (PyTorch `tools/autograd/derivatives.yaml` and the codegen's
`should_compute_output` guards in `gen_variable_type.py`):
- a linear layer saves its input only when its weight needs a gradient, and its weight only when
  its input needs one: a frozen linear keeps no activation (checked in tests/test_activations.py);
- element-wise ops save what their derivative needs (SiLU/GELU their input, ReLU its output, a
  product both factors, dropout its mask: one byte per element on CUDA, `native_dropout`);
- a view keeps its whole base alive: litgpt's value tensor is a view of the fused qkv output;
- FlashAttention and PyTorch's SDPA kernels save q, k, v, the output and the log-sum-exp per row
  (Dao et al. 2022, arXiv:2205.14135, section 3.1); eager attention also saves the probabilities.

Framework implementations are followed from their source: litgpt `litgpt/model.py` (Block,
CausalSelfAttention, RMSNorm with an fp32 copy, GptNeoxMLP/LLaMAMLP), `litgpt/lora.py`
(LoRAQKVLinear with `lora_dropout`, `zero_pad` through `index_copy`, which keeps its source),
bitsandbytes `autograd/_functions.py` MatMul4Bit (kept its input A whenever A needed a gradient,
even with a frozen weight, until v0.43.2), Lightning Fabric `plugins/precision/half.py`
(`convert_output` casts the model's output, the logits, to the default dtype float32), and
transformers' `LlamaRMSNorm` and `ForCausalLMLoss` (`logits.float()`).

All sizes are bytes per token (multiply by batch x sequence) unless the name says otherwise.

The package, by concern:
- `spec`: a block's description (`BlockSpec`), the ledger its operations record into (`Ledger`,
  `Saved`), and the rules they share (LoRA targets, autocast, the adapters' dtype, dropout);
- `ops`: norms and linear layers with their adapters;
- `attention`, `mlp`, `moe`: the sublayers;
- `block`: one block put together, the embedding, quantized linears' kept inputs;
- `backward`: what a block's backward and its recomputed forward hold beyond its saved tensors;
- `checkpointing`: what each checkpointing choice keeps;
- `head`: the final norm, the head, the logits and the loss.
"""
