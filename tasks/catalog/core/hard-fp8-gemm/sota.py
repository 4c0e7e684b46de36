"""The best library path for a row-wise scaled FP8 GEMM: cuBLASLt / CUTLASS via torch._scaled_mm.

torch._scaled_mm wants K and N to be multiples of 16 (16-byte aligned fp8 rows and columns), so
off-alignment shapes are zero-padded here, inside the timed call, as a caller would have to (the
weight too: padding it once ahead would be fair, but most shapes here need no padding at all).
Zero codes add nothing to the dot products, and padded output columns are dropped.
"""

import functools

import torch
import torch.nn.functional as F

ALIGN = 16


@functools.cache
def is_available() -> bool:
    if not torch.cuda.is_available() or not hasattr(torch, "_scaled_mm"):
        return False
    if torch.cuda.get_device_capability() < (8, 9):
        return False
    # Row-wise scales need a recent build and architecture: probe once instead of guessing.
    try:
        a = torch.ones(16, 16, device="cuda").to(torch.float8_e4m3fn)
        ones = torch.ones(16, 1, device="cuda")
        torch._scaled_mm(a, a.t(), scale_a=ones, scale_b=ones.t(), out_dtype=torch.bfloat16)
    except RuntimeError:
        return False
    return True


def _pad_fp8(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    if x.shape == (rows, cols):
        return x
    # F.pad has no fp8 kernel; a byte view pads with 0x00, which is +0.0 in e4m3fn.
    padded = F.pad(x.view(torch.uint8), (0, cols - x.shape[1], 0, rows - x.shape[0]))
    return padded.view(torch.float8_e4m3fn)


def sota_forward(
    model: torch.nn.Module, x_bytes: torch.Tensor, x_scale: torch.Tensor
) -> torch.Tensor:
    x = x_bytes.view(torch.float8_e4m3fn)
    weight, weight_scale = model.weight, model.weight_scale
    m, k = x.shape
    n = weight.shape[0]
    k_pad, n_pad = -(-k // ALIGN) * ALIGN, -(-n // ALIGN) * ALIGN
    x = _pad_fp8(x, m, k_pad)
    weight = _pad_fp8(weight, n_pad, k_pad)
    if n_pad != n:
        weight_scale = F.pad(weight_scale, (0, n_pad - n), value=1.0)
    out = torch._scaled_mm(
        x,
        weight.t(),
        scale_a=x_scale.reshape(m, 1).contiguous(),
        scale_b=weight_scale.reshape(1, n_pad).contiguous(),
        out_dtype=torch.bfloat16,
    )
    return out if n_pad == n else out[:, :n].contiguous()
