"""The best library path for LayerNorm: ATen's fused CUDA layer_norm kernel."""

import torch

EPS = 1e-5


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), model.weight, model.bias, EPS)
