"""The best library path for RMSNorm: ATen's fused rms_norm kernel (fp32 accumulation)."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), model.weight, model.eps)
