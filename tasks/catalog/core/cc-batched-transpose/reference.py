import torch
import torch.nn as nn

B = 16
M = 4096
N = 1024


class Model(nn.Module):
    """Out-of-place batched transpose: a contiguous (B, N, M) copy of a (B, M, N) float32 tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).contiguous()


def get_inputs():
    return [torch.randn(B, M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
