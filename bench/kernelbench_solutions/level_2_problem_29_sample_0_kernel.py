"""KernelBench level 2 problem 29 (Matmul, Mish, Mish): the GEMM with its bias in cuBLAS
(addmm), both Mish activations in one CUDA kernel of its own."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float mish(float x) {
    // softplus as PyTorch computes it (threshold 20), then tanh.
    float sp = x > 20.0f ? x : log1pf(expf(x));
    return x * tanhf(sp);
}

__global__ void mish_mish(const float* __restrict__ y, float* __restrict__ out, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        out[i] = mish(mish(y[i]));
    }
}

torch::Tensor mish_mish_forward(torch::Tensor y) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat32);
    auto out = torch::empty_like(y);
    long n = y.numel();
    int threads = 256;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 132L * 32);
    mish_mish<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""
CPP_SOURCE = "torch::Tensor mish_mish_forward(torch::Tensor y);"

fused = load_inline(
    name="kb_l2_p29_mish_mish",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["mish_mish_forward"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        return fused.mish_mish_forward(y)
