"""Starter: a correct but naive CUDA LayerNorm, one thread per row.

Each thread walks its row three times (mean, variance, normalize with weight and bias). Only M
threads run, and neighbouring lanes of a warp read addresses N floats apart, so no access is
coalesced.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

EPS = 1e-5

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void layernorm_row_per_thread_kernel(const float* __restrict__ x,
                                                const float* __restrict__ weight,
                                                const float* __restrict__ bias,
                                                float* __restrict__ y,
                                                int64_t n_rows, int64_t n_cols, float eps) {
    const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n_rows) return;
    const float* xr = x + row * n_cols;
    float* yr = y + row * n_cols;
    float sum = 0.0f;
    for (int64_t j = 0; j < n_cols; ++j) sum += xr[j];
    const float mean = sum / (float)n_cols;
    float sq = 0.0f;
    for (int64_t j = 0; j < n_cols; ++j) {
        const float d = xr[j] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(sq / (float)n_cols + eps);
    for (int64_t j = 0; j < n_cols; ++j) yr[j] = (xr[j] - mean) * rstd * weight[j] + bias[j];
}

torch::Tensor layernorm_naive(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                              double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(x.dim() == 2 && weight.numel() == x.size(1) && bias.numel() == x.size(1),
                "expected x (M, N), weight (N,), bias (N,)");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const int64_t n_rows = xc.size(0), n_cols = xc.size(1);
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    const int threads = 128;
    layernorm_row_per_thread_kernel<<<(unsigned)((n_rows + threads - 1) / threads), threads, 0,
                                      at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(),
        n_rows, n_cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = (
    "torch::Tensor layernorm_naive(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,"
    " double eps);"
)

_ext = load_inline(
    name="cc_layernorm_starter",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["layernorm_naive"],
    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n, dtype=torch.float32))
        self.bias = nn.Parameter(torch.zeros(n, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layernorm_naive(x, self.weight, self.bias, EPS)
