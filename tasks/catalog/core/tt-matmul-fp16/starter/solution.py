"""Starter: a correct but naive Triton fp16 matmul.

Each program owns a small 32 x 32 tile of C and walks K one column at a time, adding a rank-1
outer product per step on the CUDA cores: no tl.dot, no K-blocking, no tensor cores.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _matmul_rank1(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask_m = rm < M
    mask_n = rn < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rm * stride_am + k * stride_ak, mask=mask_m, other=0.0)
        b = tl.load(b_ptr + k * stride_bk + rn * stride_bn, mask=mask_n, other=0.0)
        acc += a.to(tl.float32)[:, None] * b.to(tl.float32)[None, :]
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        m, k = a.shape
        _, n = b.shape
        c = torch.empty((m, n), dtype=torch.float16, device=a.device)
        if c.numel():
            grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
            _matmul_rank1[grid](
                a,
                b,
                c,
                m,
                n,
                k,
                a.stride(0),
                a.stride(1),
                b.stride(0),
                b.stride(1),
                c.stride(0),
                c.stride(1),
                BLOCK_M=32,
                BLOCK_N=32,
            )
        return c
