"""The best library path for LayerNorm: torch.compile's fused Triton reduction, autotuned.

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _layer_norm(x, weight, bias, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def sota_forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_layer_norm, mode="max-autotune-no-cudagraphs", dynamic=False)
    norm = model.norm
    return _compiled(x, norm.weight, norm.bias, norm.eps)
