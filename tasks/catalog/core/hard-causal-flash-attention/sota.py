"""The best library path for causal attention: PyTorch SDPA with is_causal=True, which picks
FlashAttention-2 (or cuDNN's fused attention) on Hopper."""

import torch
import torch.nn.functional as F


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(
    model: torch.nn.Module, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
