"""The Run lifecycle, in one place: every change of a run's state and every message that sends a
run or its grading to a queue.

Arena runs: queued -> preparing -> agent_running -> collecting -> evaluating -> done, or failed
with a reason, or cancelled. Uploaded solutions: evaluating -> done (or failed, where the
grader itself failed). A log uploaded for a run that happened elsewhere: done from the start.

The row is the truth. A worker claims a run with a conditional UPDATE (queued, or held under a
lease that ran out because its worker died) and counts the claim in `attempts`; every later
step is an UPDATE conditional on that attempt and on the state it leaves, so a worker that lost
its run (cancelled, or taken over after its lease ran out) changes nothing. Messages are sent
once the transaction that made their row commits; a lost message is sent again by the sweeps
(`runs_recover`, `submissions_recover`), and a duplicate does nothing.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from arena.models import Agent, Batch, Run, Submission
from arena.run_scores import leaderboard_catch_up, leaderboard_record
from evaluator.models import Evaluation
from evaluator.services import evaluation_grade_enqueue, evaluation_run
from tasks.models import Task

Status = Run.Status
Reason = Run.FailureReason
# States a worker holds under a lease, and every state a run can still leave.
HELD = (Status.PREPARING, Status.AGENT_RUNNING, Status.COLLECTING)
ACTIVE = (Status.QUEUED, *HELD)
# A queued run's message can be lost with a worker that had fetched it (the embedded broker
# has no acks); after this long still queued, the sweep sends it again.
REQUEUE_AFTER = timedelta(minutes=30)
MAX_DETAIL_CHARS = 10_000


class RunLost(Exception):
    """This worker no longer holds the run: it was cancelled or claimed by another worker."""


class RunNotCancellable(Exception):
    """The run is being graded or has finished: there is nothing left to cancel."""


# --- runs made ----------------------------------------------------------------------------


def run_queued_create(
    *, agent: Agent, task: Task, budget: dict, created_by: AbstractBaseUser | None
) -> Run:
    """A queued arena run, sent to the agents queue once the caller's transaction commits."""
    run = Run.objects.create(
        agent=agent,
        task=task,
        status=Status.QUEUED,
        source=Run.Source.ARENA,
        created_by=created_by,
        budget=budget,
        model=agent.model,
        effort=agent.effort,
        lease_expires_at=timezone.now() + REQUEUE_AFTER,
    )
    transaction.on_commit(lambda: run_enqueue(run_id=run.pk))
    return run


def run_upload_create(*, agent: Agent, task: Task, created_by: AbstractBaseUser | None) -> Run:
    """The run of an uploaded solution: evaluating from the start (its submission follows)."""
    return Run.objects.create(
        agent=agent,
        task=task,
        status=Status.EVALUATING,
        source=Run.Source.UPLOAD,
        created_by=created_by,
    )


def run_log_create(*, agent: Agent, task: Task, created_by: AbstractBaseUser | None) -> Run:
    """A run known only from its log: finished, with no submission to grade."""
    return Run.objects.create(
        agent=agent,
        task=task,
        status=Status.DONE,
        source=Run.Source.UPLOAD,
        created_by=created_by,
        finished_at=timezone.now(),
    )


def run_recorded_create(
    *, agent: Agent, task: Task, solved: bool, detail: str = "", **provenance: str
) -> Run:
    """An arena run recorded elsewhere (the demo's): done when it left a solution, failed
    (no solution) otherwise, finished now."""
    fields = (
        {"status": Status.DONE}
        if solved
        else {
            "status": Status.FAILED,
            "failure_reason": Reason.NO_SOLUTION,
            "failure_detail": detail[:MAX_DETAIL_CHARS],
        }
    )
    return Run.objects.create(
        agent=agent,
        task=task,
        source=Run.Source.ARENA,
        finished_at=timezone.now(),
        **provenance,
        **fields,
    )


def run_enqueue(*, run_id: int) -> None:
    from arena.jobs import run_execute_task  # the Celery tasks call back into this module

    run_execute_task.apply_async((run_id,), queue=settings.ARENA_AGENTS_QUEUE)


# --- claims, leases and state changes of arena runs ----------------------------------------


def run_lease_end() -> datetime:
    return timezone.now() + timedelta(seconds=settings.ARENA_RUN_LEASE_S)


def run_claim(*, run_id: int) -> int | None:
    """Take the run: queued, or held under an expired lease. The attempt number, or None."""
    now = timezone.now()
    claimable = Q(status=Status.QUEUED) | Q(status__in=HELD, lease_expires_at__lt=now)
    changed = Run.objects.filter(claimable, pk=run_id, source=Run.Source.ARENA).update(
        status=Status.PREPARING,
        attempts=F("attempts") + 1,
        lease_expires_at=run_lease_end(),
        started_at=Coalesce(F("started_at"), Value(now)),
    )
    if changed != 1:
        return None
    return Run.objects.values_list("attempts", flat=True).get(pk=run_id)


def run_advance(*, run_id: int, attempt: int, old: str, new: str, **fields) -> None:
    """Move the run on, if this attempt still holds it in state `old`; else RunLost."""
    changed = Run.objects.filter(pk=run_id, attempts=attempt, status=old).update(
        status=new, **fields
    )
    if changed != 1:
        raise RunLost(f"run {run_id} left {old} or was claimed again")


def run_fail(*, run_id: int, reason: str, detail: str, attempt: int | None = None) -> bool:
    """Fail a run that is still active (and still this attempt's, when given)."""
    if reason not in Reason.values:
        raise ValueError(f"reason: {reason!r} is not one of {', '.join(Reason.values)}")
    runs = Run.objects.filter(pk=run_id, status__in=ACTIVE)
    if attempt is not None:
        runs = runs.filter(attempts=attempt)
    changed = runs.update(
        status=Status.FAILED,
        failure_reason=reason,
        failure_detail=detail[:MAX_DETAIL_CHARS],
        finished_at=timezone.now(),
        lease_expires_at=None,
    )
    return changed == 1


def run_cancel(*, run_id: int) -> Run:
    """Cancel a run that has not reached grading; its worker stops the agent within seconds."""
    changed = Run.objects.filter(pk=run_id, status__in=ACTIVE).update(
        status=Status.CANCELLED, finished_at=timezone.now(), lease_expires_at=None
    )
    run = Run.objects.get(pk=run_id)
    if changed != 1:
        raise RunNotCancellable(
            f"run {run_id} is {run.status}: only an unfinished run before grading can be cancelled"
        )
    return run


# --- grading ------------------------------------------------------------------------------


def submission_add(*, run: Run, evaluation: Evaluation, batch: Batch | None = None) -> Submission:
    """The run's solution to grade, sent on its way once the caller's transaction commits."""
    submission = Submission.objects.create(run=run, evaluation=evaluation, batch=batch)
    transaction.on_commit(lambda: submission_enqueue(submission=submission))
    return submission


def run_submit(*, run: Run, attempt: int, evaluation: Evaluation) -> Submission:
    """An arena run's agent left a solution: collecting -> evaluating, its grading enqueued."""
    submission = submission_add(run=run, evaluation=evaluation)
    run_advance(
        run_id=run.pk,
        attempt=attempt,
        old=Status.COLLECTING,
        new=Status.EVALUATING,
        lease_expires_at=None,
    )
    return submission


def submission_enqueue(*, submission: Submission) -> None:
    """Through the build stage (ARENA_BUILD_QUEUE) to the queue of the GPU kind that grades
    (ARENA_GPU_QUEUE)."""
    from arena.jobs import submission_evaluate_task  # the Celery tasks call back into this module

    evaluation_grade_enqueue(
        evaluation_id=submission.evaluation_id, then=submission_evaluate_task.si(submission.pk)
    )


def submissions_recover() -> list[int]:
    """Send again the gradings a dead worker left: running under a lease that ran out, or
    queued so long that their message was lost (the embedded broker loses the one a killed
    worker held). A duplicate message is harmless: the claim is a conditional update."""
    now = timezone.now()
    lost = Submission.objects.filter(run__status=Run.Status.EVALUATING).filter(
        Q(evaluation__status=Evaluation.Status.RUNNING, evaluation__lease_expires_at__lt=now)
        | Q(
            evaluation__status=Evaluation.Status.QUEUED,
            created_at__lt=now - timedelta(seconds=settings.ARENA_GRADER_REQUEUE_S),
        )
    )
    resent = list(lost.values_list("pk", flat=True))
    for submission in Submission.objects.filter(pk__in=resent):
        submission_enqueue(submission=submission)
    # Finished gradings a killed worker closed but never scored.
    leaderboard_catch_up()
    return resent


def submission_evaluate(*, submission_id: int) -> Evaluation | None:
    """Grade a submission (claiming its evaluation) and close its run; idempotent.

    None when another worker holds the evaluation under a live lease.
    """
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        return None
    # The run is closed in the verdict's own transaction: a verdict refused to an attempt that
    # was taken over closes nothing, and no worker dies between the two.
    evaluation = evaluation_run(
        evaluation_id=submission.evaluation_id, then=lambda: run_finish(run_id=submission.run_id)
    )
    if evaluation is None:
        evaluation = Evaluation.objects.get(pk=submission.evaluation_id)
        if not evaluation.is_finished:
            return None
        # Stored elsewhere: by the build stage (a compile failure), or before a redelivery.
        run_finish(run_id=submission.run_id)
    leaderboard_record(submission_id=submission.pk)
    return evaluation


def run_finish(*, run_id: int) -> bool:
    """Mark an evaluating run done once all its evaluations have finished; idempotent."""
    unfinished = Evaluation.objects.filter(submission__run_id=run_id).exclude(
        status__in=Evaluation.FINISHED
    )
    if unfinished.exists():
        return False
    errored = Evaluation.objects.filter(
        submission__run_id=run_id, status=Evaluation.Status.ERROR
    ).first()
    if errored is not None and Run.objects.filter(pk=run_id, source=Run.Source.ARENA).exists():
        # The grader, not the agent, failed an arena run: say so rather than rank it.
        return _run_grader_error(run_id=run_id, detail=errored.error)
    changed = Run.objects.filter(pk=run_id, status=Status.EVALUATING).update(
        status=Status.DONE, finished_at=timezone.now()
    )
    return changed == 1


def _run_grader_error(*, run_id: int, detail: str) -> bool:
    changed = Run.objects.filter(pk=run_id, status=Status.EVALUATING).update(
        status=Status.FAILED,
        failure_reason=Reason.GRADER_ERROR,
        failure_detail=detail[:MAX_DETAIL_CHARS],
        finished_at=timezone.now(),
    )
    return changed == 1


# --- sweeps -------------------------------------------------------------------------------


def runs_recover() -> list[int]:
    """Send again the runs whose worker died (held under an expired lease: put back in the
    queue), runs queued too long, and gradings whose worker died. Idempotent; the ids sent.

    Each is sent by the one sweep whose conditional update moved it, so concurrent sweeps of
    several workers send one message per run and period, not one each.
    """
    now = timezone.now()
    again = now + REQUEUE_AFTER
    arena = Run.objects.filter(source=Run.Source.ARENA, lease_expires_at__lt=now)
    lost = list(arena.filter(status__in=HELD).values_list("pk", flat=True))
    waiting = list(arena.filter(status=Status.QUEUED).values_list("pk", flat=True))
    resend = [
        pk
        for pk in [*lost, *waiting]
        if arena.filter(pk=pk, status__in=ACTIVE).update(
            status=Status.QUEUED, lease_expires_at=again
        )
    ]
    for pk in resend:
        run_enqueue(run_id=pk)
    submissions_recover()
    return resend
