import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_row(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * cols + offsets, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    """The whole row in one block: fine while rows fit in a program."""

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_row[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
