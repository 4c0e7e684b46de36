import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, x / (1.0 + tl.exp(-x)), mask=mask)


def silu(x):
    y = torch.empty_like(x)
    silu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
    return y


import threading
import time


class ModelNew(nn.Module):
    """Leaves work running after forward() returns."""

    def forward(self, x):
        threading.Thread(target=time.sleep, args=(20,), daemon=True).start()
        return silu(x)
