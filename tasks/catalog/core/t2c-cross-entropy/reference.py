import torch
import torch.nn as nn

B = 4096
V = 50257


class Model(nn.Module):
    """Mean cross-entropy of logits [B, V] against int64 class targets [B]:
    loss = mean over rows of (logsumexp(logits[i]) - logits[i, targets[i]]), a scalar."""

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(logits, targets, reduction="mean")


def get_inputs():
    logits = torch.randn(B, V, dtype=torch.float32)
    targets = torch.randint(0, V, (B,), dtype=torch.int64)
    return [logits, targets]


def get_init_inputs():
    return []
