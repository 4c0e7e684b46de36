"""The best library path for the mean squared error: torch.compile fuses the difference, the
square and the mean into one Triton reduction (autotuned), reading each input once instead of
materializing the squared differences as eager does.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _mse(pred, target):
    return torch.nn.functional.mse_loss(pred, target, reduction="mean")


def sota_forward(model: torch.nn.Module, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_mse, mode="max-autotune-no-cudagraphs", dynamic=False)
    return _compiled(pred, target)
