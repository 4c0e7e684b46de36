"""Grading throughput on a GPU host (no Django needed): ratios against KernelBench's own
evaluation, evaluations per GPU-hour, and where one evaluation's wall time goes.

    python bench/throughput.py pairs [--tree var/device/kb] [--repeats 3] [--out FILE]
        [--no-compile-baseline] [--cli-again]
    python bench/throughput.py sweep [--tree var/device/kb] [--passes 2] [--deadline-s S]

pairs: (a) each (problem, solution) pair graded by our grader, once with children started cold
  and `--repeats` times with prepared children (a GPU worker's setting), and `--repeats` times by
  upstream KernelBench's eval_kernel_against_ref (5 correctness trials, 100 timed trials), each
  in a fresh process (bench/kernelbench_eval.py); the ratio of the medians per pair. Pairs:
  upstream's Triton add example, level1/19_ReLU with our Triton solution, the catalogue's silu.
  Each pair's upstream evaluation is timed as a whole process (process_s: interpreter, torch,
  compile, 5 correctness and 100 timed trials), as the command line's cold wall is.
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
import contextlib
import cProfile
import ctypes
import fcntl
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader import evaluate as _unused  # noqa: E402, F401

evaluate_module = sys.modules["grader.evaluate"]
from bench.prebuild import build_stage  # noqa: E402
from grader import EvaluateOptions, evaluate, load_task  # noqa: E402
from grader.options import CANDIDATE_ROUNDS  # noqa: E402

SILU_TRITON = REPO / "tests/evaluator/solutions/silu_triton.py"
SOLUTIONS = REPO / "bench/kernelbench_solutions"
TRACE: list[dict[str, Any]] = []
CLI = [sys.executable, "-m", "grader", "evaluate", "--json"]
DEVICE = ["cuda"]
# pairs: what the cold command line is given beside the task and the solution.
CLI_EXTRA: list[str] = []
# --trace: each child also reports its steps (EvaluateOptions.trace_steps).
STEP_TRACE = [False]


def traced_launch(original: Any) -> Any:
    """Every child's messages with their arrival time, relative to the child's launch."""

    def launch(self: Any, job: dict[str, Any], workdir: Path, *, sandboxed: bool) -> Any:
        launched = time.monotonic()
        outcome = original(self, job, workdir, sandboxed=sandboxed)
        events = [
            [m["event"], m.get("shape"), m.get("case"), round(m["received_at"] - launched, 3)]
            + ([m.get("stage"), m["seconds"]] if m["event"] == "steps" else [])
            for m in outcome.messages
        ]
        totals: dict[str, float] = {}
        for m in outcome.messages:
            if m["event"] == "steps":
                for name, seconds in m["seconds"].items():
                    totals[name] = round(totals.get(name, 0.0) + seconds, 3)
        TRACE.append({"role": job["role"], "events": events, "step_totals": totals})
        return outcome

    return launch


def kb_problem(tree: Path, number: int) -> Path | None:
    found = sorted((tree / "KernelBench/level1").glob(f"{number}_*.py"))
    return found[0] if found else None


def solution_number(path: Path) -> int:
    return int(path.name.split("_problem_")[1].split("_")[0])


PAIRS = REPO / "bench/kernelbench_pairs"


def pairs(tree: Path) -> list[tuple[str, Path | str, Path]]:
    """Issue 32's pairs: upstream's Triton add example, level1/88 GELU in Triton, level1/19 ReLU
    and level1/23 Softmax in CUDA (bench/kernelbench_pairs), and the catalogue's silu."""
    found: list[tuple[str, Path | str, Path]] = []
    prompts = tree / "src/kernelbench/prompts"
    if (prompts / "model_ex_add.py").is_file():
        add = (prompts / "model_ex_add.py", prompts / "model_new_ex_add_triton.py")
        found.append(("KernelBench add example (Triton)", *add))
    for number, name, solution in (
        (88, "level1/88_MinGPTNewGelu (Triton)", "level_1_problem_88_triton.py"),
        (19, "level1/19_ReLU (CUDA)", "level_1_problem_19_cuda.py"),
        (23, "level1/23_Softmax (CUDA)", "level_1_problem_23_cuda.py"),
    ):
        problem = kb_problem(tree, number)
        if problem is not None:
            found.append((name, problem, PAIRS / solution))
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
        # The graded shapes in the trace's order (its shape indices), visible first.
        "shapes": [{"shape": r.shape, "seen": r.seen} for r in result.per_shape],
        "device_outputs": result.environment.get("device_outputs"),
        "candidate_rounds": result.gates["correctness"].detail.get("candidate_rounds"),
        # Each prepared child's start (launch.start_report): a job handed before its child was
        # ready waited for the child's imports.
        "child_start": result.environment.get("child_start"),
        # Sharing the GPU (--evaluations-per-gpu): the room it took, its waits, its pauses.
        "gpu_share": result.environment.get("gpu_share"),
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
        row["step_totals"] = {t["role"]: t["step_totals"] for t in TRACE if t["step_totals"]}
        TRACE.clear()
    print(json.dumps({k: v for k, v in row.items() if k != "trace"}), flush=True)
    return row


def cli_run(
    task: Path | str, solution: Path, home: Path, mode: str = "cli", **labels: Any
) -> dict[str, Any]:
    """One evaluation from the command line in a fresh process, as a person runs it: the
    interpreter, torch and the children cold, the grader's caches those in `home` (empty for a
    machine's first evaluation of the task)."""
    started = time.monotonic()
    done = subprocess.run(
        [
            *CLI,
            *("--task", str(task), "--solution", str(solution), "--device", DEVICE[0]),
            *CLI_EXTRA,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **cold_caches(home)},
        check=False,
    )
    wall_s = round(time.monotonic() - started, 3)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {**labels, "mode": mode, "wall_s": wall_s, "error": done.stderr[-3000:]}
    row = {
        **labels,
        "mode": mode,
        "status": result["status"],
        "wall_s": wall_s,
        "evaluation_wall_s": result["wall_s"],
        "phases": result["phases"],
        "bytes": _bytes(result["gates"]["correctness"]["detail"]),
        "compile_warmup": result["environment"].get("compile_warmup"),
        # Each child's start, in seconds from the evaluation's (launch.start_report).
        "child_start": result["environment"].get("child_start"),
        "speedup_vs_compile": result["summary"].get("speedup_vs_compile"),
    }
    print(json.dumps(row), flush=True)
    return row


def prepare_install(home: Path) -> dict[str, Any]:
    """The host's install step (`python -m grader prepare`) with `home`'s caches, before its
    first evaluation: its report and wall."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "grader", "prepare", "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **cold_caches(home)},
        check=False,
    )
    row = {"wall_s": round(time.monotonic() - started, 1), "exit": done.returncode}
    with contextlib.suppress(ValueError):
        row.update(json.loads(done.stdout))
    print(json.dumps({"prepare": row}), flush=True)
    return row


def cold_caches(home: Path) -> dict[str, str]:
    """Every cache a first evaluation on a machine finds empty: Triton's kernels, the built
    CUDA extensions, torch.compile's, and the grader's own baselines and probes."""
    return {
        "TRITON_CACHE_DIR": str(home / "triton"),
        "TORCH_EXTENSIONS_DIR": str(home / "torch_extensions"),
        "TORCHINDUCTOR_CACHE_DIR": str(home / "inductor"),
        "ARENA_BASELINE_CACHE": str(home / "baselines.json"),
        "ARENA_PROBE_CACHE": str(home / "probes.json"),
        "ARENA_JUDGE_KERNEL_CACHE": str(home / "judge-kernels"),
    }


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
                **cold_caches(Path(cache)),
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
    # The machine's first reads of torch's and triton's libraries are neither side's: on a
    # fresh host the first pair's cold command line would pay them alone (KernelBench's
    # evaluations run after it), as it did on one H100 host (bench/results/README.md).
    subprocess.run([sys.executable, "-c", "import torch, triton"], check=False, timeout=600)
    table = []
    for name, task, solution in pairs(args.tree):
        if args.only and not any(part.lower() in name.lower() for part in args.only.split(",")):
            continue
        spec = load_task(task)
        # Cold from the command line, a fresh process per evaluation. Again (--cli-again): the
        # next solution of the same task on this machine, in a fresh process with the grader's
        # caches the first left (baselines, probe verdicts, the judge's kernels); the
        # candidate's own Triton cache is new in every evaluation.
        cold = again = prepared_install = None
        with tempfile.TemporaryDirectory() as home:
            if args.prepare:
                prepared_install = prepare_install(Path(home))
            if not args.no_cold:
                cold = cli_run(task, solution, Path(home), pair=name)
                if args.cli_again:
                    again = cli_run(task, solution, Path(home), mode="cli_again", pair=name)
        options = EvaluateOptions(prepared=True, trace_steps=STEP_TRACE[0])
        ours = [
            grade(spec, solution, options, pair=name, mode="prepared") for _ in range(args.repeats)
        ]
        kb = (
            []
            if isinstance(task, str)
            else [kb_eval(args.tree, task, solution) for _ in range(args.kb_repeats)]
        )
        ours_s = statistics.median(r["wall_s"] for r in ours) if ours else None
        kb_s = [r["wall_s"] for r in kb if "wall_s" in r]
        # A cold command line is a whole process; so is upstream's evaluation, timed whole.
        kb_process = [r["process_s"] for r in kb if "process_s" in r]
        table.append(
            {
                "pair": name,
                "ours_cold_s": cold["wall_s"] if cold else None,
                "ours_prepared_median_s": round(ours_s, 3) if ours_s else None,
                "kernelbench_median_s": round(statistics.median(kb_s), 3) if kb_s else None,
                "kernelbench_process_median_s": (
                    round(statistics.median(kb_process), 3) if kb_process else None
                ),
                "ratio": round(ours_s / statistics.median(kb_s), 2) if kb_s and ours_s else None,
                "cold_cli_ratio": (
                    round(cold["wall_s"] / statistics.median(kb_process), 2)
                    if kb_process and cold
                    else None
                ),
                # The install step run before the cold command line (--prepare), not in it.
                "prepare": prepared_install,
                "ours_cli_again_s": again["wall_s"] if again else None,
                "cli_again_ratio": (
                    round(again["wall_s"] / statistics.median(kb_process), 2)
                    if kb_process and again
                    else None
                ),
                "speedups": [r["speedup_vs_eager"] for r in ours],
                "rows": [r for r in (cold, again) if r] + ours,
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
    """`--part I/N` grades every Nth of the whole list (our solutions, then references as
    solutions up to `--problems`) from the Ith, so N GPUs of one host share one sweep."""
    specs = []
    every = sorted(SOLUTIONS.glob("level_1_problem_*_sample_0_kernel.py"), key=solution_number)
    for solution in every:
        problem = kb_problem(args.tree, solution_number(solution))
        if problem is not None:
            specs.append((problem.stem, load_task(problem), solution, problem))
    if args.problems > len(specs):
        ours = {solution_number(s) for s in every}
        folder = Path(tempfile.mkdtemp(prefix="bench-references-"))
        specs += reference_solutions(args.tree, ours, args.problems - len(specs), folder)
    if args.only:
        specs = [s for s in specs if any(part in s[0] for part in args.only.split(","))]
    index, count = (int(x) for x in args.part.split("/"))
    queued = args.queue and args.barrier is not None and args.evaluations_per_gpu > 1
    if queued:
        # The GPU's parts (K in a row) share its problems, each taking the next from one queue.
        per_gpu = args.evaluations_per_gpu
        specs = specs[index // per_gpu :: max(count // per_gpu, 1)]
    else:
        specs = specs[index::count]
    cache = Path(tempfile.mkdtemp(prefix="bench-builds-"))
    try:
        built = build_stage([(spec, solution) for _, spec, solution, _ in specs], cache)
    except Exception as exc:  # the sweep still runs; CUDA solutions then build as they load
        built = {"error": repr(exc)}
    # A GPU worker's settings: children prepared ahead and a warm judge.
    options = EvaluateOptions(
        prepared=True,
        warm_judge=True,
        build_cache=str(cache),
        compile_baseline=False,
        trace_steps=STEP_TRACE[0],
        evaluations_per_gpu=args.evaluations_per_gpu,
        device_ahead=not args.no_device_ahead,
        candidate_rounds=args.candidate_rounds,
    )
    passes = []
    deadline = time.monotonic() + args.deadline_s
    for number in range(args.passes):
        if args.barrier is not None:
            _barrier(args.barrier, number, args.evaluations_per_gpu, deadline)
        started = time.monotonic()
        rows = []
        # The last pass's grading process (its main thread) under cProfile, where asked.
        profiler = cProfile.Profile() if args.profile and number == args.passes - 1 else None
        taken = _queue(specs, args.barrier / f"queue-{number}") if queued else iter(specs)
        emptied = True
        with GpuBusy() as busy:
            for name, spec, solution, _ in taken:
                if time.monotonic() > deadline:
                    emptied = False
                    break
                began = time.monotonic()
                if profiler is not None:
                    profiler.enable()
                rows.append(grade(spec, solution, options, problem=name, pass_=number))
                if profiler is not None:
                    profiler.disable()
                rows[-1]["gpu_busy_share"] = busy.share(began, time.monotonic())
        if profiler is not None and rows:
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(80)
            args.profile.write_text(text.getvalue())
        if not rows:
            break
        wall_s = time.monotonic() - started
        passes.append(
            {
                "pass": number,
                "complete": emptied if queued else len(rows) == len(specs),
                "evaluations": len(rows),
                "wall_s": round(wall_s, 1),
                # The host's monotonic clock, shared by the parts that grade on one GPU at once.
                "started_at": round(started, 3),
                "ended_at": round(started + wall_s, 3),
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


def _queue(specs: list[Any], counter: Path) -> Iterator[Any]:
    """`specs` taken one at a time by every part that shares `counter`, as a deployment's
    workers take the next job from one queue: each part grades the next one no part took."""
    lock = counter.with_suffix(".lock")
    while True:
        with lock.open("a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            taken = int(counter.read_text() or 0) if counter.exists() else 0
            counter.write_text(str(taken + 1))
        if taken >= len(specs):
            return
        yield specs[taken]


def _barrier(folder: Path, number: int, parties: int, deadline: float) -> None:
    """The parts that share one GPU start each pass together (or at the deadline), so that a
    pass's wall on that GPU is its own evaluations' and not the last pass's tail."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"pass-{number}-{os.getpid()}").touch()
    while len(list(folder.glob(f"pass-{number}-*"))) < parties and time.monotonic() < deadline:
        time.sleep(0.05)


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class GpuBusy:
    """The GPU's busy share while a pass runs: NVML's utilization.gpu (the share of its last
    sample period in which a kernel was running), read every 50 ms on a thread of its own and
    stamped, so that one evaluation's share can be taken from its own window."""

    PERIOD_S = 0.05

    def __enter__(self) -> "GpuBusy":
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        # NVML numbers GPUs as the host does; CUDA_VISIBLE_DEVICES names the one in use.
        index = int((os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0])
        try:
            self._nvml = ctypes.CDLL("libnvidia-ml.so.1")
            self._handle = ctypes.c_void_p()
            if self._nvml.nvmlInit_v2() or self._nvml.nvmlDeviceGetHandleByIndex_v2(
                index, ctypes.byref(self._handle)
            ):
                raise OSError("NVML refused")
        except (OSError, ValueError):
            self._thread: threading.Thread | None = None
            return self
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        rates = _Utilization()
        while not self._stop.wait(self.PERIOD_S):
            if not self._nvml.nvmlDeviceGetUtilizationRates(self._handle, ctypes.byref(rates)):
                self.samples.append((time.monotonic(), float(rates.gpu)))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def share(self, start: float = 0.0, end: float = float("inf")) -> float | None:
        values = [v for t, v in self.samples if start <= t <= end]
        return round(statistics.mean(values) / 100, 3) if values else None


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


def merge(paths: list[Path]) -> dict[str, Any]:
    """The parts of one sweep, each graded on a GPU of one host (`--part`), as one: per pass,
    evaluations per GPU-hour over all of them (evaluations / the GPUs' summed wall). Parts that
    graded on one GPU at once (`--evaluations-per-gpu`) count that GPU's wall once: from their
    pass's first start to its last end."""
    parts = [json.loads(p.read_text()) for p in paths]
    passes = []
    for number in range(max(len(p.get("passes", [])) for p in parts)):
        got = [p for p in parts if len(p.get("passes", [])) > number]
        rows = [r for p in got for r in p["passes"][number]["rows"]]
        walls = _gpu_walls(got, number)
        wall = sum(walls.values())
        busy = [r["gpu_busy_share"] for r in rows if r.get("gpu_busy_share") is not None]
        weighted = [
            (p["passes"][number]["gpu_busy_share"], p["passes"][number]["wall_s"])
            for p in got
            if p["passes"][number]["gpu_busy_share"] is not None
        ]
        passes.append(
            {
                "pass": number,
                "parts": len(got),
                "gpus": len(walls),
                "complete": all(p["passes"][number]["complete"] for p in got)
                and len(got) == len(parts),
                "evaluations": len(rows),
                "gpu_wall_s": round(wall, 1),
                "evaluations_per_gpu_hour": round(len(rows) * 3600 / wall, 1) if wall else None,
                "gpu_busy_share": (
                    round(sum(b * w for b, w in weighted) / sum(w for _, w in weighted), 3)
                    if weighted
                    else None
                ),
                "gpu_busy_share_median_evaluation": (
                    round(statistics.median(busy), 3) if busy else None
                ),
                "statuses": {
                    s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}
                },
                "phase_medians_s": phase_medians(rows) if rows else {},
            }
        )
    return {
        "gpu": parts[0]["gpu"],
        "torch": parts[0]["torch"],
        "evaluations_per_gpu": max(p.get("evaluations_per_gpu", 1) for p in parts),
        "commands": [p["command"] for p in parts],
        "passes": passes,
        "parts": parts,
    }


def _gpu_walls(parts: list[dict[str, Any]], number: int) -> dict[str, float]:
    """Each GPU's wall for a pass: one part's own, or the span of the parts that shared it."""
    walls: dict[str, float] = {}
    for index, part in enumerate(parts):
        got = part["passes"][number]
        gpu = str(part.get("cuda_visible_devices", f"part-{index}"))
        if part.get("evaluations_per_gpu", 1) == 1 or "started_at" not in got:
            walls[f"{gpu}-{index}"] = got["wall_s"]
            continue
        spans = [
            p["passes"][number]
            for p in parts
            if str(p.get("cuda_visible_devices")) == gpu and "started_at" in p["passes"][number]
        ]
        walls[gpu] = max(s["ended_at"] for s in spans) - min(s["started_at"] for s in spans)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["pairs", "sweep", "merge"])
    parser.add_argument("parts", nargs="*", type=Path, help="merge: the sweep parts' files")
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
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="pairs: the install step (python -m grader prepare) before each cold evaluation",
    )
    parser.add_argument(
        "--only", default="", help="pairs, or sweep problems, whose name holds one of these (a,b)"
    )
    parser.add_argument(
        "--cli-again",
        action="store_true",
        help="pairs: a second command line of each task after the cold one, its caches kept",
    )
    parser.add_argument(
        "--no-compile-baseline",
        action="store_true",
        help="pairs: the cold command line without torch.compile's baseline",
    )
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the bench itself")
    parser.add_argument("--part", default="0/1", help="sweep: every Nth solution from the Ith")
    parser.add_argument(
        "--deadline-s", type=float, default=float("inf"), help="sweep: no grading starts after"
    )
    parser.add_argument(
        "--evaluations-per-gpu",
        type=int,
        default=1,
        help="sweep: this part grades on a GPU shared with this many parts at once (gpu_share.py)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="sweep: the last pass's grading process under cProfile, its statistics to this file",
    )
    parser.add_argument(
        "--no-device-ahead",
        action="store_true",
        help="sweep: the candidate's job makes CUDA's context, not its prepared child",
    )
    parser.add_argument(
        "--candidate-rounds",
        choices=CANDIDATE_ROUNDS,
        default="auto",
        help="sweep: EvaluateOptions.candidate_rounds (two candidate rounds where a plan's "
        "outputs pass the device budget)",
    )
    parser.add_argument(
        "--barrier", type=Path, default=None, help="sweep: the folder the GPU's parts meet in"
    )
    parser.add_argument(
        "--queue",
        action="store_true",
        help="sweep: the parts that share a GPU take its problems from one queue, not in turn",
    )
    args = parser.parse_args()
    if args.mode == "merge":
        merged = merge(args.parts)
        out = (
            args.out
            or REPO / f"bench/results/throughput-sweep-{merged['gpu'].replace(' ', '-')}.json"
        )
        out.write_text(json.dumps(merged, indent=1))
        print(json.dumps([{k: v for k, v in p.items()} for p in merged["passes"]]))
        return 0
    DEVICE[0] = args.device
    if args.no_compile_baseline:
        CLI_EXTRA.append("--no-compile-baseline")
    import torch

    if args.trace:
        STEP_TRACE[0] = True
        evaluate_module._Evaluation._launch = traced_launch(evaluate_module._Evaluation._launch)
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    figures = run_pairs(args) if args.mode == "pairs" else run_sweep(args)
    rows = [r for p in figures.get("pairs", []) for r in p["rows"] if r and r["mode"] == "prepared"]
    rows += [r for p in figures.get("passes", [])[1:] for r in p["rows"]]
    report = {
        "gpu": gpu,
        "torch": torch.__version__,
        "command": " ".join(sys.argv),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        "evaluations_per_gpu": args.evaluations_per_gpu,
        "median_phases_s": phase_medians(rows) if rows else {},
        **figures,
    }
    out = args.out or REPO / f"bench/results/throughput-{args.mode}-{gpu.replace(' ', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report["median_phases_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
