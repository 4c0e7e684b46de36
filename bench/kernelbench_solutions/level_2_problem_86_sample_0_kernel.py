"""KernelBench level 2 problem 86 (Matmul, divide, GELU): the GEMM with its bias in cuBLAS
(addmm), the division and the exact (erf) GELU in one Triton pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def divide_gelu(y_ptr, out_ptr, n, divisor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0) / divisor
    tl.store(out_ptr + offsets, 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        out = torch.empty_like(y)
        n = y.numel()
        divide_gelu[(triton.cdiv(n, 1024),)](y, out, n, float(self.divisor), BLOCK=1024)
        return out
