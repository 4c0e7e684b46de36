import torch
import torch.nn as nn

# Full fp32: cuDNN would otherwise run fp32 convolutions on TF32 tensor cores by default, and the
# reference would be less accurate than the tolerance it sets.
torch.backends.cudnn.allow_tf32 = False

N = 16
Cin = 64
Cout = 128
H = 112
W = 112


class Model(nn.Module):
    """A 3x3 convolution (stride 1, padding 1) with bias, then ReLU:
    [N, Cin, H, W] -> relu(conv(x) + bias) of shape [N, Cout, H, W]."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=1, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    # Activations of 0.1 scale: fp32 sums over Cin * 9 terms stay within the fp32 absolute
    # tolerance for outputs near zero, even when the input is scaled up a hundredfold.
    return [torch.randn(N, Cin, H, W, dtype=torch.float32) * 0.1]


def get_init_inputs():
    return [Cin, Cout]
