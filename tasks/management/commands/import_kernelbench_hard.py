import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tasks.kernelbench import ImportRefused
from tasks.kernelbench_hard import SUITE, kernelbench_hard_import


class Command(BaseCommand):
    help = (
        "Import a KernelBench-Hard checkout (its root or its benchmarks/hard folder): every "
        "problems-<gpu>/<problem>/ as suite 'kernelbench-hard', into the imported catalogue "
        "under ARENA_DATA_DIR; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("source", type=Path, help="the KernelBench-Hard checkout")

    def handle(self, *args, source: Path, **options):
        if not source.is_dir():
            raise CommandError(f"{source}: no such folder")
        catalog = settings.ARENA_IMPORTED_CATALOG_DIR
        try:
            report = kernelbench_hard_import(
                source=source.resolve(), catalog=catalog, progress=self._progress
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        for line in report.sota_unavailable:
            self.stderr.write(f"SOTA unavailable: {line}")
        self.stdout.write(f"{report.summary()} (into {catalog / SUITE})")
        sync = report.sync
        if sync is not None:
            self.stdout.write(
                f"tasks: {len(sync.created)} created, {len(sync.updated)} updated, "
                f"{len(sync.unchanged)} unchanged, {len(sync.deactivated)} deactivated"
            )

    def _progress(self, done: int, total: int, label: str) -> None:
        width = len(str(total))
        self.stderr.write(f"[{done:>{width}}/{total}] {label}")
        if self.stderr.isatty():
            sys.stderr.flush()
