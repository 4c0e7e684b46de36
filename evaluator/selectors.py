from django.db.models import QuerySet

from evaluator.models import Evaluation

ACTIVE = (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)


def evaluation_queue_position(*, evaluation: Evaluation) -> int | None:
    """How many queued or running evaluations are ahead of this one; None once it is finished.

    Workers take messages in the order they were sent, which is the order of primary keys.
    """
    if evaluation.status not in ACTIVE:
        return None
    return Evaluation.objects.filter(status__in=ACTIVE, pk__lt=evaluation.pk).count()


def evaluation_list(*, status: str | None = None, task_slug: str | None = None) -> QuerySet:
    evaluations = Evaluation.objects.select_related("task").defer("solution_code", "result")
    if status:
        evaluations = evaluations.filter(status=status)
    if task_slug:
        evaluations = evaluations.filter(task__slug=task_slug)
    return evaluations.order_by("-pk")
