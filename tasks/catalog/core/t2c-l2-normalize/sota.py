"""The best library path for row L2-normalization: torch.compile fuses the norm and the division
into one Triton reduction kernel (autotuned), reading x once from memory.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _normalize(x):
    return torch.nn.functional.normalize(x, p=2.0, dim=-1, eps=1e-12)


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_normalize, mode="max-autotune-no-cudagraphs", dynamic=False)
    return _compiled(x)
