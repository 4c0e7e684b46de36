"""Catalogue checks that need a GPU, in one call on a lent GPU host (no Django there):

    python3 bench/catalog_gpu.py baselines OUT.json [--compile [--warm N]] [SLUG ...]
    python3 bench/catalog_gpu.py starters OUT.json    # grade every CUDA/Triton starter
    python3 bench/catalog_gpu.py merge OUT.json PART.json [PART.json ...]

`baselines` times eager and SOTA (and torch.compile with --compile) per visible shape, for
every task or the slugs named. `--warm N` first compiles every shape in N parallel processes so
that the timed pass, which runs alone on the GPU, loads the compiled kernels from the on-disk
caches. `merge` joins baselines files measured in parts on the same GPU.

`baselines` writes what tasks/baselines/<gpu>.json holds (see tasks/validation.py) and fails
when an eager time falls outside 0.1-20 ms or a SOTA output is wrong. `starters` grades each
kernel-to-kernel task's starter with the real grader: a starter must pass, unflagged.
"""

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluator.engine import EvaluateOptions, evaluate  # noqa: E402
from evaluator.engine.taskspec import catalog_roots, iter_task_folders, load_task  # noqa: E402
from tasks.validation import main as validation_main  # noqa: E402


def grade_starters(out: Path) -> int:
    rows, failed = [], 0
    for folder in iter_task_folders(catalog_roots()[0]):
        starter = folder / "starter" / "solution.py"
        if not starter.is_file():
            continue
        spec = load_task(folder)
        result = evaluate(
            spec, starter, "cuda", EvaluateOptions(unseen_count=2, compile_baseline=False)
        )
        ok = result.status == "passed" and not result.flags
        failed += not ok
        reasons = {k: g.reason for k, g in result.gates.items() if g.passed is False}
        rows.append(
            {
                "slug": spec.slug,
                "status": result.status,
                "flags": [f.code for f in result.flags],
                "failing_gates": reasons,
                "speedup_vs_eager": result.summary.get("speedup_vs_eager"),
                "wall_s": result.wall_s,
                "log_tail": result.log[-1500:] if not ok else "",
            }
        )
        print(
            f"{'ok  ' if ok else 'FAIL'} {spec.slug:<32} {result.status} "
            f"{rows[-1]['speedup_vs_eager']} {rows[-1]['flags']} {reasons}",
            flush=True,
        )
    out.write_text(json.dumps(rows, indent=1))
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
        sys.exit(grade_starters(out))
    if command == "merge":
        sys.exit(merge_baselines(out, [Path(p) for p in sys.argv[3:]]))
    sys.exit(baselines(out, sys.argv[3:]))
