"""What a grader child's first Triton launch costs after each way of preparing the child, in a
fresh process with a fresh Triton cache (the candidate's, per evaluation), on a GPU host:

    python3 bench/child_start_probe.py MODE

MODE names the preparation: `full` (torch.profiler's first use, which imports torch._inductor
and torch._dynamo), `light` (the profiler it wraps), `+driver` (Triton's driver made ahead:
its C helper built into the cache), `+dynamo` (torch._dynamo imported), `+cuda` (CUDA's context
made ahead, as child._device_ahead makes it), `+cupti` (a profiled call of a torch op on the
device ahead: the profiler's device side started), `+tcompile` (with `+cuda`: one small kernel
compiled for the GPU and not launched, as child._triton_compiler_ahead compiles it). Prints one
JSON line: seconds of the imports, the preparation, CUDA's start, and the first and second
profiled launch (grader.guards.profile_call). Figures: bench/results/child-start-probe-<gpu>.txt.
"""

import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def main(mode: str) -> dict[str, Any]:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    sys.path.insert(0, str(REPO))
    marks = [time.monotonic()]
    import torch
    import triton
    import triton.language as tl

    marks.append(time.monotonic())
    if "full" in mode:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            torch.ones(1).add_(1)
    if "light" in mode:
        with torch.autograd.profiler.profile(use_kineto=True):
            torch.ones(1).add_(1)
    marks.append(time.monotonic())
    if "dynamo" in mode:
        importlib.import_module("torch._dynamo")
    if "driver" in mode:
        triton.runtime.driver.active.utils  # noqa: B018 - made on first use
    if "cuda" in mode or "cupti" in mode:
        torch.cuda.init()
        torch.cuda.synchronize()
    if "tcompile" in mode:
        from grader import child

        child._triton_compiler_ahead()
    if "cupti" in mode:
        from grader.guards import profile_call as warm_profile

        warm_profile(lambda: torch.ones(1, device="cuda").add_(1), "cuda")
    marks.append(time.monotonic())
    cache = sorted(os.listdir(os.environ["TRITON_CACHE_DIR"]))
    initialised = torch.cuda.is_initialized()

    @triton.jit
    def add(x, y, o, n, block: tl.constexpr):  # type: ignore[no-untyped-def]
        i = tl.program_id(0) * block + tl.arange(0, block)
        m = i < n
        tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

    x = torch.ones(4096, device="cuda")
    out = torch.empty_like(x)
    torch.cuda.synchronize()
    marks.append(time.monotonic())
    from grader.guards import profile_call

    marks.append(time.monotonic())
    _, first = profile_call(lambda: add[(4,)](x, x, out, 4096, block=1024), "cuda")
    marks.append(time.monotonic())
    profile_call(lambda: add[(4,)](x, x, out, 4096, block=1024), "cuda")
    marks.append(time.monotonic())
    names = ["imports", "warm", "extra", "cuda_init", "guards_import", "first_profiled_jit"]
    report: dict[str, Any] = {"mode": mode}
    report.update({n: round(b - a, 4) for n, a, b in zip(names, marks, marks[1:], strict=False)})
    report["second_profiled"] = round(marks[-1] - marks[-2], 4)
    report["cuda_initialized_before"] = initialised
    report["cache_after_warm"] = cache
    report["kernels"] = len(first.kernels)
    report["modules"] = [m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules]
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "light")))
