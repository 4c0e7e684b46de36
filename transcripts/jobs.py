import logging
import threading
import time

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from transcripts.services import trajectory_orphans_sweep

logger = logging.getLogger(__name__)


@shared_task(name="transcripts.orphans_sweep", acks_late=True)
def orphans_sweep_task() -> None:
    report = trajectory_orphans_sweep(max_age_s=settings.ARENA_ORPHAN_MAX_AGE_S)
    if report.bytes_freed:
        logger.info("orphans of killed uploads removed: %s", report)


@worker_ready.connect
def _start_orphans_sweep(sender, **kwargs) -> None:
    """A worker of the default queue sweeps what killed uploads left, at its start and then
    every quarter of ARENA_ORPHAN_MAX_AGE_S: nothing else would ever remove it."""
    queues = {q.name for q in getattr(sender.task_consumer, "queues", [])}
    if "default" in queues:
        interval_s = settings.ARENA_ORPHAN_MAX_AGE_S / 4
        threading.Thread(target=_sweep_forever, args=(interval_s,), daemon=True).start()


def _sweep_forever(interval_s: float) -> None:
    while True:
        try:
            orphans_sweep_task.apply_async(queue="default")
        except Exception:  # a broker hiccup must not end the sweeps for the worker's life
            logger.exception("could not send the orphans sweep")
        time.sleep(interval_s)
