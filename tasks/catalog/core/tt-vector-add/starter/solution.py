"""Starter: a correct but naive Triton vector add, one element per program."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_one_element(x_ptr, y_ptr, z_ptr):
    # One program per element: a whole CTA is scheduled to move 12 bytes.
    pid = tl.program_id(0).to(tl.int64)
    tl.store(z_ptr + pid, tl.load(x_ptr + pid) + tl.load(y_ptr + pid))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.empty_like(x)
        n = x.numel()
        if n:
            _add_one_element[(n,)](x, y, z)
        return z
