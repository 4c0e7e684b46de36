"""KernelBench level 1 problem 88 (MinGPT "new" GELU, tanh approximation): Triton solution,
one of the pairs bench/throughput.py grades against KernelBench's own evaluation."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def new_gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    # tanh(z) = 1 - 2 / (exp(2z) + 1), exact at both ends of the range
    t = 1.0 - 2.0 / (tl.exp(2.0 * inner) + 1.0)
    tl.store(out_ptr + offs, (0.5 * v * (1.0 + t)).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            new_gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024, num_warps=4)
        return out
