import torch
import torch.nn as nn

N = 16
C = 64
H = 256
W = 256


class Model(nn.Module):
    """InstanceNorm2d over an NCHW tensor with a per-channel affine, eps = 1e-5: each (sample,
    channel) plane of H * W values is normalized with its own mean and biased variance,
    (x - mean) / sqrt(var + eps), then scaled by weight[c] and shifted by bias[c]. No running
    statistics: the same computation in training and in eval mode.
    """

    def __init__(self, num_channels: int) -> None:
        super().__init__()
        self.norm = nn.InstanceNorm2d(num_channels, eps=1e-5, affine=True)
        # Non-trivial affine parameters, so a kernel that ignores them fails.
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.1)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    # Feature maps whose planes have their own offsets, as after a convolution: the mean must be
    # subtracted per plane, not assumed zero.
    x = torch.randn(N, C, H, W, dtype=torch.float32)
    return [x + torch.randn(N, C, 1, 1, dtype=torch.float32)]


def get_init_inputs():
    return [C]
