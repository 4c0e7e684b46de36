import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise RuntimeError("cannot build the kernel")

    def forward(self, x):
        return x
