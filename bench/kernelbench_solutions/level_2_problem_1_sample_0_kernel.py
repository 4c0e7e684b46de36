"""KernelBench level 2 problem 1 (Conv2d, ReLU, bias add): the convolution with its own bias in
cuDNN, then ReLU and the per-channel bias in one Triton pass."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_channel_bias(y_ptr, bias_ptr, out_ptr, n, channels, plane, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(bias_ptr + (offsets // plane) % channels, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.maximum(y, 0.0) + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        relu_channel_bias[(triton.cdiv(n, 1024),)](
            y, self.bias, out, n, y.shape[1], y.shape[2] * y.shape[3], BLOCK=1024
        )
        return out
