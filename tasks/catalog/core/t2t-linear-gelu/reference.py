import torch
import torch.nn as nn

M = 4096
N = 11008
K = 4096


class Model(nn.Module):
    """out = gelu(x @ weight.T + bias): a transformer MLP's up projection and activation.

    GELU is the exact (erf) form, as torch.nn.functional.gelu computes by default.
    """

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return [K, N]
