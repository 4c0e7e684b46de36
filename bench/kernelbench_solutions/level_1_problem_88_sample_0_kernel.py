"""KernelBench level 1 problem 88 (MinGPT "new" GELU, tanh approximation): CUDA C++ solution."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <algorithm>

static int64_t sm_count_for_current_device() {
    int device = 0;
    C10_CUDA_CHECK(cudaGetDevice(&device));
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms > 0 ? sms : 1;
}

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
__global__ void new_gelu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    const float k_sqrt_2_over_pi = 0.7978845608028654f;
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        const float inner = k_sqrt_2_over_pi * (v + 0.044715f * v * v * v);
        out[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

torch::Tensor new_gelu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    const at::cuda::OptionalCUDAGuard device_guard(x.device());
    auto x_c = x.contiguous();
    auto out = torch::empty_like(x_c);
    const int64_t n = x_c.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int64_t max_blocks = sm_count_for_current_device() * 32;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, max_blocks);
    new_gelu_kernel<<<(unsigned int)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x_c.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor new_gelu_cuda(torch::Tensor x);"

new_gelu = load_inline(
    name="kb_l1_p88_new_gelu_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["new_gelu_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Tanh-approximation GELU with a grid-stride CUDA kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return new_gelu.new_gelu_cuda(x)
