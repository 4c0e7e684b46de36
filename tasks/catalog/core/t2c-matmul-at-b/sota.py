"""The best library path for an fp32 A^T @ B: cuBLAS SGEMM with the transpose folded into the
call (TF32 stays off, as the task asks for full fp32)."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mm(a.t(), b)
