"""The best library path for a permuted add: torch.compile's Triton pointwise kernel (autotuned),
which tiles the transposed dimensions so that both the permuted reads and the writes coalesce.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _permute_add(x, y):
    return y + x.permute(0, 2, 1, 3)


def sota_forward(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_permute_add, mode="max-autotune-no-cudagraphs", dynamic=False)
    return _compiled(x, y)
