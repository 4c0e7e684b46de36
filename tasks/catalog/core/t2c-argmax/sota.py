"""The best library path for a row argmax: ATen's reduction kernel (torch.argmax), which splits
long rows across blocks and keeps (value, index) pairs with the lowest-index tie rule."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.argmax(x, dim=-1)
