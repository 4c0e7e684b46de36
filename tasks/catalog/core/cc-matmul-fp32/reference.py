import torch
import torch.nn as nn

M = 2048
N = 2048
K = 2048


class Model(nn.Module):
    """C = A @ B in float32 (full fp32, no TF32) for A (M, K) and B (K, N)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    # Small integers stored as float32: every product and partial sum is exact, so any
    # summation order gives the same answer on these inputs.
    a = torch.randint(-2, 3, (M, K), dtype=torch.int32).to(torch.float32)
    b = torch.randint(-2, 3, (K, N), dtype=torch.int32).to(torch.float32)
    return [a, b]


def get_init_inputs():
    return []
