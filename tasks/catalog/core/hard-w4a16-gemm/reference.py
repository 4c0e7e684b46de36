"""Weight-only int4 GEMM (W4A16): y = x @ W.T with W stored as packed 4-bit codes.

The weight W [N, K] is quantized in groups of GROUP_SIZE consecutive k per output row n:
    W[n, k] = bf16((q[n, k] - zeros[n, g]) * scales[n, g]),  g = k // GROUP_SIZE,
with codes q in 0..15 packed two per byte along K (qweight[n, j] holds k = 2j in its low nibble
and k = 2j + 1 in its high nibble) and bf16 scales and zero points (zeros hold whole numbers).
A kernel feeding bf16 tensor cores dequantizes to bf16 exactly like this; the product is then
accumulated in float32 and rounded to bf16. The reference does that in float32 on any device.
"""

import torch
import torch.nn as nn

M = 16
N = 28672
K = 8192
GROUP_SIZE = 128


class Model(nn.Module):
    def __init__(self, out_features: int, in_features: int) -> None:
        super().__init__()
        groups = in_features // GROUP_SIZE
        codes = torch.randint(0, 16, (out_features, in_features), dtype=torch.uint8)
        self.register_buffer("qweight", codes[:, 0::2] | (codes[:, 1::2] << 4))
        # Scales sized so that y has about unit variance; zero points near the middle of 0..15,
        # as asymmetric quantization of centred weights gives.
        scales = (0.75 + 0.5 * torch.rand(out_features, groups)) * in_features**-0.5 / 4
        self.register_buffer("scales", scales.to(torch.bfloat16))
        zeros = torch.randint(6, 10, (out_features, groups)).to(torch.bfloat16)
        self.register_buffer("zeros", zeros)

    def dequantized_weight(self) -> torch.Tensor:
        rows, half = self.qweight.shape
        codes = torch.stack((self.qweight & 0xF, self.qweight >> 4), dim=-1).reshape(rows, 2 * half)
        grouped = codes.float().reshape(rows, -1, GROUP_SIZE)
        weight = (grouped - self.zeros.float()[..., None]) * self.scales.float()[..., None]
        return weight.reshape(rows, 2 * half).to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() @ self.dequantized_weight().float().t()).to(torch.bfloat16)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs():
    return [N, K]
