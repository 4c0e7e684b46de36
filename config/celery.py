"""The Celery app: queues default, agents, build and gpu.

The database row is the truth for every job; a message only says "look at row N". Tasks are
acknowledged late and re-queued when their worker dies, and every task is idempotent, so a
redelivered message does no harm.
"""

import os
from pathlib import Path

from celery import Celery
from celery.signals import worker_init
from django.conf import settings
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")

app.conf.update(
    task_queues=(Queue("default"), Queue("agents"), Queue("build"), Queue("gpu")),
    task_default_queue="default",
    task_routes={
        "evaluator.evaluation_build": {"queue": "build"},
        "evaluator.*": {"queue": "gpu"},
        "arena.submission_evaluate": {"queue": "gpu"},
        "arena.agents.*": {"queue": "agents"},
    },
    # A GPU worker holds one GPU and one evaluation at a time: take one message, ack it only
    # when the evaluation has been stored, and hand it back if the worker process dies.
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    task_serializer="json",
    accept_content=["json"],
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)

app.autodiscover_tasks(related_name="jobs")


@app.on_after_configure.connect
def _ensure_embedded_broker_folders(sender: Celery, **kwargs: object) -> None:
    # The embedded broker lists its folder on every poll; it must exist before the first one.
    if not str(sender.conf.broker_url).startswith("filesystem://"):
        return
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)


@worker_init.connect
def _conceal_secrets(**kwargs: object) -> None:
    # Settings have read them by now (this attribute access loads settings if nothing did);
    # from here on no process this worker starts can read them from its /proc environ. (Imported
    # here: the engine's package loads torch, which a process that only loads settings, such as
    # `manage.py migrate`, should not pay for.)
    from grader.concealment import environ_conceal

    environ_conceal(settings.ARENA_CONCEALED_VARIABLES)
