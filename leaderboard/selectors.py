from django.db.models import QuerySet

from arena.models import Run, Submission
from evaluator.models import Evaluation


def submission_list_graded(*, limit: int = 200) -> QuerySet[Submission]:
    return (
        Submission.objects.filter(evaluation__status__in=Evaluation.FINISHED)
        .select_related("run__agent", "run__task", "evaluation")
        .order_by("-evaluation__finished_at")[:limit]
    )


def submission_list_pending(*, limit: int = 50) -> QuerySet[Submission]:
    return (
        Submission.objects.exclude(evaluation__status__in=Evaluation.FINISHED)
        .select_related("run__agent", "run__task", "evaluation")
        .order_by("-created_at")[:limit]
    )


def run_get_with_submissions(*, run_id: int) -> Run | None:
    return (
        Run.objects.select_related("agent", "task")
        .prefetch_related("submissions__evaluation__shapes")
        .filter(pk=run_id)
        .first()
    )
