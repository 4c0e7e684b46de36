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
- `compile_<problem>_default` / `compile_<problem>_one_thread` (`--problem FILE`, repeatable):
  a KernelBench problem's Model compiled the same two ways; each run reports the whole step,
  then the compiler's import (torch._dynamo, inductor) and the first compiled call apart;
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
    "compile_problem": """
import importlib.util, sys, time, torch
spec = importlib.util.spec_from_file_location("problem", sys.argv[1])
problem = importlib.util.module_from_spec(spec)
spec.loader.exec_module(problem)
torch.manual_seed(0)
model = problem.Model(*problem.get_init_inputs()).cuda().eval()
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
torch.cuda.synchronize()
t = time.monotonic()
import torch._dynamo, torch._inductor.compile_fx
imported = time.monotonic()
with torch.no_grad():
    torch.compile(model)(*inputs)
torch.cuda.synchronize()
done = time.monotonic()
print("STEP", done - t, imported - t, done - imported)
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


def run(code: str, env: dict[str, str], *args: str) -> tuple[float, list[float]]:
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
            [sys.executable, str(script), *args],
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
    parser.add_argument("--problem", type=Path, action="append", default=[])
    parser.add_argument("--only-compile", action="store_true", help="the compile steps alone")
    args = parser.parse_args()
    rows: dict[str, Any] = {}

    def record(name: str, values: list[float]) -> None:
        rows[name] = {"median_s": round(statistics.median(values), 3), "runs_s": values}
        print(json.dumps({name: rows[name]}), flush=True)

    one = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
    if not args.only_compile:
        record("import", [round(run(STEPS["import"], {})[0], 3) for _ in range(args.repeats)])
        for name in ("profiler", "context", "triton_jit"):
            record(name, [round(run(STEPS[name], {})[1][0], 3) for _ in range(args.repeats)])
        for label, env in (("default", {}), ("one_thread", one)):
            record(
                f"compile_{label}",
                [round(run(STEPS["compile"], env)[1][0], 3) for _ in range(args.repeats)],
            )
    for problem in args.problem:
        for label, env in (("default", {}), ("one_thread", one)):
            step = STEPS["compile_problem"]
            runs = [run(step, env, str(problem))[1] for _ in range(args.repeats)]
            name = f"compile_{problem.stem}_{label}"
            record(name, [round(r[0], 3) for r in runs])
            record(f"{name}_import", [round(r[1], 3) for r in runs])
            record(f"{name}_first_call", [round(r[2], 3) for r in runs])
    if args.only_compile:
        return _write(args.out, rows)
    record("children_3", [round(three_at_once(), 3) for _ in range(args.repeats)])
    collected = [run(STEPS["gc_collect"], {})[1] for _ in range(args.repeats)]
    record("gc_collect", [round(c[0], 4) for c in collected])
    record("gc_collect_frozen", [round(c[1], 6) for c in collected])
    return _write(args.out, rows)


def _write(out: Path | None, rows: dict[str, Any]) -> int:
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"host": os.uname().nodename, "steps": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
