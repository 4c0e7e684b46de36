from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluator.engine.taskspec import catalog_root
from tasks.kernelbench import kernelbench_import
from tasks.services import task_sync


class Command(BaseCommand):
    help = "Import a KernelBench checkout's level1..level4 problems as suite 'kernelbench'."

    def add_arguments(self, parser):
        parser.add_argument("source", type=Path, help="the KernelBench checkout")

    def handle(self, *args, source: Path, **options):
        if not source.is_dir():
            raise CommandError(f"{source}: no such folder")
        catalog = catalog_root()
        report = kernelbench_import(source=source.resolve(), catalog=catalog)
        for line in report.skipped:
            self.stderr.write(f"skipped {line}")
        sync = task_sync(catalog=catalog)
        if sync.errors:
            raise CommandError(
                "imported, but the catalogue does not sync:\n" + "\n".join(sync.errors)
            )
        self.stdout.write(
            f"kernelbench: {len(report.written)} written, {len(report.unchanged)} unchanged, "
            f"{len(report.skipped)} skipped; tasks: {len(sync.created)} created, "
            f"{len(sync.updated)} updated"
        )
