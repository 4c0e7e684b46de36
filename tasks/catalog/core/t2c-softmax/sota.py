"""The best library path for softmax: torch.compile's fused Triton reduction, autotuned.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _softmax(x):
    return torch.softmax(x, dim=-1)


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_softmax, mode="max-autotune-no-cudagraphs", dynamic=False)
    return _compiled(x)
