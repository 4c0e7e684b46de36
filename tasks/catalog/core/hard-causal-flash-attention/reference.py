"""Causal self-attention forward: out = softmax(q k^T / sqrt(D) + causal mask) v, [B, H, S, D] bf16.

Query i attends to keys 0..i. The reference works in float32 on blocks of query rows, each
against only the keys it can see (with the mask inside the last block), so the matmuls that
FlopCounterMode counts are the causal work itself, S (S + 1) / 2 query-key pairs per head, plus
at most 1/128 for the blocks' masked corners. (FlopCounterMode counts an SDPA call with
is_causal=True as the full S x S square, twice the real work.)

v carries a factor of 2**-16 (V_SCALE). Attention is linear in v and a power of two changes no
rounding, but it keeps the output small, where the grader's absolute tolerance shrinks with the
output's RMS: errors are then judged relative to the output's magnitude, also for inputs scaled
by 100 (where bf16 rounding of the probabilities, inherent to flash attention, grows with v).
"""

import torch
import torch.nn as nn

B = 2
H = 16
S = 2048
D = 128
BLOCKS = 128  # query blocks of S // BLOCKS rows: the masked corners add under 1/BLOCKS
V_SCALE = 2.0**-16


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq, dim = q.shape[-2], q.shape[-1]
        step = max(1, seq // BLOCKS)
        query, key, value = q.float() * dim**-0.5, k.float(), v.float()
        # One mask for all blocks: each block then costs four launches (two matmuls, the fill
        # and the softmax), so the eager time follows the GPU's work rather than the host's
        # launch rate.
        future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu_(1)
        out = torch.empty_like(q)
        for start in range(0, seq, step):
            end = min(start + step, seq)
            scores = query[:, :, start:end] @ key[:, :, :end].transpose(-2, -1)
            scores.masked_fill_(future[start:end, :end], float("-inf"))
            out[:, :, start:end] = torch.softmax(scores, dim=-1) @ value[:, :, :end]
        return out


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.bfloat16)
    k = torch.randn(B, H, S, D, dtype=torch.bfloat16)
    v = torch.randn(B, H, S, D, dtype=torch.bfloat16) * V_SCALE
    return [q, k, v]


def get_init_inputs():
    return []
