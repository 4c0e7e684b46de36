"""Grouped up-projection of a mixture of experts with skewed top-1 routing.

Token t goes to expert expert_ids[t] and out[t] = x[t] @ weight[expert_ids[t]], with x [T, H],
weight [E, H, I] and out [T, I], all bf16. Routing is skewed as trained routers are: expert load
follows a Zipf-like law, so a few experts take most tokens and some take a handful.

The reference runs one float32 matmul per expert over the tokens routed to it, so FlopCounterMode
counts exactly 2 * T * H * I, whatever the routing.
"""

import torch
import torch.nn as nn

T = 4096
E = 8
H = 4096
I = 14336  # noqa: E741 - the usual name of the intermediate size
ZIPF_EXPONENT = 1.2


class Model(nn.Module):
    def __init__(self, num_experts: int, hidden: int, intermediate: int) -> None:
        super().__init__()
        weight = torch.randn(num_experts, hidden, intermediate, dtype=torch.bfloat16)
        self.weight = nn.Parameter(weight * hidden**-0.5)

    def forward(self, x: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape[0], self.weight.shape[2], dtype=x.dtype, device=x.device)
        for expert in range(self.weight.shape[0]):
            rows = (expert_ids == expert).nonzero().squeeze(1)
            if rows.numel():
                out[rows] = (x[rows].float() @ self.weight[expert].float()).to(x.dtype)
        return out


def get_inputs():
    x = torch.randn(T, H, dtype=torch.bfloat16)
    # The expert of load rank r takes a share proportional to 1 / (r + 1) ** ZIPF_EXPONENT;
    # which expert holds which rank changes with the seed.
    shares = torch.arange(1, E + 1, dtype=torch.float32) ** -ZIPF_EXPONENT
    ranks = torch.multinomial(shares, T, replacement=True)
    expert_ids = torch.randperm(E)[ranks]
    return [x, expert_ids]


def get_init_inputs():
    return [E, H, I]
