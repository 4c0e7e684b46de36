import torch
import torch.nn as nn

# The reference accumulates in fp32 throughout: cuBLAS may split K for these shapes, and it may
# not reduce those partial sums in bf16, which would make the reference the least accurate party.
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

B = 512
M = 4096
K = 128


class Model(nn.Module):
    """A batch of matrix-vector products: y[b] = A[b] @ x[b] for A [B, M, K] and x [B, K],
    giving y [B, M]; bf16 in and out, fp32 accumulation.
    """

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x.unsqueeze(-1)).squeeze(-1)


def get_inputs():
    # x scaled by 1 / sqrt(K), so every output is of unit scale whatever K is.
    return [
        torch.randn(B, M, K, dtype=torch.bfloat16),
        torch.empty(B, K, dtype=torch.bfloat16).normal_(0.0, K**-0.5),
    ]


def get_init_inputs():
    return []
