"""The best library path for an embedding lookup: ATen's CUDA embedding (index_select) kernel."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.embedding(ids, model.weight)
