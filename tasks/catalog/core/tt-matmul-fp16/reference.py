import torch
import torch.nn as nn

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    """C = A @ B for fp16 A (M, K) and B (K, N), accumulated in fp32, returned in fp16."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
