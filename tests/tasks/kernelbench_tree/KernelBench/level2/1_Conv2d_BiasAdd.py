import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution plus a bias whose shape is derived from the channel count."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.conv(x) + self.bias)


batch_size = 2
in_channels = 4
out_channels = 8
height = width = 8
kernel_size = 3
padding = 0
bias_shape = (out_channels, 1, 1)
scale = 1e-5
use_bias = False


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, bias_shape]
