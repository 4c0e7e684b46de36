import logging
import threading
import time

from celery import Task, shared_task
from celery.signals import worker_ready
from django.conf import settings

from arena.lifecycle import runs_recover, submission_evaluate, submissions_recover
from arena.models import Submission
from arena.runs import run_execute
from evaluator.jobs import retry_when_lease_ends

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    name="arena.submission_evaluate",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def submission_evaluate_task(self: Task, submission_id: int) -> None:
    if submission_evaluate(submission_id=submission_id) is not None:
        return
    evaluation_id = (
        Submission.objects.filter(pk=submission_id).values_list("evaluation_id", flat=True).first()
    )
    if evaluation_id is not None:
        retry_when_lease_ends(self, evaluation_id=evaluation_id)


@shared_task(name="arena.agents.run_execute", acks_late=True, reject_on_worker_lost=True)
def run_execute_task(run_id: int) -> None:
    run_execute(run_id=run_id)


@shared_task(name="arena.agents.runs_recover", acks_late=True)
def runs_recover_task() -> None:
    runs_recover()


@shared_task(name="arena.submissions_recover", acks_late=True)
def submissions_recover_task() -> None:
    submissions_recover()


@worker_ready.connect
def _start_sweeps(sender, **kwargs) -> None:
    """Workers look for work lost with a dead worker, at start and then every
    ARENA_RUN_SWEEP_S: with SIGKILL no message says that a run or a grading was abandoned.
    An agents worker sweeps runs (and their gradings), a GPU worker the gradings of uploads."""
    queues = {q.name for q in getattr(sender.task_consumer, "queues", [])}
    sweeps = [
        (task, queue)
        for task, queue in (
            (runs_recover_task, settings.ARENA_AGENTS_QUEUE),
            (submissions_recover_task, settings.ARENA_GPU_QUEUE),
        )
        if queue in queues
    ]
    if sweeps:
        threading.Thread(
            target=_sweep_forever, args=(sweeps, settings.ARENA_RUN_SWEEP_S), daemon=True
        ).start()


def _sweep_forever(sweeps, interval_s: float) -> None:
    while True:
        for task, queue in sweeps:
            try:
                task.apply_async(queue=queue)
            except Exception:  # a broker hiccup must not end the sweeps for the worker's life
                logger.exception("could not send the sweep %s", task.name)
        time.sleep(interval_s)
