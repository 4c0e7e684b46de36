"""Starter: a correct but naive Triton LayerNorm.

One program per row walks the row in tiny blocks three times: once for the mean, once for the
variance, once to normalize and apply the weight and bias.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def _layernorm_row(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)

    total = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        total += tl.sum(tl.load(x_row + offs, mask=offs < n_cols, other=0.0), axis=0)
    mean = total / n_cols

    sq = tl.zeros((), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        sq += tl.sum(d * d, axis=0)
    rstd = 1.0 / tl.sqrt(sq / n_cols + eps)

    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
        tl.store(y_row + offs, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n, dtype=torch.float32))
        self.bias = nn.Parameter(torch.zeros(n, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        if x.numel():
            _layernorm_row[(n_rows,)](x, self.weight, self.bias, y, n_cols, EPS, BLOCK=32)
        return y
