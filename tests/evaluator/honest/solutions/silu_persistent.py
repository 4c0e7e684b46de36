import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_persistent(x_ptr, y_ptr, n, num_programs, BLOCK: tl.constexpr):
    start = tl.program_id(0)
    for block in range(start, tl.cdiv(n, BLOCK), num_programs):
        offsets = block * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        tl.store(y_ptr + offsets, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    """A fixed number of programs, each striding over the blocks."""

    def forward(self, x):
        y = torch.empty_like(x)
        programs = min(8, triton.cdiv(x.numel(), 4096))
        silu_persistent[(programs,)](x, y, x.numel(), programs, BLOCK=4096)
        return y
