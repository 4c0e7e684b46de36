import torch
import torch.nn as nn

M = 16384
N = 4096
EPS = 1e-5


class Model(nn.Module):
    """LayerNorm over the last dimension of an (M, N) float32 matrix, with weight and bias."""

    def __init__(self, n: int):
        super().__init__()
        # Random affine parameters, so a kernel that skips them cannot pass.
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(n, dtype=torch.float32))
        self.bias = nn.Parameter(0.5 * torch.randn(n, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), self.weight, self.bias, EPS)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return [N]
