"""The best library path for an fp16 batched matmul: cuBLAS strided-batched GEMM on tensor cores
with fp32 accumulation."""

import torch


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.bmm(a, b)
