"""Reads of the arena's own rows: who may read which run and grading, and the batches of
uploads the API serves."""

from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet, Value
from django.urls import reverse

from arena.models import Agent, Batch, Run, Submission
from evaluator.batch import verdict_line
from evaluator.models import Evaluation
from evaluator.selectors import reader_is_operator

# DRF's anonymous request.user is None (UNAUTHENTICATED_USER), Django's an AnonymousUser.
Reader = AbstractBaseUser | AnonymousUser | None

# -- who may read what ----------------------------------------------------------------------------
#
# The one rule, used by every page and endpoint that reads runs or gradings:
# - a public run (not withdrawn, not hidden by a moderator) and its gradings are read by anyone,
#   but only their owners read the solution's output and error messages (evaluator/redaction.py);
# - a hidden run, and a grading asked for outside any run (POST /api/v1/evaluations), are read
#   by their owners alone; to anyone else they do not exist (404, left out of lists);
# - owners: the account that made the run, the agent's owner and the members of its
#   organisation (those who may act for it, arena.services.run_may_act), and the account that
#   asked for a grading outside any run; staff read everything.
# Each queryset below carries `disclosed` on every row: whether the reader owns it.

PUBLIC_RUN = Q(hidden=False)


def _owned(user: Reader, *, via: str = "") -> Q | bool:
    """The rows under `via` (a run, or a batch: the same fields) the reader owns; True for
    every row (staff), False for none (anonymous)."""
    if user is None or not user.is_authenticated:
        return False
    if reader_is_operator(user):
        return True
    return (
        Q(**{f"{via}created_by": user})
        | Q(**{f"{via}agent__owner": user})
        | Q(**{f"{via}agent__organisation__in": user.groups.values("pk")})
    )


def _readable(rows: QuerySet, *, public: Q, owned: Q | bool) -> QuerySet:
    """The public rows and the owned ones, each with `disclosed`: owned."""
    if owned is True:
        return rows.annotate(disclosed=Value(True))
    if owned is False:
        return rows.filter(public).annotate(disclosed=Value(False))
    return rows.filter(public | owned).annotate(
        disclosed=ExpressionWrapper(owned, output_field=BooleanField())
    )


def agents_of(*, user: Reader) -> QuerySet[Agent]:
    """The agents an account acts for and may upload under: its own and its organisations'
    (staff: only those too, not every agent)."""
    if user is None or not user.is_authenticated:
        return Agent.objects.none()
    mine = Q(owner=user) | Q(organisation__in=user.groups.values("pk"))
    return Agent.objects.filter(mine).order_by("name")


def runs_public() -> QuerySet[Run]:
    """The runs everyone reads: what the leaderboard's lists and aggregates are made of."""
    return Run.objects.filter(PUBLIC_RUN)


def runs_visible_to(*, user: Reader) -> QuerySet[Run]:
    """The runs `user` may read, each with `disclosed`."""
    return _readable(Run.objects.all(), public=PUBLIC_RUN, owned=_owned(user))


def evaluations_visible_to(*, user: Reader) -> QuerySet[Evaluation]:
    """The gradings `user` may read, each with `disclosed`: a run's as its run is; one asked
    for outside any run by whoever asked for it."""
    owned = _owned(user, via="submission__run__")
    if isinstance(owned, Q):
        owned |= Q(submission__isnull=True, submitted_by=user)
    return _readable(Evaluation.objects.all(), public=Q(submission__run__hidden=False), owned=owned)


def submissions_visible_to(*, user: Reader) -> QuerySet[Submission]:
    """The submissions of the runs `user` may read."""
    return Submission.objects.filter(run__in=runs_visible_to(user=user).values("pk"))


def batches_visible_to(*, user: Reader) -> QuerySet[Batch]:
    """A batch is its uploader's receipt: read by whoever owns its runs, by no one else."""
    owned = _owned(user)
    if isinstance(owned, Q):
        return Batch.objects.filter(owned)
    return Batch.objects.all() if owned else Batch.objects.none()


# -- batches ------------------------------------------------------------------------------------


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
