"""`python manage.py seed_demo`: fill the leaderboard with real runs of the scripted demo agents.

Each demo agent (scripted-starter, -reference, -weak, -broken, all marked "(demo)") works each
demo task for real in a workspace. Runs recorded graded on a GPU by bench/demo_gpu.py are
imported as they happened; the others are submitted here and graded by the worker. A run that
is already in the database (same agent, same task) is never added again.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from arena.demo.scripted_runs import DEMO_TASKS, STRATEGIES
from arena.demo.seeding import DemoError, demo_recorded_load, demo_recorded_paths, demo_seed
from arena.models import Run


class Command(BaseCommand):
    help = "Fill the leaderboard with real runs of the scripted demo agents."

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty", action="store_true", help="do nothing when any run exists"
        )
        parser.add_argument("--tasks", nargs="+", default=list(DEMO_TASKS), metavar="SLUG")
        parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
        parser.add_argument(
            "--recorded",
            nargs="*",
            type=Path,
            metavar="FILE",
            help="bench/demo_gpu.py outputs (default: arena/demo/graded-*.json; none: grade here)",
        )
        parser.add_argument(
            "--verify-recorded",
            action="store_true",
            help="run each agent here too; use a recording only if the solution is the same",
        )

    def handle(self, *args, if_empty: bool, tasks, strategies, recorded, **options):
        if if_empty and Run.objects.exists():
            self.stdout.write("seed_demo: runs exist already; nothing seeded")
            return
        paths = demo_recorded_paths() if recorded is None else recorded
        try:
            found = demo_recorded_load(paths=paths)
            report = demo_seed(
                task_slugs=tasks,
                strategies=strategies,
                recorded=found,
                verify=options["verify_recorded"],
                progress=self.progress,
            )
        except DemoError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"seed_demo: {len(report.imported)} runs imported as recorded by bench/demo_gpu.py, "
            f"{len(report.submitted)} submitted for grading, {len(report.failed)} without a "
            f"solution, {len(report.skipped)} already there"
        )

    def progress(self, line: str) -> None:
        # A run takes seconds to minutes: show each as it starts, even when piped to a log.
        self.stdout.write(f"  {line}")
        self.stdout.flush()
