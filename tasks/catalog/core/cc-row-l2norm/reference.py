import torch
import torch.nn as nn

M = 8192
N = 16384


class Model(nn.Module):
    """The Euclidean norm of every row of an (M, N) float32 matrix: an (M,) vector."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=1)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
