import torch
import torch.nn as nn

# The reference accumulates in fp32 throughout: cuBLAS may not reduce split-K partial sums in
# fp16, which would make the reference itself the least accurate party.
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False

B = 64
M = 1024
N = 1024
K = 1024


class Model(nn.Module):
    """Batched matmul: C[b] = A[b] @ B[b] with A [B, M, K], B [B, K, N], all fp16."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    # Operands of 1e-2 scale: even scaled up a hundredfold, the fp32 sums over K stay within the
    # fp16 absolute tolerance for outputs near zero, and the outputs far from fp16's range.
    a = torch.randn(B, M, K, dtype=torch.float16) * 0.01
    b = torch.randn(B, K, N, dtype=torch.float16) * 0.01
    return [a, b]


def get_init_inputs():
    return []
