import torch
import torch.nn as nn
import triton
import triton.language as tl

# Stands in for 2^31: the test lowers the grader's index limit to this, and the kernel, like one
# with 32-bit offsets, leaves every element from here on unwritten.
OFFSET_LIMIT = 4096


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.full_like(x, float("nan"))
        n = min(x.numel(), OFFSET_LIMIT - 1)
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
