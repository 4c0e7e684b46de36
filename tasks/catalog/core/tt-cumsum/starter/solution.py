"""Starter: a correct but naive Triton row prefix sum.

One program per row walks the row serially, one scalar load, add and store per element: no
parallel scan, no vector loads, and only M programs in flight.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _cumsum_serial(x_ptr, y_ptr, n_cols):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros((), tl.int32)
    for j in range(0, n_cols):
        acc += tl.load(x_ptr + base + j)
        tl.store(y_ptr + base + j, acc)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        if x.numel():
            _cumsum_serial[(n_rows,)](x, y, n_cols)
        return y
