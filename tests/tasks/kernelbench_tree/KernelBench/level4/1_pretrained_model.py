import torch.nn as nn
from transformers import AutoModel


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = AutoModel.from_pretrained("some-model")

    def forward(self, x):
        return self.model(x)


def get_inputs():
    return []


def get_init_inputs():
    return []
