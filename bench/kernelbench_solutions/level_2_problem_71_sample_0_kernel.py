"""KernelBench level 2 problem 71 (Conv2d, divide, LeakyReLU): the convolution in cuDNN, the
division and LeakyReLU in one CUDA kernel of its own."""

import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void div_leaky_relu(const float* __restrict__ y, float* __restrict__ out, long n,
                               float inv_divisor, float slope) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        float v = y[i] * inv_divisor;
        out[i] = v >= 0.0f ? v : v * slope;
    }
}

torch::Tensor div_leaky_relu_forward(torch::Tensor y, double divisor, double slope) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32);
    auto out = torch::empty_like(y);
    long n = y.numel();
    int threads = 256;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 132L * 32);
    div_leaky_relu<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), out.data_ptr<float>(), n, (float)(1.0 / divisor), (float)slope);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""
CPP_SOURCE = "torch::Tensor div_leaky_relu_forward(torch::Tensor y, double divisor, double slope);"

fused = load_inline(
    name="kb_l2_p71_div_leaky_relu",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["div_leaky_relu_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias).contiguous()
        return fused.div_leaky_relu_forward(y, float(self.divisor), 0.01)
