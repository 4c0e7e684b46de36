"""Starter: a correct but naive Triton embedding gather, one program per output element.

Every program reloads its token's id and copies a single 2-byte value, so a row of D elements
costs D programs and D reloads of the same id.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather_one_element(ids_ptr, w_ptr, out_ptr, dim):
    pid = tl.program_id(0).to(tl.int64)
    token = pid // dim
    col = pid % dim
    row = tl.load(ids_ptr + token)
    tl.store(out_ptr + pid, tl.load(w_ptr + row * dim + col))


class ModelNew(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(vocab, dim, dtype=torch.float16))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        dim = self.weight.shape[1]
        out = torch.empty((ids.shape[0], dim), dtype=self.weight.dtype, device=ids.device)
        if out.numel():
            _gather_one_element[(out.numel(),)](ids, self.weight, out, dim)
        return out
