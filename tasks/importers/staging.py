"""The one way an import changes the catalogue: all of a suite's folders written into a staging
folder and every manifest loaded back, then swapped in for the live suite and the database
synced in one transaction; any refusal leaves the catalogue and the database as they were."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from django.db import transaction

from grader.taskspec import TaskError, load_task_folder
from tasks.importers.report import ImportRefused, ImportReport, Outcome
from tasks.services import SyncReport, task_sync


def suite_replace(report: ImportReport, *, catalog: Path, imported: list[Outcome]) -> None:
    """Sort the imported tasks into the report (new, updated, unchanged; folders no longer in
    the source removed), swap the suite in where anything changed, and sync the database."""
    suite_dir = catalog / report.suite
    for outcome in imported:
        folder = suite_dir / outcome.slug
        if not folder.is_dir():
            report.imported.append(outcome.slug)
        elif files_of(folder) == outcome.files:
            report.unchanged.append(outcome.slug)
        else:
            report.updated.append(outcome.slug)
    if suite_dir.is_dir():
        slugs = {o.slug for o in imported}
        report.removed = sorted(
            p.name for p in suite_dir.iterdir() if p.is_dir() and p.name not in slugs
        )
    old = swap_in(catalog, imported, suite=report.suite) if report.changed else None
    report.sync = sync_or_restore(catalog, old, suite=report.suite)


def files_of(folder: Path) -> dict[str, str]:
    """The task folder's files, {relative path: text}."""
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def swap_in(catalog: Path, imported: list[Outcome], *, suite: str) -> Path:
    """Write the whole suite into a staging folder, load every manifest back (ImportRefused
    naming the task), then swap it in for the live suite. Returns where the previous suite
    went, for sync_or_restore."""
    catalog.mkdir(parents=True, exist_ok=True)
    # Beside the suite (same file system: renames are atomic) but deeper than catalogue
    # folders, so no catalogue scan sees a half-written or a retired suite.
    work = catalog / ".import" / f"{suite}-{os.getpid()}"
    staging, old = work / "staging", work / "previous"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        for outcome in imported:
            folder = staging / outcome.slug
            for name, text in (outcome.files or {}).items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(text, encoding="utf-8")
            _check_manifest(folder, outcome.label)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    staging.mkdir(parents=True, exist_ok=True)  # an empty suite still replaces the old one
    live = catalog / suite
    if live.exists():
        live.rename(old)
    staging.rename(live)
    # Kept until the database agrees, so a failed sync can put the old suite back.
    return old


def _check_manifest(folder: Path, label: str) -> None:
    try:
        load_task_folder(folder)
    except TaskError as exc:
        raise ImportRefused([f"{label}: {exc}"]) from None


def sync_or_restore(catalog: Path, old: Path | None, *, suite: str) -> SyncReport:
    """Sync the tasks with the catalogue just swapped in; if that fails, put `old` (the suite's
    previous folder, as the swap left it) back and re-raise."""
    live = catalog / suite
    try:
        with transaction.atomic():
            sync = task_sync()
            if sync.errors:
                raise ImportRefused(["the catalogue does not sync:", *sync.errors])
    except BaseException:
        if old is not None:
            shutil.rmtree(live, ignore_errors=True)
            if old.exists():
                old.rename(live)
            shutil.rmtree(old.parent, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old.parent, ignore_errors=True)
    return sync
