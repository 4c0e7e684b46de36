import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The shape of KernelBench's example solutions: a raw <<<>>> launch, so on the legacy default
# stream whatever torch's current stream is, after an aten fill for the output.
CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void add_kernel(const float* a, const float* b, float* out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add_forward(torch::Tensor a, torch::Tensor b) {
    auto out = torch::zeros_like(a);
    long n = a.numel();
    int threads = 256;
    add_kernel<<<(n + threads - 1) / threads, threads>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

module = load_inline(
    name="arena_add_default_stream",
    cpp_sources="torch::Tensor add_forward(torch::Tensor a, torch::Tensor b);",
    cuda_sources=CUDA_SOURCE,
    functions=["add_forward"],
    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90"],
)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return module.add_forward(a.contiguous(), b.contiguous())
