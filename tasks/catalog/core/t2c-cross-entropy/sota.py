"""The best library path for cross-entropy: torch.compile fuses log-softmax, the target gather
and the mean into reductions that never write the [B, V] log-probabilities (eager does).

Compiled once per shape (dynamic=False) and cached in a module global. CUDA graphs stay off: the
timing loop keeps outputs of earlier calls, which graph replays would overwrite.
"""

import torch

_compiled = None


def is_available() -> bool:
    return torch.cuda.is_available()


def _cross_entropy(logits, targets):
    return torch.nn.functional.cross_entropy(logits, targets, reduction="mean")


def sota_forward(
    model: torch.nn.Module, logits: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    global _compiled
    if _compiled is None:
        _compiled = torch.compile(_cross_entropy, mode="max-autotune-no-cudagraphs", dynamic=False)
    return _compiled(logits, targets)
