"""Starter: a correct but naive Triton RMSNorm in three launches.

1. one program per row sums the squares and writes 1/rms to a buffer;
2. a second kernel re-reads x and writes the normalized rows to an fp32 scratch matrix;
3. a third kernel reads the scratch matrix back, applies the weight and writes bf16.
The extra fp32 round trip moves 8 more bytes per element than the 4-byte floor.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-6
BLOCK = 256


@triton.jit
def _row_rstd(x_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    sq = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        sq += tl.sum(x * x, axis=0)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(sq / n_cols + eps))


@triton.jit
def _normalize(x_ptr, rstd_ptr, tmp_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(tmp_ptr + row * n_cols + offs, x * tl.load(rstd_ptr + row), mask=mask)


@triton.jit
def _scale(tmp_ptr, w_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    t = tl.load(tmp_ptr + row * n_cols + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + offs, (t * w).to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        if not x.numel():
            return y
        rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        tmp = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)
        grid = (n_rows, triton.cdiv(n_cols, BLOCK))
        _row_rstd[(n_rows,)](x, rstd, n_cols, EPS, BLOCK=BLOCK)
        _normalize[grid](x, rstd, tmp, n_cols, BLOCK=BLOCK)
        _scale[grid](tmp, self.weight, y, n_cols, BLOCK=BLOCK)
        return y
