from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluator.engine.taskspec import catalog_root
from tasks.services import task_sync


class Command(BaseCommand):
    help = "Load the task catalogue (tasks/catalog) into Task rows. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--catalog", type=Path, default=None, help="catalogue folder")

    def handle(self, *args, catalog: Path | None = None, **options):
        root = (catalog or catalog_root()).resolve()
        if not root.is_dir():
            raise CommandError(f"{root}: no such catalogue folder")
        report = task_sync(catalog=root)
        if report.errors:
            raise CommandError("nothing was synced:\n" + "\n".join(report.errors))
        self.stdout.write(
            f"tasks: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.deactivated)} deactivated"
        )
