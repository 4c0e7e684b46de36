"""The best library path for bias + GELU: the two ops fused by torch.compile."""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x + bias)


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_bias_gelu, mode="max-autotune")
    return _compiled(x, model.bias)
