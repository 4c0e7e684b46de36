"""Timing of one callable in the child process.

On CUDA: events around each call, L2 flushed before it, warm-up excluded, and the whole device
synchronized inside the measured region so work on side streams counts. On CPU nothing is
timed: CPU timings are not ranked.
"""

from collections.abc import Callable
from typing import Any

WARMUP_CALLS = 3
TIMED_CALLS = 20
_L2_FLUSH_BYTES = 256 * 1024 * 1024


def time_callable_ms(fn: Callable[[], Any], *, device: str) -> list[float]:
    if device != "cuda":
        return []
    import torch

    flush = torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    for _ in range(WARMUP_CALLS):
        fn()
    torch.cuda.synchronize()
    times: list[float] = []
    for _ in range(TIMED_CALLS):
        flush.zero_()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        torch.cuda.synchronize()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
