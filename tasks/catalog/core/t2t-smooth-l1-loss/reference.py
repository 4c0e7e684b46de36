import torch
import torch.nn as nn

N = 33554432
BETA = 1.0


class Model(nn.Module):
    """loss = mean over i of smooth_l1(pred[i] - target[i]) with beta = 1 (the Huber loss with
    delta = 1): 0.5 * d * d / beta where |d| < beta, else |d| - 0.5 * beta. A 0-d output.
    """

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.smooth_l1_loss(pred, target, reduction="mean", beta=BETA)


def get_inputs():
    return [
        torch.randn(N, dtype=torch.float32),
        torch.randn(N, dtype=torch.float32),
    ]


def get_init_inputs():
    return []
