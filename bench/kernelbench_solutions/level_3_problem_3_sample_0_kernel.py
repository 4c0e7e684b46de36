"""KernelBench level 3 problem 3 (deep narrow MLP, 16 hidden layers): each hidden layer's GEMM in
cuBLAS, its bias and ReLU in one Triton pass in place on the GEMM's output (one launch per
layer instead of two); the last layer keeps its bias in cuBLAS."""

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
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in hidden_layer_sizes:
            layers += [nn.Linear(current, size), nn.ReLU()]
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        linears = [m for m in self.network if isinstance(m, nn.Linear)]
        for layer in linears[:-1]:
            y = torch.mm(x, layer.weight.t())
            n = y.numel()
            bias_relu_inplace[(triton.cdiv(n, 2048),)](y, layer.bias, n, y.shape[1], BLOCK=2048)
            x = y
        last = linears[-1]
        return torch.addmm(last.bias, x, last.weight.t())
