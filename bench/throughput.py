"""Grading throughput on a GPU host (no Django needed): ratios against KernelBench's own
evaluation, evaluations per GPU-hour, and where one evaluation's wall time goes.

    python bench/throughput.py pairs [--tree var/device/kb] [--repeats 3] [--out FILE]
    python bench/throughput.py sweep [--tree var/device/kb] [--passes 2] [--deadline-s S]

pairs: (a) each (problem, solution) pair graded by our grader, once with children started cold
  and `--repeats` times with prepared children (a GPU worker's setting), and `--repeats` times by
  upstream KernelBench's eval_kernel_against_ref (5 correctness trials, 100 timed trials), each
  in a fresh process (bench/kernelbench_eval.py); the ratio of the medians per pair. Pairs:
  upstream's Triton add example, level1/19_ReLU with our Triton solution, the catalogue's silu.
sweep: (b) every solution in bench/kernelbench_solutions (Triton and CUDA, written by us for
  upstream's level-1 problems), the CUDA ones first built on the CPU cores as the build stage
  does, then graded one after another in one process with prepared children (torch.compile
  baselines left out: they are computed once per task and shape, not per grading),
  `--passes` times: the first pass fills the judge's caches (probe verdicts, eager and compiled
  baselines per shape), the later ones are the steady state of a leaderboard that grades many
  agents on the same tasks. Evaluations per GPU-hour per pass.
Both (c): each result's phases (setup, probe, the candidate's start-up, compile, correctness and
timing, judge, other) and the bench's own store of the JSON line; medians per phase.
--trace adds every child's messages with their arrival times to each row.
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
sys.path.insert(0, str(REPO))

from grader import evaluate as _unused  # noqa: E402, F401

evaluate_module = sys.modules["grader.evaluate"]
from bench.prebuild import build_stage  # noqa: E402
from grader import EvaluateOptions, evaluate, load_task  # noqa: E402

SILU_TRITON = REPO / "tests/evaluator/solutions/silu_triton.py"
SOLUTIONS = REPO / "bench/kernelbench_solutions"
TRACE: list[dict[str, Any]] = []
CLI = [sys.executable, "-m", "grader", "evaluate", "--json"]
NVIDIA_SMI_BUSY = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]
DEVICE = ["cuda"]


def traced_launch(original: Any) -> Any:
    """Every child's messages with their arrival time, relative to the child's launch."""

    def launch(self: Any, job: dict[str, Any], workdir: Path, *, sandboxed: bool) -> Any:
        launched = time.monotonic()
        outcome = original(self, job, workdir, sandboxed=sandboxed)
        events = [
            [m["event"], m.get("shape"), m.get("case"), round(m["received_at"] - launched, 3)]
            for m in outcome.messages
        ]
        TRACE.append({"role": job["role"], "events": events})
        return outcome

    return launch


def kb_problem(tree: Path, number: int) -> Path | None:
    found = sorted((tree / "KernelBench/level1").glob(f"{number}_*.py"))
    return found[0] if found else None


def solution_number(path: Path) -> int:
    return int(path.name.split("_problem_")[1].split("_")[0])


def pairs(tree: Path) -> list[tuple[str, Path | str, Path]]:
    found: list[tuple[str, Path | str, Path]] = []
    prompts = tree / "src/kernelbench/prompts"
    if (prompts / "model_ex_add.py").is_file():
        add = (prompts / "model_ex_add.py", prompts / "model_new_ex_add_triton.py")
        found.append(("KernelBench add example (Triton)", *add))
    relu = kb_problem(tree, 19)
    if relu is not None:
        found.append(("level1/19_ReLU (Triton)", relu, SOLUTIONS / (LEVEL1 % 19)))
    gelu = kb_problem(tree, 88)
    if gelu is not None:
        found.append(("level1/88_MinGPTNewGelu (CUDA)", gelu, SOLUTIONS / (LEVEL1 % 88)))
    found.append(("catalogue silu (Triton)", "silu", SILU_TRITON))
    return found


LEVEL1 = "level_1_problem_%d_sample_0_kernel.py"


def grade(task: Any, solution: Path, options: EvaluateOptions, **labels: Any) -> dict[str, Any]:
    started = time.monotonic()
    result = evaluate(task, solution, DEVICE[0], options)
    wall_s = time.monotonic() - started
    row = {
        **labels,
        "status": result.status,
        "ranked": result.ranked,
        "speedup_vs_eager": result.summary.get("speedup_vs_eager"),
        "wall_s": round(wall_s, 3),
        "phases": dict(result.phases),
        "gates": {k: [g.passed, g.reason[:200]] for k, g in result.gates.items()},
        "flags": [f.code for f in result.flags],
        "bytes": _bytes(result.gates["correctness"].detail),
        "device_outputs": result.environment.get("device_outputs"),
    }
    stored = time.monotonic()
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as fh:  # what grade_suite writes
        fh.write(json.dumps(result.to_dict()) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    row["phases"]["store"] = round(time.monotonic() - stored, 3)
    row["phases"]["queue"] = 0.0  # one after another in this process: no queue
    if TRACE:
        row["trace"] = list(TRACE)
        TRACE.clear()
    print(json.dumps({k: v for k, v in row.items() if k != "trace"}), flush=True)
    return row


def cli_cold(task: Path | str, solution: Path, **labels: Any) -> dict[str, Any]:
    """One evaluation from the command line in a fresh process, as a person runs it: the
    interpreter, torch, the children and the Triton cache all cold."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(
            [*CLI, "--task", str(task), "--solution", str(solution), "--device", DEVICE[0]],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "TRITON_CACHE_DIR": home},
            check=False,
        )
    wall_s = round(time.monotonic() - started, 3)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {**labels, "mode": "cli", "wall_s": wall_s, "error": done.stderr[-3000:]}
    row = {
        **labels,
        "mode": "cli",
        "status": result["status"],
        "wall_s": wall_s,
        "evaluation_wall_s": result["wall_s"],
        "phases": result["phases"],
        "bytes": _bytes(result["gates"]["correctness"]["detail"]),
    }
    print(json.dumps(row), flush=True)
    return row


def _bytes(detail: dict[str, Any]) -> dict[str, Any]:
    keys = ("bytes_planned", "bytes_budget", "bytes_compared", "bytes_on_device")
    return {k: detail.get(k) for k in keys}


def kb_eval(tree: Path, problem: Path, solution: Path) -> dict[str, Any]:
    backend = "triton" if "import triton" in solution.read_text() else "cuda"
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run(
            [
                sys.executable,
                str(REPO / "bench/kernelbench_eval.py"),
                *("--tree", str(tree), "--problem", str(problem), "--solution", str(solution)),
                *("--backend", backend),
            ],
            capture_output=True,
            text=True,
            env={
                **os.environ,
                "TRITON_CACHE_DIR": cache,
                "PYTHONPATH": os.environ.get("KB_SITE", ""),
            },
            check=False,
        )
    line = next((x for x in done.stdout.splitlines() if x.startswith("KB_RESULT ")), None)
    if line is None:
        return {"error": (done.stdout + done.stderr)[-3000:]}
    process_s = round(time.monotonic() - started, 3)
    row = {**json.loads(line.removeprefix("KB_RESULT ")), "process_s": process_s}
    print(json.dumps({"kernelbench": row}), flush=True)
    return row


def run_pairs(args: argparse.Namespace) -> dict[str, Any]:
    table = []
    for name, task, solution in pairs(args.tree):
        if args.only not in name:
            continue
        spec = load_task(task)
        # Cold from the command line, a fresh process per evaluation.
        cold = None if args.no_cold else cli_cold(task, solution, pair=name)
        ours = [
            grade(spec, solution, EvaluateOptions(prepared=True), pair=name, mode="prepared")
            for _ in range(args.repeats)
        ]
        kb = (
            []
            if isinstance(task, str)
            else [kb_eval(args.tree, task, solution) for _ in range(args.kb_repeats)]
        )
        ours_s = statistics.median(r["wall_s"] for r in ours)
        kb_s = [r["wall_s"] for r in kb if "wall_s" in r]
        table.append(
            {
                "pair": name,
                "ours_cold_s": cold["wall_s"] if cold else None,
                "ours_prepared_median_s": round(ours_s, 3),
                "kernelbench_median_s": round(statistics.median(kb_s), 3) if kb_s else None,
                "ratio": round(ours_s / statistics.median(kb_s), 2) if kb_s else None,
                "cold_cli_ratio": (
                    round(cold["wall_s"] / statistics.median(kb_s), 2) if kb_s and cold else None
                ),
                "speedups": [r["speedup_vs_eager"] for r in ours],
                "rows": [cold, *ours] if cold else ours,
                "kernelbench_rows": kb,
            }
        )
    return {"pairs": table}


def reference_solutions(tree: Path, taken: set[int], needed: int, folder: Path) -> list[Any]:
    """Level-1 problems with no solution of ours, graded with their reference as the solution
    (ModelNew = Model: every gate runs; it is flagged no_own_kernel, as a torch-only solution
    must be), in problem order, until `needed`."""
    found: list[Any] = []
    problems = sorted(
        (tree / "KernelBench/level1").glob("*.py"), key=lambda p: int(p.stem.split("_")[0])
    )
    for problem in problems:
        if len(found) >= needed:
            break
        if int(problem.stem.split("_")[0]) in taken:
            continue
        solution = folder / f"{problem.stem}_reference_as_solution.py"
        solution.write_text(problem.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
        found.append((problem.stem, load_task(problem), solution, problem))
    return found


def run_sweep(args: argparse.Namespace) -> dict[str, Any]:
    specs = []
    index, count = (int(x) for x in args.part.split("/"))
    every = sorted(SOLUTIONS.glob("level_1_problem_*_sample_0_kernel.py"), key=solution_number)
    for solution in every[index::count]:
        problem = kb_problem(args.tree, solution_number(solution))
        if problem is not None:
            specs.append((problem.stem, load_task(problem), solution, problem))
    if args.problems > len(specs):
        taken = {solution_number(s) for s in every}
        folder = Path(tempfile.mkdtemp(prefix="bench-references-"))
        specs += reference_solutions(args.tree, taken, args.problems - len(specs), folder)
    cache = Path(tempfile.mkdtemp(prefix="bench-builds-"))
    try:
        built = build_stage([(spec, solution) for _, spec, solution, _ in specs], cache)
    except Exception as exc:  # the sweep still runs; CUDA solutions then build as they load
        built = {"error": repr(exc)}
    options = EvaluateOptions(prepared=True, build_cache=str(cache), compile_baseline=False)
    passes = []
    deadline = time.monotonic() + args.deadline_s
    for number in range(args.passes):
        started = time.monotonic()
        rows = []
        with GpuBusy() as busy:
            for name, spec, solution, _ in specs:
                if time.monotonic() > deadline:
                    break
                rows.append(grade(spec, solution, options, problem=name, pass_=number))
        if not rows:
            break
        wall_s = time.monotonic() - started
        passes.append(
            {
                "pass": number,
                "complete": len(rows) == len(specs),
                "evaluations": len(rows),
                "wall_s": round(wall_s, 1),
                "evaluations_per_gpu_hour": round(len(rows) * 3600 / wall_s, 1),
                "gpu_busy_share": busy.share(),
                "gpu_busy_samples": len(busy.samples),
                "bytes_compared_median": _median_of(rows, "bytes_compared"),
                "bytes_on_device_share": _on_device_share(rows),
                "statuses": {
                    s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}
                },
                "rows": rows,
            }
        )
        print(json.dumps({k: v for k, v in passes[-1].items() if k != "rows"}), flush=True)
    return {"build_stage": built, "passes": passes}


class GpuBusy:
    """The GPU's busy share while a pass runs: NVML's utilization.gpu (the share of each sample
    period in which a kernel was running), sampled every 100 ms by nvidia-smi."""

    def __enter__(self) -> "GpuBusy":
        self.samples: list[float] = []
        try:
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                [*NVIDIA_SMI_BUSY, "-lms", "100", "-i", "0"],
                stdout=subprocess.PIPE,
                text=True,
            )
        except OSError:
            self.proc = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=10)
        self.samples = [float(x) for x in out.split() if x.strip().replace(".", "").isdigit()]

    def share(self) -> float | None:
        return round(statistics.mean(self.samples) / 100, 3) if self.samples else None


def _median_of(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r["bytes"][key] for r in rows if r.get("bytes", {}).get(key) is not None]
    return statistics.median(values) if values else None


def _on_device_share(rows: list[dict[str, Any]]) -> float | None:
    compared = sum(r["bytes"].get("bytes_compared") or 0 for r in rows if r.get("bytes"))
    device = sum(r["bytes"].get("bytes_on_device") or 0 for r in rows if r.get("bytes"))
    return round(device / compared, 3) if compared else None


def phase_medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    names = sorted({k for row in rows for k in row["phases"]})
    return {n: round(statistics.median(r["phases"].get(n, 0.0) for r in rows), 3) for n in names}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["pairs", "sweep"])
    parser.add_argument("--tree", type=Path, default=REPO / "var/device/kb")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kb-repeats", type=int, default=3, help="pairs: upstream's evaluations")
    parser.add_argument(
        "--problems", type=int, default=40, help="sweep: at least this many level-1 problems"
    )
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--no-cold", action="store_true", help="pairs: no cold evaluation")
    parser.add_argument("--only", default="", help="pairs whose name holds this")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the bench itself")
    parser.add_argument("--part", default="0/1", help="sweep: every Nth solution from the Ith")
    parser.add_argument(
        "--deadline-s", type=float, default=float("inf"), help="sweep: no grading starts after"
    )
    args = parser.parse_args()
    DEVICE[0] = args.device
    import torch

    if args.trace:
        evaluate_module._Evaluation._launch = traced_launch(evaluate_module._Evaluation._launch)
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    figures = run_pairs(args) if args.mode == "pairs" else run_sweep(args)
    rows = [r for p in figures.get("pairs", []) for r in p["rows"] if r and r["mode"] == "prepared"]
    rows += [r for p in figures.get("passes", [])[1:] for r in p["rows"]]
    report = {
        "gpu": gpu,
        "torch": torch.__version__,
        "command": " ".join(sys.argv),
        "median_phases_s": phase_medians(rows) if rows else {},
        **figures,
    }
    out = args.out or REPO / f"bench/results/throughput-{args.mode}-{gpu.replace(' ', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report["median_phases_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
