"""KernelBench level 1 problem 12 (diag(A) @ B, i.e. A.unsqueeze(1) * B): CUDA C++ solution."""

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

// out[i, j] = diag[i] * b[i, j] for a row-major (n_rows, n_cols) matrix b.
__global__ void diag_scale_rows_kernel(const float* __restrict__ diag, const float* __restrict__ b,
                                       float* __restrict__ out, int64_t n_rows, int64_t n_cols) {
    const int64_t total = n_rows * n_cols;
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        const int64_t row = i / n_cols;
        out[i] = diag[row] * b[i];
    }
}

torch::Tensor diag_matmul_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "A and B must be CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32,
                "A and B must be float32");
    TORCH_CHECK(a.dim() == 1 && b.dim() == 2, "A must be 1-D (N,) and B 2-D (N, M)");
    TORCH_CHECK(a.size(0) == b.size(0), "A has ", a.size(0), " entries but B has ", b.size(0), " rows");
    const at::cuda::OptionalCUDAGuard device_guard(b.device());
    auto a_c = a.contiguous();
    auto b_c = b.contiguous();
    auto out = torch::empty_like(b_c);
    const int64_t n_rows = b_c.size(0);
    const int64_t n_cols = b_c.size(1);
    const int64_t total = n_rows * n_cols;
    if (total == 0) return out;
    const int threads = 256;
    const int64_t max_blocks = sm_count_for_current_device() * 32;
    const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, max_blocks);
    diag_scale_rows_kernel<<<(unsigned int)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a_c.data_ptr<float>(), b_c.data_ptr<float>(), out.data_ptr<float>(), n_rows, n_cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor diag_matmul_cuda(torch::Tensor a, torch::Tensor b);"

diag_matmul = load_inline(
    name="kb_l1_p12_diag_matmul_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["diag_matmul_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """diag(A) @ B computed as a row scaling of B by a CUDA kernel (no N x N matrix is built)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return diag_matmul.diag_matmul_cuda(A, B)
