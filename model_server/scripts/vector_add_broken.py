# mypy: ignore-errors
"""A Triton vector add that forgets its mask: it reads and writes past the end."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) - tl.load(y_ptr + offsets))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.empty_like(x)
        _add[(triton.cdiv(x.numel(), BLOCK),)](x, y, z, x.numel(), BLOCK=BLOCK)
        return z
