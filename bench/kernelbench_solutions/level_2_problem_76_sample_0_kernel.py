"""KernelBench level 2 problem 76 (Gemm, add bias, ReLU): the bias-free GEMM in cuBLAS, the
bias add and ReLU in one Triton pass, in place on the GEMM's output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_inplace(y_ptr, bias_ptr, n, cols, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(bias_ptr + offsets % cols, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(y + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = torch.mm(x, self.gemm.weight.t())
        n = y.numel()
        bias_relu_inplace[(triton.cdiv(n, 1024),)](y, self.bias, n, y.shape[1], BLOCK=1024)
        return y
