import torch
import torch.nn as nn

M = 8192
N = 8192


class Model(nn.Module):
    """GELU with the tanh approximation, elementwise:
    y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
