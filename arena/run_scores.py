"""The score projection the leaderboard reads: one RunScore row per finished grading, and the
generation every cached leaderboard is keyed on. Written here, by the layer that writes
submissions: `leaderboard_record(submission_id=...)` when a grading finishes,
`leaderboard_invalidate()` after anything else that changes what the public sees (a run hidden
or shown, a task changed). The leaderboard app only reads these rows.
"""

import hashlib

from django.db import transaction
from django.db.models import Count, F, Max

from arena.models import LeaderboardGeneration, RunScore, Submission
from evaluator.models import Evaluation
from tasks.models import Task

CPU = RunScore.CPU


def leaderboard_invalidate() -> None:
    """Bump the generation that every cached leaderboard is keyed on."""
    updated = LeaderboardGeneration.objects.filter(pk=1).update(value=F("value") + 1)
    if not updated:
        LeaderboardGeneration.objects.get_or_create(pk=1, defaults={"value": 1})


def leaderboard_record(*, submission_id: int) -> RunScore | None:
    """Flatten a finished evaluation into its score row (idempotent); None while unfinished."""
    submission = (
        Submission.objects.select_related("run__task", "evaluation")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None or submission.evaluation.status not in Evaluation.FINISHED:
        return None
    fields = score_fields(submission=submission, suite_versions={})
    fields["repeat"] = _repeat_index(submission)
    with transaction.atomic():
        score, _ = RunScore.objects.update_or_create(submission=submission, defaults=fields)
        leaderboard_invalidate()
    return score


def leaderboard_catch_up() -> int:
    """Score finished evaluations of submissions newer than the newest scored one.

    The write side's sweep (arena.lifecycle.submissions_recover, every ARENA_RUN_SWEEP_S on a GPU
    worker) calls this as a safety net for a write path that did not call `leaderboard_record`
    (a worker killed between closing a run and scoring it); it costs two index lookups when there
    is nothing to do. The read side only reads. Older gaps are for `manage.py
    leaderboard_rebuild`.
    """
    newest = RunScore.objects.aggregate(newest=Max("submission_id"))["newest"] or 0
    # A bare range on the primary key: joining evaluations here makes planners scan them all.
    if not Submission.objects.filter(pk__gt=newest).exists():
        return 0
    return leaderboard_rebuild(after_submission_id=newest)


def leaderboard_rebuild(*, after_submission_id: int = 0, batch_size: int = 2000) -> int:
    """Score every finished evaluation that has no row yet; returns how many were added."""
    suite_versions: dict[str, str] = {}
    # The ids first, in one pass; then each batch by primary key. Repeating the anti-join per
    # batch costs a full scan each time.
    pending_ids = list(
        Submission.objects.filter(
            pk__gt=after_submission_id,
            evaluation__status__in=Evaluation.FINISHED,
            score__isnull=True,
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    submissions = Submission.objects.select_related("run__task", "evaluation").defer(
        "evaluation__solution_code"
    )
    repeats = _RepeatCounter()
    added = 0
    for start in range(0, len(pending_ids), batch_size):
        chunk = pending_ids[start : start + batch_size]
        rows = [
            RunScore(
                submission=s,
                repeat=repeats.next(s.run),
                **score_fields(submission=s, suite_versions=suite_versions),
            )
            for s in submissions.filter(pk__in=chunk).order_by("pk")
        ]
        RunScore.objects.bulk_create(rows, batch_size=batch_size)
        added += len(rows)
    if added:
        leaderboard_invalidate()
    return added


def score_fields(*, submission: Submission, suite_versions: dict[str, str]) -> dict:
    run, evaluation = submission.run, submission.evaluation
    result = evaluation.result or {}
    gates = result.get("gates") or {}
    summary = result.get("summary") or {}
    flags = [f.get("code") for f in result.get("flags") or [] if isinstance(f, dict)]
    unseen = [r for r in result.get("per_shape") or [] if isinstance(r, dict) and not r.get("seen")]
    gpu = gpu_name(evaluation)
    return {
        "run": run,
        "agent_id": run.agent_id,
        "task": run.task,
        "category": run.task.category,
        "suite_version": _suite_version(run.task, evaluation.task_version, suite_versions),
        "gpu": gpu,
        "status": evaluation.status,
        "compiled": (gates.get("compile") or {}).get("passed") is True,
        "correct": (gates.get("correctness") or {}).get("passed") is True,
        # A CPU grading is never timed, so it is never ranked, whatever an older grader said.
        "ranked": evaluation.ranked and gpu != CPU,
        "flagged": bool(flags),
        "flag_codes": flag_codes_text(flags),
        "overfit": "overfit" in flags,
        "speedup": _positive(summary.get("speedup_vs_eager")),
        "roofline_fraction": _positive(summary.get("roofline_fraction")),
        "unseen_correct": sum(1 for r in unseen if r.get("correct") is True),
        "unseen_total": len(unseen),
        "reward": evaluation.reward,
        "tokens": run.input_tokens
        + run.output_tokens
        + run.cache_read_tokens
        + run.cache_write_tokens,
        "cost_usd": run.cost_usd,
        "finished_at": evaluation.finished_at,
    }


def flag_codes_text(codes: list) -> str:
    """Flag codes as RunScore.flag_codes stores them: ",a,b," (sorted, unique), "" for none."""
    unique = sorted({str(c)[:60].replace(",", "_") for c in codes if c})
    return f",{','.join(unique)}," if unique else ""


def gpu_name(evaluation: Evaluation) -> str:
    if evaluation.device == CPU or (evaluation.result or {}).get("device") == CPU:
        return CPU
    environment = (evaluation.result or {}).get("environment") or {}
    return str(environment.get("gpu") or evaluation.device or "unknown")[:100]


def suite_version_of(*, suite: str) -> str:
    """The suite's version now: a digest of its active tasks' slugs and version hashes."""
    pairs = Task.objects.filter(suite=suite, is_active=True).order_by("slug")
    text = "\n".join(
        f"{slug}:{version}" for slug, version in pairs.values_list("slug", "version_hash")
    )
    return f"{suite}@{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def _suite_version(task: Task, graded_version: str, cache: dict[str, str]) -> str:
    # A result graded against an older task version belongs to a catalogue state we no longer
    # hold, so it cannot be named by the current digest.
    if graded_version and graded_version != task.version_hash:
        return f"{task.suite}@superseded"
    if task.suite not in cache:
        cache[task.suite] = suite_version_of(suite=task.suite)
    return cache[task.suite]


def _repeat_index(submission: Submission) -> int:
    earlier = RunScore.objects.filter(
        agent_id=submission.run.agent_id,
        task_id=submission.run.task_id,
        run_id__lt=submission.run_id,
    )
    return earlier.values("run_id").distinct().count() + 1


class _RepeatCounter:
    """Numbers runs per (agent, task) after those already scored, in submission order (which is
    the order runs were made, as a run is created before its submission)."""

    def __init__(self) -> None:
        scored = RunScore.objects.values("agent_id", "task_id").annotate(
            n=Count("run_id", distinct=True)
        )
        self.scored = {(r["agent_id"], r["task_id"]): r["n"] for r in scored.order_by()}
        self.new: dict[tuple[int, int], list[int]] = {}

    def next(self, run) -> int:
        runs = self.new.setdefault((run.agent_id, run.task_id), [])
        if run.pk not in runs:
            runs.append(run.pk)
        return self.scored.get((run.agent_id, run.task_id), 0) + runs.index(run.pk) + 1


def _positive(value) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None
