"""KernelBench level 1 problem 47 (Sum reduction over a dimension, keepdim=True): Triton solution.

The contiguous input is viewed as (outer, R, inner) where R is the reduced
dimension. When inner > 1 each program owns one outer index and a block of
inner columns and walks down R in tiles of BLOCK_R rows (loads are contiguous
along inner). When inner == 1 (reducing the last dimension) each program owns
one row and walks along it. Accumulation is in float32.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_columns_kernel(
    x_ptr, out_ptr, R, inner, n_inner_blocks, scale, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr
):
    pid = tl.program_id(0).to(tl.int64)
    o = pid // n_inner_blocks
    ib = pid % n_inner_blocks
    cols = ib * BLOCK_I + tl.arange(0, BLOCK_I)
    col_mask = cols < inner
    rows = tl.arange(0, BLOCK_R)
    base = x_ptr + o * R * inner
    acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + rows
        ptrs = base + r.to(tl.int64)[:, None] * inner + cols[None, :]
        mask = (r < R)[:, None] & col_mask[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0) * scale
    tl.store(out_ptr + o * inner + cols, total.to(out_ptr.dtype.element_ty), mask=col_mask)


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, R, scale, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * R
    offs0 = tl.arange(0, BLOCK_SIZE)
    acc = tl.zeros([BLOCK_SIZE], tl.float32)
    for start in range(0, R, BLOCK_SIZE):
        offs = start + offs0
        acc += tl.load(base + offs, mask=offs < R, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0) * scale
    tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))


def _reduce_dim(x: torch.Tensor, dim: int, scale: float, keepdim: bool) -> torch.Tensor:
    x_c = x.contiguous()
    nd = x_c.dim()
    d = dim % nd
    shape = list(x_c.shape)
    R = shape[d]
    outer = 1
    for s in shape[:d]:
        outer *= s
    inner = 1
    for s in shape[d + 1 :]:
        inner *= s
    out = torch.empty(outer * inner, dtype=x_c.dtype, device=x_c.device)
    if out.numel() > 0:
        if inner == 1:
            BLOCK_SIZE = min(1024, triton.next_power_of_2(max(R, 1)))
            sum_rows_kernel[(outer,)](x_c, out, R, scale, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
        else:
            BLOCK_I = min(256, triton.next_power_of_2(inner))
            BLOCK_R = 2048 // BLOCK_I  # tiles of 2048 elements
            n_inner_blocks = triton.cdiv(inner, BLOCK_I)
            grid = (outer * n_inner_blocks,)
            sum_columns_kernel[grid](
                x_c,
                out,
                R,
                inner,
                n_inner_blocks,
                scale,
                BLOCK_R=BLOCK_R,
                BLOCK_I=BLOCK_I,
                num_warps=4,
            )
    if keepdim:
        shape[d] = 1
    else:
        del shape[d]
    return out.view(shape)


class ModelNew(nn.Module):
    """torch.sum(x, dim=self.dim, keepdim=True) with Triton kernels."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _reduce_dim(x, self.dim, 1.0, keepdim=True)
