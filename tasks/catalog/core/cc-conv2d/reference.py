import torch
import torch.nn as nn

N = 32
C = 64
H = 56
W = 56
OC = 64


class Model(nn.Module):
    """A 3x3 convolution, stride 1, padding 1, no bias, NCHW float32, computed in full fp32."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        # Small integer weights stored as float32: with integer inputs every product and
        # partial sum is exact, so any summation order gives the same answer on them.
        weight = torch.randint(-2, 3, (out_channels, in_channels, 3, 3), dtype=torch.int32)
        self.weight = nn.Parameter(weight.to(torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # cuDNN would use TF32 for fp32 convolutions by default; the task is full fp32.
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            return torch.nn.functional.conv2d(x, self.weight, padding=1)


def get_inputs():
    return [torch.randint(-2, 3, (N, C, H, W), dtype=torch.int32).to(torch.float32)]


def get_init_inputs():
    return [C, OC]
