import torch
import torch.nn as nn

M = 8192
N = 4096
EPS = 1e-6


class Model(nn.Module):
    """RMSNorm over the last dimension of a bf16 (M, N) matrix, computed in fp32 (Llama style):
    y = bf16(x / sqrt(mean(x^2) + eps) * weight)."""

    def __init__(self, n: int):
        super().__init__()
        # A random weight, so a kernel that skips it cannot pass.
        self.weight = nn.Parameter((1.0 + 0.5 * torch.randn(n)).to(torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + EPS)
        return (xf * rstd * self.weight.float()).to(torch.bfloat16)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return [N]
