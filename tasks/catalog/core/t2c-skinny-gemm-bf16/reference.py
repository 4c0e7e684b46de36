import torch
import torch.nn as nn

# The reference accumulates in fp32 throughout: for skinny shapes cuBLAS splits K, and it may not
# reduce those partial sums in bf16, which would make the reference the least accurate party.
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

M = 16
N = 28672
K = 8192


class Model(nn.Module):
    """A linear layer at decode time: y = x @ W^T with a few rows of x [M, K] against a large
    weight W [N, K], all bf16, no bias."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        # Drawn on the GPU when there is one: a CPU generator takes seconds for a weight of
        # hundreds of millions of elements, and the grader builds the model for every shape.
        device = "cuda" if torch.cuda.is_available() else "cpu"
        weight = torch.empty(out_features, in_features, dtype=torch.bfloat16, device=device)
        self.weight = nn.Parameter(weight.normal_(0.0, in_features**-0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.weight)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return [K, N]
