"""Where a cold evaluation's start-up goes, on the host this runs on (a GPU host; no Django):

    python bench/cold_start.py [--repeats 3] [--out FILE]

Each step runs in a fresh interpreter with empty caches (Triton, inductor, extensions), as the
command line's first run on a machine does, `--repeats` times (medians):
- `import`: a grader child's imports (torch, triton, the grader's roles);
- `profiler`: its profiler warm-up (prepared children do it before their job);
- `context`: the CUDA context's creation and a first allocation;
- `children_3`: three children's imports at once, as the command line starts them;
- `compile_default` / `compile_one_thread`: torch.compile of a one-kernel model (x + y on
  4096 x 4096) on a cold inductor cache, with inductor's compile workers and with
  TORCHINDUCTOR_COMPILE_THREADS=1 (in-process);
- `triton_jit`: the first call of a Triton kernel on a cold Triton cache (compile and launch);
- `gc_collect`: one gc.collect() after the child's imports, and after gc.freeze().
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

STEPS = {
    "import": "import grader.child",
    "profiler": """
import grader.child, torch, time
t = time.monotonic()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
    torch.ones(1).add_(1)
print("STEP", time.monotonic() - t)
""",
    "context": """
import torch, time
t = time.monotonic()
torch.empty(1, device="cuda")
torch.cuda.synchronize()
print("STEP", time.monotonic() - t)
""",
    "compile": """
import torch, time
class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y
x, y = (torch.randn(4096, 4096, device="cuda") for _ in range(2))
torch.cuda.synchronize()
t = time.monotonic()
torch.compile(Model())(x, y)
torch.cuda.synchronize()
print("STEP", time.monotonic() - t)
""",
    "triton_jit": """
import torch, triton, triton.language as tl, time
@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)
x, y = (torch.randn(1 << 20, device="cuda") for _ in range(2))
out = torch.empty_like(x)
torch.cuda.synchronize()
t = time.monotonic()
add[(x.numel() // 1024,)](x, y, out, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
print("STEP", time.monotonic() - t)
""",
    "gc_collect": """
import gc, time, grader.child
t = time.monotonic(); gc.collect(); plain = time.monotonic() - t
gc.freeze()
t = time.monotonic(); gc.collect(); frozen = time.monotonic() - t
print("STEP", plain, frozen)
""",
}


def run(code: str, env: dict[str, str]) -> tuple[float, list[float]]:
    """(the process's wall, the numbers its STEP line printed)"""
    with tempfile.TemporaryDirectory() as cache:
        cold = {
            "TRITON_CACHE_DIR": f"{cache}/triton",
            "TORCHINDUCTOR_CACHE_DIR": f"{cache}/inductor",
            "TORCH_EXTENSIONS_DIR": f"{cache}/ext",
            "PYTHONPATH": str(REPO),
        }
        script = Path(cache) / "step.py"  # Triton reads a kernel's source from its file
        script.write_text(code)
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            env={**os.environ, **cold, **env},
            check=False,
        )
        wall = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    line = next((x for x in done.stdout.splitlines() if x.startswith("STEP")), "STEP")
    return wall, [float(v) for v in line.split()[1:]]


def three_at_once() -> float:
    started = time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STEPS["import"]], env={**os.environ, "PYTHONPATH": str(REPO)}
        )
        for _ in range(3)
    ]
    for proc in procs:
        proc.wait()
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows: dict[str, Any] = {}

    def record(name: str, values: list[float]) -> None:
        rows[name] = {"median_s": round(statistics.median(values), 3), "runs_s": values}
        print(json.dumps({name: rows[name]}), flush=True)

    record("import", [round(run(STEPS["import"], {})[0], 3) for _ in range(args.repeats)])
    for name in ("profiler", "context", "triton_jit"):
        record(name, [round(run(STEPS[name], {})[1][0], 3) for _ in range(args.repeats)])
    record(
        "compile_default", [round(run(STEPS["compile"], {})[1][0], 3) for _ in range(args.repeats)]
    )
    one = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
    record(
        "compile_one_thread",
        [round(run(STEPS["compile"], one)[1][0], 3) for _ in range(args.repeats)],
    )
    record("children_3", [round(three_at_once(), 3) for _ in range(args.repeats)])
    collected = [run(STEPS["gc_collect"], {})[1] for _ in range(args.repeats)]
    record("gc_collect", [round(c[0], 4) for c in collected])
    record("gc_collect_frozen", [round(c[1], 6) for c in collected])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"host": os.uname().nodename, "steps": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
