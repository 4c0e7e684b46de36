"""The best library path for a skinny bf16 GEMM: cuBLAS(Lt) through F.linear, with the same
fp32 reduction the reference asks for."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.linear(x, model.weight)
