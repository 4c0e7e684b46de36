"""Per-token cross-entropy of a language-model head: loss[t] = logsumexp(z[t]) - z[t, y[t]],
where z = x @ W.T are the logits, x [T, H] bf16 hidden states, W [V, H] bf16 the output
embedding and y [T] int64 the targets. Targets equal to IGNORE_INDEX (padding) get loss 0.

The logits are T x V floats (a GB or more at these shapes); the reference materializes them in
float32, a fused kernel need not. The matmul is the one FlopCounterMode counts.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 1024
H = 2048
V = 128256
IGNORE_INDEX = -100
IGNORED_FRACTION = 1 / 16


class Model(nn.Module):
    def __init__(self, hidden: int, vocab: int) -> None:
        super().__init__()
        # Logits of standard deviation ~2, as a trained head's are, rather than near-uniform.
        weight = torch.randn(vocab, hidden, dtype=torch.bfloat16)
        self.weight = nn.Parameter(weight * (2.0 * hidden**-0.5))

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = x.float() @ self.weight.float().t()
        return F.cross_entropy(logits, targets, reduction="none", ignore_index=IGNORE_INDEX)


def get_inputs():
    x = torch.randn(T, H, dtype=torch.bfloat16)
    targets = torch.randint(0, V, (T,), dtype=torch.int64)
    targets[torch.rand(T) < IGNORED_FRACTION] = IGNORE_INDEX
    return [x, targets]


def get_init_inputs():
    return [H, V]
