"""The best library path for SwiGLU: torch.compile fuses silu and the product into one Triton
kernel (autotuned), reading x once and writing out once.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _swiglu(x):
    a, b = x.chunk(2, dim=-1)
    return torch.nn.functional.silu(a) * b


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_swiglu, mode="max-autotune-no-cudagraphs", dynamic=False)
    return _compiled(x)
