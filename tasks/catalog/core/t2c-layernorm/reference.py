import torch
import torch.nn as nn

M = 16384
N = 4096


class Model(nn.Module):
    """LayerNorm over the last dimension with an affine weight and bias, eps = 1e-5."""

    def __init__(self, normalized_size: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(normalized_size, eps=1e-5)
        # Non-trivial affine parameters, so a kernel that ignores them fails.
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return [N]
