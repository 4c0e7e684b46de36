"""The comparison of compare.py in two passes over each output, each one fused kernel, where the
outputs are contiguous CUDA tensors of a dtype Triton loads (float64, float32, float16,
bfloat16): the same verdict's fields, computed in float64 as there, without the float64
temporaries of the chunked path (about 4 GB of device traffic per 16M elements there, two reads
of each output here; a 6.4 GB output is compared in milliseconds, not a quarter second).

Pass 1: where finiteness differs, where a NaN or Inf differs, and the sum of squares of the
reference's finite elements (its RMS, for the scaled atol). Pass 2: elements outside
atol + rtol * |want|, the largest absolute and relative errors, over the reference's finite
elements. Each program writes its block's partial results; torch sums and maxes them, so no
atomics and the same result on every run. compare.py decides where this applies and falls back
to its own chunked path elsewhere (the CPU, complex and fp8 outputs, views).
"""

from typing import Any

import torch
import triton
import triton.language as tl

BLOCK = 4096
# Below this many elements the chunked path takes a few chunks (milliseconds), less than the
# first compile of these kernels in a fresh Triton cache (about a second each).
FUSED_MIN_ELEMENTS = 1 << 26
FUSED_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


@triton.jit
def _wide(ptr, offs, mask):
    x = tl.load(ptr + offs, mask=mask, other=0.0)
    return x.to(tl.float32).to(tl.float64) if x.dtype != tl.float64 else x


@triton.jit
def _placement_and_squares(
    w_ptr, g_ptr, n, finite_out, special_out, squares_out, BLOCK: tl.constexpr
):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = _wide(w_ptr, offs, mask)
    g = _wide(g_ptr, offs, mask)
    inf = float("inf")
    w_finite = (w == w) & (tl.abs(w) != inf)
    g_finite = (g == g) & (tl.abs(g) != inf)
    same = (g == w) | ((g != g) & (w != w))
    finite_differs = mask & (w_finite != g_finite)
    special_differs = mask & (~w_finite) & (~same)
    tl.store(finite_out + pid, tl.sum(finite_differs.to(tl.int64), axis=0))
    tl.store(special_out + pid, tl.sum(special_differs.to(tl.int64), axis=0))
    tl.store(squares_out + pid, tl.sum(tl.where(mask & w_finite, w * w, 0.0), axis=0))


@triton.jit
def _errors(w_ptr, g_ptr, n, tolerance_ptr, count_out, abs_out, rel_out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = _wide(w_ptr, offs, mask)
    g = _wide(g_ptr, offs, mask)
    atol = tl.load(tolerance_ptr)
    rtol = tl.load(tolerance_ptr + 1)
    inf = float("inf")
    counted = mask & (w == w) & (tl.abs(w) != inf)
    err = tl.where(counted, tl.abs(g - w), 0.0)
    magnitude = tl.where(counted, tl.abs(w), 0.0)
    outside = counted & (err > magnitude * rtol + atol)
    tl.store(count_out + pid, tl.sum(outside.to(tl.int64), axis=0))
    tl.store(abs_out + pid, tl.max(err, axis=0))
    tl.store(rel_out + pid, tl.max(err / tl.maximum(magnitude, 1e-12), axis=0))


def applies(want: torch.Tensor, got: torch.Tensor) -> bool:
    """Both on one CUDA device, contiguous, of one dtype this module loads, and large enough
    (FUSED_MIN_ELEMENTS) for the passes to save more than their first compile costs."""
    return (
        want.numel() >= FUSED_MIN_ELEMENTS
        and want.device.type == "cuda"
        and got.device == want.device
        and want.dtype in FUSED_DTYPES
        and got.dtype == want.dtype
        and want.is_contiguous()
        and got.is_contiguous()
    )


def _partials(n: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    return torch.empty(triton.cdiv(n, BLOCK), dtype=dtype, device=device)


def placement_and_rms(want: torch.Tensor, got: torch.Tensor) -> tuple[str | None, float]:
    """compare._special_placement's verdict and compare._finite_rms's value, in one pass."""
    n = want.numel()
    finite = _partials(n, want.device, torch.int64)
    special = _partials(n, want.device, torch.int64)
    squares = _partials(n, want.device, torch.float64)
    grid: Any = (finite.numel(),)
    _placement_and_squares[grid](want, got, n, finite, special, squares, BLOCK=BLOCK)
    if int(finite.sum()):
        return "finite", 0.0
    placement = "special" if int(special.sum()) else None
    return placement, float((squares.sum() / n).sqrt())


def errors(
    want: torch.Tensor, got: torch.Tensor, atol: float, rtol: float
) -> tuple[int, float, float]:
    """compare._errors's (count, max abs err, max rel err), in one pass."""
    n = want.numel()
    tolerance = torch.tensor([atol, rtol], dtype=torch.float64, device=want.device)
    count = _partials(n, want.device, torch.int64)
    worst_abs = _partials(n, want.device, torch.float64)
    worst_rel = _partials(n, want.device, torch.float64)
    grid: Any = (count.numel(),)
    _errors[grid](want, got, n, tolerance, count, worst_abs, worst_rel, BLOCK=BLOCK)
    return int(count.sum()), float(worst_abs.max()), float(worst_rel.max())
