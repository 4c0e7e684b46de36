"""KernelBench level 3 problem 1 (MLP): each layer's GEMM in cuBLAS (torch.mm), its bias and
ReLU in one Triton pass; the last layer's GEMM keeps its bias in cuBLAS (addmm)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu(y_ptr, bias_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(bias_ptr + offsets % cols, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.maximum(y + b, 0.0), mask=mask)


def linear_relu(x, layer):
    y = torch.mm(x, layer.weight.t())
    out = torch.empty_like(y)
    n = y.numel()
    bias_relu[(triton.cdiv(n, 1024),)](y, layer.bias, out, n, y.shape[1], BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers += [nn.Linear(current, size), nn.ReLU()]
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        linears = [m for m in self.network if isinstance(m, nn.Linear)]
        for layer in linears[:-1]:
            x = linear_relu(x, layer)
        last = linears[-1]
        return torch.addmm(last.bias, x, last.weight.t())
