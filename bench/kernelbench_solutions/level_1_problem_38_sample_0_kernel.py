"""KernelBench level 1 problem 38 (L1 normalization over dim 1): CUDA C++ solution.

The input is viewed as (outer, C, inner) with C = x.size(1), the reduced dimension.
When inner == 1 (a 2-D input) every row of C values is contiguous: one thread block
reduces a row with warp shuffles and shared memory, then rescales it. When inner > 1
each thread owns one (outer, inner) position and walks down C with stride inner,
so neighbouring threads read neighbouring addresses. Accumulation is in float32.
"""

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

__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// Sum over the block; every thread gets the result. Safe to call repeatedly.
__device__ float block_reduce_sum(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int n_warps = (blockDim.x + 31) >> 5;
    v = warp_reduce_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = (lane < n_warps) ? partial[lane] : 0.0f;
        w = warp_reduce_sum(w);
        if (lane == 0) partial[0] = w;
    }
    __syncthreads();
    const float total = partial[0];
    __syncthreads();  // partial[] may be overwritten by the next call
    return total;
}

__device__ __forceinline__ float term(float v) { return fabsf(v); }
__device__ __forceinline__ float denominator(float total, int64_t C, float eps) { return total / (float)C; }

__global__ void l1_norm_rows_kernel(const float* __restrict__ x, float* __restrict__ out,
                                 int64_t rows, int64_t C, float eps) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * C;
        float* outr = out + r * C;
        float acc = 0.0f;
        for (int64_t c = threadIdx.x; c < C; c += blockDim.x) acc += term(xr[c]);
        const float denom = denominator(block_reduce_sum(acc), C, eps);
        for (int64_t c = threadIdx.x; c < C; c += blockDim.x) outr[c] = xr[c] / denom;
    }
}

__global__ void l1_norm_strided_kernel(const float* __restrict__ x, float* __restrict__ out,
                                    int64_t outer, int64_t C, int64_t inner, float eps) {
    const int64_t positions = outer * inner;
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < positions; p += stride) {
        const int64_t o = p / inner;
        const int64_t s = p - o * inner;
        const float* xp = x + o * C * inner + s;
        float* outp = out + o * C * inner + s;
        float acc = 0.0f;
        for (int64_t c = 0; c < C; ++c) acc += term(xp[c * inner]);
        const float denom = denominator(acc, C, eps);
        for (int64_t c = 0; c < C; ++c) outp[c * inner] = xp[c * inner] / denom;
    }
}

torch::Tensor l1_norm_cuda(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 2, "x must have at least 2 dimensions (reduction is over dim 1)");
    const at::cuda::OptionalCUDAGuard device_guard(x.device());
    auto x_c = x.contiguous();
    auto out = torch::empty_like(x_c);
    if (x_c.numel() == 0) return out;
    const int64_t outer = x_c.size(0);
    const int64_t C = x_c.size(1);
    int64_t inner = 1;
    for (int64_t d = 2; d < x_c.dim(); ++d) inner *= x_c.size(d);
    const int64_t sm_count = sm_count_for_current_device();
    auto stream = c10::cuda::getCurrentCUDAStream();
    if (inner == 1) {
        const int threads = 512;
        const int64_t blocks = std::min<int64_t>(outer, sm_count * 16);
        l1_norm_rows_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(
            x_c.data_ptr<float>(), out.data_ptr<float>(), outer, C, (float)eps);
    } else {
        const int threads = 256;
        const int64_t positions = outer * inner;
        const int64_t blocks = std::min<int64_t>((positions + threads - 1) / threads, sm_count * 32);
        l1_norm_strided_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(
            x_c.data_ptr<float>(), out.data_ptr<float>(), outer, C, inner, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor l1_norm_cuda(torch::Tensor x, double eps);"

l1_norm = load_inline(
    name="kb_l1_p38_l1_norm_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["l1_norm_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """x / mean(abs(x), dim=1, keepdim=True) with CUDA kernels."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1_norm.l1_norm_cuda(x, 0.0)
