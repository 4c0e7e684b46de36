import torch
import torch.nn as nn

M = 4096
H = 8192


class Model(nn.Module):
    """GeGLU: split x [M, 2H] into halves a, b along the last dim; out = gelu(a) * b.

    GELU is the exact (erf) form, as torch.nn.functional.gelu computes by default.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=-1)
        return torch.nn.functional.gelu(a) * b


def get_inputs():
    return [torch.randn(M, 2 * H, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
