import hashlib
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from arena.models import Agent, Batch, Run, Submission
from arena.moderation import run_visibility_set
from arena.run_scores import leaderboard_catch_up, leaderboard_record
from evaluator.models import Evaluation
from evaluator.services import evaluation_create, evaluation_grade_enqueue, evaluation_run
from tasks.models import Task

WITHDRAWN_REASON = "withdrawn by its owner"


class NotYours(Exception):
    """The account may not act for this agent or run; the message says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def agent_get_or_create(*, name: str, owner: AbstractBaseUser | None = None) -> Agent:
    """The agent named `name`; a new one is owned by `owner` (None: a platform agent)."""
    agent, _ = Agent.objects.get_or_create(
        slug=slugify(name), defaults={"name": name, "owner": owner}
    )
    return agent


def agent_may_act(*, user: AbstractBaseUser, agent: Agent) -> bool:
    """Staff, the agent's owner, or a member of its organisation."""
    if getattr(user, "is_staff", False):
        return True
    if agent.owner_id is not None and agent.owner_id == user.pk:
        return True
    return (
        agent.organisation_id is not None
        and Group.objects.filter(pk=agent.organisation_id, user=user).exists()
    )


def agent_for_account(*, name: str, user: AbstractBaseUser | None) -> Agent:
    """The agent an account submits under: a new name makes an agent owned by the account; a
    name that is someone else's is refused (NotYours). None is the platform itself."""
    agent = agent_get_or_create(name=name, owner=user)
    if user is None or agent_may_act(user=user, agent=agent):
        return agent
    if agent.owner_id is None:
        raise NotYours(f"the agent {agent.name!r} is run by the platform; only staff act for it")
    raise NotYours(
        f"the agent {agent.name!r} belongs to another account: submit under a name of your "
        f"own, or ask its owner to add you to its organisation"
    )


def run_may_act(*, user: AbstractBaseUser, run: Run) -> bool:
    """The account that created the run, or one that may act for its agent."""
    return run.created_by_id == user.pk or agent_may_act(user=user, agent=run.agent)


def run_withdraw(*, run_id: int, user: AbstractBaseUser) -> Run:
    """Take a run off every public page at its owner's request (it stays in the database and
    the admin). A run hidden by a moderator keeps the moderator's reason."""
    run = Run.objects.select_related("agent").get(pk=run_id)
    if not run_may_act(user=user, run=run):
        raise NotYours(f"run {run_id} is not yours to withdraw")
    if not run.hidden:
        run_visibility_set(runs=Run.objects.filter(pk=run_id), hidden=True, reason=WITHDRAWN_REASON)
        run.refresh_from_db()
    return run


@transaction.atomic
def submission_create(
    *,
    task: Task,
    agent_name: str,
    solution_name: str,
    solution_code: str,
    user: AbstractBaseUser | None = None,
) -> Submission:
    """An uploaded solution: Run + Evaluation + Submission, graded once this commits. `user`
    must be allowed to act for the named agent (NotYours otherwise); nothing is written then."""
    agent = agent_for_account(name=agent_name, user=user)
    return _upload_add(
        task=task, agent=agent, solution_name=solution_name, solution_code=solution_code, user=user
    )


def _upload_add(
    *,
    task: Task,
    agent: Agent,
    solution_name: str,
    solution_code: str,
    user: AbstractBaseUser | None,
    batch: Batch | None = None,
) -> Submission:
    """Run + Evaluation + Submission of an uploaded solution, enqueued once the caller's
    transaction commits."""
    run = Run.objects.create(
        agent=agent,
        task=task,
        status=Run.Status.EVALUATING,
        source=Run.Source.UPLOAD,
        created_by=user,
    )
    evaluation = evaluation_create(
        task=task, solution_name=solution_name, solution_code=solution_code
    )
    submission = Submission.objects.create(run=run, evaluation=evaluation, batch=batch)
    transaction.on_commit(lambda: submission_enqueue(submission=submission))
    return submission


@dataclass
class BatchUpload:
    batch: Batch
    created: list[Submission]
    already: int  # in the batch from an earlier upload under the same key


@transaction.atomic
def batch_submit(
    *,
    agent_name: str,
    items: list[tuple[Task, str, str]],
    user: AbstractBaseUser | None,
    key: str = "",
) -> BatchUpload:
    """Many solutions (task, file name, source) of one agent, each graded as its own upload.
    Under a `key` the account used before, the same batch: a solution it already holds (same
    task, name and source) is not added again, so a client killed midway sends it all again.
    All or nothing: NotYours (the agent is someone else's) writes nothing."""
    agent = agent_for_account(name=agent_name, user=user)
    batch = None
    if key:
        batch = Batch.objects.select_for_update().filter(created_by=user, key=key).first()
        if batch is not None and batch.agent_id != agent.pk:
            raise NotYours(f"the batch {key!r} is for the agent {batch.agent.name!r}")
    if batch is None:
        batch = Batch.objects.create(agent=agent, created_by=user, key=key)
    held = set(
        batch.submissions.values_list(
            "run__task_id", "evaluation__solution_name", "evaluation__solution_sha256"
        )
    )
    created = []
    for task, name, code in items:
        identity = (task.pk, name, hashlib.sha256(code.encode()).hexdigest())
        if identity in held:
            continue
        held.add(identity)
        created.append(
            _upload_add(
                task=task,
                agent=agent,
                solution_name=name,
                solution_code=code,
                user=user,
                batch=batch,
            )
        )
    return BatchUpload(batch=batch, created=created, already=len(items) - len(created))


def submission_enqueue(*, submission: Submission) -> None:
    """Through the build stage (ARENA_BUILD_QUEUE) to the queue of the GPU kind that grades
    (ARENA_GPU_QUEUE)."""
    from arena.jobs import submission_evaluate_task

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
    evaluation = evaluation_run(evaluation_id=submission.evaluation_id)
    if evaluation is None:
        evaluation = Evaluation.objects.get(pk=submission.evaluation_id)
        if not evaluation.is_finished:
            return None
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
    changed = Run.objects.filter(pk=run_id, status=Run.Status.EVALUATING).update(
        status=Run.Status.DONE, finished_at=timezone.now()
    )
    return changed == 1


def _run_grader_error(*, run_id: int, detail: str) -> bool:
    changed = Run.objects.filter(pk=run_id, status=Run.Status.EVALUATING).update(
        status=Run.Status.FAILED,
        failure_reason=Run.FailureReason.GRADER_ERROR,
        failure_detail=detail[:10_000],
        finished_at=timezone.now(),
    )
    return changed == 1
