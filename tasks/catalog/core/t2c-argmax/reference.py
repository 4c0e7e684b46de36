import torch
import torch.nn as nn

B = 4096
V = 32000


class Model(nn.Module):
    """Index of the largest value in each row: [B, V] fp32 -> [B] int64, as torch.argmax.

    Among equal maxima the lowest index wins (torch.argmax's documented rule); the problem's own
    inputs have no ties, so there the answer is unique whatever the rule.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=-1)


def get_inputs():
    # Tie-free by construction: each row is a random permutation of V distinct values,
    # (rank - V // 2) * 2 ** (4 - bit_length(V)), spread over about [-8, 8). Those are small
    # integers times a power of two, exact in float32 (V < 2 ** 24), so every row has exactly
    # one maximum, at a random position.
    ranks = torch.rand(B, V).argsort(dim=-1)
    step = 2.0 ** (4 - V.bit_length())
    return [((ranks - V // 2) * step).to(torch.float32)]


def get_init_inputs():
    return []
