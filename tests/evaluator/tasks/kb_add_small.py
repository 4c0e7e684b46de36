import torch
import torch.nn as nn

# KernelBench's own example problem is this small: a launch of a few microseconds.
rows = 1
cols = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []
