import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_sub_mul_relu(y_ptr, bias_ptr, out_ptr, n, cols, sub, mul, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(bias_ptr + offsets % cols, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.maximum((y + b - sub) * mul, 0.0), mask=mask)


class ModelNew(nn.Module):
    """The GEMM in the library (torch.mm), bias, subtract, multiply and ReLU in one pass."""

    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        out = torch.empty_like(y)
        n = y.numel()
        grid = (triton.cdiv(n, 1024),)
        bias_sub_mul_relu[grid](
            y,
            self.linear.bias,
            out,
            n,
            y.shape[1],
            self.subtract_value,
            self.multiply_value,
            BLOCK=1024,
        )
        return out
