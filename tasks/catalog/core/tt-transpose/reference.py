import torch
import torch.nn as nn

M = 8192
N = 8192


class Model(nn.Module):
    """Out-of-place transpose: a contiguous (N, M) copy of an (M, N) fp16 matrix."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []
