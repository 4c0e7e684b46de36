import torch
import torch.nn as nn


class Model(nn.Module):
    """out_features reaches only the constructor; channels must split into groups."""

    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(num_groups, in_features)

    def forward(self, x):
        return self.linear(self.norm(x))


batch_size, in_features = 4, 16
out_features = 12
num_groups = 4


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]
