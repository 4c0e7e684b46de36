"""The grader on upstream KernelBench, on a GPU host (no Django needed).

    python bench/kernelbench_gpu.py --tree CHECKOUT --out bench/results/kernelbench-<gpu>.json
        [--parts adversarial,examples,sweep] [--sweep 42] [--shard 0/1] [--deadline-s 540]

Three parts, each graded by `grader.evaluate` exactly as a worker grades an upload:
- adversarial: upstream's unit_tests/test_kernels (solutions written to cheat, all for level1's
  square matrix multiplication); every one must end unranked.
- examples: upstream's prompt examples, each ModelNew against its own Model file; honest kernels
  that must rank.
- sweep: the reference itself as the solution (ModelNew = Model) over problems spread across
  levels 1-3 at their real sizes; each must complete with correctness passed, and an exception
  must be a named grader error. A torch-only solution is unranked by design (no_own_kernel).

Results are written after every evaluation, so a run cut short keeps what it graded.
"""

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader import EvaluateOptions, evaluate  # noqa: E402

SQUARE_MATMUL = "KernelBench/level1/1_Square_matrix_multiplication_.py"
TEST_KERNELS = "src/kernelbench/unit_tests/test_kernels"
PROMPTS = "src/kernelbench/prompts"
# (solution, reference) pairs of upstream's prompt examples that need nothing beyond torch and
# triton (the ThunderKittens, CuTe, TileLang and HIP variants need toolchains a host may lack).
EXAMPLES = (
    ("model_new_ex_add.py", "model_ex_add.py"),
    ("model_new_ex_add_triton.py", "model_ex_add.py"),
    ("few_shot/model_new_ex_add.py", "few_shot/model_ex_add.py"),
    ("few_shot/model_new_ex_fuse_gelu.py", "few_shot/model_ex_fuse_gelu.py"),
    ("few_shot/model_new_ex_tiled_matmul.py", "few_shot/model_ex_tiled_matmul.py"),
    ("few_shot/model_new_ex_flash_attn.py", "few_shot/model_ex_flash_attn.py"),
    ("few_shot/model_new_ex_mnist2.py", "few_shot/model_ex_mnist2.py"),
)
SWEEP_SHARE = {"level1": 0.45, "level2": 0.35, "level3": 0.20}


UNSEEN = EvaluateOptions().unseen_count
SHARE = 1.0


def options() -> EvaluateOptions:
    # torch.compile baselines are not what this checks, and cost tens of seconds a problem.
    return EvaluateOptions(compile_baseline=False, unseen_count=UNSEEN, gpu_memory_share=SHARE)


def summarize(result: Any, **extra: Any) -> dict[str, Any]:
    data = result.to_dict()
    return {
        **extra,
        "status": data["status"],
        "ranked": data["ranked"],
        "flags": {f["code"]: f["message"][:300] for f in data["flags"]},
        "gates": {name: [g["passed"], g["reason"][:400]] for name, g in data["gates"].items()},
        # What a failed or erroring gate says of its cause, and the end of the child's log.
        "causes": {
            name: {k: str(g["detail"].get(k, ""))[-1500:] for k in ("error", "log")}
            for name, g in data["gates"].items()
            if g["passed"] is False or (g["passed"] is None and "error" in g["detail"])
        },
        "shapes": [
            {"shape": r["shape"], "seen": r["seen"], "correct": r["correct"], "reason": r["reason"]}
            for r in data["per_shape"]
        ],
        "speedup_vs_eager": data["summary"].get("speedup_vs_eager"),
        "wall_s": data["wall_s"],
    }


DEVICE = "cuda"


def grade(task: Path, solution: Path, **extra: Any) -> dict[str, Any]:
    started = time.monotonic()
    try:
        return summarize(evaluate(task, solution, DEVICE, options()), **extra)
    except Exception as exc:  # the bench records a crash of the grader and carries on
        return {
            **extra,
            "status": "crash",
            "error": repr(exc)[:500],
            "wall_s": round(time.monotonic() - started, 1),
        }


def adversarial(tree: Path) -> list[tuple[Path, Path, dict[str, Any]]]:
    task = tree / SQUARE_MATMUL
    return [
        (task, path, {"part": "adversarial", "name": path.name, "expect": "unranked"})
        for path in sorted((tree / TEST_KERNELS).glob("*.py"))
    ]


def examples(tree: Path) -> list[tuple[Path, Path, dict[str, Any]]]:
    return [
        (
            tree / PROMPTS / reference,
            tree / PROMPTS / solution,
            {"part": "examples", "name": solution, "expect": "ranked"},
        )
        for solution, reference in EXAMPLES
        if (tree / PROMPTS / solution).is_file()
    ]


def sweep_sample(tree: Path, count: int) -> list[Path]:
    """Problems spread evenly over each level, the levels taken in turn, in a fixed order
    (reproducible; a run cut short still holds every level)."""
    per_level = []
    for level, share in SWEEP_SHARE.items():
        problems = sorted(
            (tree / "KernelBench" / level).glob("*.py"), key=lambda p: int(p.name.split("_")[0])
        )
        take = max(1, round(count * share))
        step = len(problems) / take
        per_level.append([problems[int(i * step)] for i in range(take)])
    longest = max(len(chosen) for chosen in per_level)
    return [chosen[i] for i in range(longest) for chosen in per_level if i < len(chosen)]


def reference_as_solution(problem: Path, folder: Path) -> Path:
    solution = folder / f"{problem.stem}_reference_as_solution.py"
    solution.write_text(problem.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
    return solution


def write(out: Path, rows: list[dict[str, Any]], started: float, earlier: dict[str, Any]) -> None:
    import torch

    call = {"command": " ".join(sys.argv), "elapsed_s": round(time.monotonic() - started, 1)}
    calls = [*earlier.get("calls", []), call]
    out.write_text(
        json.dumps(
            {
                "gpu": torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu",
                "torch": torch.__version__,
                "calls": calls,
                "totals": totals(rows),
                "rows": rows,
                "superseded": earlier.get("superseded", []),
            },
            indent=2,
        )
    )


def resumed(
    out: Path, regrade: list[str], reason: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of an earlier call's file, less those named to be graded again; these are kept
    under "superseded" with the reason, never dropped."""
    if not out.is_file():
        return [], {}
    earlier = json.loads(out.read_text())
    rows = [r for r in earlier["rows"] if r["name"] not in regrade]
    superseded = [
        {**r, "superseded_because": reason} for r in earlier["rows"] if r["name"] in regrade
    ]
    calls = earlier.get("calls") or [{"elapsed_s": earlier.get("elapsed_s")}]
    return rows, {"calls": calls, "superseded": [*earlier.get("superseded", []), *superseded]}


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    sweep = [r for r in rows if r["part"] == "sweep"]
    correct = [r for r in sweep if r.get("gates", {}).get("correctness", [None])[0]]
    errors = [r for r in sweep if r["status"] in ("error", "crash")]
    adversarial = [r for r in rows if r["part"] == "adversarial"]
    return {
        "sweep_graded": len(sweep),
        "sweep_correct": len(correct),
        "sweep_grader_errors": {r["name"]: r.get("error") or r["gates"] for r in errors},
        "sweep_other": [r["name"] for r in sweep if r not in correct and r not in errors],
        "adversarial_ranked": [r["name"] for r in adversarial if r.get("ranked")],
        "adversarial_graded": len(adversarial),
        "examples_ranked": {r["name"]: r.get("ranked") for r in rows if r["part"] == "examples"},
    }


def run_job(
    job: tuple[Path, Path, dict[str, Any]],
    started: float,
    deadline_s: float,
    device: str,
    unseen: int,
    share: float,
) -> dict[str, Any] | None:
    global DEVICE, UNSEEN, SHARE
    DEVICE, UNSEEN, SHARE = device, unseen, share
    if time.monotonic() - started > deadline_s:
        return None
    row = grade(job[0], job[1], **job[2])
    print(f"{row['part']} {row['name']}: {row['status']} {row['wall_s']} s", flush=True)
    return row


def main() -> int:
    global DEVICE, UNSEEN, SHARE
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--parts", default="adversarial,examples,sweep")
    parser.add_argument("--sweep", type=int, default=42, help="problems in the whole sweep")
    parser.add_argument("--shard", default="0/1", help="i/n: this call grades every n-th problem")
    parser.add_argument("--deadline-s", type=float, default=540.0)
    # Several evaluations at once overlap their solutions' compilation (CPU-bound, minutes for
    # load_inline); their timed phases may overlap too, so speedups from such a run are rough.
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--device", default="cuda", help="cpu: a smoke run of this script")
    parser.add_argument("--unseen", type=int, default=UNSEEN, help="unseen shapes per problem")
    parser.add_argument(
        "--memory-share",
        type=float,
        default=None,
        help="the GPU memory share of each evaluation (default: 1 / workers)",
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep --out's rows and grade only what it lacks"
    )
    parser.add_argument("--regrade", default="", help="names (comma-separated) to grade again")
    parser.add_argument("--regrade-reason", default="", help="why, kept beside the old rows")
    args = parser.parse_args()
    DEVICE, UNSEEN = args.device, args.unseen
    SHARE = args.memory_share or 1.0 / max(1, args.workers)
    regrade = [name for name in args.regrade.split(",") if name]
    rows, earlier = resumed(args.out, regrade, args.regrade_reason) if args.resume else ([], {})
    done = {row["name"] for row in rows}
    started = time.monotonic()
    parts = args.parts.split(",")
    with tempfile.TemporaryDirectory() as folder:
        jobs = adversarial(args.tree) if "adversarial" in parts else []
        jobs += examples(args.tree) if "examples" in parts else []
        if "sweep" in parts:
            index, count = (int(x) for x in args.shard.split("/"))
            for problem in sweep_sample(args.tree, args.sweep)[index::count]:
                name = f"{problem.parent.name}/{problem.name}"
                solution = reference_as_solution(problem, Path(folder))
                jobs.append((problem, solution, {"part": "sweep", "name": name}))

        jobs = [job for job in jobs if job[2]["name"] not in done]
        # One process per evaluation, as one worker process grades one submission at a time:
        # the grading parent holds per-process state (loaded references, torch's device mode).
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=args.workers, mp_context=spawn) as pool:
            futures = [
                pool.submit(run_job, job, started, args.deadline_s, DEVICE, UNSEEN, SHARE)
                for job in jobs
            ]
            for future in futures:
                row = future.result()
                if row is not None:
                    rows.append(row)
                    write(args.out, rows, started, earlier)
    write(args.out, rows, started, earlier)
    for row in rows:
        if row["part"] != "sweep":
            print(
                f"{row['part']} {row['name']}: {row['status']} ranked={row.get('ranked')} "
                f"flags={sorted(row.get('flags', {}))}"
            )
    print(json.dumps(totals(rows), indent=1)[:3000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
