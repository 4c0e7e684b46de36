import torch
import torch.nn as nn

V = 32000
T = 32768
D = 4096


class Model(nn.Module):
    """Embedding lookup: rows of an fp16 (V, D) table picked by T int64 token ids."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(vocab, dim, dtype=torch.float16))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.embedding(ids, self.weight)


def get_inputs():
    return [torch.randint(0, V, (T,), dtype=torch.int64)]


def get_init_inputs():
    return [V, D]
