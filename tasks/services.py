from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from grader.taskspec import (
    TaskError,
    TaskSpec,
    iter_task_folders,
    load_task_folder,
)
from tasks.models import Task
from tasks.selectors import catalog_dirs


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deactivated: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def task_sync(*, catalog: Path | None = None) -> SyncReport:
    """Load every catalogue folder into Task rows; all or nothing.

    Without `catalog`, both the source catalogue and the imported one (ARENA_CATALOG_DIR and
    ARENA_IMPORTED_CATALOG_DIR in settings) are read. A task whose files changed gets its new
    version hash; evaluations keep the hash they were graded against. A task whose folder
    disappeared is deactivated, never deleted.
    """
    report = SyncReport()
    specs: list[tuple[TaskSpec, Path]] = []
    roots = [catalog.resolve()] if catalog is not None else catalog_dirs()
    for root in roots:
        for folder in iter_task_folders(root):
            try:
                specs.append((load_task_folder(folder), root))
            except TaskError as exc:
                report.errors.append(str(exc))
    slugs = [spec.slug for spec, _ in specs]
    for slug in sorted({s for s in slugs if slugs.count(s) > 1}):
        report.errors.append(f"slug {slug!r} is used by more than one task folder")
    if report.errors:
        return report
    with transaction.atomic():
        for spec, root in specs:
            _task_upsert(spec=spec, catalog=root, report=report)
        stale = Task.objects.filter(is_active=True).exclude(slug__in=slugs)
        report.deactivated = sorted(stale.values_list("slug", flat=True))
        stale.update(is_active=False)
    return report


def _task_upsert(*, spec: TaskSpec, catalog: Path, report: SyncReport) -> None:
    prompt_path = spec.folder / "PROMPT.md"
    values = {
        "title": spec.title,
        "category": spec.category,
        "suite": spec.suite,
        "dtype": spec.dtype,
        "regime": spec.regime,
        "folder": spec.folder.relative_to(catalog.resolve()).as_posix(),
        "version_hash": spec.version_hash,
        "manifest": spec.to_dict(),
        "prompt": prompt_path.read_text(encoding="utf-8") if prompt_path.exists() else "",
        "is_active": True,
    }
    task = Task.objects.filter(slug=spec.slug).first()
    if task is None:
        Task.objects.create(slug=spec.slug, **values)
        report.created.append(spec.slug)
        return
    if all(getattr(task, key) == value for key, value in values.items()):
        report.unchanged.append(spec.slug)
        return
    for key, value in values.items():
        setattr(task, key, value)
    task.save()
    report.updated.append(spec.slug)
