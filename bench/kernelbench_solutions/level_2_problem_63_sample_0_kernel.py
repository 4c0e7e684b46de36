"""KernelBench level 2 problem 63 (Gemm, ReLU, divide): the bias-free GEMM in cuBLAS, the bias,
ReLU and division in one CUDA kernel of its own, in place on the GEMM's output, four floats a
thread."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_relu_div(float* __restrict__ y, const float* __restrict__ bias, long rows,
                              long cols, float inv_divisor) {
    long n = rows * cols;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        float v = y[i] + bias[i % cols];
        y[i] = fmaxf(v, 0.0f) * inv_divisor;
    }
}

torch::Tensor bias_relu_div_(torch::Tensor y, torch::Tensor bias, double divisor) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 2);
    long rows = y.size(0), cols = y.size(1);
    int threads = 256;
    int blocks = (int)std::min<long>((rows * cols + threads - 1) / threads, 132L * 32);
    bias_relu_div<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), bias.data_ptr<float>(), rows, cols, (float)(1.0 / divisor));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""
CPP_SOURCE = "torch::Tensor bias_relu_div_(torch::Tensor y, torch::Tensor bias, double divisor);"

fused = load_inline(
    name="kb_l2_p63_bias_relu_div",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["bias_relu_div_"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        return fused.bias_relu_div_(y, self.linear.bias, float(self.divisor))
