from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet, Value

from evaluator.models import Evaluation

# Which gradings a reader may read, each with `disclosed` (whether the reader owns it and so
# reads the solution's output too). A grading of a run is read as its run is, which only the
# layer that owns runs can tell: it passes its rule to the views (config/urls.py passes
# arena.selectors.evaluations_visible_to). Alone, the evaluator knows only who asked for a
# grading outside any run: `evaluations_submitted_by`, the views' default.
EvaluationsReadable = Callable[..., QuerySet[Evaluation]]

ACTIVE = (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)


def evaluation_queue_position(*, evaluation: Evaluation) -> int | None:
    """How many queued or running evaluations are ahead of this one; None once it is finished.

    Workers take messages in the order they were sent, which is the order of primary keys.
    """
    if evaluation.status not in ACTIVE:
        return None
    return Evaluation.objects.filter(status__in=ACTIVE, pk__lt=evaluation.pk).count()


def reader_is_operator(user: Any) -> bool:
    """Staff and superusers read every run and grading whole. `user` may be None: DRF's
    anonymous reader (UNAUTHENTICATED_USER)."""
    return bool(user is not None and user.is_authenticated and (user.is_staff or user.is_superuser))


def evaluations_submitted_by(*, user: Any) -> QuerySet[Evaluation]:
    """The gradings `user` asked for (every one for staff), all `disclosed`."""
    evaluations = Evaluation.objects.annotate(disclosed=Value(True))
    if reader_is_operator(user):
        return evaluations
    if user is None or not user.is_authenticated:
        return evaluations.none()
    return evaluations.filter(submitted_by=user)


def evaluation_list(
    *,
    readable: QuerySet[Evaluation],
    status: str | None = None,
    task_slug: str | None = None,
) -> QuerySet:
    """`readable` (the reader's, see EvaluationsReadable) newest first, filtered."""
    evaluations = readable.select_related("task").defer("solution_code", "result")
    if status:
        evaluations = evaluations.filter(status=status)
    if task_slug:
        evaluations = evaluations.filter(task__slug=task_slug)
    return evaluations.order_by("-pk")
