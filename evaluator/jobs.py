from typing import Any

from celery import Task, shared_task, signature

from evaluator.services import evaluation_build, evaluation_lease_remaining_s, evaluation_run


def retry_when_lease_ends(task: Task, *, evaluation_id: int) -> None:
    """For a grading held under a live lease: either another worker is grading it, or a worker
    died holding it. The task comes back when the lease runs out (a live worker's heartbeat
    renews it, so once a lease while that worker grades); a finished row then makes the retry a
    no-op. Nothing to do where no lease is held. The task must allow any number of
    retries (max_retries=None on the task: passing None to retry() means the default, 3)."""
    remaining = evaluation_lease_remaining_s(evaluation_id=evaluation_id)
    if remaining is not None:
        raise task.retry(countdown=remaining + 1)


@shared_task(
    bind=True,
    name="evaluator.evaluation_run",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def evaluation_run_task(self: Task, evaluation_id: int) -> None:
    if evaluation_run(evaluation_id=evaluation_id) is None:
        retry_when_lease_ends(self, evaluation_id=evaluation_id)


@shared_task(name="evaluator.evaluation_build", acks_late=True, reject_on_worker_lost=True)
def evaluation_build_task(
    evaluation_id: int, then: dict[str, Any], gpu_queue: str, build_queue: str
) -> None:
    """The build stage on a CPU worker; then `then` on the GPU queue, or on this queue when the
    build already decided the verdict (a compile failure needs no GPU to be closed)."""
    finished = evaluation_build(evaluation_id=evaluation_id)
    signature(then).apply_async(queue=build_queue if finished else gpu_queue)
