import torch
import torch.nn as nn

# Full fp32 everywhere: should cuDNN ever take this convolution, it would otherwise be allowed to
# run it on TF32 tensor cores, and the reference would be less accurate than its tolerance.
torch.backends.cudnn.allow_tf32 = False

N = 64
C = 96
H = 112
W = 112


class Model(nn.Module):
    """A depthwise 3x3 convolution (groups = C: each channel is convolved with its own 3x3
    filter), stride 1, zero padding 1, with bias: [N, C, H, W] -> [N, C, H, W], NCHW fp32.
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, 3, stride=1, padding=1, groups=channels, bias=True
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32)]


def get_init_inputs():
    return [C]
