import torch
import torch.nn as nn

M = 8192
H = 11008


class Model(nn.Module):
    """SwiGLU: split x [M, 2H] into halves a = x[:, :H] (gate) and b = x[:, H:] (up) along the
    last dim; out = silu(a) * b = a * sigmoid(a) * b, fp16 in and out.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=-1)
        return torch.nn.functional.silu(a) * b


def get_inputs():
    return [torch.randn(M, 2 * H, dtype=torch.float16)]


def get_init_inputs():
    return []
