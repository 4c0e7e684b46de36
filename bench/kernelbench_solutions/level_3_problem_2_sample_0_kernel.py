"""KernelBench level 3 problem 2 (shallow wide MLP): each hidden layer's GEMM in cuBLAS, its bias
and ReLU in one CUDA kernel of its own (load_inline), in place; the last layer keeps its bias
in cuBLAS."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_relu(float* __restrict__ y, const float* __restrict__ bias, long n,
                          long cols) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        y[i] = fmaxf(y[i] + bias[i % cols], 0.0f);
    }
}

torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 2);
    long n = y.numel();
    int threads = 256;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 132L * 32);
    bias_relu<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), bias.data_ptr<float>(), n, y.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""
CPP_SOURCE = "torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias);"

fused = load_inline(
    name="kb_l3_p2_bias_relu",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["bias_relu_"],
    extra_cuda_cflags=["-O3"],
)


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
            x = fused.bias_relu_(torch.mm(x, layer.weight.t()), layer.bias)
        last = linears[-1]
        return torch.addmm(last.bias, x, last.weight.t())
