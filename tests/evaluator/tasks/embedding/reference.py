import torch
import torch.nn as nn

T = 512
V = 1000
D = 64


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, idx):
        return self.table(idx)


def get_inputs():
    return [torch.randint(0, V, (T,), dtype=torch.int64)]


def get_init_inputs():
    return [V, D]
