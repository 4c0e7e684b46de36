"""KernelBench level 1 problem 19 (ReLU): CUDA C++ solution, one of the pairs
bench/throughput.py grades against KernelBench's own evaluation."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        out[i] = v > 0.0f ? v : (v != v ? v : 0.0f);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor");
    const at::cuda::OptionalCUDAGuard device_guard(x.device());
    auto x_c = x.contiguous();
    auto out = torch::empty_like(x_c);
    const int64_t n = x_c.numel();
    if (n == 0) return out;
    int device = 0, sms = 1;
    C10_CUDA_CHECK(cudaGetDevice(&device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, (int64_t)sms * 32);
    relu_kernel<<<(unsigned int)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x_c.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

relu = load_inline(
    name="kb_l1_p19_relu_cuda",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=cuda_source,
    functions=["relu_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu.relu_cuda(x)
