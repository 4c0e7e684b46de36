"""Starter: a correct but naive CUDA SwiGLU gate with a column-major thread mapping.

Thread i handles element (i % M, i / M) of the row-major (M, N) tensors, so consecutive lanes of
a warp touch addresses N floats apart: every load and store is uncoalesced, and each element is
handled with scalar 4-byte accesses.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void swiglu_strided_kernel(const float* __restrict__ gate,
                                      const float* __restrict__ up,
                                      float* __restrict__ out,
                                      int64_t M, int64_t N, int64_t total) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const int64_t row = i % M;
    const int64_t col = i / M;
    const int64_t idx = row * N + col;
    const float g = gate[idx];
    out[idx] = g / (1.0f + expf(-g)) * up[idx];
}

torch::Tensor swiglu_naive(torch::Tensor gate, torch::Tensor up) {
    TORCH_CHECK(gate.is_cuda() && up.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(gate.scalar_type() == torch::kFloat32 && up.scalar_type() == torch::kFloat32,
                "inputs must be float32");
    TORCH_CHECK(gate.dim() == 2 && gate.sizes() == up.sizes(), "inputs must be equal 2-D shapes");
    auto g = gate.contiguous();
    auto u = up.contiguous();
    const int64_t M = g.size(0), N = g.size(1), total = g.numel();
    auto out = torch::empty_like(g);
    if (total == 0) return out;
    const int threads = 256;
    swiglu_strided_kernel<<<(unsigned)((total + threads - 1) / threads), threads, 0,
                            at::cuda::getCurrentCUDAStream()>>>(
        g.data_ptr<float>(), u.data_ptr<float>(), out.data_ptr<float>(), M, N, total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor swiglu_naive(torch::Tensor gate, torch::Tensor up);"

_ext = load_inline(
    name="cc_swiglu_starter",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["swiglu_naive"],
    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90"],
    verbose=False,
)


class ModelNew(nn.Module):
    def forward(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        return _ext.swiglu_naive(gate, up)
