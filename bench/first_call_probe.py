"""Where a candidate's first call on a shape goes, on a GPU host: the steps of the candidate
harness's case (grader/roles/candidate.py) replayed in a fresh process per setting, with the
profiled call (grader.guards.profile_call) taken apart.

    python3 bench/first_call_probe.py [--out FILE]

Each setting runs in its own interpreter (CUDA's module loading is read at CUDA's start): an
operation on a sequence of shapes, each shape's first call profiled or plain, the outputs
exported through CUDA's virtual memory API as the harness's device path exports them (or not),
and CUDA_MODULE_LOADING lazy or eager. Per shape it prints the inputs' draw, the pristine copy,
the allocator's poisoning, the first call in parts (the profiler's start, the call and its
synchronization, the profiler's stop, its events read), a second, plain call, the export, and
the caching allocator's device allocations and frees around the first call. One JSON line per
setting. Figures: bench/results/first-call-probe-<gpu>.json.
"""

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

ELEMENTWISE = (4096, 393216)
SETTINGS: list[dict[str, Any]] = [
    {"op": "relu", "profiled": True, "export": True, "loading": "LAZY"},
    {"op": "relu", "profiled": False, "export": True, "loading": "LAZY"},
    {"op": "relu", "profiled": True, "export": False, "loading": "LAZY"},
    {"op": "relu", "profiled": True, "export": True, "loading": "EAGER"},
    {"op": "sigmoid", "profiled": True, "export": True, "loading": "LAZY"},
    {"op": "scale", "profiled": True, "export": True, "loading": "LAZY"},
    {"op": "rmsnorm", "profiled": True, "export": True, "loading": "LAZY"},
]
SHAPES: dict[str, list[tuple[int, ...]]] = {
    "relu": [ELEMENTWISE, (4096, 98304), (2048, 393216), (8192, 393216), ELEMENTWISE],
    "sigmoid": [ELEMENTWISE, (8192, 393216)],
    "scale": [(16384, 65536), (32768, 65536)],
    "rmsnorm": [(112, 64, 512, 448), (112, 64, 512, 896)],
}


def _op(name: str) -> Any:
    import torch

    if name == "relu":
        return torch.relu
    if name == "sigmoid":
        return torch.sigmoid
    if name == "scale":
        return lambda x: x * 3.5
    return lambda x: x / torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + 1e-5)


def _allocator() -> dict[str, int]:
    import torch

    stats = torch.cuda.memory_stats()
    names = ("num_device_alloc", "num_device_free", "num_alloc_retries")
    return {k: int(stats.get(k, 0)) for k in names}


def _steps(names: tuple[str, ...], marks: list[float]) -> dict[str, float]:
    """Each named step's seconds, from the marks taken between them."""
    spans = (round(b - a, 4) for a, b in itertools.pairwise(marks))
    return dict(zip(names, spans, strict=True))


def one(setting: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    began = time.monotonic()
    import torch
    from torch.autograd.profiler import profile

    from grader import device_outputs, guards
    from grader.roles.candidate import _poison_allocator
    from grader.roles.common import release_device_memory

    # As a prepared candidate child: the profiler's host side started, CUDA's context made.
    with profile(use_kineto=True):
        torch.ones(1).add_(1)
    torch.cuda.init()
    torch.cuda.synchronize()
    ready = time.monotonic() - began
    fn = _op(setting["op"])
    driver = device_outputs._driver() if setting["export"] else None
    kept: list[int] = []
    shapes = []
    for shape in SHAPES[setting["op"]]:
        release_device_memory("cuda")
        row: dict[str, Any] = {"shape": list(shape)}
        marks = [time.monotonic()]
        x = torch.randn(shape, device="cuda")
        torch.cuda.synchronize()
        marks.append(time.monotonic())
        pristine = x.clone()
        torch.cuda.synchronize()
        marks.append(time.monotonic())
        _poison_allocator("cuda", [x])
        torch.cuda.synchronize()
        marks.append(time.monotonic())
        before = _allocator()
        if setting["profiled"]:
            parts = [time.monotonic()]
            with profile(use_cpu=True, use_device="cuda", use_kineto=True) as prof:
                parts.append(time.monotonic())
                torch.cuda._sleep(0)
                out = fn(x)
                parts.append(time.monotonic())
                torch.cuda.synchronize()
                parts.append(time.monotonic())
            parts.append(time.monotonic())
            events = prof.function_events
            parts.append(time.monotonic())
            runs = guards._kernel_runs(prof)[0]
            parts.append(time.monotonic())
            names = ("profiler_start", "launch", "synchronize", "profiler_stop", "events", "runs")
            row["first_call"] = _steps(names, parts)
            row["kernels"] = [r.name[:60] for r in runs]
            row["events"] = len(events)
        else:
            parts = [time.monotonic()]
            out = fn(x)
            parts.append(time.monotonic())
            torch.cuda.synchronize()
            parts.append(time.monotonic())
            row["first_call"] = _steps(("launch", "synchronize"), parts)
        row["first_call_s"] = round(time.monotonic() - marks[-1], 4)
        row["allocator_in_first_call"] = {k: v - before[k] for k, v in _allocator().items()}
        start = time.monotonic()
        again = fn(x)
        torch.cuda.synchronize()
        row["second_call_s"] = round(time.monotonic() - start, 4)
        del again
        row.update(_steps(("inputs_s", "pristine_s", "poison_s"), marks))
        if driver is not None:
            start = time.monotonic()
            nbytes = out.numel() * out.element_size()
            size = driver.rounded(nbytes)
            handle = driver.create(size)
            pointer = driver.map(handle, size)
            region = device_outputs._as_tensor(pointer, size)
            region[:nbytes].copy_(out.reshape(-1).view(torch.uint8))
            torch.cuda.synchronize()
            del region
            driver.unmap(pointer, size)
            kept.append(driver.export(handle))
            driver.release(handle)
            row["export_s"] = round(time.monotonic() - start, 4)
        del x, pristine, out
        shapes.append(row)
    return {**setting, "ready_s": round(ready, 2), "shapes": shapes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(json.loads(args.one))), flush=True)
        return 0
    rows = []
    for setting in SETTINGS:
        env = {**os.environ, "CUDA_MODULE_LOADING": setting["loading"]}
        done = subprocess.run(
            [sys.executable, __file__, "--one", json.dumps(setting)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        row = json.loads(lines[-1]) if lines else {**setting, "error": done.stderr[-1500:]}
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
