"""KernelBench level 2 problem 81 (Gemm, swish, divide, clamp, tanh, clamp): the GEMM with its
bias in cuBLAS (addmm), the five elementwise steps in one Triton pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_div_clamp_tanh(y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    y = y * tl.sigmoid(y) / 2.0
    y = tl.minimum(tl.maximum(y, -1.0), 1.0)
    # tanh(y) = 2 sigmoid(2y) - 1; |y| <= 1 here, so no overflow.
    y = 2.0 * tl.sigmoid(2.0 * y) - 1.0
    tl.store(out_ptr + offsets, tl.minimum(tl.maximum(y, -1.0), 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        if self.gemm.bias is not None:
            y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t())
        else:
            y = torch.mm(x, self.gemm.weight.t())
        out = torch.empty_like(y)
        n = y.numel()
        swish_div_clamp_tanh[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
        return out
