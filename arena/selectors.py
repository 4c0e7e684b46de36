"""Reads of the arena's own rows that the API serves (batches of uploads)."""

from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.urls import reverse

from arena.models import Batch, Submission
from evaluator.batch import verdict_line
from evaluator.models import Evaluation


def batch_progress(*, batch: Batch) -> dict[str, Any]:
    """How far a batch's grading has come: counts by status, finished of total."""
    statuses = Counter(
        Submission.objects.filter(batch=batch).values_list("evaluation__status", flat=True)
    )
    total = sum(statuses.values())
    finished = sum(n for status, n in statuses.items() if status in Evaluation.FINISHED)
    return {
        "id": batch.pk,
        "key": batch.key,
        "agent": batch.agent.name,
        "created_at": batch.created_at.isoformat(timespec="seconds"),
        "total": total,
        "finished": finished,
        "done": finished == total,
        "statuses": dict(sorted(statuses.items())),
    }


def batch_result_lines(*, batch: Batch) -> Iterator[dict[str, Any]]:
    """One line per finished submission of the batch, in upload order: which solution, its run,
    and the verdict in grade_suite's fields."""
    submissions = (
        Submission.objects.filter(batch=batch, evaluation__status__in=Evaluation.FINISHED)
        .select_related("run__task", "evaluation")
        .order_by("pk")
    )
    for submission in submissions.iterator(chunk_size=200):
        evaluation = submission.evaluation
        line: dict[str, Any] = {
            "task": submission.run.task.slug,
            "solution": evaluation.solution_name,
            "solution_sha256": evaluation.solution_sha256,
            "submission": submission.pk,
            "run": submission.run_id,
            "run_url": reverse("leaderboard:run-detail", args=[submission.run_id]),
        }
        if evaluation.result:
            line.update(verdict_line(evaluation.result))
        else:  # the grader could not run at all (Evaluation.error)
            line.update(status=evaluation.status, ranked=False, reason=evaluation.error)
        yield line
