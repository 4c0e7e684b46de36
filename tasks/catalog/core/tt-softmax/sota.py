"""The best library path for a row softmax: ATen's fused CUDA softmax."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)
