"""What KernelBench allows, ranked on a GPU host: honest solutions rank, decoys and cheats do not.

    python bench/kernelbench_ranking.py --tree CHECKOUT --out bench/results/OUT.json
        [--gpus 0,1,2,3] [--per-gpu 1] [--unseen 3] [--deadline-s 480] [--resume]

CHECKOUT holds upstream KernelBench's KernelBench/ and src/kernelbench/ (bench/device_carry.sh
carries them as var/device/kb); nothing of it is in this repository. Parts, each graded by
`grader.evaluate` as a worker grades an upload, one evaluation per worker process, each worker
pinned to one GPU (CUDA_VISIBLE_DEVICES) and held to 1/per-gpu of its memory, after the CUDA
solutions are built on the CPU cores as the build stage builds them (bench/prebuild.py). One
grading per GPU is how workers grade; more per GPU shares the GPU's time, and the eager timing
beside a solution then differs from the judge's (timing_tampered) on small problems.
--resume keeps the rows of --out already graded and grades the rest, so the table can be
finished over several calls of a lent host:
- honest: bench/kernelbench_solutions/level_{2,3}_* (ours: a library GEMM or convolution beside
  fused kernels of its own, in Triton and in CUDA) against upstream's problem: each must rank.
- examples: upstream's prompt examples, each ModelNew against its own Model: each must rank, but
  few_shot/model_new_ex_flash_attn, written for one head size and sequence length (overfit).
- decoys: tests/evaluator/decoys/solutions on our level-2-style GEMM epilogue task and on
  upstream's level2/9: the fused epilogues (Triton, CUDA) rank; torch beside a decoy kernel and
  the token "epilogue" (Triton, CUDA) must not.
- adversarial: tests/evaluator/adversarial/solutions with their tasks, and upstream's
  unit_tests/test_kernels on level1/1: none may rank.

The JSON is written after every evaluation; the table and the flag rates per code are printed
last.
"""

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.prebuild import build_stage, is_cuda_solution  # noqa: E402

SOLUTIONS = REPO / "bench" / "kernelbench_solutions"
TESTS = REPO / "tests" / "evaluator"
TASKS = TESTS / "tasks"
EXAMPLES = (
    ("model_new_ex_add.py", "model_ex_add.py"),
    ("model_new_ex_add_triton.py", "model_ex_add.py"),
    ("few_shot/model_new_ex_add.py", "few_shot/model_ex_add.py"),
    ("few_shot/model_new_ex_fuse_gelu.py", "few_shot/model_ex_fuse_gelu.py"),
    ("few_shot/model_new_ex_tiled_matmul.py", "few_shot/model_ex_tiled_matmul.py"),
    ("few_shot/model_new_ex_mnist2.py", "few_shot/model_ex_mnist2.py"),
    ("few_shot/model_new_ex_flash_attn.py", "few_shot/model_ex_flash_attn.py"),
)
# Upstream's example written for one shape: overfit on unseen shapes, as it was before.
EXAMPLE_OVERFITS = ("few_shot/model_new_ex_flash_attn.py",)
# The adversarial solutions' tasks (tests/evaluator/adversarial); the rest run on silu.
ADVERSARIAL_TASKS = {
    "identity_on_nonnegative": TASKS / "relu_nonneg",
    "aliases_input": TASKS / "relu_nonneg",
    "transpose_returns_view": TASKS / "transpose_view",
    "zeros_for_tiny_outputs": TASKS / "softmax_wide",
    "computes_in_fp16": TASKS / "silu_loose",
    "matmul_beside_decoy_kernel": TASKS / "matmul_plain",
    "matmul_token_epilogue": TASKS / "matmul_plain",
}
DECOYS = {
    "gemm_fused_epilogue": True,
    "gemm_inplace_epilogue": True,
    "gemm_epilogue_cuda": True,
    "gemm_epilogue_beside_decoy": False,
    "gemm_epilogue_cuda_token": False,
}
SQUARE_MATMUL = "KernelBench/level1/1_Square_matrix_multiplication_.py"
LEVEL2_9 = "KernelBench/level2/9_Matmul_Subtract_Multiply_ReLU.py"
TEST_KERNELS = "src/kernelbench/unit_tests/test_kernels"


def jobs(tree: Path) -> list[dict[str, Any]]:
    """Every evaluation, CUDA solutions first (their builds are the longest), then by part."""
    found: list[dict[str, Any]] = []
    for solution in sorted(SOLUTIONS.glob("level_[23]_problem_*_sample_0_kernel.py")):
        level, number = solution.name.split("_")[1], solution.name.split("_")[3]
        problem = next((tree / f"KernelBench/level{level}").glob(f"{number}_*.py"))
        found.append(_job("honest", problem, solution, True))
    prompts = tree / "src/kernelbench/prompts"
    for new, old in EXAMPLES:
        found.append(_job("examples", prompts / old, prompts / new, new not in EXAMPLE_OVERFITS))
    decoys = TESTS / "decoys" / "solutions"
    for name, honest in DECOYS.items():
        found.append(_job("decoys", TASKS / "kb_gemm_epilogue.py", decoys / f"{name}.py", honest))
    found.append(_job("decoys", tree / LEVEL2_9, decoys / "gemm_epilogue_beside_decoy.py", False))
    found.append(_job("decoys", tree / LEVEL2_9, decoys / "gemm_fused_epilogue.py", True))
    adversarial = TESTS / "adversarial" / "solutions"
    for solution in sorted(adversarial.glob("*.py")):
        task = ADVERSARIAL_TASKS.get(solution.stem, "silu")
        found.append(_job("adversarial", task, solution, False))
    found.append(
        _job("adversarial", tree / SQUARE_MATMUL, adversarial / "matmul_token_epilogue.py", False)
    )
    for solution in sorted((tree / TEST_KERNELS).glob("*.py")):
        found.append(_job("adversarial", tree / SQUARE_MATMUL, solution, False))
    found.sort(key=lambda j: (not j["cuda"], j["part"] == "adversarial"))
    return found


def _job(part: str, task: Path | str, solution: Path, expect_ranked: bool) -> dict[str, Any]:
    return {
        "part": part,
        "task": str(task),
        "solution": str(solution),
        "expect_ranked": expect_ranked,
        "cuda": is_cuda_solution(solution),
    }


def _pin(gpu_queue: Any) -> None:
    """Each worker process takes one GPU before torch sees any."""
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_queue.get())


def grade(
    job: dict[str, Any], unseen: int, share: float, deadline: float, cache: str
) -> dict[str, Any]:
    if time.time() > deadline:
        return {**job, "status": "not run", "ranked": None, "why": "past the bench's deadline"}
    from grader import EvaluateOptions, evaluate

    options = EvaluateOptions(
        compile_baseline=False,
        unseen_count=unseen,
        gpu_memory_share=share,
        timeout_s=240,
        build_cache=cache,
    )
    started = time.monotonic()
    try:
        result = evaluate(job["task"], job["solution"], "cuda", options)
    except Exception as exc:  # a bench row, never a crash of the whole sweep
        return {**job, "status": "bench error", "ranked": None, "why": repr(exc)[:500]}
    data = result.to_dict()
    return {
        **job,
        "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "status": data["status"],
        "ranked": data["ranked"],
        "flags": {f["code"]: f["message"][:300] for f in data["flags"]},
        "gates": {n: [g["passed"], g["reason"][:300]] for n, g in data["gates"].items()},
        "library_share": data["summary"].get("library_share"),
        "speedup_vs_eager": data["summary"].get("speedup_vs_eager"),
        "phases": data["phases"],
        "wall_s": round(time.monotonic() - started, 1),
        "log": data["log"][-1500:] if data["status"] != "passed" else "",
    }


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    graded = [r for r in rows if r.get("ranked") is not None]
    honest = [r for r in graded if r["expect_ranked"]]
    cheats = [r for r in graded if not r["expect_ranked"]]
    flags = Counter(code for r in graded for code in r.get("flags", {}))
    return {
        "graded": len(graded),
        "not_run": len(rows) - len(graded),
        "honest_ranked": f"{sum(r['ranked'] for r in honest)} of {len(honest)}",
        "cheats_unranked": f"{sum(not r['ranked'] for r in cheats)} of {len(cheats)}",
        "as_expected": sum(r["ranked"] == r["expect_ranked"] for r in graded),
        "flag_rates": {code: f"{n} of {len(graded)}" for code, n in sorted(flags.items())},
    }


def _name(row: dict[str, Any]) -> str:
    solution, task = Path(row["solution"]), Path(row["task"])
    return f"{solution.stem[:40]} on {task.stem[:34]}"


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["part | solution on task | expected | got | flags | library share | speedup | s"]
    for row in rows:
        got = {True: "ranked", False: "unranked", None: row["status"]}[row.get("ranked")]
        share = row.get("library_share")
        speedup = row.get("speedup_vs_eager")
        lines.append(
            " | ".join(
                [
                    row["part"],
                    _name(row),
                    "ranked" if row["expect_ranked"] else "unranked",
                    got if row.get("ranked") is not None else f"{got} ({row.get('why', '')[:60]})",
                    ",".join(row.get("flags", {})) or "-",
                    f"{share:.0%}" if share is not None else "-",
                    f"{speedup:.2f}x" if speedup else "-",
                    str(row.get("wall_s", "-")),
                ]
            )
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gpus", default="0,1,2,3", help="the GPUs to grade on, by index")
    parser.add_argument("--per-gpu", type=int, default=1)
    parser.add_argument("--unseen", type=int, default=3)
    parser.add_argument("--deadline-s", type=float, default=480.0)
    parser.add_argument("--only", default="", help="a substring of the solutions to grade")
    parser.add_argument(
        "--parts", default="", help="honest,examples,decoys,adversarial: these only"
    )
    parser.add_argument("--resume", action="store_true", help="keep --out's graded rows")
    parser.add_argument("--build-cache", type=Path, default=REPO / "var/rank-builds")
    args = parser.parse_args()
    started, deadline = time.time(), time.time() + args.deadline_s
    rows: list[dict[str, Any]] = _graded(args.out) if args.resume else []
    done = {(r["task"], r["solution"]) for r in rows}
    todo = [
        j
        for j in jobs(args.tree)
        if args.only in j["solution"]
        and (not args.parts or j["part"] in args.parts.split(","))
        and (j["task"], j["solution"]) not in done
    ]
    args.build_cache.mkdir(parents=True, exist_ok=True)
    built = build_stage([(j["task"], Path(j["solution"])) for j in todo], args.build_cache)
    print(f"build stage: {json.dumps(built)}", flush=True)
    context = multiprocessing.get_context("spawn")
    gpu_queue = context.Manager().Queue()
    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()]
    for gpu in gpus:
        for _ in range(args.per_gpu):
            gpu_queue.put(gpu)
    workers = len(gpus) * args.per_gpu
    share, cache = 1.0 / args.per_gpu, str(args.build_cache)
    with ProcessPoolExecutor(workers, context, initializer=_pin, initargs=(gpu_queue,)) as pool:
        futures = [pool.submit(grade, j, args.unseen, share, deadline, cache) for j in todo]
        for future in as_completed(futures):
            rows.append(future.result())
            print(table(rows[-1:]).splitlines()[-1], flush=True)
            _write(args, rows, started)
    rows.sort(key=lambda r: (r["part"], r["solution"]))
    _write(args, rows, started)
    print(table(rows))
    print(json.dumps(totals(rows), indent=1))
    return 0


def _graded(out: Path) -> list[dict[str, Any]]:
    """The rows of an earlier call's table that were graded (not those past its deadline)."""
    if not out.exists():
        return []
    return [r for r in json.loads(out.read_text())["rows"] if r.get("ranked") is not None]


def _write(args: argparse.Namespace, rows: list[dict[str, Any]], started: float) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "command": " ".join(sys.argv),
        "wall_s": round(time.time() - started, 1),
        "totals": totals(rows),
        "rows": rows,
    }
    args.out.write_text(json.dumps(data, indent=1, default=str))


if __name__ == "__main__":
    raise SystemExit(main())
