"""The build stage ahead of a bench's gradings: every CUDA solution (load_inline or a C++/CUDA
extension) built on this host's CPU cores, one process each, into one build cache, as build
workers do while the GPU grades (bench/build_stage.py measures that overlap). The gradings
then load the built libraries instead of compiling inside their own time."""

import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

CUDA_MARKS = ("load_inline", "cpp_extension")


def is_cuda_solution(solution: Path) -> bool:
    source = solution.read_text(encoding="utf-8", errors="replace")
    return any(mark in source for mark in CUDA_MARKS)


def build_stage(pairs: list[tuple[Any, Path]], cache: Path, arch: str = "9.0a") -> dict[str, Any]:
    """Builds each (task, solution) pair whose solution is CUDA; a task is a TaskSpec or what
    grader.load_task takes. Returns the count, each build's status and the wall time."""
    cuda = [(task, solution) for task, solution in pairs if is_cuda_solution(solution)]
    started = time.monotonic()
    statuses: list[str] = []
    if cuda:
        with ProcessPoolExecutor(max_workers=len(cuda)) as pool:
            statuses = list(
                pool.map(_build_one, [(task, str(s), str(cache), arch) for task, s in cuda])
            )
    return {
        "solutions": len(cuda),
        "statuses": statuses,
        "wall_s": round(time.monotonic() - started, 1),
    }


def _build_one(job: tuple[Any, str, str, str]) -> str:
    from grader import EvaluateOptions, load_task
    from grader.evaluate import build_solution

    task, solution, cache, arch = job
    spec = load_task(task) if isinstance(task, (str, Path)) else task
    options = EvaluateOptions(build_cache=cache)
    try:
        return build_solution(spec, Path(solution), arch=arch, options=options).status
    except Exception as exc:  # a bench row says so; the grading then builds as it loads
        return f"build error: {exc!r}"[:300]
