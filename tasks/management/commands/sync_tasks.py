from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tasks.services import task_sync


class Command(BaseCommand):
    help = (
        "Load the task catalogues (tasks/catalog and the imported one under ARENA_DATA_DIR) "
        "into Task rows. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--catalog", type=Path, default=None, help="catalogue folder")

    def handle(self, *args, catalog: Path | None = None, **options):
        if catalog is not None and not catalog.is_dir():
            raise CommandError(f"{catalog}: no such catalogue folder")
        report = task_sync(catalog=catalog)
        if report.errors:
            raise CommandError("nothing was synced:\n" + "\n".join(report.errors))
        self.stdout.write(
            f"tasks: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.deactivated)} deactivated"
        )
