import logging
import threading
import time

from celery import shared_task
from celery.signals import worker_ready

from arena.services import submission_evaluate, submissions_recover
from evaluator.services import evaluation_lease_remaining_s

logger = logging.getLogger(__name__)


@shared_task(
    bind=True, name="arena.submission_evaluate", acks_late=True, reject_on_worker_lost=True
)
def submission_evaluate_task(self, submission_id: int) -> None:
    evaluation = submission_evaluate(submission_id=submission_id)
    if evaluation is not None:
        return
    from arena.models import Submission

    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        return
    # Held under a live lease: another worker grades it, or one died holding it. Come back
    # when the lease runs out; by then a finished row makes the retry a no-op.
    remaining = evaluation_lease_remaining_s(evaluation_id=submission.evaluation_id)
    if remaining is not None:
        raise self.retry(countdown=remaining + 1, max_retries=None)


@shared_task(name="arena.agents.run_execute", acks_late=True, reject_on_worker_lost=True)
def run_execute_task(run_id: int) -> None:
    from arena.runs import run_execute

    run_execute(run_id=run_id)


@shared_task(name="arena.agents.runs_recover", acks_late=True)
def runs_recover_task() -> None:
    from arena.runs import runs_recover

    runs_recover()


@shared_task(name="arena.submissions_recover", acks_late=True)
def submissions_recover_task() -> None:
    submissions_recover()


@worker_ready.connect
def _start_sweeps(sender, **kwargs) -> None:
    """Workers look for work lost with a dead worker, at start and then every
    ARENA_RUN_SWEEP_S: with SIGKILL no message says that a run or a grading was abandoned.
    An agents worker sweeps runs (and their gradings), a GPU worker the gradings of uploads."""
    from django.conf import settings

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
