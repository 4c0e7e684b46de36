"""KernelBench level 2 problem 57 (Conv2d, ReLU, HardSwish): the convolution in cuDNN, ReLU and
x * clamp((x + 3) / 6, 0, 1) in one Triton pass, in place on its output."""

import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_hardswish_inplace(y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.maximum(tl.load(y_ptr + offsets, mask=mask, other=0.0), 0.0)
    gate = tl.minimum(tl.maximum((y + 3.0) / 6.0, 0.0), 1.0)
    tl.store(y_ptr + offsets, y * gate, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias).contiguous()
        n = y.numel()
        relu_hardswish_inplace[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024)
        return y
