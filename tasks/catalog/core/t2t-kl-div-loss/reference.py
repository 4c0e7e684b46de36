import torch
import torch.nn as nn

B = 4096
V = 32000


class Model(nn.Module):
    """KL(target || model) as torch.nn.functional.kl_div(log_probs, target, "batchmean"):
    sum over every element of target * (log(target) - log_probs), divided by B; a 0-d output.
    A zero target contributes zero.
    """

    def forward(self, log_probs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.kl_div(log_probs, target, reduction="batchmean")


def get_inputs():
    # A student's log-probabilities and a teacher's probabilities over a vocabulary, as in
    # distillation; both rows are normalized.
    log_probs = torch.log_softmax(torch.randn(B, V, dtype=torch.float32) * 2.0, dim=-1)
    target = torch.softmax(torch.randn(B, V, dtype=torch.float32) * 2.0, dim=-1)
    return [log_probs, target]


def get_init_inputs():
    return []
