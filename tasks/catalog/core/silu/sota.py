"""The best library path for SiLU: ATen's vectorized elementwise kernel."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(x)
