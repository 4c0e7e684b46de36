"""FP8 linear layer with row-wise scales, bf16 out:
y = (x * x_scale[:, None]) @ (weight * weight_scale[:, None]).T.

x is [M, K] float8_e4m3fn activations with one float32 scale per row (quantized per call, as a
serving engine quantizes activations per token), passed as its raw bytes: a uint8 tensor that
x.view(torch.float8_e4m3fn) reinterprets for free (the grader's check that inputs come back
unmodified runs torch.nan_to_num, which has no fp8 kernel). The model holds the weight [N, K]
float8_e4m3fn (nn.Linear layout) with one float32 scale per output channel, quantized once.
y is [M, N] bf16. The fp8 codes upcast to float32 exactly, so the reference multiplies them with
float32 accumulation and applies both scales to the product, which equals dequantizing first.

The weight's values carry a factor of 2**-16 (WEIGHT_SCALE). A power of two changes no fp8 code
and no rounding anywhere (it lands in weight_scale alone), but it keeps y small, where the
grader's absolute tolerance shrinks with the output's RMS: errors are then judged relative to
the output's magnitude for every input distribution, scaled and outlier inputs included.
"""

import torch
import torch.nn as nn

M = 4093
N = 4096
K = 4096
FP8_MAX = 448.0  # the largest finite float8_e4m3fn
WEIGHT_SCALE = 2.0**-16


def _quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # Per-row amax scaling, the usual recipe: each row's largest magnitude maps to FP8_MAX.
    scale = x.abs().amax(dim=1).clamp_min(1e-30) / FP8_MAX
    return (x / scale[:, None]).to(torch.float8_e4m3fn), scale


class Model(nn.Module):
    def __init__(self, out_features: int, in_features: int) -> None:
        super().__init__()
        # Weights of variance 1/K (times WEIGHT_SCALE**2), as in a linear layer.
        weight = torch.randn(out_features, in_features, dtype=torch.float32)
        codes, scale = _quantize_rows(weight * (in_features**-0.5 * WEIGHT_SCALE))
        self.register_buffer("weight", codes)
        self.register_buffer("weight_scale", scale)

    def forward(self, x_bytes: torch.Tensor, x_scale: torch.Tensor) -> torch.Tensor:
        x = x_bytes.view(torch.float8_e4m3fn)
        acc = x.float() @ self.weight.float().t()
        return (acc * x_scale[:, None] * self.weight_scale[None, :]).to(torch.bfloat16)


def get_inputs():
    x, x_scale = _quantize_rows(torch.randn(M, K, dtype=torch.float32))
    return [x.view(torch.uint8), x_scale]


def get_init_inputs():
    return [N, K]
