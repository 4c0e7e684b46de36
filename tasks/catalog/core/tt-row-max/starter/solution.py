"""Starter: a correct but naive Triton row max.

The grid has one program per 128-element chunk of every row; each program reduces its chunk and
merges it into the row's result with a global atomic max, so long rows hammer one address with
many atomics and the output must be pre-filled with -inf by a separate launch.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _chunk_max_atomic(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=float("-inf"))
    tl.atomic_max(out_ptr + row, tl.max(x, axis=0))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        out = torch.full((n_rows,), float("-inf"), dtype=x.dtype, device=x.device)
        if x.numel():
            _chunk_max_atomic[(n_rows, triton.cdiv(n_cols, 128))](x, out, n_cols, BLOCK=128)
        return out
