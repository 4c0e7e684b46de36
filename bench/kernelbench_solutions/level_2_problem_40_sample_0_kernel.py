"""KernelBench level 2 problem 40 (Matmul, scaling, residual add): the GEMM in cuBLAS,
then bias and y * s + y (the residual is the GEMM's own output) in one Triton pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_scale_residual(y_ptr, bias_ptr, out_ptr, n, cols, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    y = y + tl.load(bias_ptr + offsets % cols, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, y * scale + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = torch.mm(x, self.matmul.weight.t())
        out = torch.empty_like(y)
        n = y.numel()
        bias_scale_residual[(triton.cdiv(n, 1024),)](
            y, self.matmul.bias, out, n, y.shape[1], float(self.scaling_factor), BLOCK=1024
        )
        return out
