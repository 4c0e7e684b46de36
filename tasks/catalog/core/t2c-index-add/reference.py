import torch
import torch.nn as nn

N = 100000
L = 1600000
D = 128


class Model(nn.Module):
    """out = x.index_add(0, index, src): a copy of x [N, D] with each row src[i] of src [L, D]
    added into row index[i]. The int64 index [L] repeats rows, so several source rows add into
    the same destination row; x itself is left unchanged.
    """

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.index_add(0, index, src)


def get_inputs():
    # Destinations drawn uniformly with replacement, unsorted, like the edges of a graph
    # aggregated into their target nodes: about L / N contributions per row, some rows with
    # none.
    return [
        torch.randn(N, D, dtype=torch.float32),
        torch.randint(0, N, (L,), dtype=torch.int64),
        torch.randn(L, D, dtype=torch.float32),
    ]


def get_init_inputs():
    return []
