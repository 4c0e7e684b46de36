"""Rows shaped like the grader's real output (docs/result-schema.md), for leaderboard tests."""

import hashlib
import math
from itertools import count

from django.utils import timezone

from arena.models import Agent, Run, Submission
from arena.run_scores import leaderboard_record
from evaluator.models import Evaluation, EvaluationShape
from evaluator.services import evaluation_shape_build
from tasks.models import Task

H200 = "NVIDIA H200"
_serial = count(1)


def make_agent(slug: str, **fields) -> Agent:
    defaults = {"name": slug.replace("-", " ").title(), "harness": "claude-code", "model": "m"}
    return Agent.objects.create(slug=slug, **{**defaults, **fields})


def make_task(slug: str = "", *, category: str = "torch2triton", suite: str = "core") -> Task:
    slug = slug or f"task-{next(_serial)}"
    return Task.objects.create(
        slug=slug,
        title=slug.title(),
        category=category,
        suite=suite,
        dtype="float32",
        regime="memory",
        folder=f"{suite}/{slug}",
        version_hash=hashlib.sha256(slug.encode()).hexdigest(),
        manifest={"flops": "N", "bytes": "8 * N", "visible_shapes": [{"N": 1 << 20}]},
    )


def gate(passed, reason="", **detail) -> dict:
    return {
        "passed": passed,
        "reason": reason or ("passed" if passed else "failed"),
        "detail": detail,
    }


def shape_row(shape: dict, *, seen=True, correct=True, median_ms=None, eager_ms=None) -> dict:
    timed = median_ms is not None
    n = math.prod(shape.values())
    bytes_moved = 8 * n
    gbps = bytes_moved / (median_ms / 1e3) / 1e9 if timed else None
    return {
        "shape": shape,
        "seen": seen,
        "correct": correct,
        "max_abs_err": 0.0 if correct else 0.5,
        "max_rel_err": 0.0 if correct else 0.25,
        "candidate_ms": {"median": median_ms, "p10": median_ms * 0.98, "p90": median_ms * 1.02}
        if timed
        else None,
        "eager_ms": eager_ms,
        "compile_ms": None,
        "sota_ms": None,
        "tflops": n / (median_ms / 1e3) / 1e12 if timed else None,
        "gbps": gbps,
        "roofline_fraction": gbps / 4800.0 if timed else None,
        "reason": "" if correct else f"shape N={n} seed 0: values differ",  # n: elements
    }


def grader_result(
    *,
    outcome: str = "passed",
    speedup: float | None = None,
    unseen: tuple[int, int] = (0, 0),
    flags: tuple[str, ...] = (),
    gpu: str = H200,
    shapes: list[dict] | None = None,
) -> dict:
    """A result dict as `EvalResult.to_dict()` writes it, for one of the grader's outcomes.

    outcome: passed (compiled, correct), incorrect, no_compile or error (the grader failed).
    """
    compiled = outcome in ("passed", "incorrect")
    correct = outcome == "passed"
    eager = 1.0
    rows = []
    if compiled:
        median = eager / speedup if (correct and speedup) else None
        for shape in shapes or [{"N": 1 << 20}]:
            rows.append(shape_row(shape, correct=correct, median_ms=median, eager_ms=eager))
    if correct:
        ok, total = unseen
        rows += [shape_row({"N": 1000 + i}, seen=False, correct=i < ok) for i in range(total)]
    timed = [r for r in rows if r["candidate_ms"]]
    roofline = (
        math.exp(sum(math.log(r["roofline_fraction"]) for r in timed) / len(timed))
        if timed
        else None
    )
    status = {"passed": "passed", "error": "error"}.get(outcome, "failed")
    gates = {
        "compile": gate(compiled, "imported" if compiled else "SyntaxError at line 3"),
        "correctness": gate(correct if compiled else None),
        "performance": gate(True if timed else None, detail_gpu=gpu),
        "generalization": gate((unseen[0] == unseen[1]) if unseen[1] and correct else None),
    }
    if outcome == "error":
        gates["compile"] = gate(None, "the reference could not run")
    reward = (speedup - 1 if speedup else 0.0) if correct else (-2.0 if compiled else -5.0)
    return {
        "status": status,
        "gates": gates,
        "per_shape": rows,
        "summary": {
            "speedup_vs_eager": speedup if timed else None,
            "speedup_vs_compile": None,
            "speedup_vs_sota": None,
            "roofline_fraction": roofline,
            "generalization_pass_rate": unseen[0] / unseen[1] if unseen[1] else None,
        },
        "flags": [{"code": code, "message": f"{code} found"} for code in flags],
        "reward": reward,
        "ranked": status == "passed" and not flags,
        "environment": {"python": "3.11.9", "torch": "2.5.1", "gpu": gpu},
        "task": {},
        "task_version": "",
        "solution_hash": "0" * 64,
        "device": "cpu" if gpu == "cpu" else "cuda",
        "wall_s": 12.5,
        "log": "",
    }


def make_run(
    agent: Agent,
    task: Task,
    *,
    outcome: str = "passed",
    speedup: float | None = None,
    unseen: tuple[int, int] = (0, 0),
    flags: tuple[str, ...] = (),
    gpu: str = H200,
    tokens: int = 0,
    cost_usd: float | None = None,
    hidden: bool = False,
    status: str = "",
    code: str = "class ModelNew: pass\n",
) -> Run:
    """A run with one graded submission (or a queued one when status is queued/running)."""
    pending = status in ("queued", "running")
    run = Run.objects.create(
        agent=agent,
        task=task,
        status=Run.Status.EVALUATING if pending else Run.Status.DONE,
        input_tokens=tokens,
        cost_usd=cost_usd,
        hidden=hidden,
    )
    result = (
        {}
        if pending
        else grader_result(
            outcome=outcome,
            speedup=speedup,
            unseen=unseen,
            flags=flags,
            gpu=gpu,
            shapes=task.manifest.get("visible_shapes"),
        )
    )
    if result:
        result["task_version"] = task.version_hash
    evaluation = Evaluation.objects.create(
        task=task,
        task_version=task.version_hash,
        solution_code=code,
        solution_sha256=hashlib.sha256(code.encode()).hexdigest(),
        status=status or result["status"],
        device=result.get("device", ""),
        reward=result.get("reward"),
        ranked=result.get("ranked", False),
        result=result,
        finished_at=None if pending else timezone.now(),
    )
    EvaluationShape.objects.bulk_create(
        evaluation_shape_build(evaluation=evaluation, index=index, row=row)
        for index, row in enumerate(result.get("per_shape", []))
    )
    submission = Submission.objects.create(run=run, evaluation=evaluation)
    if not pending:
        # What the write side does once an evaluation finishes.
        leaderboard_record(submission_id=submission.pk)
    return run
