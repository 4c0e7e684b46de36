"""KernelBench level 1 problem 23 (Softmax over dim=1 of a 2-D input): CUDA C++ solution, one of
the pairs bench/throughput.py grades against KernelBench's own evaluation. One block per row:
an online max and rescaled sum over the row, then a second pass that writes exp(x - max) / sum."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cfloat>

constexpr int THREADS = 1024;

__device__ void merge(float& m, float& s, float m2, float s2) {
    const float m_new = fmaxf(m, m2);
    if (m_new == -INFINITY) { m = m_new; s = 0.0f; return; }
    s = s * __expf(m - m_new) + s2 * __expf(m2 - m_new);
    m = m_new;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    const float* row = x + (int64_t)blockIdx.x * cols;
    float* out_row = out + (int64_t)blockIdx.x * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = row[c];
        if (v != v) { m = v; s = v; break; }
        merge(m, s, v, 1.0f);
    }
    __shared__ float sm[THREADS / 32], ss[THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) {
        merge(m, s, __shfl_down_sync(0xffffffff, m, off), __shfl_down_sync(0xffffffff, s, off));
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    if (warp == 0) {
        m = lane < blockDim.x / 32 ? sm[lane] : -INFINITY;
        s = lane < blockDim.x / 32 ? ss[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) {
            merge(m, s, __shfl_down_sync(0xffffffff, m, off), __shfl_down_sync(0xffffffff, s, off));
        }
        if (lane == 0) { sm[0] = m; ss[0] = s; }
    }
    __syncthreads();
    const float row_max = sm[0], inv = 1.0f / ss[0];
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        out_row[c] = __expf(row[c] - row_max) * inv;
    }
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2,
                "x: 2-D float32 CUDA tensor");
    const at::cuda::OptionalCUDAGuard device_guard(x.device());
    auto x_c = x.contiguous();
    auto out = torch::empty_like(x_c);
    if (x_c.numel() == 0) return out;
    softmax_kernel<<<(unsigned int)x_c.size(0), THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x_c.data_ptr<float>(), out.data_ptr<float>(), x_c.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

softmax = load_inline(
    name="kb_l1_p23_softmax_cuda",
    cpp_sources="torch::Tensor softmax_cuda(torch::Tensor x);",
    cuda_sources=cuda_source,
    functions=["softmax_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax.softmax_cuda(x)
