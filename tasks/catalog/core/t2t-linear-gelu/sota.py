"""The best library path for Linear + GELU: Inductor's max-autotune, which picks among cuBLAS
and Triton GEMM templates with the bias and GELU fused into the epilogue."""

import torch
import torch.nn.functional as F

_compiled = None


def _linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.gelu(F.linear(x, weight, bias))


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        # Specialized per shape (dynamic=False), as autotuning is.
        _compiled = torch.compile(_linear_gelu, mode="max-autotune", dynamic=False)
    return _compiled(x, model.linear.weight, model.linear.bias)
