import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """No kernel of its own: allowed aten ops compose the answer."""

    def forward(self, x):
        return x / (1.0 + torch.exp(-x))
