import torch
import torch.nn as nn
import torch.nn.functional as F

N = 128
C = 256
H = 56
W = 56


class Model(nn.Module):
    """BatchNorm2d in inference mode: each channel normalized with its running statistics,
    y = (x - running_mean) / sqrt(running_var + eps) * weight + bias, eps = 1e-5."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.eps = 1e-5
        # Statistics of a trained network: nothing here is the identity transform.
        self.weight = nn.Parameter(torch.empty(num_features).normal_(1.0, 0.2))
        self.bias = nn.Parameter(torch.empty(num_features).normal_(0.0, 0.2))
        self.register_buffer("running_mean", torch.empty(num_features).normal_(0.0, 0.5))
        self.register_buffer("running_var", torch.empty(num_features).uniform_(0.25, 4.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            training=False,
            momentum=0.0,
            eps=self.eps,
        )


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32)]


def get_init_inputs():
    return [C]
