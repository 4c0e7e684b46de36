import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tasks.kernelbench import DEFAULT_WORKERS, ImportRefused, kernelbench_import


class Command(BaseCommand):
    help = (
        "Import an upstream KernelBench checkout (its root or its KernelBench/ folder) as suite "
        "'kernelbench', into the imported catalogue under ARENA_DATA_DIR; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("source", type=Path, help="the KernelBench checkout")
        parser.add_argument(
            "--workers", type=int, default=DEFAULT_WORKERS, help="processes analysing problems"
        )

    def handle(self, *args, source: Path, workers: int = DEFAULT_WORKERS, **options):
        if not source.is_dir():
            raise CommandError(f"{source}: no such folder")
        catalog = settings.ARENA_IMPORTED_CATALOG_DIR
        try:
            report = kernelbench_import(
                source=source.resolve(), catalog=catalog, progress=self._progress, workers=workers
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        for line in report.skipped:
            self.stderr.write(f"skipped {line}")
        sync = report.sync
        self.stdout.write(f"{report.summary()} (into {catalog / 'kernelbench'})")
        if sync is not None:
            self.stdout.write(
                f"tasks: {len(sync.created)} created, {len(sync.updated)} updated, "
                f"{len(sync.unchanged)} unchanged, {len(sync.deactivated)} deactivated"
            )

    def _progress(self, done: int, total: int, label: str) -> None:
        # One plain line per problem: readable in a terminal, a log or a test's captured stderr.
        width = len(str(total))
        self.stderr.write(f"[{done:>{width}}/{total}] {label}")
        if self.stderr.isatty():
            sys.stderr.flush()
