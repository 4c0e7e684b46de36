"""KernelBench level 2 problem 56 (Matmul, sigmoid, sum): the GEMM in cuBLAS, then one Triton
program per row adds the bias, takes the sigmoid and sums the row."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_sigmoid_row_sum(y_ptr, bias_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < cols
        y = tl.load(y_ptr + row * cols + offsets, mask=mask, other=0.0)
        b = tl.load(bias_ptr + offsets, mask=mask, other=0.0)
        total += tl.where(mask, tl.sigmoid(y + b), 0.0)
    tl.store(out_ptr + row, tl.sum(total, axis=0))


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        out = torch.empty(y.shape[0], 1, device=y.device, dtype=y.dtype)
        bias_sigmoid_row_sum[(y.shape[0],)](y, self.linear.bias, out, y.shape[1], BLOCK=2048)
        return out
