"""The best library path for a vector add: ATen's vectorized elementwise kernel."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.add(x, y)
