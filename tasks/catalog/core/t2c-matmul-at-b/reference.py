import torch
import torch.nn as nn

M = 8192
N = 8192
K = 256


class Model(nn.Module):
    """C = A^T @ B with A stored as [K, M] and B as [K, N] (both row-major): C is [M, N]."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.t(), b)


def get_inputs():
    # Operands of 1e-2 scale: fp32 products summed over K stay within the fp32 absolute
    # tolerance for outputs near zero, even when both inputs are scaled up a hundredfold.
    a = torch.randn(K, M, dtype=torch.float32) * 0.01
    b = torch.randn(K, N, dtype=torch.float32) * 0.01
    return [a, b]


def get_init_inputs():
    return []
