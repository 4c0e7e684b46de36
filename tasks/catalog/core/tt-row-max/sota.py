"""The best library path for a row max: ATen's CUDA reduction kernel."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.amax(x, dim=1)
