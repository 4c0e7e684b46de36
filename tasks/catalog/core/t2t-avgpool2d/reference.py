import torch
import torch.nn as nn

N = 32
C = 256
H = 128
W = 128


class Model(nn.Module):
    """out = avg_pool2d(x, kernel_size=2, stride=2) on NCHW input, no padding, floor mode:
    each output is the mean of a non-overlapping 2x2 window; an odd last row or column is dropped.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.avg_pool2d(x, kernel_size=2, stride=2)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32)]


def get_init_inputs():
    return []
