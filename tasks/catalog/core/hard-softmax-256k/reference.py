"""Row softmax over vocabularies of up to 256K entries, on logits of large magnitude.

The logits are standard normal values times LOGIT_SCALE: row maxima reach ~150, beyond float32
exp's range (exp overflows above ~88.7), so exp(x) / sum(exp(x)) without subtracting the row
maximum gives inf / inf. Most outputs are tiny (down to float32's underflow) and a few carry
nearly all the mass.
"""

import torch
import torch.nn as nn

B = 128
V = 262144
LOGIT_SCALE = 30.0


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(B, V, dtype=torch.float32) * LOGIT_SCALE]


def get_init_inputs():
    return []
