"""The best library path for a batched matrix-vector product: cuBLAS through torch.matmul (a
strided-batched GEMM with one column), with the fp32 reduction the reference asks for."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.matmul(A, x.unsqueeze(-1)).squeeze(-1)
