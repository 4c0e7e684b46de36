"""Starter: a correct but naive Triton bias + GELU, one kernel per step.

1. t = x + bias, written to an fp32 scratch matrix;
2. e = erf(t / sqrt(2)), read back and written to a second fp32 scratch matrix;
3. y = 0.5 * t * (1 + e), reading both scratch matrices and writing fp16.
Every step is its own launch and its own round trip through memory: about 24 bytes move per
element where 4 would do.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _add_bias(x_ptr, b_ptr, t_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs % n_cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(t_ptr + offs, x + b, mask=mask)


@triton.jit
def _erf_scaled(t_ptr, e_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    tl.store(e_ptr + offs, tl.math.erf(t * 0.7071067811865476), mask=mask)


@triton.jit
def _gelu_combine(t_ptr, e_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    e = tl.load(e_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, (0.5 * t * (1.0 + e)).to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(n, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_elements, n_cols = x.numel(), x.shape[-1]
        y = torch.empty_like(x)
        if not n_elements:
            return y
        t = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        e = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        grid = (triton.cdiv(n_elements, BLOCK),)
        _add_bias[grid](x, self.bias, t, n_elements, n_cols, BLOCK=BLOCK)
        _erf_scaled[grid](t, e, n_elements, BLOCK=BLOCK)
        _gelu_combine[grid](t, e, y, n_elements, BLOCK=BLOCK)
        return y
