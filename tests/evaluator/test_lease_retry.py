"""A grading task that finds its evaluation held under a live lease comes back when the lease
runs out (one rule for the evaluator's task and the arena's)."""

from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.utils import timezone

from arena.jobs import submission_evaluate_task
from evaluator.jobs import evaluation_run_task, retry_when_lease_ends
from evaluator.models import Evaluation
from tasks.models import Task

pytestmark = pytest.mark.django_db


def held(seconds: float | None, status=Evaluation.Status.RUNNING) -> Evaluation:
    return Evaluation.objects.create(
        task=Task.objects.first(),
        task_version="v1",
        solution_name="solution.py",
        solution_code="class ModelNew:\n    pass\n",
        solution_sha256="0" * 64,
        status=status,
        lease_expires_at=None if seconds is None else timezone.now() + timedelta(seconds=seconds),
    )


class Recorder:
    def __init__(self) -> None:
        self.countdowns: list[float] = []

    def retry(self, *, countdown: float) -> Exception:
        self.countdowns.append(countdown)
        return Retry()


def test_a_live_lease_brings_the_task_back_when_it_runs_out(catalog_tasks):
    task = Recorder()
    with pytest.raises(Retry):
        retry_when_lease_ends(task, evaluation_id=held(120).pk)
    assert 119 <= task.countdowns[0] <= 121.5


@pytest.mark.parametrize(
    ("seconds", "status"),
    [(120, Evaluation.Status.PASSED), (None, Evaluation.Status.QUEUED)],
)
def test_no_retry_without_a_lease_held(catalog_tasks, seconds, status):
    task = Recorder()
    retry_when_lease_ends(task, evaluation_id=held(seconds, status).pk)
    assert task.countdowns == []


def test_both_grading_tasks_retry_for_as_long_as_leases_last():
    # Celery reads retry(max_retries=None) as the task's default of 3: a grading held by a
    # slow worker would be dropped after three leases. The tasks themselves allow any number.
    for task in (evaluation_run_task, submission_evaluate_task):
        assert task.max_retries is None, task.name
