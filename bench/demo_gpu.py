"""Record the demo leaderboard's runs graded on a GPU, for `manage.py seed_demo` to import.

    python bench/demo_gpu.py                      # every demo task and scripted agent, on cuda
    python bench/demo_gpu.py --tasks tt-softmax   # a subset; run again to add the rest

For each demo task and scripted agent (arena/demo/scripted_runs.py) it runs the scripted agent
for real in a temporary workspace on this host, collects its solution, and grades it with the
grader (grader.evaluate) on this GPU, unseen shapes included. It writes one JSON file,
arena/demo/graded-<gpu>.json by default, holding per run: the agent, the task and its version
hash, the solution and its sha256, the agent's stream-json log, and the grader's full result
(EvalResult.to_dict()); and once: the GPU, torch and triton versions and the date. Nothing in
it is computed here but by the agent and the grader.

The file is rewritten after every run, and runs already recorded for the same task version are
kept and skipped, so a long recording can be done in several sittings. Where only an output
folder survives between sittings, give each sitting its own file instead
(`--tasks tt-softmax tt-cumsum --out $OUT/graded-<gpu>-2.json`): seed_demo reads every
arena/demo/graded-*.json. The checkout must hold the same task files as the one that imports
the recording: a run recorded for another version of its task is graded afresh instead.

No Django: a GPU host needs only Python, torch, triton and numpy.
"""

import argparse
import json
import os
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCRIPT = "bench/demo_gpu.py"
FORMAT_VERSION = 1


def enter_repo() -> None:
    """Import from the checkout. The modules used here (arena's workspace, agents and demo)
    need neither Django nor Celery, which the GPU host does not have; importing the arena
    package starts no Celery app (that is the project's, config/celery.py)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


def gpu_name(device: str) -> str:
    if device != "cuda":
        return "cpu"
    import torch

    return torch.cuda.get_device_name(0)


def default_output(gpu: str) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-") or "gpu"
    return REPO / "arena" / "demo" / f"graded-{slug}.json"


def load_existing(path: Path, *, gpu: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("gpu") != gpu:
        raise SystemExit(f"{path}: recorded on {data.get('gpu')!r}, not on {gpu!r}; use --out")
    return data


def header(*, device: str, gpu: str) -> dict[str, Any]:
    import torch
    import triton

    return {
        "format": FORMAT_VERSION,
        "script": SCRIPT,
        "device": device,
        "gpu": gpu,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": [],
    }


def record_run(*, folder: Path, strategy: str, device: str, options: Any) -> dict[str, Any]:
    """One scripted run, graded; the entry seed_demo reads."""
    import tempfile

    from arena.demo.scripted_runs import DemoAgent, demo_run
    from grader import evaluate
    from grader.taskspec import load_task

    spec = load_task(folder)
    run = demo_run(task_folder=folder, strategy=strategy)
    result = None
    if run.solution is not None:
        with tempfile.TemporaryDirectory(prefix="demo-gpu-") as tmp:
            solution = Path(tmp) / "solution.py"
            solution.write_text(run.solution, encoding="utf-8")
            result = evaluate(spec, solution, device, options).to_dict()
    agent = DemoAgent(strategy)
    return {
        "agent": agent.name,
        "agent_slug": agent.slug,
        "strategy": strategy,
        "task": spec.slug,
        "task_version": spec.version_hash,
        "solution_name": "solution.py",
        "solution_sha256": run.solution_sha256 if run.solution is not None else None,
        "solution": run.solution,
        "problem": run.problem,
        "agent_duration_s": run.duration_s,
        "log": run.log,
        "result": result,
    }


def record(
    *, tasks: list[str], strategies: list[str], device: str, out: Path | None, options: Any
) -> Path:
    """Run, grade and write every (task, strategy) not yet recorded; the file's path."""
    from arena.demo.scripted_runs import demo_plan
    from grader.taskspec import catalog_roots, find_task_folder, load_task

    gpu = gpu_name(device)
    out = out or default_output(gpu)
    data = load_existing(out, gpu=gpu) or header(device=device, gpu=gpu)
    folders = {slug: find_task_folder(slug, catalog_roots()[0]) for slug in tasks}
    versions = {slug: load_task(folder).version_hash for slug, folder in folders.items()}
    # A run recorded against an older version of its task is recorded again.
    data["runs"] = [
        r for r in data["runs"] if versions.get(r["task"], r["task_version"]) == r["task_version"]
    ]
    done = {(r["strategy"], r["task"]) for r in data["runs"]}
    for agent, slug in demo_plan(task_folders=folders):
        if agent.strategy not in strategies or (agent.strategy, slug) in done:
            continue
        started = time.monotonic()
        entry = record_run(
            folder=folders[slug], strategy=agent.strategy, device=device, options=options
        )
        status = (
            entry["result"]["status"] if entry["result"] else f"no solution: {entry['problem']}"
        )
        print(
            f"{agent.name:<28} {slug:<18} {status:<8} {time.monotonic() - started:6.1f} s",
            file=sys.stderr,
        )
        data["runs"].append(entry)
        write_atomically(out, data)
    write_atomically(out, data)
    return out


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, path)


def main(argv: list[str] | None = None) -> int:
    enter_repo()
    from arena.demo.scripted_runs import DEMO_TASKS, STRATEGIES
    from grader import EvaluateOptions

    parser = argparse.ArgumentParser(
        prog="python bench/demo_gpu.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--tasks", nargs="+", default=list(DEMO_TASKS), metavar="SLUG")
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--out", type=Path, help="default: arena/demo/graded-<gpu>.json")
    parser.add_argument("--timeout", type=float, default=300.0, help="grader seconds per child")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.tasks) - set(DEMO_TASKS))
    if unknown:
        parser.error(f"not demo tasks: {', '.join(unknown)} (see arena/demo/scripted_runs.py)")
    options = EvaluateOptions(timeout_s=args.timeout)
    out = record(
        tasks=args.tasks,
        strategies=args.strategies,
        device=args.device,
        out=args.out,
        options=options,
    )
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
