"""The best library path for a bounded histogram: ATen's CUDA bincount."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.bincount(x, minlength=model.bins)
