import torch
import torch.nn as nn

M = 32768
N = 4096


class Model(nn.Module):
    """RMSNorm over the last dimension of an fp16 tensor, eps = 1e-6:
    y = x / sqrt(mean(x**2) + eps) * weight, computed in fp32 and rounded to fp16 once."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.eps = 1e-6
        weight = torch.empty(hidden_size, dtype=torch.float32).normal_(1.0, 0.1)
        self.weight = nn.Parameter(weight.to(torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * rstd * self.weight.float()).to(torch.float16)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return [N]
