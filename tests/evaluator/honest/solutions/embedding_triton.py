import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gather_rows(idx_ptr, table_ptr, out_ptr, dim, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    row = tl.load(idx_ptr + token)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < dim
    values = tl.load(table_ptr + row * dim + offsets, mask=mask)
    tl.store(out_ptr + token * dim + offsets, values, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, idx):
        weight = self.table.weight
        out = torch.empty(idx.shape[0], weight.shape[1], dtype=weight.dtype, device=weight.device)
        block = triton.next_power_of_2(weight.shape[1])
        gather_rows[(idx.shape[0],)](idx, weight, out, weight.shape[1], BLOCK=block)
        return out
