"""What the import_* management commands share: the source folder checked, the import run into
the imported catalogue (ARENA_IMPORTED_CATALOG_DIR) with one progress line per task on stderr,
a refusal as the command's error, then the report's summary and the database sync."""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tasks.importers.report import ImportRefused, ImportReport, Progress


class ImportCommand(BaseCommand):
    source_help = "the checkout"

    def add_arguments(self, parser):
        parser.add_argument("source", type=Path, help=self.source_help)

    def run_import(self, *, source: Path, catalog: Path, progress: Progress, **options):
        """The importer's run; returns its ImportReport."""
        raise NotImplementedError

    def report_tasks(self, report: ImportReport) -> None:
        """What the importer says of single tasks before the summary (skipped ones, say)."""

    def handle(self, *args, source: Path, **options):
        if not source.is_dir():
            raise CommandError(f"{source}: no such folder")
        catalog = settings.ARENA_IMPORTED_CATALOG_DIR
        try:
            report = self.run_import(
                source=source.resolve(), catalog=catalog, progress=self._progress, **options
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        self.report_tasks(report)
        self.stdout.write(f"{report.summary()} (into {catalog / report.suite})")
        if report.sync is not None:
            self.stdout.write(report.sync_summary())

    def _progress(self, done: int, total: int, label: str) -> None:
        # One plain line per task: readable in a terminal, a log or a test's captured stderr.
        width = len(str(total))
        self.stderr.write(f"[{done:>{width}}/{total}] {label}")
        if self.stderr.isatty():
            sys.stderr.flush()
