import math

import torch
import torch.nn as nn

B = 2
H = 16
S = 2048
D = 128
# Attention is linear in v and a power of two changes no rounding, but it keeps the output's RMS
# below 1e-2, where the grader's absolute tolerance shrinks with it: errors are judged relative to
# the output's magnitude at every input scale (bf16 rounding of the probabilities, inherent to
# flash attention, grows with v).
V_SCALE = 2.0**-16


class Model(nn.Module):
    """out = softmax(q @ k^T / sqrt(D)) @ v per batch and head, no mask; [B, H, S, D] tensors.

    Computed in fp32 and rounded to bf16 once, so the reference is the exact attention of the
    bf16 inputs rather than one more bf16 approximation of it.
    """

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
        weights = torch.softmax(scores, dim=-1)
        return torch.matmul(weights, v.float()).to(q.dtype)


def get_inputs():
    return [
        torch.randn(B, H, S, D, dtype=torch.bfloat16),
        torch.randn(B, H, S, D, dtype=torch.bfloat16),
        torch.randn(B, H, S, D, dtype=torch.bfloat16) * V_SCALE,
    ]


def get_init_inputs():
    return []
