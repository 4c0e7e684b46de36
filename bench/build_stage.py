"""The two-stage evaluation on a GPU host (no Django needed): builds on the CPU, grading on the GPU.

    python bench/build_stage.py [--solutions 30] [--builders 8] [--no-cold] [--out FILE]

Solutions: CUDA load_inline SiLU kernels (tests/evaluator/gpu/solutions/silu_cuda_inline.py),
each under an extension name of its own so that every one is a new source, graded against the
catalogue's silu with every gate on.
1. cold: one solution graded with no build cache, as before the build stage (nvcc runs on the
   GPU worker's clock, inside the candidate's child);
2. pipeline: `--builders` build processes (the build stage, one process each as build workers
   are: CUDA hidden, TORCH_CUDA_ARCH_LIST from the GPU's compute capability) work through the
   queue while one GPU loop (children prepared ahead, as a GPU worker's) grades the solutions in
   the order their builds finish, loading the built library. The GPU's idle share is the part
   of the loop's wall time spent waiting for a build, from the first build's start (pipeline
   fill included) and from the first grading on (steady state).
Writes bench/results/build-stage-<gpu>.json.
"""

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader import EvaluateOptions, evaluate  # noqa: E402
from grader.builds import arch_for_capability  # noqa: E402
from grader.evaluate import build_solution  # noqa: E402

SILU = REPO / "tasks/catalog/core/silu"
CUDA_SOLUTION = REPO / "tests/evaluator/gpu/solutions/silu_cuda_inline.py"


def variants(folder: Path, count: int, tag: str) -> list[Path]:
    source = CUDA_SOLUTION.read_text()
    paths = []
    for i in range(count):
        path = folder / f"{tag}_{i}.py"
        path.write_text(source.replace("arena_silu_inline", f"arena_silu_{tag}_{i}"))
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--solutions", type=int, default=30)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold evaluation")
    parser.add_argument("--builders", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch

    gpu = torch.cuda.get_device_name()
    major, minor = torch.cuda.get_device_capability()
    arch = arch_for_capability(f"{major}.{minor}")
    out = args.out or REPO / f"bench/results/build-stage-{gpu.replace(' ', '-')}.json"
    report: dict = {"gpu": gpu, "torch": torch.__version__, "arch": arch}
    report["command"] = " ".join(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        if not args.no_cold:
            cold_solution = variants(root, 1, "cold")[0]
            started = time.monotonic()
            cold = evaluate(SILU, cold_solution, "cuda", EvaluateOptions())
            report["cold"] = {
                "status": cold.status,
                "wall_s": round(time.monotonic() - started, 2),
                "phases": cold.phases,
            }
            print("cold", json.dumps(report["cold"]), flush=True)

        build_options = EvaluateOptions(build_cache=str(root / "builds"))
        # The GPU loop as a GPU worker runs: children prepared ahead.
        options = EvaluateOptions(build_cache=str(root / "builds"), prepared=True)
        solutions = variants(root, args.solutions, "queued")
        rows = []
        pipeline_start = time.monotonic()
        waited_s = busy_s = 0.0
        first_grading = None
        # One process per builder, as build workers are: a grader process supervises one
        # sandboxed child at a time (it reaps every child it did not know of before).
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.builders, mp_context=context) as pool:
            builds = {
                pool.submit(_timed_build, solution, arch, build_options, pipeline_start): solution
                for solution in solutions
            }
            # The GPU queue receives each solution when its build is done, in that order.
            pending = set(builds)
            while pending:
                wait_start = time.monotonic()
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                waited = time.monotonic() - wait_start
                for number, future in enumerate(sorted(done, key=lambda f: builds[f].name)):
                    solution = builds[future]
                    build, build_done_at = future.result()
                    graded_start = time.monotonic()
                    first_grading = first_grading or graded_start
                    result = evaluate(SILU, solution, "cuda", options)
                    busy = time.monotonic() - graded_start
                    waited_s, busy_s = waited_s + (waited if number == 0 else 0.0), busy_s + busy
                    rows.append(
                        {
                            "solution": solution.name,
                            "build": build.status,
                            "build_reason": build.reason,
                            "build_error": build.error[-1500:],
                            "build_s": build.build_s,
                            "build_ready_at_s": round(build_done_at, 2),
                            "gpu_waited_s": round(waited if number == 0 else 0.0, 2),
                            "status": result.status,
                            "ranked": result.ranked,
                            "gpu_wall_s": round(busy, 2),
                            "prebuilt_loaded": result.environment["build"].get("prebuilt_loaded"),
                            "phases": result.phases,
                        }
                    )
                    print(json.dumps(rows[-1]), flush=True)
                    # What is graded so far, in case the run is cut.
                    partial = {**report, "pipeline_so_far": _summary(rows, pipeline_start)}
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text(json.dumps({**partial, "rows": rows}, indent=2))
        end = time.monotonic()
        wall = end - pipeline_start
        steady_wall = end - (first_grading or end)
        steady_wait = waited_s - rows[0]["gpu_waited_s"]
        report["pipeline"] = {
            "solutions": args.solutions,
            "builders": args.builders,
            "wall_s": round(wall, 2),
            "gpu_busy_s": round(busy_s, 2),
            "gpu_idle_share": round(waited_s / wall, 3),
            "gpu_idle_share_after_first_build": round(steady_wait / steady_wall, 3),
            "evaluations_per_gpu_hour": round(len(rows) / wall * 3600, 1),
            "median_build_s": statistics.median(r["build_s"] for r in rows),
            "median_gpu_wall_s": statistics.median(r["gpu_wall_s"] for r in rows),
            "median_candidate_compile_s": statistics.median(
                r["phases"].get("candidate_compile", 0.0) for r in rows
            ),
            "rows": rows,
        }
    cold = report.get("cold", {})
    report["summary"] = {
        "cold_gpu_wall_s": cold.get("wall_s"),
        "cold_candidate_compile_s": cold.get("phases", {}).get("candidate_compile"),
        "prebuilt_median_gpu_wall_s": report["pipeline"]["median_gpu_wall_s"],
        "prebuilt_median_candidate_compile_s": report["pipeline"]["median_candidate_compile_s"],
        "gpu_idle_share": report["pipeline"]["gpu_idle_share"],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report["summary"]))
    return 0


def _summary(rows: list[dict], start: float) -> dict:
    """The GPU loop's idle share so far: its wall time less the time it spent grading."""
    wall = time.monotonic() - start
    busy = sum(r["gpu_wall_s"] for r in rows)
    first_wait = rows[0]["gpu_waited_s"] if rows else 0.0
    return {
        "graded": len(rows),
        "wall_s": round(wall, 2),
        "gpu_busy_s": round(busy, 2),
        "gpu_idle_share": round(1 - busy / wall, 3) if wall else None,
        "gpu_idle_share_after_first_build": round(1 - busy / (wall - first_wait), 3)
        if wall > first_wait
        else None,
    }


def _timed_build(solution: Path, arch: str, options: EvaluateOptions, start: float):
    build = build_solution(SILU, solution, arch=arch, options=options)
    return build, time.monotonic() - start


if __name__ == "__main__":
    sys.exit(main())
