"""What the fork server (grader/forkserver.py) spares a process that grades one evaluation after
another: the same CPU evaluation graded N times with the trusted children forked from a server
and N times with each started as an interpreter of its own, the two ways alternating, in one
process. For each way: the medians of an evaluation's wall, of its children's CPU seconds
(RUSAGE_CHILDREN: the children reaped during it) and of its judge's phase. The first evaluation
of each way is reported apart (it starts the server, or warms the host's file cache).

    python3 bench/fork_server.py [--repeats N] [--task silu] [--solution FILE] [--out FILE]

Figures: bench/results/fork-server-cpu.json.
"""

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader import EvaluateOptions, evaluate  # noqa: E402


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def graded(task: str, solution: Path, fork_server: bool) -> dict[str, Any]:
    options = EvaluateOptions(fork_server=fork_server, unseen_count=1, timeout_s=300)
    cpu, started = children_cpu_s(), time.monotonic()
    result = evaluate(task, solution, "cpu", options)
    return {
        "status": result.status,
        "wall_s": round(time.monotonic() - started, 3),
        "children_cpu_s": round(children_cpu_s() - cpu, 3),
        "judge_s": result.phases.get("judge"),
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    later = rows[1:]
    return {
        "first": rows[0],
        "median_wall_s": statistics.median(r["wall_s"] for r in later),
        "median_children_cpu_s": statistics.median(r["children_cpu_s"] for r in later),
        "median_judge_s": statistics.median(r["judge_s"] for r in later),
        "statuses": sorted({r["status"] for r in rows}),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--task", default="silu")
    parser.add_argument(
        "--solution", type=Path, default=REPO / "tests/evaluator/solutions/silu_triton.py"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows: dict[str, list[dict[str, Any]]] = {"forked": [], "cold": []}
    for _ in range(args.repeats + 1):  # the first of each way is reported apart
        for way in ("forked", "cold"):
            rows[way].append(graded(args.task, args.solution, way == "forked"))
    report = {
        "command": " ".join(sys.argv),
        "task": args.task,
        "solution": str(args.solution.relative_to(REPO)),
        **{way: summary(r) for way, r in rows.items()},
    }
    report["children_cpu_ratio"] = round(
        report["forked"]["median_children_cpu_s"] / report["cold"]["median_children_cpu_s"], 3
    )
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(json.dumps({k: v for k, v in report.items() if k not in ("forked", "cold")}))
    for way in ("forked", "cold"):
        print(way, json.dumps({k: v for k, v in report[way].items() if k != "rows"}))


if __name__ == "__main__":
    main()
