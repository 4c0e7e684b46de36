"""The best library path for the SwiGLU gate: SiLU and the multiply fused by torch.compile."""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu(gate) * up


def sota_forward(model: torch.nn.Module, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_swiglu, mode="max-autotune")
    return _compiled(gate, up)
