import torch
import torch.nn as nn

B = 65536
D = 1024
EPS = 1e-12


class Model(nn.Module):
    """Each row scaled to unit Euclidean length: y = x / max(||x||_2, eps) over the last dim,
    eps = 1e-12, as torch.nn.functional.normalize computes. A row whose norm is below eps (an
    all-zero row) comes out as x / eps, so zeros stay zeros.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.normalize(x, p=2.0, dim=-1, eps=EPS)


def get_inputs():
    x = torch.randn(B, D, dtype=torch.float32)
    # Every 64th row is all zeros, like padding in a batch of embeddings: a kernel that
    # multiplies by 1 / sqrt(sum of squares) without the eps clamp gives NaN there.
    x[63::64] = 0.0
    return [x]


def get_init_inputs():
    return []
