import torch
import torch.nn as nn

M = 4096
D = 4096
EPS = 1e-6


class Model(nn.Module):
    """out = rmsnorm(x + residual) * weight over the last dim, as in a pre-norm transformer block.

    The sum x + residual is taken in bf16 (the residual stream's dtype); the norm is computed in
    fp32 and the result rounded to bf16.
    """

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        # Not all ones, so a kernel that skips the weight is caught.
        weight = 1.0 + 0.1 * torch.randn(hidden_size)
        self.weight = nn.Parameter(weight.to(torch.bfloat16))
        self.eps = EPS

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = (x + residual).float()
        inv_rms = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (h * inv_rms * self.weight.float()).to(x.dtype)


def get_inputs():
    return [
        torch.randn(M, D, dtype=torch.bfloat16),
        torch.randn(M, D, dtype=torch.bfloat16),
    ]


def get_init_inputs():
    return [D]
