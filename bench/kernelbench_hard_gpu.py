"""KernelBench-Hard's published runs graded again by our grader, on a GPU host (no Django needed).

    # here: the runs to grade, their solutions and the task folders, into an ignored folder
    python bench/kernelbench_hard_gpu.py prepare --checkout KBH_CHECKOUT \\
        --catalog ARENA_DATA_DIR/catalog/kernelbench-hard --dest var/device/kbh [--gpu h100]
    # on the GPU host: grade them, one evaluation per process, results after every evaluation
    python bench/kernelbench_hard_gpu.py grade --dir var/device/kbh --out OUT/raw.json \\
        [--workers 1] [--unseen 2] [--timeout-s 240] [--deadline-s 520] [--resume]
    # here: our verdict beside theirs, per run and counted
    python bench/kernelbench_hard_gpu.py table --raw raw.json [--raw raw2.json] \\
        [--previous bench/results/kernelbench-hard-regrade-<gpu>.json] \\
        --out bench/results/kernelbench-hard-regrade-<gpu>.json

prepare reads the checkout's public/data/catalog.json (the cells of bench "hard" on one GPU), each
cell's solution (public/runs/<run_id>_solution.py.txt, or where solution_url points) and copies
the problems' task folders made by `manage.py import_kernelbench_hard` (slug kbh-<gpu>-<problem>,
as arena/imported_runs.py maps them). Upstream's contract names the solution's class `Model`;
ours grades `ModelNew`, so a solution defining `Model` and no `ModelNew` gets one line appended,
`ModelNew = Model` (recorded per run as "adapted"); nothing else in it is changed. The runs are
ordered so that a run cut short still covers every problem, passes and failures alike.

grade calls `grader.evaluate` exactly as a worker grades an upload and records our
status, the first failed gate's reason, the speedup over eager and the wall time.

table counts where our verdict agrees with theirs: ours passes when our status is "passed";
theirs when the outcome is "pass", `correct` is not false and the audit did not reject the run
(verdict "bug" or "fail"), as arena/imported_runs.py's comparison reads them.
"""

import argparse
import json
import multiprocessing
import re
import shutil
import sys
import tempfile
import time
import tomllib
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

BENCH = "hard"
CATALOG = Path("public/data/catalog.json")
RUNS = Path("public/runs")
SOLUTION_SUFFIX = "_solution.py.txt"
PUBLISHED = ("outcome", "failure_reason", "correct", "score", "verdict", "elapsed_seconds")
REJECTED = ("bug", "fail")
ALIAS = "\n\n# Appended by the re-grade: upstream names the class Model, our grader ModelNew.\n"
ALIAS += "ModelNew = Model\n"


def task_slug(gpu: str, problem: str) -> str:
    """The slug the KernelBench-Hard problem importer gives the problem on that GPU."""
    return re.sub(r"[^a-z0-9]+", "-", f"kbh-{gpu}-{problem}".lower()).strip("-")


def solution_path(checkout: Path, cell: dict[str, Any]) -> Path | None:
    public = (checkout / "public").resolve()
    candidates = []
    url = cell.get("solution_url")
    if isinstance(url, str) and url.startswith("/"):
        candidates.append(public / url.lstrip("/"))
    candidates.append(checkout / RUNS / f"{cell.get('run_id')}{SOLUTION_SUFFIX}")
    for path in candidates:
        resolved = path.resolve()
        if resolved.is_relative_to(public) and resolved.is_file():
            return resolved
    return None


def theirs_verdict(published: dict[str, Any]) -> tuple[bool, str]:
    outcome = str(published.get("outcome", ""))
    verdict = str(published.get("verdict", ""))
    passed = outcome == "pass" and published.get("correct") is not False and verdict not in REJECTED
    reason = f"outcome {outcome or '?'}"
    failure = str(published.get("failure_reason", ""))
    if failure and failure != outcome:
        reason += f" ({failure})"
    if verdict:
        reason += f", audit {verdict}"
    if published.get("score") is not None:
        reason += f", peak fraction {published['score']}"
    return passed, reason


def ordered(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Round-robin over the problems; within a problem, failures and passes taken in turn (the
    rarer first), each kind in run-id order: any prefix covers every problem and both kinds."""
    queues: dict[str, list[dict[str, Any]]] = {}
    for problem in sorted({r["problem"] for r in runs}):
        mine = sorted((r for r in runs if r["problem"] == problem), key=lambda r: r["run_id"])
        fails = [r for r in mine if not r["theirs_passed"]]
        passes = [r for r in mine if r["theirs_passed"]]
        first, second = (fails, passes) if len(fails) <= len(passes) else (passes, fails)
        queue = []
        for i in range(max(len(first), len(second))):
            queue += [q[i] for q in (first, second) if i < len(q)]
        queues[problem] = queue
    longest = max((len(q) for q in queues.values()), default=0)
    return [q[i] for i in range(longest) for q in queues.values() if i < len(q)]


def prepare(args: argparse.Namespace) -> int:
    cells = json.loads((args.checkout / CATALOG).read_text(encoding="utf-8"))["cells"]
    cells = [c for c in cells if c.get("bench") == BENCH and str(c.get("gpu")) == args.gpu]
    dest: Path = args.dest
    shutil.rmtree(dest / "tasks", ignore_errors=True)
    shutil.rmtree(dest / "solutions", ignore_errors=True)
    (dest / "tasks").mkdir(parents=True)
    (dest / "solutions").mkdir()
    runs, skipped = [], []
    for cell in cells:
        run_id, problem = str(cell.get("run_id") or ""), str(cell.get("problem", ""))
        slug = task_slug(args.gpu, problem)
        source = solution_path(args.checkout, cell) if run_id else None
        if not (args.catalog / slug / "task.toml").is_file():
            skipped.append(f"{run_id or cell.get('id')}: no task folder {slug}")
            continue
        if source is None:
            skipped.append(f"{run_id or cell.get('id')}: no solution published")
            continue
        if not (dest / "tasks" / slug).is_dir():
            shutil.copytree(args.catalog / slug, dest / "tasks" / slug)
        code = source.read_text(encoding="utf-8")
        adapted = bool(re.search(r"^class Model\b", code, re.M)) and not re.search(
            r"\bModelNew\b", code
        )
        (dest / "solutions" / f"{run_id}.py").write_text(code + (ALIAS if adapted else ""))
        published = {key: cell[key] for key in PUBLISHED if key in cell}
        passed, reason = theirs_verdict(published)
        runs.append(
            {
                "run_id": run_id,
                "problem": problem,
                "task": slug,
                "model": cell.get("model"),
                "adapted": adapted,
                "theirs": published,
                "theirs_passed": passed,
                "theirs_reason": reason,
            }
        )
    runs = ordered(runs)
    (dest / "runs.json").write_text(json.dumps({"runs": runs, "skipped": skipped}, indent=1))
    kinds = Counter((r["problem"], r["theirs_passed"]) for r in runs)
    print(
        f"{len(runs)} runs of {len(cells)} {args.gpu} cells ready in {dest} "
        f"({sum(r['adapted'] for r in runs)} given ModelNew = Model), {len(skipped)} skipped: "
        + "; ".join(skipped)
    )
    print(dict(sorted(kinds.items())))
    return 0


# --- on the GPU host --------------------------------------------------------------------------


def grade_one(
    folder: Path, run: dict[str, Any], started: float, settings: dict[str, Any]
) -> dict[str, Any] | None:
    if time.monotonic() - started > settings["deadline_s"]:
        return None
    from grader import EvaluateOptions, evaluate

    # A baseline cache of its own per evaluation: a cached entry made without torch.compile
    # (compile_ms None) crashed the scoring of every later evaluation of the same task
    # (grader/scoring.py's _compile_ms reads cached["compile_ms"] unchecked).
    cache = tempfile.mkdtemp(prefix="kbh-baselines-")
    options = EvaluateOptions(
        compile_baseline=False,
        baseline_cache=str(Path(cache) / "baselines.json"),
        unseen_count=settings["unseen"],
        timeout_s=settings["timeout_s"],
        gpu_memory_share=settings["share"],
    )
    row = {k: run[k] for k in ("run_id", "problem", "task", "model", "adapted")}
    row["memory_share"] = settings["share"]
    task_toml = tomllib.loads((folder / "tasks" / run["task"] / "task.toml").read_text())
    row["stress_cases"] = [case["name"] for case in task_toml.get("stress_cases", [])]
    begun = time.monotonic()
    try:
        data = evaluate(
            folder / "tasks" / run["task"],
            folder / "solutions" / f"{run['run_id']}.py",
            settings["device"],
            options,
        ).to_dict()
    except Exception as exc:  # the bench records a crash of the grader and carries on
        row.update(status="crash", error=repr(exc)[:500])
        row["wall_s"] = round(time.monotonic() - begun, 1)
        return row
    failed = [(name, g) for name, g in data["gates"].items() if g["passed"] is False] or [
        (name, g) for name, g in data["gates"].items() if "error" in g["detail"]
    ]
    row.update(
        status=data["status"],
        ranked=data["ranked"],
        flags={f["code"]: f["message"][:300] for f in data["flags"]},
        gates={name: [g["passed"], g["reason"][:400]] for name, g in data["gates"].items()},
        first_failed_gate=failed[0][0] if failed else None,
        cause={k: str(failed[0][1]["detail"].get(k, ""))[-1200:] for k in ("error", "log")}
        if failed
        else {},
        log_tail=str(data.get("log") or "")[-3000:] if data["status"] != "passed" else "",
        shapes=[
            {"shape": r["shape"], "seen": r["seen"], "correct": r["correct"], "reason": r["reason"]}
            for r in data["per_shape"]
        ],
        speedup_vs_eager=data["summary"].get("speedup_vs_eager"),
        wall_s=data["wall_s"],
    )
    if data.get("error"):
        row["error"] = str(data["error"])[:500]
    return row


def write_raw(
    out: Path, rows: list[dict[str, Any]], calls: list[dict[str, Any]], superseded: list[Any]
) -> None:
    import torch

    out.write_text(
        json.dumps(
            {
                "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
                "torch": torch.__version__,
                "calls": calls,
                "rows": rows,
                "superseded": superseded,
            },
            indent=1,
        )
    )


def grade(args: argparse.Namespace) -> int:
    runs = json.loads((args.dir / "runs.json").read_text())["runs"]
    rows: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    superseded: list[dict[str, Any]] = []
    if args.resume and args.resume.is_file():
        earlier = json.loads(args.resume.read_text())
        rows, calls = earlier["rows"], earlier["calls"]
        superseded = earlier.get("superseded", [])
    again = [r for r in rows if r["status"] in args.regrade_status.split(",")]
    rows = [r for r in rows if r not in again]
    superseded = [*superseded, *({**r, "superseded_because": args.regrade_reason} for r in again)]
    done = {r["run_id"] for r in rows}
    first = {r["run_id"] for r in again}
    listed = Path(args.only[1:]).read_text() if args.only.startswith("@") else args.only
    only = {name.strip() for name in listed.split(",") if name.strip()}
    runs = [r for r in runs if r["run_id"] not in done and (not only or r["run_id"] in only)]
    runs = [r for r in runs if r["run_id"] in first] + [r for r in runs if r["run_id"] not in first]
    runs = runs[: args.limit] if args.limit else runs
    settings = {
        "deadline_s": args.deadline_s,
        "unseen": args.unseen,
        "timeout_s": args.timeout_s,
        "share": args.memory_share or 1.0 / max(1, args.workers),
        "device": args.device,
    }
    started = time.monotonic()
    call = {"command": " ".join(sys.argv), "settings": settings, "elapsed_s": 0.0}
    calls = [*calls, call]
    spawn = multiprocessing.get_context("spawn")
    # One process per evaluation, as one worker process grades one submission at a time.
    with ProcessPoolExecutor(
        max_workers=args.workers, mp_context=spawn, max_tasks_per_child=1
    ) as pool:
        futures = [pool.submit(grade_one, args.dir, run, started, settings) for run in runs]
        for future in as_completed(futures):
            row = future.result()
            if row is None:
                continue
            rows.append(row)
            call["elapsed_s"] = round(time.monotonic() - started, 1)
            write_raw(args.out, rows, calls, superseded)
            print(
                f"{row['run_id']}: {row['status']} {row.get('first_failed_gate') or ''} "
                f"{row['wall_s']} s",
                flush=True,
            )
    call["elapsed_s"] = round(time.monotonic() - started, 1)
    write_raw(args.out, rows, calls, superseded)
    print(f"{len(rows)} graded, {Counter(r['status'] for r in rows)}")
    return 0


# --- here, afterwards -------------------------------------------------------------------------


def ours_verdict(row: dict[str, Any]) -> tuple[bool, str]:
    if row["status"] == "passed":
        flags = sorted(row.get("flags") or {})
        return True, "passed" + (f", flagged {', '.join(flags)}" if flags else "")
    gate = row.get("first_failed_gate")
    if gate:
        _passed, reason = row["gates"][gate]
        detail = (row.get("cause") or {}).get("error", "").strip().splitlines()
        tail = f" ({detail[-1][:300]})" if detail else ""
        return False, f"{row['status']}: {gate}: {reason}{tail}"
    return False, f"{row['status']}: {row.get('error') or 'no reason recorded'}"


OUT_OF_MEMORY = ("OutOfMemoryError", "exited with code 1 before reporting a result")


def inconclusive(row: dict[str, Any], share: float) -> str:
    """Why our failure says nothing of the solution: it ran out of (or silently died in) the
    GPU memory share this bench gave each of its concurrent evaluations; "" otherwise."""
    if row["status"] == "passed" or share >= 1.0:
        return ""
    gate = row.get("first_failed_gate")
    said = f"{row['gates'][gate][1] if gate else ''} {(row.get('cause') or {}).get('error', '')}"
    if gate == "correctness" and any(sign in said for sign in OUT_OF_MEMORY):
        return (
            f"died while running with {share:.2f} of the GPU's memory (concurrent evaluations); "
            "the solution was not graded with the whole GPU"
        )
    return ""


def merged_raw(paths: list[Path]) -> dict[str, Any]:
    """Raw files of several grade calls on one GPU as one: a run graded again keeps its last
    row, the earlier one goes to "superseded"."""
    merged: dict[str, Any] = {"calls": [], "rows": [], "superseded": []}
    for path in paths:
        raw = json.loads(path.read_text())
        if merged.get("gpu", raw["gpu"]) != raw["gpu"]:
            raise SystemExit(f"{path} was graded on {raw['gpu']}, not {merged['gpu']}")
        merged["gpu"], merged["torch"] = raw["gpu"], raw["torch"]
        # Rows written before the rows carried their share: the smallest share of the file's calls.
        least = min((c.get("settings", {}).get("share", 1.0) for c in raw["calls"]), default=1.0)
        again = {r["run_id"] for r in raw["rows"]}
        merged["superseded"] += [
            {**r, "superseded_because": "graded again by a later call"}
            for r in merged["rows"]
            if r["run_id"] in again
        ]
        merged["rows"] = [r for r in merged["rows"] if r["run_id"] not in again]
        merged["rows"] += [{"memory_share": least, **r} for r in raw["rows"]]
        merged["calls"] += raw["calls"]
        merged["superseded"] += raw.get("superseded", [])
    return merged


def table(args: argparse.Namespace) -> int:
    raw = merged_raw(args.raw)
    previous = json.loads(args.previous.read_text()) if args.previous else None
    if previous and previous["gpu"] != raw["gpu"]:
        raise SystemExit(f"{args.previous} was graded on {previous['gpu']}, not {raw['gpu']}")
    runs = {r["run_id"]: r for r in json.loads((args.dir / "runs.json").read_text())["runs"]}
    graded_now = {r["run_id"] for r in raw["rows"]}
    rows = [r for r in (previous or {}).get("rows", []) if r["run_id"] not in graded_now]
    superseded = [
        {**r["ours"], "run_id": r["run_id"], "superseded_because": "graded again by a later call"}
        for r in (previous or {}).get("rows", [])
        if r["run_id"] in graded_now
    ]
    for graded in sorted(raw["rows"], key=lambda r: r["run_id"]):
        run = runs[graded["run_id"]]
        ours_passed, ours_reason = ours_verdict(graded)
        unsure = inconclusive(graded, graded["memory_share"])
        rows.append(
            {
                "run_id": graded["run_id"],
                "problem": graded["problem"],
                "task": graded["task"],
                "adapted": graded["adapted"],
                "agree": ours_passed == run["theirs_passed"],
                "ours_inconclusive": unsure,
                "ours": {
                    "passed": ours_passed,
                    "status": graded["status"],
                    "ranked": graded.get("ranked"),
                    "reason": ours_reason,
                    "speedup_vs_eager": graded.get("speedup_vs_eager"),
                    "wall_s": graded["wall_s"],
                    "flags": graded.get("flags", {}),
                    # None: graded before the imported tasks carried upstream's stress cases.
                    "stress_cases": graded.get("stress_cases"),
                    "shapes": graded.get("shapes", []),
                },
                "theirs": {
                    **run["theirs"],
                    "passed": run["theirs_passed"],
                    "reason": run["theirs_reason"],
                },
            }
        )
    rows.sort(key=lambda r: r["run_id"])
    graded_ids = {r["run_id"] for r in rows}
    counts = {
        "runs_published": len(runs),
        "graded": len(rows),
        "agree": sum(r["agree"] for r in rows),
        "differ": sum(not r["agree"] for r in rows),
        "both_pass": sum(r["agree"] and r["ours"]["passed"] for r in rows),
        "both_fail": sum(r["agree"] and not r["ours"]["passed"] for r in rows),
        "ours_pass_theirs_fail": sum(
            r["ours"]["passed"] and not r["theirs"]["passed"] for r in rows
        ),
        "ours_fail_theirs_pass": sum(
            not r["ours"]["passed"] and r["theirs"]["passed"] for r in rows
        ),
        "graded_with_stress_cases": sum(r["ours"].get("stress_cases") is not None for r in rows),
        "conclusive": sum(not r["ours_inconclusive"] for r in rows),
        "conclusive_agree": sum(r["agree"] and not r["ours_inconclusive"] for r in rows),
        "conclusive_differ": sum(not r["agree"] and not r["ours_inconclusive"] for r in rows),
        # Ours read as "ranked" (passed with no flag) rather than "passed".
        "agree_if_ours_means_ranked": sum(
            bool(r["ours"]["ranked"]) == r["theirs"]["passed"] for r in rows
        ),
        "by_problem": {
            p: f"{sum(r['agree'] for r in rows if r['problem'] == p)}/"
            f"{sum(r['problem'] == p for r in rows)} agree"
            for p in sorted({r["problem"] for r in rows})
        },
    }
    out = {
        "gpu": raw["gpu"],
        "torch": raw["torch"],
        "calls": [*(previous or {}).get("calls", []), *raw["calls"]],
        "how": __doc__.split("\n\n", 2)[2].strip() if __doc__ else "",
        "counts": counts,
        "differ": [
            {
                "run_id": r["run_id"],
                "ours": r["ours"]["reason"],
                "theirs": r["theirs"]["reason"],
                "ours_inconclusive": r["ours_inconclusive"],
            }
            for r in rows
            if not r["agree"]
        ],
        "not_graded": sorted(set(runs) - graded_ids),
        "superseded": [
            {k: r.get(k) for k in ("run_id", "status", "error", "superseded_because")}
            for r in [*(previous or {}).get("superseded", []), *superseded, *raw["superseded"]]
        ],
        "rows": rows,
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(counts, indent=1))
    for row in out["differ"]:
        print(f"DIFFER {row['run_id']}: ours {row['ours']} | theirs {row['theirs']}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--checkout", type=Path, required=True)
    p.add_argument(
        "--catalog", type=Path, required=True, help="the imported kernelbench-hard folder"
    )
    p.add_argument("--dest", type=Path, default=Path("var/device/kbh"))
    p.add_argument("--gpu", default="h100")
    g = sub.add_parser("grade")
    g.add_argument("--dir", type=Path, default=Path("var/device/kbh"))
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--resume", type=Path, default=None, help="an earlier call's raw file")
    g.add_argument("--workers", type=int, default=1)
    g.add_argument("--memory-share", type=float, default=None)
    g.add_argument("--unseen", type=int, default=2, help="unseen shapes per problem")
    g.add_argument("--timeout-s", type=float, default=240.0, help="per evaluation's children")
    g.add_argument("--deadline-s", type=float, default=520.0, help="no evaluation starts later")
    g.add_argument("--regrade-status", default="", help="statuses of --resume's rows to redo")
    g.add_argument("--regrade-reason", default="", help="why, kept beside the old rows")
    g.add_argument("--limit", type=int, default=0)
    g.add_argument("--only", default="", help="run ids (comma-separated), or @FILE holding them")
    g.add_argument("--device", default="cuda", help="cpu: a smoke run of this script")
    t = sub.add_parser("table")
    t.add_argument("--raw", type=Path, action="append", required=True, help="repeatable")
    t.add_argument("--previous", type=Path, default=None, help="an earlier table: its rows stay")
    t.add_argument("--dir", type=Path, default=Path("var/device/kbh"))
    t.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    return {"prepare": prepare, "grade": grade, "table": table}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
