import json

from django.core.management.base import BaseCommand, CommandError

from grader.taskspec import TaskError, iter_task_folders, load_task_folder
from tasks.selectors import catalog_dirs


class Command(BaseCommand):
    help = "List the catalogue's tasks; with --json one JSON object per line."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="one JSON object per task")

    def handle(self, *args, json: bool = False, **options):
        rows = []
        for folder in (f for root in catalog_dirs() for f in iter_task_folders(root)):
            try:
                spec = load_task_folder(folder)
            except TaskError as exc:
                raise CommandError(str(exc)) from None
            rows.append(
                {
                    "slug": spec.slug,
                    "category": spec.category,
                    "backends": list(spec.backends),
                    "dtype": spec.dtype,
                    "regime": spec.regime,
                    "shapes": [dict(s) for s in spec.visible_shapes],
                    "generalization": spec.generalization,
                    "sota": (folder / "sota.py").is_file(),
                    "starter": (folder / "starter" / "solution.py").is_file(),
                    "version": spec.version_hash,
                }
            )
        for row in rows:
            self.stdout.write(_dumps(row) if json else _line(row))


def _dumps(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


def _line(row: dict) -> str:
    return (
        f"{row['slug']:<34} {row['category']:<14} {row['dtype']:<14} {row['regime']:<8} "
        f"{len(row['shapes'])} shapes{'  sota' if row['sota'] else ''}"
    )
