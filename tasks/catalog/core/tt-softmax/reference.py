import torch
import torch.nn as nn

M = 8192
N = 8192


class Model(nn.Module):
    """Softmax over the last dimension of an (M, N) float32 matrix."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
