"""transformers' `generate` as the caching allocator sees it: what a KV cache that grows by
`torch.cat` leaves reserved.

An engine that allocates its cache for the whole context (vLLM, litgpt, torchtune, a static
cache) reserves about what it allocates. transformers' default cache grows instead: at every
decode step each layer's keys and values become a new tensor one token longer
(`torch.cat([past, new], dim=-2)`: the legacy tuples, then `DynamicCache.update`, cache_utils.py),
and the old one is freed, right away (`DynamicCache`) or after the step (the tuples of before
v4.42.0, `InferenceInputs.previous_cache_alive`). PyTorch's caching allocator
(c10/cuda/CUDACachingAllocator.cpp, simulated in `vramplan.allocator`) can give a freed block
only to a request no larger than it: each request just over the previous size needs a block
that was never used at that size, so segments of every size the cache went through stay
cached. A request of 10 MiB or more gets a segment of its own rounded to 2 MiB; below, 20 MiB
segments are split between requests. How much stays reserved is a matter of sizes and order,
which this module writes down as a program and replays:

- the weights (one allocation: their tensors fill their segments, bar the rounding); a
  bitsandbytes 4-bit model quantized while it loads, matrix by matrix from a 16-bit copy
  (`_load`), then the peaks reset: the replay's allocated peak is the generation's;
- prefill, block by block and op by op (`_prefill_block`, transformers' Llama code): the
  norms' fp32 temporaries, the projections, the rotary products, eager attention's scores, the
  MLP's intermediates, each freed where CPython drops it; the prompt's keys and values land in
  what the previous block freed (its MLP's segments), which the growing cache then reuses;
  then the logits the engine keeps;
- each decode step, layer by layer: the cache's grown tensors, the old ones freed as the code of
  the row's date frees them, an eager kernel's scores (16-bit scores, the fp32 softmax, its
  16-bit cast: `eager_attention_forward`), and with grouped-query attention its copies of the
  keys and values repeated for every query head (`repeat_kv`, which eager attention always
  calls); then the step's fp32 logits, the previous step's freed;
- with bitsandbytes 4-bit weights, each matmul of more than one row (a prefill, a decode step
  of several sequences) first dequantizes its matrix into a 16-bit copy, freed after it
  (`bnb_dequantized_bytes_per_weight`): q, k and v before the cache grows, o and the MLP's
  after. These large blocks come and go at every layer, and the growing cache's requests take
  pieces of them.

Tensors smaller than 1 MiB go to the small pool, whose 2 MiB segments never serve the cache;
the program keeps them out. Only the difference between the replay's reserved and allocated
peaks is used (`growing_cache_reserve_bytes`), added to the analytic allocated peak.
"""

from __future__ import annotations

from dataclasses import replace
from math import ceil

from vramplan.allocator import (
    K_SMALL_SIZE,
    PYTORCH_DEFAULTS,
    RESET_PEAKS,
    AllocatorConfig,
    Event,
    EventKind,
    Program,
    ReplayResult,
    mark,
    replay,
)
from vramplan.inference.estimate import (
    InferenceEstimate,
    bnb_dequantized_bytes_per_weight,
    cache_layer_tensors,
    eager_attention,
    mlp_width,
    prompt_logit_values,
)
from vramplan.inference.setup import InferenceInputs
from vramplan.model.architecture import Architecture, MlpKind, NormKind, PositionKind
from vramplan.model.weight_storage import bnb_4bit_bytes
from vramplan.parts import PartKind
from vramplan.presets.quant_formats import BNB_BLOCKSIZE, BNB_DQ_BLOCKSIZE, FormatFamily
from vramplan.units import ceil_div
from vramplan.vocab import ComputeDtype

LAYER_STEPS_BUDGET = 10_000
"""The most (decode step, layer) pairs a program writes one by one: a longer generation is
written in strides of several tokens per step (the same sizes at the strides' ends, 1/stride of
the events): a tenth of a second of replay; the reserved peak stays within 0.5 % of the
step-by-step program's on the transformers rows of the case files (optimum-benchmark's Llama-2
runs, Qwen2.5's long prompts)."""


def generate_program(estimate: InferenceEstimate) -> tuple[Event, ...]:
    """The allocations and frees of one `generate` call whose cache grows (see the module's
    docstring); an empty program for an engine whose cache does not."""
    inputs = estimate.inputs
    if not inputs.profile.kv_grows:
        return ()
    arch = inputs.arch
    layers = [([ceil(values * inputs.kv_dtype.bytes_per_value) * inputs.batch
                for values in tensors], most)
              for tensors, most in cache_layer_tensors(arch, inputs)]
    program = _loaded(estimate)
    prompt = inputs.prompt_tokens
    cache, prompt_logits = _prefill(program, estimate, layers)
    if prompt_logits is not None and not inputs.prompt_logits_kept:
        program.free(prompt_logits)
        prompt_logits = None
    logits = program.alloc(estimate.bytes_of(PartKind.LOGITS))
    heads = max(1, arch.n_heads // inputs.tensor_parallel)
    eager = eager_attention(arch, inputs)
    # eager attention repeats a grouped cache's keys and values for every query head
    repeats = arch.n_heads // arch.n_kv_heads \
        if eager and arch.latent_attention is None and arch.n_kv_heads < arch.n_heads else 0
    end = prompt + inputs.decode_steps
    stride = max(1, ceil((end - prompt) * len(layers) / LAYER_STEPS_BUDGET))
    tokens = prompt
    before_cache, after_cache = _dequantized_matrices(estimate, rows=inputs.batch)
    while tokens < end:
        tokens = min(tokens + stride, end)
        previous: list[int] = []
        for index, (per_token, most) in enumerate(layers):
            held = min(tokens, most)
            _transients(program, before_cache)
            grown = [program.alloc(size * held) for size in per_token]
            if inputs.previous_cache_alive:
                previous.extend(cache[index])
            else:
                for tensor in cache[index]:
                    program.free(tensor)
            cache[index] = grown
            expanded = [program.alloc(size * held * repeats) for size in per_token if repeats]
            if eager:
                _eager_scores(program, inputs.batch * heads * held, inputs.compute_dtype)
            program.free_all(expanded)
            _transients(program, after_cache)
        for tensor in previous:
            program.free(tensor)
        if prompt_logits is not None:
            program.free(prompt_logits)
            prompt_logits = None
        program.free(logits)
        logits = program.alloc(inputs.batch * arch.vocab_size * 4)
    return _large_only(program.events)


def _prefill(program: Program, estimate: InferenceEstimate,
             layers: list[tuple[list[int], int]]) -> tuple[list[list[int]], int | None]:
    """The prefill: the embeddings (kept by the model's `forward` until it returns), eager
    attention's 4D mask, each block op by op (`_prefill_block`), the block's input freed when
    the next one starts, then the head's logits of every prompt position where the model returns
    them all. Returns the cache tensors of each layer and those logits (None where only the
    last position's are made)."""
    inputs = estimate.inputs
    arch = inputs.arch
    prompt = inputs.prompt_tokens
    before_cache, after_cache = _dequantized_matrices(estimate, rows=inputs.batch * prompt)
    act = inputs.compute_dtype.bytes
    embeddings = program.alloc(inputs.batch * prompt * arch.hidden_size * act)
    held = [embeddings]
    if eager_attention(arch, inputs):
        held.append(program.alloc(inputs.batch * prompt * prompt * act))
    hidden = embeddings
    cache: list[list[int]] = []
    for per_token, most in layers:
        kv = [size * min(prompt, most) for size in per_token]
        output, tensors = _prefill_block(program, estimate, kv, before_cache, after_cache)
        if hidden != embeddings:
            program.free(hidden)
        hidden = output
        cache.append(tensors)
    # the logits of every prompt position, freed after the prefill or after the first decode step
    prompt_logits = _prompt_logits(program, estimate)
    if hidden != embeddings:
        program.free(hidden)
    program.free_all(held)
    return cache, prompt_logits


def _prefill_block(program: Program, estimate: InferenceEstimate, kv: list[int],
                   before_cache: tuple[int, ...],
                   after_cache: tuple[int, ...]) -> tuple[int, list[int]]:
    """One block of transformers' prefill, op by op, as CPython frees each temporary (read in
    v4.35.2 models/llama/modeling_llama.py by a helper, 2026-12-05): the input norm, the
    projections, the rotary products (`q * cos + rotate_half(q) * sin`, `rotate_half` a `cat`
    of `-x2` and `x1`), eager attention's scores (matmul, scaling, mask, the fp32 softmax and
    its cast; `repeat_kv`'s copies for grouped keys), the output, the residual sum, the
    post-attention norm and the MLP. Returns the block's output and the cache tensors it keeps
    (the rotated keys and the values, `kv`). The sizes matter more than the bytes here: the
    prompt's keys and values land in the segments the previous block's MLP freed, which the
    growing cache then reuses (with one block-sized allocation instead, Llama-2-7B at 8
    sequences of 256 + 512 tokens replayed 76.8 GB reserved where optimum-benchmark measured
    63.50 GB; op by op 63.5 GB, the smaller batches unchanged)."""
    inputs = estimate.inputs
    arch = inputs.arch
    tp = inputs.tensor_parallel
    act = inputs.compute_dtype.bytes
    rows = inputs.batch * inputs.prompt_tokens
    residual = rows * arch.hidden_size * act
    normed = _prefill_norm(program, arch, rows, act)
    _transients(program, before_cache)
    query = program.alloc(rows * (arch.q_dim // tp) * act)
    key_value = [program.alloc(size) for size in kv]
    if arch.position is PositionKind.ROPE and len(kv) == 2:
        rotated = [_rotate(program, rows * (arch.q_dim // tp) * act), _rotate(program, kv[0])]
        program.free_all([query, key_value[0]])
        query, key_value[0] = rotated
    attention: list[int] = []
    if eager_attention(arch, inputs):
        if arch.n_kv_heads < arch.n_heads:  # repeat_kv's keys and values
            attention += [program.alloc(rows * (arch.q_dim // tp) * act) for _ in range(2)]
        attention.append(_eager_scores_prefill(program, inputs, arch))
    output_bytes = rows * (arch.attn_out_dim // tp) * act
    output = program.alloc(output_bytes)
    contiguous = program.alloc(output_bytes)  # `attn_output.transpose(1, 2).contiguous()`
    program.free(output)
    _transients(program, after_cache)
    projected = program.alloc(residual)
    program.free_all([contiguous, query, *attention, normed])
    summed = program.alloc(residual)
    program.free(projected)
    normed = _prefill_norm(program, arch, rows, act)
    width = rows * (mlp_width(arch) // tp) * act
    if arch.mlp is MlpKind.GATED:
        gate = program.alloc(width)
        activated = program.alloc(width)
        program.free(gate)
        up = program.alloc(width)
        product = program.alloc(width)
        program.free_all([activated, up])
    else:
        up = program.alloc(width)
        product = program.alloc(width)
        program.free(up)
    down = program.alloc(residual)
    program.free_all([product, normed])
    out = program.alloc(residual)
    program.free_all([down, summed])
    return out, key_value


def _prefill_norm(program: Program, arch: Architecture, rows: int, act: int) -> int:
    """A block norm's output and its temporaries: transformers' RMSNorm computes in fp32
    (`hidden_states.to(torch.float32)`, `pow(2)`, `* torch.rsqrt(...)`, then the cast and the
    weight's product); a LayerNorm makes its output alone."""
    values = rows * arch.hidden_size
    if arch.norm is not NormKind.RMSNORM:
        return program.alloc(values * act)
    upcast = program.alloc(values * 4)
    program.free(program.alloc(values * 4))
    scaled = program.alloc(values * 4)
    program.free(upcast)
    cast = program.alloc(values * act)
    weighted = program.alloc(values * act)
    program.free_all([cast, scaled])
    return weighted


def _rotate(program: Program, n_bytes: int) -> int:
    """`x * cos + rotate_half(x) * sin` on a tensor of `n_bytes`: its rotated copy."""
    by_cos = program.alloc(n_bytes)
    negated = program.alloc(n_bytes // 2)
    halves = program.alloc(n_bytes)
    program.free(negated)
    by_sin = program.alloc(n_bytes)
    program.free(halves)
    rotated = program.alloc(n_bytes)
    program.free_all([by_cos, by_sin])
    return rotated


def _eager_scores_prefill(program: Program, inputs: InferenceInputs, arch: Architecture) -> int:
    """Eager attention's prefill scores: the product, its scaling, the mask's sum, the softmax in
    fp32 (bfloat16 converted first, `eager_softmax_bytes_per_score`) and its cast, which stays
    (the probabilities `probs @ v` reads)."""
    heads = max(1, arch.n_heads // inputs.tensor_parallel)
    scores = inputs.batch * heads * inputs.prompt_tokens * inputs.prompt_tokens
    act = inputs.compute_dtype.bytes
    product = program.alloc(scores * act)
    scaled = program.alloc(scores * act)
    program.free(product)
    masked = program.alloc(scores * act)
    program.free(scaled)
    probs = _eager_softmax(program, scores, inputs.compute_dtype)
    program.free(masked)
    return probs


def _eager_softmax(program: Program, scores: int, dtype: ComputeDtype) -> int:
    """`softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)` on `scores`
    scores already allocated in `dtype`: the probabilities in `dtype` (the tensors of
    `vramplan.inference.estimate.eager_softmax_bytes_per_score`: bfloat16 converted to fp32
    first, float16 through the `half_to_float` kernel, an fp32 cast that returns its input)."""
    converted = program.alloc(scores * 4) if dtype is ComputeDtype.BF16 else None
    softmax = program.alloc(scores * 4)
    if converted is not None:
        program.free(converted)
    if dtype is ComputeDtype.FP32:
        return softmax
    probs = program.alloc(scores * dtype.bytes)
    program.free(softmax)
    return probs


def _loaded(estimate: InferenceEstimate) -> Program:
    """A program that loads the weights (`_load`), then resets the peaks: the replay's
    allocated peak is the generation's, its reserved peak what the load left and what the
    generation added."""
    program = Program()
    _load(program, estimate)
    program.events.append(mark(RESET_PEAKS))
    return program


def _load(program: Program, estimate: InferenceEstimate) -> None:
    """The weights as transformers loads them. bitsandbytes 4-bit: each linear's 16-bit weight
    goes to the GPU and is quantized there, its 16-bit copy freed
    (`_quantized_on_load`); the other tensors (embeddings, norms, an unquantized head) arrive
    in their own dtype, written as one allocation. Other formats: one allocation."""
    weights = estimate.bytes_of(PartKind.WEIGHTS)
    matrices = _quantized_on_load(estimate)
    if not matrices:
        program.alloc(weights)
        return
    double_quant = estimate.inputs.weights.double_quant
    program.alloc(max(weights - sum(bnb_4bit_bytes(n, double_quant) for n in matrices), 0))
    for n in matrices:
        _quantize_4bit(program, n, double_quant)


def _quantized_on_load(estimate: InferenceEstimate) -> list[int]:
    """The values of every matrix bitsandbytes quantizes while the model loads, in the order
    of the checkpoint (layer by layer, a block's attention then its MLP): the block linears of
    a 4-bit model, an expert's each. Every such row loads a 16-bit checkpoint with
    `load_in_4bit` (a checkpoint saved already quantized, which transformers loads from v4.37,
    would skip the 16-bit copies; no row of the case files loads one)."""
    inputs = estimate.inputs
    if inputs.weights.family is not FormatFamily.BNB_4BIT:
        return []
    tp = inputs.tensor_parallel
    return [ceil_div(linear.in_features * linear.out_features, tp)
            for kind in inputs.arch.block_kinds() for _ in range(kind.layers)
            for linear in kind.linears for _ in range(linear.count)]


def _quantize_4bit(program: Program, n: int, double_quant: bool) -> None:
    """One matrix of n values through bitsandbytes' `Params4bit.cuda` (bitsandbytes 0.41.1
    nn/modules.py: `w = self.data.contiguous().half().cuda(device)`, then
    functional.py `quantize_4bit`): the 16-bit copy, the fp32 absmax (one per 64 values), the
    packed codes; with double quantization the absmax are quantized in turn
    (`quantize_blockwise(absmax, blocksize=256)`: its fp32 constants, then the uint8 codes) and
    freed; the 16-bit copy goes when `cuda` returns. What stays is `bnb_4bit_bytes` (bar the
    scalar offset)."""
    blocks = ceil_div(n, BNB_BLOCKSIZE)
    copy = program.alloc(2 * n)
    absmax = program.alloc(4 * blocks)
    program.alloc((n + 1) // 2)
    if double_quant:
        program.alloc(4 * ceil_div(blocks, BNB_DQ_BLOCKSIZE))
        program.alloc(blocks)
        program.free(absmax)
    program.free(copy)


def _dequantized_matrices(estimate: InferenceEstimate, *,
                          rows: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The 16-bit copies bitsandbytes makes of one block's 4-bit matrices for a matmul of
    `rows` rows, in the order the block uses them: (q, k, v), then (o and the MLP's shared
    linears); none for one row or for other weights. A MoE block's routed experts are left
    out."""
    inputs = estimate.inputs
    per_weight = bnb_dequantized_bytes_per_weight(inputs)
    if not per_weight or rows <= 1:
        return (), ()
    linears = [linear for linear in inputs.arch.block_linears() if not linear.routed]
    sizes = [(linear.role, per_weight * ceil(linear.in_features * linear.out_features
                                             / inputs.tensor_parallel)) for linear in linears]
    return (tuple(n for role, n in sizes if role in ("q", "k", "v")),
            tuple(n for role, n in sizes if role not in ("q", "k", "v")))


def _transients(program: Program, sizes: tuple[int, ...]) -> None:
    """Tensors made and freed one after another."""
    for n_bytes in sizes:
        program.free(program.alloc(n_bytes))


def _prompt_logits(program: Program, estimate: InferenceEstimate) -> int | None:
    """The logits of every prompt position, where the model returns them all
    (`InferenceInputs.prompt_logits_bytes`): the head's compute-dtype output, then the model's
    fp32 copy, the head's output freed by the cast; None where it returns the last one only."""
    inputs = estimate.inputs
    if not inputs.prompt_logits_bytes:
        return None
    values = prompt_logit_values(inputs.arch, inputs)
    head = program.alloc(values * inputs.compute_dtype.bytes)
    if inputs.prompt_logits_bytes == inputs.compute_dtype.bytes:
        return head
    logits = program.alloc(values * inputs.prompt_logits_bytes)
    program.free(head)
    return logits


def _eager_scores(program: Program, scores: int, dtype: ComputeDtype) -> None:
    """An eager decode step's scores in `dtype` and their softmax (`_eager_softmax`); the raw
    scores go when `attn_weights` is rebound to the probabilities."""
    raw = program.alloc(scores * dtype.bytes)
    program.free_all([_eager_softmax(program, scores, dtype), raw])


def _large_only(events: list[Event]) -> tuple[Event, ...]:
    """The program without the small pool's tensors (1 MiB or less)."""
    small = {event.tensor for event in events
             if event.kind is EventKind.ALLOC and event.n_bytes <= K_SMALL_SIZE}
    return tuple(event for event in events if event.tensor not in small)


def replay_generate(estimate: InferenceEstimate,
                    config: AllocatorConfig = PYTORCH_DEFAULTS) -> ReplayResult | None:
    """The caching allocator's counters after `generate_program`; None when the engine's cache
    does not grow."""
    events = generate_program(estimate)
    return replay(events, config) if events else None


def growing_cache_reserve_bytes(estimate: InferenceEstimate,
                                capacity_bytes: int | None = None) -> int:
    """What the allocator reserves beyond the allocated peak while a growing cache fills (0 for
    an engine whose cache does not grow). `capacity_bytes`: what `cudaMalloc` can obtain on the
    card; near it the allocator frees its cache and retries, which bounds the result."""
    result = replay_generate(estimate, replace(PYTORCH_DEFAULTS, capacity_bytes=capacity_bytes))
    if result is None:
        return 0
    return max(result.peak_reserved_bytes - result.peak_allocated_bytes, 0)
