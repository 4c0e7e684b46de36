import torch
import torch.nn as nn

M = 16384
N = 4096


class Model(nn.Module):
    """Softmax over the last dimension: y = exp(x - max) / sum(exp(x - max)) per row."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
