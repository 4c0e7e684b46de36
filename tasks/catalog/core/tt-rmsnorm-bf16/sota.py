"""The best library path for RMSNorm: the reference's fp32 chain fused by torch.compile."""

import torch

EPS = 1e-6
_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (xf * rstd * weight.float()).to(torch.bfloat16)


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_rms_norm, mode="max-autotune")
    return _compiled(x, model.weight)
