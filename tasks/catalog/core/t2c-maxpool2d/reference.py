import torch
import torch.nn as nn

N = 128
C = 64
H = 112
W = 112


class Model(nn.Module):
    """2-D max pooling, kernel 3, stride 2, padding 1 (padding never wins the max):
    [N, C, H, W] -> [N, C, (H - 1) // 2 + 1, (W - 1) // 2 + 1]."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32)]


def get_init_inputs():
    return []
