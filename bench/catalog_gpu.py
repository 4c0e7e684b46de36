"""Catalogue checks that need a GPU, in one call on a lent GPU host (no Django there):

    python3 bench/catalog_gpu.py baselines OUT.json [--compile [--warm N]] [SLUG ...]
    python3 bench/catalog_gpu.py starters OUT.json [--workers N] [--deadline-s S] [--prefix P]
    python3 bench/catalog_gpu.py merge OUT.json PART.json [PART.json ...]

`baselines` times eager and SOTA (and torch.compile with --compile) per visible shape, for
every task or the slugs named. `--warm N` first compiles every shape in N parallel processes so
that the timed pass, which runs alone on the GPU, loads the compiled kernels from the on-disk
caches. `merge` joins baselines files measured in parts on the same GPU.

`baselines` writes what tasks/baselines/<gpu>.json holds (see tasks/validation.py) and fails
when an eager time falls outside 0.1-20 ms or a SOTA output is wrong. `starters` grades each
kernel-to-kernel task's starter with the real grader: a starter must pass, unflagged
(`--device cpu`: a smoke run on the CPU).
"""

import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader import EvaluateOptions, evaluate  # noqa: E402
from grader.taskspec import catalog_roots, iter_task_folders, load_task  # noqa: E402
from tasks.validation import main as validation_main  # noqa: E402


def grade_starter(folder: Path, started: float, deadline_s: float, device: str) -> dict | None:
    """One starter graded as a worker grades an upload; None once the deadline has passed."""
    if time.monotonic() - started > deadline_s:
        return None
    spec = load_task(folder)
    starter = folder / "starter" / "solution.py"
    try:
        result = evaluate(
            spec, starter, device, EvaluateOptions(unseen_count=2, compile_baseline=False)
        )
    except Exception as exc:  # a crash of the grader is recorded apart from the starter's result
        return {"slug": spec.slug, "status": "grader-crash", "error": repr(exc)[:800]}
    ok = result.status == "passed" and not result.flags
    return {
        "slug": spec.slug,
        "status": result.status,
        "flags": [f.code for f in result.flags],
        "failing_gates": {k: g.reason for k, g in result.gates.items() if g.passed is False},
        "errors": {
            k: str(g.detail.get("error", ""))[-1500:]
            for k, g in result.gates.items()
            if g.passed is False and g.detail.get("error")
        },
        "speedup_vs_eager": result.summary.get("speedup_vs_eager"),
        "wall_s": result.wall_s,
        "log_tail": result.log[-3000:] if not ok else "",
    }


def grade_starters(out: Path, args: list[str]) -> int:
    """Every starter of the first catalogue (ARENA_CATALOG_DIR), or of the slugs starting with
    --prefix; --workers N grade N at a time (one process each), none starts after --deadline-s."""
    workers = int(args[args.index("--workers") + 1]) if "--workers" in args else 1
    deadline = float(args[args.index("--deadline-s") + 1]) if "--deadline-s" in args else 1e9
    prefix = args[args.index("--prefix") + 1] if "--prefix" in args else ""
    device = args[args.index("--device") + 1] if "--device" in args else "cuda"
    folders = [
        f
        for f in iter_task_folders(catalog_roots()[0])
        if (f / "starter" / "solution.py").is_file() and load_task(f).slug.startswith(prefix)
    ]
    rows: list[dict] = []
    started = time.monotonic()
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=spawn, max_tasks_per_child=1) as pool:
        futures = [pool.submit(grade_starter, f, started, deadline, device) for f in folders]
        for future in as_completed(futures):
            row = future.result()
            if row is None:
                continue
            rows.append(row)
            ok = row["status"] == "passed" and not row.get("flags")
            print(
                f"{'ok  ' if ok else 'FAIL'} {row['slug']:<48} {row['status']} "
                f"{row.get('speedup_vs_eager')} {row.get('flags')} {row.get('failing_gates')}",
                flush=True,
            )
            out.write_text(
                json.dumps({"workers": workers, "tasks": len(folders), "rows": rows}, indent=1)
            )
    out.write_text(json.dumps({"workers": workers, "tasks": len(folders), "rows": rows}, indent=1))
    failed = sum(not (r["status"] == "passed" and not r.get("flags")) for r in rows)
    print(f"{len(rows)} of {len(folders)} starters graded, {failed} failed")
    return 1 if failed else 0


def merge_baselines(out: Path, parts: list[Path]) -> int:
    merged: dict = {}
    for part in parts:
        data = json.loads(part.read_text())
        if merged and (merged["gpu"], merged["torch"]) != (data["gpu"], data["torch"]):
            print(f"{part} was measured on {data['gpu']} / torch {data['torch']}, not the same")
            return 1
        tasks = merged.get("tasks", {})
        merged = {**data, "tasks": {**tasks, **data["tasks"]}}
    out.write_text(json.dumps(merged, indent=1, sort_keys=True))
    return 0


def task_folders(slugs: list[str]) -> list[Path]:
    folders = {load_task(f).slug: f for f in iter_task_folders(catalog_roots()[0])}
    unknown = [s for s in slugs if s not in folders]
    if unknown:
        raise SystemExit(f"unknown task slugs: {unknown}")
    return [folders[s] for s in slugs]


def baselines(out: Path, args: list[str]) -> int:
    with_compile = "--compile" in args
    warm = int(args[args.index("--warm") + 1]) if "--warm" in args else 0
    slugs = [a for i, a in enumerate(args) if not a.startswith("--") and args[i - 1] != "--warm"]
    folders = [str(f) for f in task_folders(slugs)]
    if with_compile and warm:
        validation_main(["--warm-compile", str(warm), *folders])
    flags = ["--with-compile"] if with_compile else []
    return validation_main(["--gpu-baselines", str(out), *flags, *folders])


if __name__ == "__main__":
    command, out = sys.argv[1], Path(sys.argv[2])
    if command == "starters":
        sys.exit(grade_starters(out, sys.argv[3:]))
    if command == "merge":
        sys.exit(merge_baselines(out, [Path(p) for p in sys.argv[3:]]))
    sys.exit(baselines(out, sys.argv[3:]))
