"""The best library path for top-k: torch.topk (radix selection, then a sort of the K winners)."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.topk(x, model.k, dim=-1, largest=True, sorted=True)
