"""A training step as the caching allocator sees it: the analytic model's tensors, one by one, in
the order a training loop allocates and frees them, and what `torch.cuda.max_memory_reserved`
reports for them.

`reserved` is not allocated memory times a constant: the caching allocator (PyTorch
c10/cuda/CUDACachingAllocator.cpp, simulated in `vramplan.allocator`) rounds each tensor to its
block and segment, keeps every freed block cached for later requests of the same stream, and
never returns memory to the driver while the program runs. What it holds at its peak depends on
the sizes of the tensors and on their order: optimizer states created at the first step land in
blocks that the first backward freed, so the second step's activations need new segments; a
vocabulary-sized tensor freed in backward is carved into smaller blocks, and so on. This module
writes the step as a program of allocations and frees (the model states tensor by tensor, each
block's saved tensors and working tensors, the logits and the loss, the gradients in backward
order, the optimizer's states and temporaries), replays two steps (the first creates the
optimizer states; peaks are reset before the second, which keeps the first one's cache) and
returns the cache the allocator holds beyond the allocated peak. `vramplan trace` records the
same program from a real step (every ATen op), and tests/test_allocations.py compares the two.

The package, in the order a step runs:
- `tensors`: the model's parameter tensors and their optimizer states, as the program sees them;
- `program`: the step's program, what persists across steps, the sharding, the step's shape;
- `load`: what exists before the first step (the model loaded or built, wrapped, upcast);
- `torchao_nf4`: torchtune's QLoRA model built with torchao v0.1's NF4 tensors;
- `forward_backward`: one micro-batch's forward, loss and backward, with its gradients;
- `loss`: the head, the logits and the loss, one function per way of computing them;
- `optimizer`: the optimizer's step, its states and temporaries;
- `step`: the entry points, `step_program` and `reserved_memory`.
"""
