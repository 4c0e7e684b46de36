"""The best library path for index_add: ATen's CUDA index_add kernel, one float atomic add per
source element into the copy of x."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(
    model: torch.nn.Module, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor
) -> torch.Tensor:
    return x.index_add(0, index, src)
