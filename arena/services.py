from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from arena.models import Agent, Run, Submission
from evaluator.models import Evaluation
from evaluator.services import evaluation_create, evaluation_run
from tasks.models import Task


def agent_get_or_create(*, name: str) -> Agent:
    agent, _ = Agent.objects.get_or_create(slug=slugify(name), defaults={"name": name})
    return agent


@transaction.atomic
def submission_create(
    *, task: Task, agent_name: str, solution_name: str, solution_code: str
) -> Submission:
    """An uploaded solution: Run + Evaluation + Submission, graded once this commits."""
    run = Run.objects.create(
        agent=agent_get_or_create(name=agent_name),
        task=task,
        status=Run.Status.EVALUATING,
        source=Run.Source.UPLOAD,
    )
    evaluation = evaluation_create(
        task=task, solution_name=solution_name, solution_code=solution_code
    )
    submission = Submission.objects.create(run=run, evaluation=evaluation)
    transaction.on_commit(lambda: submission_enqueue(submission=submission))
    return submission


def submission_enqueue(*, submission: Submission) -> None:
    from arena.jobs import submission_evaluate_task

    submission_evaluate_task.delay(submission.pk)


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
    from leaderboard.services import leaderboard_record  # the read side's cache, a layer up

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
