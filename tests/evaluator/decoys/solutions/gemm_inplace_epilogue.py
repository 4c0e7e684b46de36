import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sub_mul_relu_inplace(y_ptr, n, sub, mul, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum((y - sub) * mul, 0.0), mask=mask)


class ModelNew(nn.Module):
    """The GEMM with its bias in the library (addmm), the epilogue in place on its output."""

    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        n = y.numel()
        sub_mul_relu_inplace[(triton.cdiv(n, 1024),)](
            y, n, self.subtract_value, self.multiply_value, BLOCK=1024
        )
        return y
