import torch
import torch.nn as nn

M = 8192
N = 8192


class Model(nn.Module):
    """The gating of a SwiGLU MLP: silu(gate) * up, elementwise over two (M, N) float32 tensors."""

    def forward(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(gate) * up


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32), torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []
