from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from grader.taskspec import iter_task_folders
from tasks.validation import validate_task


class Command(BaseCommand):
    help = "Check every catalogue task on CPU (see tasks/validation.py); exit 1 on any problem."

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", help="only these task folders' names")
        parser.add_argument("--no-starters", action="store_true", help="skip grading starters")

    def handle(self, *args, slugs: list[str], no_starters: bool = False, **options):
        folders = [
            f for f in iter_task_folders(settings.ARENA_CATALOG_DIR) if not slugs or f.name in slugs
        ]
        failed = []
        for folder in folders:
            report = validate_task(folder, grade_starter=not no_starters)
            self.stdout.write(f"{'ok  ' if report.ok else 'FAIL'} {report.slug}")
            for line in report.problems:
                self.stdout.write(f"     problem: {line}")
            for line in report.notes:
                self.stdout.write(f"     note: {line}")
            if not report.ok:
                failed.append(report.slug)
        if failed:
            raise CommandError(f"{len(failed)} of {len(folders)} tasks failed: {', '.join(failed)}")
        self.stdout.write(f"{len(folders)} tasks valid")
