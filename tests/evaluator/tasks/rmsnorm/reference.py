import torch
import torch.nn as nn

B = 16
D = 1024


class Model(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        # Random, not ones, so a solution that ignores the weight fails.
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        scale = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * scale * self.weight


def get_inputs():
    return [torch.randn(B, D)]


def get_init_inputs():
    return [D]
