from celery import shared_task

from arena.services import run_finish, submission_evaluate
from evaluator.services import evaluation_lease_remaining_s


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


@shared_task(name="arena.run_finish", acks_late=True)
def run_finish_task(run_id: int) -> None:
    run_finish(run_id=run_id)
