import torch
import torch.nn as nn

N = 32
C = 512
H = 64
W = 64
G = 32


class Model(nn.Module):
    """GroupNorm over an NCHW tensor: C channels in G groups, per-channel affine, eps = 1e-5."""

    def __init__(self, num_groups: int, num_channels: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, num_channels, eps=1e-5)
        # Non-trivial affine parameters, so a kernel that ignores them fails.
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32)]


def get_init_inputs():
    return [G, C]
