from pathlib import Path

from evaluator.engine.taskspec import catalog_root
from tasks.models import Task


def task_get_active(*, slug: str) -> Task | None:
    return Task.objects.filter(slug=slug, is_active=True).first()


def task_folder(*, task: Task) -> Path:
    return catalog_root() / task.folder
