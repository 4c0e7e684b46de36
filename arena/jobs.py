from celery import shared_task

from arena.services import run_finish


@shared_task(name="arena.run_finish", acks_late=True)
def run_finish_task(run_id: int) -> None:
    run_finish(run_id=run_id)
