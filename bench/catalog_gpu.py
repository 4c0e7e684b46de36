"""Catalogue checks that need a GPU, in one call on a lent GPU host (no Django there):

    python3 bench/catalog_gpu.py baselines OUT.json [--compile]  # eager + SOTA (+ compile)
    python3 bench/catalog_gpu.py starters OUT.json    # grade every CUDA/Triton starter

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
from evaluator.engine.taskspec import catalog_root, iter_task_folders, load_task  # noqa: E402
from tasks.validation import main as validation_main  # noqa: E402


def grade_starters(out: Path) -> int:
    rows, failed = [], 0
    for folder in iter_task_folders(catalog_root()):
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


if __name__ == "__main__":
    command, out = sys.argv[1], Path(sys.argv[2])
    if command == "starters":
        sys.exit(grade_starters(out))
    flags = ["--with-compile"] if "--compile" in sys.argv[3:] else []
    sys.exit(validation_main(["--gpu-baselines", str(out), *flags]))
