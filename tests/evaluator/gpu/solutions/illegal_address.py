import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void scribble(float* y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    // Writes far past the allocation: an illegal address on the device.
    y[i + (1L << 40)] = 1.0f;
}

torch::Tensor bad_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    scribble<<<4, 256>>>(y.data_ptr<float>(), x.numel());
    return y;
}
"""

module = load_inline(
    name="arena_illegal_address",
    cpp_sources="torch::Tensor bad_forward(torch::Tensor x);",
    cuda_sources=CUDA_SOURCE,
    functions=["bad_forward"],
    extra_cuda_cflags=["-gencode=arch=compute_90,code=sm_90"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.bad_forward(x)
