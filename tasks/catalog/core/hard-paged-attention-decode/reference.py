"""Paged-attention decode: one query token per sequence against a KV cache held in fixed-size pages.

The model holds the cache, as a serving engine does: page pools k_cache and v_cache
[B * (L // PAGE), PAGE, KVH, D] bf16 (vLLM's layout). Each step brings q [B, H, D], a block table
(sequence b owns pages block_table[b, 0], block_table[b, 1], ... in order) and the lengths (the
first seq_lens[b] tokens of sequence b are valid). Query heads share key/value heads in groups of
H // KVH (grouped-query attention):
out[b, h] = softmax(q[b, h] . K_b[:, h // (H // KVH)] / sqrt(D)) @ V_b[:, h // (H // KVH)].

The reference gathers each sequence's pages, upcasts to float32 and attends over its valid tokens
alone, so FlopCounterMode counts exactly the work of the valid tokens.
"""

import torch
import torch.nn as nn

B = 32
H = 32
KVH = 8
D = 128
PAGE = 16
L = 8192  # the most tokens a sequence may hold: L // PAGE pages


class Model(nn.Module):
    def __init__(self, num_pages: int, page: int, kv_heads: int, dim: int) -> None:
        super().__init__()
        shape = (num_pages, page, kv_heads, dim)
        self.register_buffer("k_cache", torch.randn(shape, dtype=torch.bfloat16))
        self.register_buffer("v_cache", torch.randn(shape, dtype=torch.bfloat16))

    def forward(
        self, q: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor
    ) -> torch.Tensor:
        heads, dim = q.shape[1], q.shape[2]
        page, kv_heads = self.k_cache.shape[1], self.k_cache.shape[2]
        pages_of = block_table.long()
        out = torch.empty_like(q)
        for b, length in enumerate(seq_lens.tolist()):
            pages = pages_of[b, : -(-length // page)]
            k = self.k_cache[pages].reshape(-1, kv_heads, dim)[:length].float()
            v = self.v_cache[pages].reshape(-1, kv_heads, dim)[:length].float()
            query = q[b].float().reshape(kv_heads, heads // kv_heads, dim)
            scores = (query @ k.permute(1, 2, 0)) * dim**-0.5  # [KVH, group, length]
            attended = torch.softmax(scores, dim=-1) @ v.transpose(0, 1)  # [KVH, group, D]
            out[b] = attended.reshape(heads, dim).to(q.dtype)
        return out


def _seq_lens() -> torch.Tensor:
    # Lengths in pairs that add up to L + 1: any length from 1 to L occurs, and the total is
    # B * (L + 1) / 2 for every seed (to within half a token), which the formulas count.
    firsts = torch.randint(1, L + 1, (B // 2,), dtype=torch.int32)
    middle = torch.full((B % 2,), (L + 1) // 2, dtype=torch.int32)
    lengths = torch.cat([firsts, L + 1 - firsts, middle])
    return lengths[torch.randperm(B)]


def get_inputs():
    # A query scale of 2 makes attention peaked, as trained models' is, rather than a flat mean.
    q = (torch.randn(B, H, D, dtype=torch.float32) * 2.0).to(torch.bfloat16)
    # Pages are scattered through the pool: a sequence's pages are neither contiguous nor ordered.
    num_pages = B * (L // PAGE)
    block_table = torch.randperm(num_pages, dtype=torch.int32).reshape(B, L // PAGE)
    return [q, block_table, _seq_lens()]


def get_init_inputs():
    return [B * (L // PAGE), PAGE, KVH, D]
