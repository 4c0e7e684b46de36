"""What this device really reaches: copy bandwidth and matrix-product rates, against the table.

A check on PEAK_TABLE, not a score: a measured rate well above its datasheet row means the row
(or the name matching) is wrong; one far below it means a throttled or misconfigured card.
On CPU the same code runs on tiny sizes so that tests exercise it; the numbers mean nothing.
"""

import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import torch

from grader.roofline import peaks_for

# 2 GiB per buffer on a GPU: far past any L2 (50-126 MB), so the copy streams through HBM.
_COPY_BYTES = 2 * 1024**3
# 8192-cube products keep every listed GPU's Tensor Cores busy for about a millisecond or more.
_MATMUL_SIDE = 8192
_GPU_WARMUP, _GPU_REPEATS, _GPU_CALLS_PER_REPEAT = 3, 7, 10
_CPU_WARMUP, _CPU_REPEATS, _CPU_CALLS_PER_REPEAT = 1, 3, 1
# torch._scaled_mm needs the fp8 Tensor Cores of Ada (8.9), Hopper (9.0) and later.
_FP8_MIN_CAPABILITY = (8, 9)
MATMUL_DTYPES = ("bfloat16", "float16", "tfloat32", "float32", "float8_e4m3fn")


def measure_peaks(device: str = "cuda", *, size_scale: float = 1.0) -> dict[str, Any]:
    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda' or 'cpu', not {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("no CUDA device is available")
    if size_scale <= 0:
        raise ValueError(f"size_scale must be positive, not {size_scale}")
    torch.manual_seed(0)
    gpu = torch.cuda.get_device_name() if device == "cuda" else _cpu_name()
    copy_bytes = max(1024**2, int(_COPY_BYTES * size_scale))
    copy_gbps = _copy_gbps(device, copy_bytes)
    side = max(16, int(_MATMUL_SIDE * size_scale) // 16 * 16)
    tflops: dict[str, float | None] = {}
    unavailable: dict[str, str] = {}
    for dtype in MATMUL_DTYPES:
        try:
            tflops[dtype] = _matmul_tflops(device, dtype, side)
        except _Unavailable as exc:
            tflops[dtype], unavailable[dtype] = None, str(exc)
    peaks = peaks_for(gpu) if device == "cuda" else None
    return {
        "gpu": gpu,
        "device": device,
        "size_scale": size_scale,
        "copy_bytes": copy_bytes,
        "matmul_side": side,
        "copy_gbps": copy_gbps,
        "tflops": tflops,
        "unavailable": unavailable,
        "table": asdict(peaks) if peaks else None,
        "ratio_to_table": _ratios(copy_gbps, tflops, asdict(peaks)) if peaks else {},
    }


class _Unavailable(Exception):
    pass


def _cpu_name() -> str:
    return f"cpu ({platform.machine() or 'unknown'})"


def _ratios(
    copy_gbps: float, tflops: dict[str, float | None], table: dict[str, Any]
) -> dict[str, float]:
    ratios = {"copy": copy_gbps / table["hbm_gbps"]}
    for dtype, measured in tflops.items():
        peak_tflops = table["tflops"].get(dtype)
        if measured is not None and peak_tflops:
            ratios[dtype] = measured / peak_tflops
    return ratios


def _copy_gbps(device: str, copy_bytes: int) -> float:
    source = torch.randn(copy_bytes // 4, device=device)
    target = torch.empty_like(source)
    median_ms = _median_call_ms(device, lambda: target.copy_(source))
    # A copy reads every byte once and writes it once.
    return 2 * source.numel() * source.element_size() / (median_ms / 1e3) / 1e9


def _matmul_tflops(device: str, dtype: str, side: int) -> float:
    call = _matmul_call(device, dtype, side)
    # float32 is measured with TF32 off whatever the caller's setting, tfloat32 with it on.
    median_ms = _with_tf32(dtype == "tfloat32", lambda: _median_call_ms(device, call))
    return 2 * side**3 / (median_ms / 1e3) / 1e12


def _matmul_call(device: str, dtype: str, side: int) -> Callable[[], object]:
    if dtype == "float8_e4m3fn":
        return _fp8_call(device, side)
    torch_dtype = torch.float32 if dtype == "tfloat32" else getattr(torch, dtype)
    a = torch.randn(side, side, device=device).to(torch_dtype)
    b = torch.randn(side, side, device=device).to(torch_dtype)
    return lambda: torch.mm(a, b)


def _fp8_call(device: str, side: int) -> Callable[[], object]:
    if device != "cuda":
        raise _Unavailable("fp8 matrix products need a CUDA device")
    capability = torch.cuda.get_device_capability()
    if capability < _FP8_MIN_CAPABILITY:
        raise _Unavailable(f"compute capability {capability} has no fp8 Tensor Cores")
    # ROCm's fp8 on MI300 is the FNUZ encoding of e4m3.
    fp8 = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn
    a = torch.randn(side, side, device=device).to(fp8)
    # _scaled_mm wants its second operand column-major.
    b = torch.randn(side, side, device=device).to(fp8).t()
    scale = torch.tensor(1.0, device=device)

    def call() -> object:
        return torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)

    try:
        call()
    except (RuntimeError, TypeError) as exc:
        raise _Unavailable(f"torch._scaled_mm failed: {exc}") from exc
    return call


def _with_tf32(allow: bool, measure: Callable[[], float]) -> float:
    matmul = torch.backends.cuda.matmul
    allow_before = matmul.allow_tf32
    matmul.allow_tf32 = allow
    try:
        return measure()
    finally:
        matmul.allow_tf32 = allow_before


def _median_call_ms(device: str, call: Callable[[], object]) -> float:
    if device == "cuda":
        return _median_cuda_ms(call)
    for _ in range(_CPU_WARMUP):
        call()
    times_ms: list[float] = []
    for _ in range(_CPU_REPEATS):
        start = time.perf_counter()
        for _ in range(_CPU_CALLS_PER_REPEAT):
            call()
        times_ms.append((time.perf_counter() - start) * 1e3 / _CPU_CALLS_PER_REPEAT)
    return statistics.median(times_ms)


def _median_cuda_ms(call: Callable[[], object]) -> float:
    for _ in range(_GPU_WARMUP):
        call()
    torch.cuda.synchronize()
    times_ms: list[float] = []
    for _ in range(_GPU_REPEATS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(_GPU_CALLS_PER_REPEAT):
            call()
        end.record()
        end.synchronize()
        times_ms.append(float(start.elapsed_time(end)) / _GPU_CALLS_PER_REPEAT)
    return statistics.median(times_ms)


def render_peaks(report: dict[str, Any]) -> str:
    table = report["table"]
    ratios = report["ratio_to_table"]
    row_name = table["name"] if table else "no datasheet row"
    lines = [f"{report['device']}: {report['gpu']}   table: {row_name}"]
    lines.append(_row("copy", report["copy_gbps"], "GB/s", table and table["hbm_gbps"], ratios))
    for dtype, measured in report["tflops"].items():
        if measured is None:
            lines.append(f"  {dtype:<14} unavailable: {report['unavailable'][dtype]}")
            continue
        peak = table["tflops"].get(dtype) if table else None
        lines.append(_row(dtype, measured, "TFLOP/s", peak, ratios))
    return "\n".join(lines)


def _row(
    label: str, measured: float, unit: str, peak: float | None, ratios: dict[str, float]
) -> str:
    line = f"  {label:<14} {measured:10.2f} {unit:<8}"
    if peak:
        line += f" table {peak:8.1f}   ratio {ratios[label]:.3f}"
    return line.rstrip()
