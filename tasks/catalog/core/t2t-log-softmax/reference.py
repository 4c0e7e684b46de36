import torch
import torch.nn as nn

B = 8192
V = 32000


class Model(nn.Module):
    """out = log_softmax(x, dim=-1) for logits x [B, V], as over a vocabulary."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    # Logits of a few units, as a language model head produces.
    return [(torch.randn(B, V) * 3.0).to(torch.float16)]


def get_init_inputs():
    return []
