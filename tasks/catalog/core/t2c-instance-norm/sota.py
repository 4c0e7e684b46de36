"""The best library path for InstanceNorm2d: torch.compile's fused Triton reduction (autotuned),
one pass for each plane's statistics and the normalization with the affine folded in.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _instance_norm(x, weight, bias, eps):
    return torch.nn.functional.instance_norm(x, weight=weight, bias=bias, eps=eps)


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_instance_norm, mode="max-autotune-no-cudagraphs", dynamic=False)
    norm = model.norm
    return _compiled(x, norm.weight, norm.bias, norm.eps)
