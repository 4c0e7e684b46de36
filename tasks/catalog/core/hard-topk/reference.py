"""Top-k along the last dimension: the K largest values of each row, largest first, and their
column indices.

Ties are broken towards the lower index: among equal values the one earlier in the row ranks
first (and is the one kept at the k-th place). The problem's own inputs have no ties (each row is
a permutation of distinct, exactly representable values), so there the indices are unique; the
rule makes the answer unique for any input. The reference is a stable descending sort, which
implements exactly that rule on every device.
"""

import torch
import torch.nn as nn

B = 256
N = 131072
K = 50


class Model(nn.Module):
    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.sort(x, dim=-1, descending=True, stable=True)
        return values[:, : self.k].contiguous(), indices[:, : self.k].contiguous()


def get_inputs():
    # Each row: a random permutation of N consecutive integers, centred and scaled by a power of
    # two (exact in float32), so values are distinct and spread over about [-8, 8).
    ranks = torch.rand(B, N).argsort(dim=-1)
    step = 2.0 ** (4 - N.bit_length())
    return [((ranks - N // 2) * step).to(torch.float32)]


def get_init_inputs():
    return [K]
