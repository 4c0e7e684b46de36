import torch
import torch.nn as nn

N = 67108864


class Model(nn.Module):
    """z = x + y for two 1-D float32 vectors."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def get_inputs():
    return [torch.randn(N, dtype=torch.float32), torch.randn(N, dtype=torch.float32)]


def get_init_inputs():
    return []
