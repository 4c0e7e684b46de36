"""A library path for paged decode: gather the pages, then PyTorch SDPA with a length mask.

Grouped-query heads are folded into the query length ([B, KVH, H // KVH, D] queries against
[B, KVH, L, D] keys), which is exact for one decode token and lets SDPA pick its memory-efficient
kernel with a boolean mask, instead of repeating K and V per query head.
"""

import torch
import torch.nn.functional as F


def is_available() -> bool:
    return torch.cuda.is_available()


def sota_forward(
    model: torch.nn.Module, q: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor
) -> torch.Tensor:
    batch, heads, dim = q.shape
    kv_heads = model.k_cache.shape[2]
    pages = block_table.long()
    k = model.k_cache[pages].reshape(batch, -1, kv_heads, dim).transpose(1, 2)
    v = model.v_cache[pages].reshape(batch, -1, kv_heads, dim).transpose(1, 2)
    positions = torch.arange(k.shape[2], device=q.device)
    mask = (positions[None, :] < seq_lens[:, None])[:, None, None, :]
    query = q.reshape(batch, kv_heads, heads // kv_heads, dim)
    out = F.scaled_dot_product_attention(query, k, v, attn_mask=mask)
    return out.reshape(batch, heads, dim)
