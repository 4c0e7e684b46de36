"""KernelBench level 1 problem 5 (Matrix-scalar multiplication, C = A * s): CUDA C++ solution."""

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

__global__ void scalar_mul_kernel(const float* __restrict__ a, float* __restrict__ out,
                                  float s, int64_t n) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = a[i] * s;
    }
}

torch::Tensor scalar_mul_cuda(torch::Tensor a, double s) {
    TORCH_CHECK(a.is_cuda(), "A must be a CUDA tensor");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32, "A must be float32");
    const at::cuda::OptionalCUDAGuard device_guard(a.device());
    auto a_c = a.contiguous();
    auto out = torch::empty_like(a_c);
    const int64_t n = a_c.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int64_t max_blocks = sm_count_for_current_device() * 32;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, max_blocks);
    scalar_mul_kernel<<<(unsigned int)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a_c.data_ptr<float>(), out.data_ptr<float>(), (float)s, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor scalar_mul_cuda(torch::Tensor a, double s);"

scalar_mul = load_inline(
    name="kb_l1_p5_scalar_mul_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scalar_mul_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """C = A * s with a grid-stride CUDA kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return scalar_mul.scalar_mul_cuda(A, float(s))
