import torch
import torch.nn as nn

M = 8192
N = 8192


class Model(nn.Module):
    """y = gelu(x + bias) (exact, erf-based GELU) for an fp16 (M, N) x and an fp16 bias (N,),
    the epilogue of a linear layer."""

    def __init__(self, n: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x + self.bias)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return [N]
