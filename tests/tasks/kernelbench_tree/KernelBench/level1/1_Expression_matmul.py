import torch
import torch.nn as nn


class Model(nn.Module):
    """A matmul whose size is written as an expression."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


N = 8 * 2


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
