from celery import shared_task

from evaluator.services import evaluation_lease_remaining_s, evaluation_run


@shared_task(bind=True, name="evaluator.evaluation_run", acks_late=True, reject_on_worker_lost=True)
def evaluation_run_task(self, evaluation_id: int) -> None:
    if evaluation_run(evaluation_id=evaluation_id) is not None:
        return
    # Held under a live lease: either another worker is grading it, or a worker died holding
    # it. Come back when the lease runs out; a finished row makes the retry a no-op.
    remaining = evaluation_lease_remaining_s(evaluation_id=evaluation_id)
    if remaining is not None:
        raise self.retry(countdown=remaining + 1, max_retries=None)
