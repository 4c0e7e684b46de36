"""Roofline scoring: how close a timed kernel comes to the GPU's datasheet limits.

All peaks are dense (no 2:4 structured sparsity): a kernel graded here computes every product the
task's FLOP formula counts, so the sparse figures vendors headline would halve every fraction.
Units: TFLOP/s (TOP/s for int8) and GB/s, where 1 GB = 1e9 bytes as in the datasheets.
"""

import re
from dataclasses import dataclass

# Above this fraction of a roof, a timing is physically implausible (clock jitter and datasheet
# rounding stay well under 5%): the result is flagged rather than ranked.
FRACTION_FLAG_THRESHOLD = 1.05
REGIMES = ("compute", "memory")


@dataclass(frozen=True)
class GpuPeaks:
    name: str
    hbm_gbps: float
    tflops: dict[str, float]
    source: str


def _tensor_rates(fp32: float, tf32: float, bf16: float, fp8: float) -> dict[str, float]:
    # From Hopper and Ada on, Tensor Cores run fp16 at the bf16 rate and int8 at the fp8 rate.
    return {
        "bfloat16": bf16,
        "float16": bf16,
        "float8_e4m3fn": fp8,
        "int8": fp8,
        "tfloat32": tf32,
        "float32": fp32,
    }


def _a100() -> dict[str, float]:
    # NVIDIA A100 datasheet, dense; the same for every form factor. No fp8 on Ampere.
    return {"bfloat16": 312.0, "float16": 312.0, "int8": 624.0, "tfloat32": 156.0, "float32": 19.5}


PEAK_TABLE: tuple[GpuPeaks, ...] = (
    # NVIDIA H100 datasheet (SXM column): 1,979 bf16 / 3,958 fp8 / 989 tf32 "with sparsity",
    # halved; fp32 67 (whitepaper 66.9); HBM3 3.35 TB/s.
    GpuPeaks(
        "NVIDIA H100 SXM",
        3350.0,
        _tensor_rates(66.9, 494.7, 989.4, 1978.9),
        "NVIDIA H100 datasheet, SXM, dense (sparse / 2)",
    ),
    # Same datasheet, PCIe column: 1,513 / 3,026 / 756 sparse, fp32 51 (whitepaper 51.2), 2 TB/s.
    GpuPeaks(
        "NVIDIA H100 PCIe",
        2000.0,
        _tensor_rates(51.2, 378.0, 756.5, 1513.0),
        "NVIDIA H100 datasheet, PCIe, dense (sparse / 2)",
    ),
    # Same datasheet, H100 NVL column (per GPU, 94 GB): 1,671 / 3,341 / 835 sparse, fp32 60,
    # 3.9 TB/s.
    GpuPeaks(
        "NVIDIA H100 NVL",
        3900.0,
        _tensor_rates(60.0, 417.5, 835.5, 1670.5),
        "NVIDIA H100 datasheet, NVL per GPU, dense (sparse / 2)",
    ),
    # NVIDIA H200 datasheet, SXM column: the H100 SXM's compute with HBM3e at 4.8 TB/s.
    GpuPeaks(
        "NVIDIA H200",
        4800.0,
        _tensor_rates(66.9, 494.7, 989.4, 1978.9),
        "NVIDIA H200 datasheet, SXM, dense (sparse / 2)",
    ),
    # Same datasheet, NVL column: 1,671 / 3,341 / 835 sparse, fp32 60, 4.8 TB/s.
    GpuPeaks(
        "NVIDIA H200 NVL",
        4800.0,
        _tensor_rates(60.0, 417.5, 835.5, 1670.5),
        "NVIDIA H200 datasheet, NVL, dense (sparse / 2)",
    ),
    # NVIDIA A100 datasheet: 2,039 GB/s SXM 80GB, 1,935 GB/s PCIe 80GB, 1,555 GB/s both 40GB.
    GpuPeaks("NVIDIA A100 SXM 80GB", 2039.0, _a100(), "NVIDIA A100 datasheet, SXM4 80GB"),
    GpuPeaks("NVIDIA A100 SXM 40GB", 1555.0, _a100(), "NVIDIA A100 datasheet, SXM4 40GB"),
    GpuPeaks("NVIDIA A100 PCIe 80GB", 1935.0, _a100(), "NVIDIA A100 datasheet, PCIe 80GB"),
    GpuPeaks("NVIDIA A100 PCIe 40GB", 1555.0, _a100(), "NVIDIA A100 datasheet, PCIe 40GB"),
    # NVIDIA L4 datasheet: fp32 30.3; 120 tf32 / 242 bf16 / 485 fp8 "with sparsity", halved;
    # GDDR6 300 GB/s.
    GpuPeaks(
        "NVIDIA L4",
        300.0,
        _tensor_rates(30.3, 60.0, 121.0, 242.5),
        "NVIDIA L4 datasheet, dense (sparse / 2)",
    ),
    # NVIDIA L40S datasheet, dense column: fp32 91.6, tf32 183, bf16 362.05, fp8 733; 864 GB/s.
    GpuPeaks(
        "NVIDIA L40S",
        864.0,
        _tensor_rates(91.6, 183.0, 362.05, 733.0),
        "NVIDIA L40S datasheet, dense",
    ),
    # RTX PRO 6000 Blackwell (GB202, 188 SMs). Workstation Edition datasheet: fp32 125 TFLOPS,
    # 4,000 "AI TOPS" (fp4, sparse), GDDR7 1,792 GB/s. Tensor rates from NVIDIA's RTX Blackwell
    # whitepaper: fp16/bf16 with fp32 accumulate 503.8 dense (= 4,030 fp4 sparse / 8), fp8 and
    # int8 twice that. tf32 at half the bf16 rate (the L40S datasheet's ratio; older Ada parts
    # list a quarter), the higher roof, so a fraction is never overstated.
    GpuPeaks(
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        1792.0,
        _tensor_rates(125.0, 251.9, 503.8, 1007.6),
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition datasheet + RTX Blackwell "
        "whitepaper, dense",
    ),
    # Server Edition datasheet: GDDR7 at 1,597 GB/s, fp32 120 TFLOPS (a lower boost clock than
    # the Workstation Edition's). Tensor rates: the Workstation Edition's, an upper bound at that
    # clock; `python -m evaluator measure-peaks` on the card shows how far below them it runs.
    GpuPeaks(
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        1597.0,
        _tensor_rates(120.0, 251.9, 503.8, 1007.6),
        "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet; tensor rates from the "
        "Workstation Edition (upper bound)",
    ),
    # AMD Instinct MI300X datasheet, dense figures only (AMD also lists 2x "with sparsity"):
    # fp16/bf16 1,307.4, fp8 2,614.9 (the e4m3 FNUZ encoding), int8 2,614.9, tf32 653.7,
    # fp32 matrix 163.4; HBM3 5.3 TB/s.
    GpuPeaks(
        "AMD Instinct MI300X",
        5300.0,
        {
            "bfloat16": 1307.4,
            "float16": 1307.4,
            "float8_e4m3fn": 2614.9,
            "int8": 2614.9,
            "tfloat32": 653.7,
            "float32": 163.4,
        },
        "AMD Instinct MI300X datasheet, dense",
    ),
)

# Patterns over torch.cuda.get_device_name(), lower-cased; the first match wins, so a variant
# (PCIe, NVL) is tested before its family's plain name. A name that matches none (an H100 that
# says neither HBM3 nor SXM, the 300 W RTX PRO 6000 Max-Q) has no datasheet row here.
_NAME_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bh100\b.*\bpcie\b", "NVIDIA H100 PCIe"),
    (r"\bh100\b.*\bnvl\b", "NVIDIA H100 NVL"),
    (r"\bh100\b.*\b(hbm3|sxm\d?)\b", "NVIDIA H100 SXM"),
    (r"\bh200\b.*\bnvl\b", "NVIDIA H200 NVL"),
    (r"\bh200\b", "NVIDIA H200"),
    (r"\ba100\b.*\bsxm4?\b.*\b80gb\b", "NVIDIA A100 SXM 80GB"),
    (r"\ba100\b.*\bsxm4?\b.*\b40gb\b", "NVIDIA A100 SXM 40GB"),
    (r"\ba100\b.*\b80gb\b.*\bpcie\b", "NVIDIA A100 PCIe 80GB"),
    (r"\ba100\b.*\bpcie\b.*\b40gb\b", "NVIDIA A100 PCIe 40GB"),
    (r"\bl4\b", "NVIDIA L4"),
    (r"\bl40s\b", "NVIDIA L40S"),
    (
        r"\brtx pro 6000 blackwell workstation\b",
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
    ),
    (r"\brtx pro 6000 blackwell server\b", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
    (r"\bmi300x\b", "AMD Instinct MI300X"),
)

# Integer math other than int8 runs on the CUDA cores, never faster than their fp32 rate.
_DTYPE_KEYS = {
    "bfloat16": "bfloat16",
    "float16": "float16",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e4m3fnuz": "float8_e4m3fn",
    "int8": "int8",
    "uint8": "int8",
    "int16": "float32",
    "int32": "float32",
    "int64": "float32",
}


def peaks_for(gpu_name: str) -> GpuPeaks | None:
    lowered = gpu_name.lower()
    for pattern, table_name in _NAME_PATTERNS:
        if re.search(pattern, lowered):
            return next(peaks for peaks in PEAK_TABLE if peaks.name == table_name)
    return None


def compute_dtype_key(dtype: str, *, allow_tf32: bool = False) -> str:
    name = dtype.removeprefix("torch.")
    if name == "float32":
        return "tfloat32" if allow_tf32 else "float32"
    if name not in _DTYPE_KEYS:
        raise ValueError(f"no compute roof for dtype {dtype!r}")
    return _DTYPE_KEYS[name]


def achieved(flops: float, bytes_moved: float, ms: float) -> tuple[float, float]:
    """(TFLOP/s, GB/s) of `flops` and `bytes_moved` done in `ms` milliseconds."""
    seconds = ms / 1e3
    return flops / seconds / 1e12, bytes_moved / seconds / 1e9


def roofline_fraction(
    *,
    regime: str,
    dtype: str,
    flops: float,
    bytes_moved: float,
    ms: float,
    peaks: GpuPeaks,
    allow_tf32: bool = False,
) -> float | None:
    _check_regime(regime)
    if ms <= 0:
        return None
    tflops, gbps = achieved(flops, bytes_moved, ms)
    if regime == "memory":
        return gbps / peaks.hbm_gbps
    peak_tflops = peaks.tflops.get(compute_dtype_key(dtype, allow_tf32=allow_tf32))
    return tflops / peak_tflops if peak_tflops else None


def floor_ms(
    *, dtype: str, flops: float, bytes_moved: float, peaks: GpuPeaks, allow_tf32: bool = False
) -> float:
    """The least time any kernel needs: the slower of the compute roof and the memory roof."""
    memory_ms = bytes_moved / (peaks.hbm_gbps * 1e9) * 1e3
    peak_tflops = peaks.tflops.get(compute_dtype_key(dtype, allow_tf32=allow_tf32))
    compute_ms = flops / (peak_tflops * 1e12) * 1e3 if peak_tflops else 0.0
    return max(memory_ms, compute_ms)


def speedup_is_possible(
    *,
    eager_ms: float,
    candidate_ms: float,
    regime: str,
    dtype: str,
    flops: float,
    bytes_moved: float,
    peaks: GpuPeaks,
    slack: float = 1.05,
) -> bool:
    """False when the candidate beat the hardware's floor time by more than `slack`.

    Both roofs bound every kernel, so the floor does not depend on the task's regime label. A
    float32 task's floor uses the TF32 roof: a candidate may trade precision within the tolerance,
    and this verdict must never accuse an honest kernel. When eager PyTorch itself runs under the
    floor, the task's formulas (or our table) overcount, and the floor proves nothing.
    """
    _check_regime(regime)
    if candidate_ms <= 0:
        return False
    floor = floor_ms(
        dtype=dtype, flops=flops, bytes_moved=bytes_moved, peaks=peaks, allow_tf32=True
    )
    if 0 < eager_ms < floor / slack:
        return True
    return candidate_ms >= floor / slack


def _check_regime(regime: str) -> None:
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, not {regime!r}")
