"""The best library path for row norms: ATen's CUDA norm reduction."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(x, ord=2, dim=1)
